package jsonpath

import (
	"math"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// Printing and decoding the maps and lists of raw JSON. Printing sorts the
// keys of each object, so the members of an object are read to their ends
// before any is printed. Reading them with the scanner alone would scan a
// nested value once for every level above it: work quadratic in the depth
// (printing 8,000 levels of {"a":...} took a third of a second). Instead
// the value is scanned once first, recording the extents of its objects
// and arrays, and reading the members of an object steps over the values
// that have one. Printing (and decoding) a value is then linear in its
// size.

// extent is an object or array of a raw JSON value: the positions of its
// opening bracket and just past its closing one, and the index of the next
// extent that is not inside it (the extents of a value are kept in the
// order of their starts).
type extent struct{ start, end, next uint32 }

// minExtent is the length from which an object or array gets an extent.
// Shorter ones are scanned again when the values around them are read,
// but a value shorter than minExtent nests at most minExtent/2 levels
// deep: each of its bytes is scanned at most that many times more, and
// each scan is charged.
const minExtent = 32

// buildExtents scans the object or array at s[0] once and returns the
// extents of its objects and arrays (itself included) of minExtent bytes
// or more, and of those that do not end (which only invalid JSON has: they
// extend to the end of s, as skipValue reads them). It charges b a step per
// scanBytesPerStep bytes and per extentsPerStep extents it keeps at once,
// as it goes: it stops when that exceeds what b has left (see scanEnd),
// and returns b's error. It fails with the depth error when the value
// nests deeper than b's limit, since it could not be printed. Values of 4
// GiB or more get no extents (they are then read by scanning alone).
func buildExtents(s string, b *budget) ([]extent, error) {
	if uint64(len(s)) >= math.MaxUint32 {
		return nil, nil
	}
	left := b.left()
	lim := scanEnd(s, 0, left)
	t := s[:lim]
	var ext []extent
	// While an object or array is open, the next of its extent is the
	// index of the extent of the one it is in (none: noExtent).
	inner, depth, maxDepth := uint32(noExtent), 0, b.depthLimit()
	peak := 0 // the most extents kept at once
	i := 0
scan:
	for i = nextInteresting(t, 0); i < len(t); i = nextInteresting(t, i) {
		switch t[i] {
		case '"':
			i = skipString(t, i)
			continue
		case '{', '[':
			if depth >= maxDepth {
				c := itemCost(s[:i]) + peak/extentsPerStep
				meter.did(c)
				if !b.charge(c) {
					return nil, b.err
				}
				return nil, b.tooDeep()
			}
			if len(ext) == peak {
				if peak++; peak%extentsPerStep == 0 && itemCost(s[:i])+peak/extentsPerStep > left {
					lim, t = i, t[:i] // cut short
					break scan
				}
				if len(ext) == cap(ext) {
					ext = growExtents(ext, left)
				}
			}
			ext = append(ext, extent{start: uint32(i), next: inner})
			inner = uint32(len(ext) - 1)
			depth++
		case '}', ']':
			if inner == noExtent {
				break scan // not JSON: s[0] is no bracket
			}
			k := inner
			inner, depth = ext[k].next, depth-1
			if i+1-int(ext[k].start) < minExtent {
				ext = ext[:k] // its objects and arrays are shorter still
			} else {
				ext[k].end, ext[k].next = uint32(i+1), uint32(len(ext))
			}
			if inner == noExtent {
				i++
				break scan
			}
		}
		i++
	}
	i = min(i, len(t))
	if inner != noExtent {
		if lim < len(s) { // cut short: the charge fails
			c := itemCost(s[:lim]) + peak/extentsPerStep
			meter.did(c)
			b.charge(c)
			return nil, b.err
		}
		for k := inner; k != noExtent; {
			up := ext[k].next
			ext[k].end, ext[k].next = uint32(len(s)), uint32(len(ext))
			k = up
		}
	}
	c := itemCost(s[:i]) + peak/extentsPerStep
	meter.did(c)
	if !b.charge(c) {
		return nil, b.err
	}
	return ext, nil
}

// extentsPerStep is how many extents kept at once cost a step: an extent
// takes up to about 30 ns to allocate and fill (BenchmarkBuildExtents), and
// more where its memory is fresh (12 bytes, and the copies of growing),
// which is what an evaluation that keeps hundreds of thousands of them
// pays. A step each holds the extents one evaluation can keep under the
// default budget to 768 KB (1.5 MB allocated with the copies), where a
// printable value of realistic JSON (an object every hundred bytes or so)
// needs a twentieth of that.
const extentsPerStep = 1

// growExtents returns ext, which is full, with twice its room (at least 64),
// but no more than the extents the budget left pays for (buildExtents stops
// before it keeps more): growing copies an extent once on average, and no
// room is made that the budget could not fill.
func growExtents(ext []extent, left int) []extent {
	n := max(2*len(ext), 64)
	if left < math.MaxInt/extentsPerStep-extentsPerStep {
		n = max(min(n, (left+1)*extentsPerStep), len(ext)+1)
	}
	grown := make([]extent, len(ext), n)
	copy(grown, ext)
	return grown
}

// noExtent is no index of an extent.
const noExtent = math.MaxUint32

// nextInteresting returns the position of the first byte at or after i
// that opens or closes a string, an object or an array, or len(s). It
// looks at 8 bytes at a time, like skipValue.
func nextInteresting(s string, i int) int {
	for i+8 <= len(s) {
		w := s[i : i+8]
		switch {
		case scanClass[w[0]] != 0:
			return i
		case scanClass[w[1]] != 0:
			return i + 1
		case scanClass[w[2]] != 0:
			return i + 2
		case scanClass[w[3]] != 0:
			return i + 3
		case scanClass[w[4]] != 0:
			return i + 4
		case scanClass[w[5]] != 0:
			return i + 5
		case scanClass[w[6]] != 0:
			return i + 6
		case scanClass[w[7]] != 0:
			return i + 7
		}
		i += 8
	}
	for i < len(s) && scanClass[s[i]] == 0 {
		i++
	}
	return i
}

// rawWalker reads a raw JSON value s, stepping over the objects and
// arrays its extents record. (The budget is passed to its methods, not
// kept in it: what it keeps, the strings of s, escapes to the heap.)
type rawWalker struct {
	s   string
	ext []extent
	ms  []rawMember // the members of the objects being printed, innermost last
}

// rawMember is a member of an object: its key, decoded, and the extent of
// its value's text.
type rawMember struct {
	key        string
	start, end int
	x          int // the index of the value's extent, or -1
}

// newRawWalker returns a walker of the object or array at s[0], and the
// index of its extent, or -1 (see buildExtents, which charges b).
func newRawWalker(s string, b *budget) (w rawWalker, x int, err error) {
	w.s, x = s, -1
	if len(s) < minExtent {
		return w, x, nil // no extents
	}
	if w.ext, err = buildExtents(s, b); err != nil {
		return w, x, err
	}
	if len(w.ext) > 0 && w.ext[0].start == 0 {
		x = 0
	}
	return w, x, nil
}

// children returns the first extent that may be inside the object or array
// whose extent is x (-1 if it has none).
func (w *rawWalker) children(x int) int {
	if x < 0 {
		return len(w.ext) // it is short: so are its objects and arrays
	}
	return x + 1
}

// item scans the next member or element from s[i], as nextItem does,
// reading no further than what steps, the steps left, pay for (see
// scanEnd), and stepping over the objects and arrays its extents record: c
// is the first extent that may start at or after i, next the one after the
// item. It returns the key as written, the extent [start, end) of the
// value, the index x of its extent (-1 if it has none), and cost, the
// steps of what it read: a step per item and per scanBytesPerStep bytes
// not stepped over, or, at the end of the container, of the white space
// before it. When the scan is cut short, cost exceeds steps and ok is
// false.
//
// A number or literal ends at a quote or bracket, where nextItem would
// read on in invalid JSON: the items it reads thus start where
// buildExtents saw values start, so that the extents are found.
func (w *rawWalker) item(i int, object bool, c, steps int) (key string, start, end, x, next int, ok bool, cost int) {
	s := w.s
	from, lim := i, scanEnd(s, i, steps)
	t := s[:lim]
	i = skipSpace(t, i)
	if i < len(t) && t[i] == ',' {
		i = skipSpace(t, i+1)
	}
	if object && i < len(t) && t[i] == '"' {
		e := endOfString(t, i+1)
		key = t[i:e]
		if i = skipSpace(t, e); i < len(t) && t[i] == ':' {
			i = skipSpace(t, i+1)
		}
	}
	end, x = i, -1
	if i < len(t) && (!object || key != "") {
		switch t[i] {
		case '}', ']':
		case '{', '[':
			for c < len(w.ext) && int(w.ext[c].start) < i { // only on invalid JSON
				c = max(int(w.ext[c].next), c+1)
			}
			if c < len(w.ext) && int(w.ext[c].start) == i && int(w.ext[c].end) <= len(s) {
				x, end, c = c, int(w.ext[c].end), int(w.ext[c].next)
			} else {
				end = skipValue(t, i)
			}
		case '"':
			end = skipString(t, i)
		default:
			end = scalarEnd(t, i)
		}
	}
	switch {
	case end == i && i >= lim && lim < len(s): // cut short
		return "", 0, i, -1, c, false, itemCost(s[from:i])
	case end == i: // the end of the container, or not JSON
		return "", 0, i, -1, c, false, (i - from) / scanBytesPerStep
	case x >= 0:
		return key, i, end, x, c, true, itemCost(s[from:i])
	}
	return key, i, end, -1, c, true, itemCost(s[from:end]) // more than steps if cut short
}

// scalarEnd returns the end of the number or literal at s[i]: the first
// byte that is white space, punctuation, a quote or a bracket, or len(s).
func scalarEnd(s string, i int) int {
	for j := i; j < len(s); j++ {
		switch s[j] {
		case ',', '}', ']', ':', ' ', '\n', '\t', '\r', '"', '{', '[':
			return j
		}
	}
	return len(s)
}

// appendJSONRaw re-encodes a raw JSON value canonically: keys sorted
// (the last of duplicate keys wins, as in lookups), numbers normalized
// the way Kubernetes decodes them, strings escaped like encoding/json.
// The work is charged to b: scanning the value once (see buildExtents),
// a step per value and levelCost per level of objects and arrays, the
// reading of members and elements, the sorting of keys, and the output.
func appendJSONRaw(dst []byte, raw string, b *budget) ([]byte, error) {
	r := parseRaw(raw)
	if r.Type != gjson.JSON {
		return appendJSONRawScalar(dst, raw, b)
	}
	w, x, err := newRawWalker(r.Raw, b)
	if err != nil {
		return dst, err
	}
	return w.print(dst, 0, x, 0, b)
}

// appendJSONRawScalar appends the raw JSON string, number or literal
// canonically. (A function of its own, so that the frames of the
// recursion through objects and arrays do not hold a gjson.Result and a
// Value.)
func appendJSONRawScalar(dst []byte, raw string, b *budget) ([]byte, error) {
	r := parseRaw(raw)
	if !b.charge(1 + numCost(r.Raw)) {
		return dst, b.err
	}
	dst = grown(dst, len(raw)+minRoom)
	return jsonScalar(r).appendJSON(dst, b)
}

// print appends the object or array at s[start] at depth, whose extent is
// x (or -1), canonically (see appendJSONRaw).
func (w *rawWalker) print(dst []byte, start, x, depth int, b *budget) ([]byte, error) {
	if !b.charge(1) {
		return dst, b.err
	}
	if depth >= b.depthLimit() {
		return dst, b.tooDeep()
	}
	if !b.charge(levelCost) {
		return dst, b.err
	}
	dst = grown(dst, minRoom)
	s, c := w.s, w.children(x)
	var err error
	if s[start] == '[' {
		dst = append(dst, '[')
		for i, n := start+1, 0; ; n++ {
			_, vs, ve, vx, next, ok, cost := w.item(i, false, c, b.left())
			if ok {
				cost += parseCost(s[vs:ve])
			}
			meter.did(cost)
			if !b.charge(cost) {
				return dst, b.err
			}
			if !ok {
				break
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			if s[vs] == '{' || s[vs] == '[' {
				dst, err = w.print(dst, vs, vx, depth+1, b)
			} else {
				dst, err = appendJSONRawScalar(dst, s[vs:ve], b)
			}
			if err != nil {
				return dst, err
			}
			i, c = ve, next
		}
		return append(dst, ']'), nil
	}
	base, top, err := w.members(start, c, b)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '{')
	for k := base; k < top; k++ {
		if k > base {
			dst = append(dst, ',')
		}
		m := w.ms[k] // (a copy: printing a value appends to w.ms)
		if k == top-1 {
			w.ms = w.ms[:base] // the last member: objects of one key nested deep keep none
		}
		n := len(dst)
		dst = appendJSONString(dst, m.key)
		if !wrote(b, len(dst)-n) {
			return dst, b.err
		}
		dst = append(dst, ':')
		if s[m.start] == '{' || s[m.start] == '[' {
			dst, err = w.print(dst, m.start, m.x, depth+1, b)
		} else {
			dst, err = appendJSONRawScalar(dst, s[m.start:m.end], b)
		}
		if err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// members reads the members of the object at s[start], whose first child
// extent is c, onto w.ms: sorted by key, keeping only the last of
// duplicate keys, in w.ms[base:top]. It charges b the scanning, parsing
// and sorting of the members.
func (w *rawWalker) members(start, c int, b *budget) (base, top int, err error) {
	s := w.s
	base = len(w.ms)
	keyBytes := 0
	for i := start + 1; ; {
		k, vs, ve, vx, next, ok, cost := w.item(i, true, c, b.left())
		if !ok {
			meter.did(cost)
			if !b.charge(cost) {
				return base, base, b.err
			}
			break
		}
		key, escaped := k, false
		if len(key) >= 2 {
			key = key[1 : len(key)-1]
		}
		if escaped = strings.IndexByte(key, '\\') >= 0; escaped {
			cost += len(k) / textBytesPerStep
		}
		cost += keepCost + parseCost(s[vs:ve])
		meter.did(cost)
		if !b.charge(cost) {
			return base, base, b.err
		}
		if escaped {
			key = unquoteKey(k)
		}
		if len(w.ms) == cap(w.ms) { // doubling, as the extents
			w.ms = slices.Grow(w.ms, max(len(w.ms), 16))
		}
		w.ms = append(w.ms, rawMember{key: key, start: vs, end: ve, x: vx})
		keyBytes += len(key)
		i, c = ve, next
	}
	ms := w.ms[base:]
	cost := sortCost(len(ms), keyBytes)
	if !b.charge(cost) {
		return base, base, b.err
	}
	meter.did(cost)
	slices.SortStableFunc(ms, func(a, b rawMember) int { return strings.Compare(a.key, b.key) })
	top = base
	for k := range ms {
		if k+1 < len(ms) && ms[k+1].key == ms[k].key {
			continue // a later duplicate follows
		}
		w.ms[top] = ms[k]
		top++
	}
	w.ms = w.ms[:top]
	return base, top, nil
}

// decodeRaw decodes a raw JSON value into the types an unstructured
// object holds. It fails when the value nests deeper than MaxDataDepth.
func decodeRaw(raw string) (any, error) {
	r := parseRaw(raw)
	if r.Type != gjson.JSON {
		return decodeRawScalar(raw), nil
	}
	w, x, err := newRawWalker(r.Raw, nil)
	if err != nil {
		return nil, err
	}
	return w.decode(0, x, 0)
}

// decodeRawScalar decodes a raw JSON string, number or literal (see
// appendJSONRawScalar).
func decodeRawScalar(raw string) any {
	return jsonScalar(parseRaw(raw)).Interface()
}

// decode decodes the object or array at s[start] at depth, whose extent is
// x (or -1); see print.
func (w *rawWalker) decode(start, x, depth int) (any, error) {
	if depth >= MaxDataDepth {
		return nil, (*budget)(nil).tooDeep()
	}
	s, c := w.s, w.children(x)
	object := s[start] == '{'
	var l []any
	var m map[string]any
	if object {
		m = map[string]any{}
	} else {
		l = []any{}
	}
	for i := start + 1; ; {
		k, vs, ve, vx, next, ok, cost := w.item(i, object, c, math.MaxInt)
		if ok {
			cost += parseCost(s[vs:ve])
		}
		meter.did(cost)
		if !ok {
			break
		}
		var v any
		if s[vs] == '{' || s[vs] == '[' {
			var err error
			if v, err = w.decode(vs, vx, depth+1); err != nil {
				return nil, err
			}
		} else {
			v = decodeRawScalar(s[vs:ve])
		}
		if object {
			m[decodeKey(k)] = v // a duplicate key replaces the earlier value
		} else {
			l = append(l, v)
		}
		i, c = ve, next
	}
	if object {
		return m, nil
	}
	return l, nil
}

// decodeKey returns a key as written (see nextItem), decoded.
func decodeKey(written string) string {
	if strings.IndexByte(written, '\\') >= 0 || len(written) < 2 {
		return unquoteKey(written)
	}
	return written[1 : len(written)-1]
}
