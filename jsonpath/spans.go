package jsonpath

import (
	"strings"

	"github.com/tidwall/gjson"
)

// IndexedJSON is a JSON document with the extents of its larger objects and arrays. Passed
// to Eval, AppendEval or Each in place of a JSON, a path of fields and indexes (the form
// most index expressions have: {.spec.nodeName}, {.status.conditions[0].type}) steps over
// those values without scanning them: reading {.spec.nodeName} of a 9 KB Pod, which follows
// the Pod's volumes and containers, reads a few hundred bytes instead of the document.
// Other expressions evaluate on Doc as on a JSON. Results are those of the same call on Doc,
// duplicate keys included (the last one wins: every member of an object on the path is
// still stepped over, cheaply).
//
// Spans must come from BuildSpans on the same bytes (kindex's compact storage keeps them
// with each object). Spans that do not describe Doc give unspecified results, never a
// panic, a hang or more work than the budget allows.
type IndexedJSON struct {
	// Doc is the document.
	Doc JSON
	// Spans are Doc's large values, as BuildSpans returns them.
	Spans Spans
}

// Source is implemented by values that hold a JSON document, with or without spans (kindex's
// compact objects). Eval, AppendEval, Each and Execute read a Source as the IndexedJSON it
// returns (a JSON when it has no spans), without the caller converting that to an interface
// value, which would allocate.
type Source interface {
	// JSONSource returns the document and its spans (nil Spans when it has none).
	JSONSource() IndexedJSON
}

// Spans lists, in document order, the start and end offsets of a document's objects and
// arrays at least a minimum size long: pairs (start, end), Doc[start] the opening bracket,
// Doc[end-1] the closing one.
type Spans []uint32

// DefaultSpanSize is the size from which BuildSpans records a value. A value of a hundred
// bytes full of brackets and short strings takes a few hundred nanoseconds to scan, a span
// a binary search; much smaller values are scanned about as fast as a span is looked up,
// and each span costs 8 bytes (kindex's compact objects keep theirs: 19 for a realistic
// Pod at this size, 12 at 256 bytes; BenchmarkSpansPerPod in internal/compact).
const DefaultSpanSize = 128

// BuildSpans returns the spans of the objects and arrays of doc of at least minSize bytes
// (DefaultSpanSize if minSize <= 0), appended to dst. An object's span also says whether its
// keys are unique (as written, without escapes): a lookup in it can then stop at the first
// match instead of reading on for a later duplicate. Documents of 2 GiB or more, and
// invalid JSON, get no spans (then evaluation scans, as on a JSON). It scans doc once.
func BuildSpans(dst Spans, doc JSON, minSize int) Spans {
	if minSize <= 0 {
		minSize = DefaultSpanSize
	}
	if uint64(len(doc)) >= uniqueKeys {
		return dst
	}
	s := bytesView(doc)
	n0 := len(dst)
	var stack [64]uint32 // positions of the open brackets, and of the pairs reserved for them
	var slot, keysFrom [64]int
	var kbuf [128]uint64
	keys := kbuf[:0] // the hashes of the keys of the open objects, innermost last
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			end := skipString(s, i)
			if depth > 0 && s[stack[depth-1]] == '{' {
				if j := skipSpace(s, end); j < len(s) && s[j] == ':' {
					keys = append(keys, keyHash(s[i:end]))
				}
			}
			i = end - 1
		case '{', '[':
			if depth == len(stack) { // deeper than kept: skip it whole
				end := skipValue(s, i)
				i = end - 1
				continue
			}
			stack[depth], slot[depth], keysFrom[depth] = uint32(i), len(dst), len(keys)
			dst = append(dst, uint32(i), 0) // reserved: spans stay in order of their starts
			depth++
		case '}', ']':
			if depth == 0 {
				return dst[:n0]
			}
			depth--
			start, at := stack[depth], slot[depth]
			if i+1-int(start) >= minSize {
				end := uint32(i + 1) // the others keep end 0: dropped below
				if s[start] == '{' && distinct(keys[keysFrom[depth]:]) {
					end |= uniqueKeys
				}
				dst[at+1] = end
			}
			keys = keys[:keysFrom[depth]]
		}
	}
	if depth != 0 {
		return dst[:n0]
	}
	out := dst[:n0]
	for k := n0; k+1 < len(dst); k += 2 {
		if dst[k+1] != 0 {
			out = append(out, dst[k], dst[k+1])
		}
	}
	return out
}

// uniqueKeys marks, in a span's end, an object whose keys are unique.
const uniqueKeys = 1 << 31

// escapedKey is the hash of every key with an escape: such keys are never proven unique.
const escapedKey = 0

// keyHash hashes a key as written, quotes included (FNV-1a), or returns escapedKey.
func keyHash(written string) uint64 {
	h := uint64(14695981039346656037)
	for k := 0; k < len(written); k++ {
		c := written[k]
		if c == '\\' {
			return escapedKey
		}
		h = (h ^ uint64(c)) * 1099511628211
	}
	if h == escapedKey {
		h = 1
	}
	return h
}

// distinct reports whether the hashes are all different and none is escapedKey: then the
// keys they hash are unique. Equal hashes of different keys only lose the early stop.
func distinct(hs []uint64) bool {
	if len(hs) > 64 {
		return false // unusual: not worth proving
	}
	var table [128]uint64
	for _, h := range hs {
		if h == escapedKey {
			return false
		}
		for k := h % 128; ; k = (k + 1) % 128 {
			if table[k] == h {
				return false
			}
			if table[k] == 0 {
				table[k] = h
				break
			}
		}
	}
	return true
}

// end returns the end of the value that starts at s[i] if a span records it, and whether
// the span says the keys of that object are unique.
func (sp Spans) end(s string, i int) (end int, unique bool, ok bool) {
	n := len(sp) / 2
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(sp[2*m]) < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < n && int(sp[2*lo]) == i {
		e := sp[2*lo+1]
		if end := int(e &^ uniqueKeys); end > i && end <= len(s) {
			return end, e&uniqueKeys != 0, true
		}
	}
	return 0, false, false
}

// skipValue is skipValue on s[:lim], stepping over a recorded object or array of s in one
// move, wherever it ends; jumped reports whether it did.
func (sp Spans) skipValue(s string, lim, i int) (end int, jumped bool) {
	if i < lim && (s[i] == '{' || s[i] == '[') {
		if e, _, ok := sp.end(s, i); ok {
			return e, true
		}
	}
	return skipValue(s[:lim], i), false
}

// item scans the next member or element from s[i] like nextItem, reading no further than
// what steps, the steps left, pay for (see scanEnd), but stepping over recorded values. It
// returns the written key, the extent [start, next) of the value, and cost, the steps of
// what it read: a step per item and per scanBytesPerStep bytes not stepped over, or, at the
// end of the container, of the white space before it. When the scan is cut short, cost
// exceeds steps and ok is false.
func (sp Spans) item(s string, i int, object bool, steps int) (key string, start, next int, ok bool, cost int) {
	from, lim := i, scanEnd(s, i, steps)
	t := s[:lim]
	i = skipSpace(t, i)
	if i < len(t) && t[i] == ',' {
		i = skipSpace(t, i+1)
	}
	if object && i < len(t) && t[i] == '"' {
		end := endOfString(t, i+1)
		key = t[i:end]
		if i = skipSpace(t, end); i < len(t) && t[i] == ':' {
			i = skipSpace(t, i+1)
		}
	}
	end, jumped := i, false
	if i < len(t) && (!object || key != "") && t[i] != '}' && t[i] != ']' {
		end, jumped = sp.skipValue(s, lim, i)
	}
	switch {
	case end == i && i >= lim && lim < len(s): // cut short
		return "", 0, i, false, itemCost(s[from:i])
	case end == i: // the end of the container, or not JSON
		return "", 0, i, false, (i - from) / scanBytesPerStep
	case jumped:
		return key, i, end, true, itemCost(s[from:i])
	}
	return key, i, end, true, itemCost(s[from:end]) // more than steps if cut short
}

// walkSpans is walkJSON on an indexed document: the same results and the same budget rules,
// with recorded values stepped over. A negative index falls back to walkJSON.
func (p *Path) walkSpans(d IndexedJSON, fn func(Value) bool, dst []Value) ([]Value, error) {
	for i := range p.segs {
		if p.segs[i].kind == segIndex && p.segs[i].index < 0 {
			return p.walkJSON(d.Doc, fn, dst)
		}
	}
	s := bytesView(d.Doc)
	var b budget
	b.init(&p.lim)
	found := b.charge(len(p.segs)) && b.charge(rootCost(d.Doc, b.left()))
	at, end := skipSpace(s, 0), len(s) // the root, as gjson.Parse reads it
	for i := 0; found && i < len(p.segs); i++ {
		seg := &p.segs[i]
		if seg.kind == segField {
			from := at
			if at, end, found = d.Spans.member(s, from, seg.name, &b); !found && seg.alt != nil && b.err == nil {
				// A dotted key the object lacks: its parts (see dottedKey).
				at, found = from, true
				for j := 0; found && j < len(seg.alt); j++ {
					at, end, found = d.Spans.member(s, at, seg.alt[j].name, &b)
				}
			}
		} else {
			at, end, found = d.Spans.element(s, at, seg.index, &b)
		}
	}
	var n gjson.Result
	if found {
		val := s[at:end]
		if n, found, _ = parse(val, b.left(), 0); found {
			found = b.charge(parseCost(val))
		}
	}
	return deliverWalked(&b, found, n, fn, dst)
}

// member returns the extent of the value of the member named name of the object at s[i]
// (the last one, if the name repeats), charging b a step per member and the bytes it scans.
func (sp Spans) member(s string, i int, name string, b *budget) (start, end int, found bool) {
	if i >= len(s) || s[i] != '{' {
		return 0, 0, false
	}
	_, unique, _ := sp.end(s, i) // unique keys: the first match is the only one
	plain := strings.IndexByte(name, '\\') < 0
	for i++; ; {
		key, vstart, next, ok, c := sp.item(s, i, true, b.left())
		var match bool
		var kc int
		if ok {
			switch n := len(key) - 2; {
			case n == len(name) && plain:
				match = key[1:len(key)-1] == name // a key as long as name with an escape is shorter
			case n >= len(name):
				match, kc = keyIs(key, name, b.left()-c)
			}
		}
		meter.did(c + kc)
		if !b.charge(c + kc) {
			return 0, 0, false
		}
		if !ok {
			break
		}
		if match {
			found, start, end = true, vstart, next
			if unique {
				break
			}
		}
		i = next
	}
	return start, end, found
}

// element returns the extent of element k (k >= 0) of the array at s[i], charging as member
// does, the element itself included.
func (sp Spans) element(s string, i, k int, b *budget) (start, end int, found bool) {
	if i >= len(s) || s[i] != '[' {
		return 0, 0, false
	}
	for n, i := 0, i+1; ; n++ {
		_, vstart, next, ok, c := sp.item(s, i, false, b.left())
		meter.did(c)
		if !b.charge(c) || !ok {
			return 0, 0, false
		}
		if n == k {
			return vstart, next, true
		}
		i = next
	}
}
