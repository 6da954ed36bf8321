package jsonpath

import (
	"math"
	"sort"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// JSON is a JSON document in its encoded form, as an API server sends
// it. Passed to Eval, AppendEval, Each, Execute or ExecuteString in place
// of a decoded object, it is read in place without being decoded: only
// the parts the expression reads are scanned. The results are those of
// the same call on the document decoded by encoding/json or Kubernetes'
// decoders, numbers included: integers that fit int64 are KindInt,
// read exactly from their text (not through float64), other numbers
// KindFloat; and when an object has duplicate keys the last one wins, as
// in those decoders.
//
// Only the type JSON selects this: a []byte or json.RawMessage, as the
// input or inside a decoded object, is an unsupported type (convert it,
// jsonpath.JSON(data), without copying). The document must be valid JSON;
// on invalid JSON the results are unspecified, but evaluation does not
// panic. Passing a JSON to a method as an interface value makes the Go
// runtime allocate a copy of the slice header (24 bytes) unless the caller
// converts it to any once and reuses that; evaluation itself allocates no
// more than on a decoded object.
type JSON []byte

// jsonTree evaluates on raw JSON without decoding the document: lookups
// scan only the objects on the path, with the scanner of scan.go. Nodes
// are gjson.Results, which refer to the input text; gjson parses only the
// values the evaluation selects. When an object has duplicate keys, the
// last one wins, as in encoding/json and Kubernetes' decoders.
//
// The methods that scan charge as they go: a step per member or element,
// plus its bytes (see itemCost), and they stop as soon as the cost exceeds
// what the budget has left; parsing a selected value is charged before.
//
// Recursive descent, and wildcards and filters applied level after level,
// scan each object or array of a deep document once for every level
// above it: work quadratic in the depth. ix, when set (by evaluations
// that may scan the document more than once), counts the bytes the scans
// read; once they reach three times the document's size, the document is
// scanned once more, recording the extents of its objects and arrays
// (see buildExtents), and from then on scans step over the values those
// record, as printing does: evaluation then takes work linear in the
// document's size, however deep it nests. (Not from twice: the two field
// lookups in the document of a template such as
// {.metadata.namespace}/{.metadata.name} read it twice, and recording its
// extents costs them more than it saves.)
type jsonTree struct{ ix *rawIndex }

// rawIndex is the state of jsonTree's scans in one evaluation.
type rawIndex struct {
	w     rawWalker // w.s is the root value's text; w.ext, once built, its extents
	built bool      // the extents were built (or a document of 4 GiB got none)
	read  int       // the bytes the scans may have read before that
	hint  int       // the extent firstAfter returned last
}

// treeFor returns the tree p's evaluation on the document whose root
// value is root scans with: with a rawIndex if p may scan the document
// more than once (a single-valued path reads each level once) and root is
// an object or array.
func (p *Path) treeFor(root gjson.Result) jsonTree {
	if p.single || root.Type != gjson.JSON {
		return jsonTree{}
	}
	return jsonTree{ix: &rawIndex{w: rawWalker{s: root.Raw}}}
}

// members is a scan of the members or elements of an object or array:
// over its text alone, or over the document with the extents recorded.
type members struct {
	ix *rawIndex // counts the bytes read, if set
	// w.s is the text scanned: the value's, or the document's up to the
	// value's end; w.ext is nil (scan w.s alone) or the document's extents.
	w rawWalker
	i int // where the next item starts in w.s
	c int // with extents: the first that may start at or after i
}

// scan starts a scan of the object or array n (see prepare).
func (t jsonTree) scan(n gjson.Result) (m members) {
	m.w.s, m.i = n.Raw, 1
	ix := t.ix
	if ix == nil || !ix.built || ix.w.ext == nil {
		m.ix = ix
		return m
	}
	off := offsetIn(ix.w.s, n.Raw)
	if off < 0 {
		return m
	}
	m.w.s, m.w.ext, m.i = ix.w.s[:off+len(n.Raw)], ix.w.ext, off+1
	m.c = ix.firstAfter(off)
	return m
}

// firstAfter returns the index of the first extent that starts after
// off. It tries first the extents after the one it returned last, where a
// descent, reading a value after its parent, finds them.
func (ix *rawIndex) firstAfter(off int) int {
	ext, o := ix.w.ext, uint32(off)
	after := func(h int) bool {
		return h <= len(ext) && (h == len(ext) || ext[h].start > o) && (h == 0 || ext[h-1].start <= o)
	}
	h := ix.hint + 1
	if !after(h) {
		if h = ix.hint; !after(h) {
			h = sort.Search(len(ext), func(k int) bool { return ext[k].start > o })
		}
	}
	ix.hint = h
	return h
}

// prepare is called before a scan: once the scans have read three times
// the document's size, it builds the document's extents, which the scans that
// follow step over. It returns the steps building them cost (0 if nothing
// was built), more than left if the build was cut short. (It costs about
// what one more scan of the document would: see buildExtents.)
func (t jsonTree) prepare(left int) (cost int) {
	ix := t.ix
	if ix == nil || ix.built || ix.read <= 3*len(ix.w.s) {
		return 0
	}
	ix.built = true
	b := budget{maxSteps: left, maxDepth: math.MaxInt}
	if left == math.MaxInt {
		b.maxSteps = -1
	}
	if ext, err := buildExtents(ix.w.s, &b); err == nil {
		ix.w.ext = ext
	}
	return b.steps
}

// next reads the next item, as scanItem does, reading no further than
// what steps pay for; it returns the value's text, and cost, as scanItem's
// (stepped-over values cost nothing beyond their item's step).
func (m *members) next(object bool, steps int) (key, val string, ok bool, cost int) {
	if m.w.ext == nil {
		from := m.i
		key, _, val, m.i, ok, cost = scanItem(m.w.s, m.i, object, steps)
		if m.ix != nil {
			m.ix.read += m.i - from
		}
		return key, val, ok, cost
	}
	var start, end int
	key, start, end, _, m.c, ok, cost = m.w.item(m.i, object, m.c, steps)
	if !ok {
		return "", "", false, cost
	}
	m.i = end
	return key, m.w.s[start:end], true, cost
}

// rest is the text after the items read so far.
func (m *members) rest() string { return m.w.s[m.i:] }

// lookup returns the member of the object n named seg.name. When the name
// occurs more than once the last occurrence wins, as in encoding/json.
// The scan stops at the first occurrence unless the rest of the object
// may hold another (see mayRepeat), so that a document without duplicate
// keys costs little more than a lookup that keeps the first. cost is the
// steps the lookup took, added to cost0; the lookup stops when it exceeds
// left.
func (t jsonTree) lookup(n gjson.Result, seg *segment, left, cost0 int) (_ gjson.Result, found bool, cost int) {
	cost = cost0
	if !n.IsObject() {
		return gjson.Result{}, false, cost
	}
	if cost += t.prepare(left - cost); cost > left {
		return gjson.Result{}, false, cost
	}
	m := t.scan(n)
	var val string
	checked := false
	for {
		k, v, ok, c := m.next(true, left-cost)
		meter.did(c)
		if cost += c; cost > left {
			return gjson.Result{}, false, cost
		}
		if !ok {
			break
		}
		match, kc := keyIs(k, seg.name, left-cost)
		if kc > 0 {
			meter.did(kc)
			if cost += kc; cost > left {
				return gjson.Result{}, false, cost
			}
		}
		if !match {
			continue
		}
		val, found = v, true
		if checked || m.w.ext != nil { // stepping over the members costs less than a search
			continue
		}
		checked = true // from here on, scan to the end
		rest := m.rest()
		if t.ix != nil {
			t.ix.read += len(rest)
		}
		c = len(rest) / scanBytesPerStep
		if cost += c; cost > left {
			return gjson.Result{}, false, cost
		}
		meter.did(c)
		if !mayRepeat(rest, seg) {
			break
		}
	}
	if !found {
		return gjson.Result{}, false, cost
	}
	return parse(val, left, cost)
}

// parse parses the text of a selected value, charging it after cost0
// (see lookup).
func parse(val string, left, cost0 int) (_ gjson.Result, ok bool, cost int) {
	c := parseCost(val)
	if cost = cost0 + c; cost > left {
		return gjson.Result{}, false, cost
	}
	meter.did(c)
	return parseRaw(val), true, cost
}

// mayRepeat reports whether the text rest, which follows a member named
// seg.name in an object, may hold another member of that name. The member
// must spell the name either as is, so that the quoted name occurs in
// rest, or with escapes, which, for a name without characters JSON must
// escape, are \u or \/. mayRepeat searches for those, which is several
// times faster than scanning the members, and steps over the members of
// the object only to tell whether an occurrence of the quoted name is a
// key of the object or lies inside the value of another member.
func mayRepeat(rest string, seg *segment) bool {
	if seg.quoted == "" || hasEscape(rest) {
		return true
	}
	m, fails := 0, 0 // rest[:m] is whole members of the object
	for i := 0; ; {
		q := find(rest, i, seg.quoted, seg.anchor, &fails)
		if q < 0 {
			return q == -2 // then scan the members
		}
		for m <= q {
			_, at, _, next, ok := nextItem(rest, m, true)
			switch {
			case !ok: // the end of the object, or not JSON
				return next >= len(rest) || rest[next] != '}'
			case at == q:
				return true
			}
			m = next
		}
		i = max(m, q+1) // the occurrence is inside a member's key or value
	}
}

// find returns the position of the first occurrence of needle in s at or
// after i, or -1; or -2 once *fails, the candidates it rejected in s,
// exceed a sixteenth of s (on hostile input only). It finds candidates with strings.IndexByte by the
// byte of needle at anchor, chosen to be a rare one: strings.Index finds
// them by the first byte, a quote, the most frequent byte of JSON.
func find(s string, i int, needle string, anchor int, fails *int) int {
	c := needle[anchor]
	for i += anchor; i < len(s); i++ {
		j := strings.IndexByte(s[i:], c)
		if j < 0 {
			return -1
		}
		i += j
		if at := i - anchor; at+len(needle) <= len(s) && s[at:at+len(needle)] == needle {
			return at
		}
		if *fails++; *fails > 16+len(s)/16 {
			return -2
		}
	}
	return -1
}

// hasEscape reports whether s holds the escape \u or \/.
func hasEscape(s string) bool {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 || i+j+1 >= len(s) {
			return false
		}
		i += j + 1
		if c := s[i]; c == 'u' || c == '/' {
			return true
		}
		i++ // the escaped character, which may be a backslash
	}
}

// quotedName returns name as a JSON string if no character of it needs
// escaping, else "" (names longer than 60 bytes too, to bound the cost of
// comparing candidates), and the position in it of the byte least likely
// to occur in a Kubernetes object (see byteRank).
func quotedName(name string) (quoted string, anchor int) {
	if len(name) > 60 {
		return "", 0
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c == '"' || c == '\\' {
			return "", 0
		}
	}
	quoted = `"` + name + `"`
	for i := 1; i < len(quoted); i++ {
		if byteRank(quoted[i]) < byteRank(quoted[anchor]) {
			anchor = i
		}
	}
	return quoted, anchor
}

// byteRank ranks bytes by how often they occur in the JSON of Kubernetes
// objects, roughly: quotes and punctuation most, then lowercase letters
// in the order of English, then digits, then the rest (upper case
// letters, mostly).
func byteRank(c byte) int {
	const lower = "zqjxkvbpygfwmucdlhrsnioate" // rare first
	switch {
	case c == '"' || c == ':' || c == ',' || c == ' ':
		return 100
	case 'a' <= c && c <= 'z':
		return 10 + strings.IndexByte(lower, c)
	case '0' <= c && c <= '9':
		return 20
	case c == '.' || c == '-' || c == '/' || c == '_':
		return 15
	}
	return 0
}

func (t jsonTree) walk(n gjson.Result, segs []segment, left int) (_ gjson.Result, done, cost int) {
	for i := range segs {
		s := &segs[i]
		var c gjson.Result
		var ok bool
		if s.kind == segField {
			c, ok, cost = t.lookup(n, s, left, cost)
			if !ok && s.alt != nil && cost <= left {
				// A dotted key the object lacks: its parts (see dottedKey).
				var done, more int
				c, done, more = t.walk(n, s.alt, left-cost)
				ok, cost = done == len(s.alt), cost+more
			}
		} else {
			c, ok, cost = t.index(n, s.index, left, cost)
		}
		if !ok || cost > left {
			return n, i, cost
		}
		n = c
	}
	return n, len(segs), cost
}

// index returns element i of an array; negative i counts from the end.
// Its cost is added to cost0 (see lookup).
func (t jsonTree) index(n gjson.Result, i, left, cost0 int) (_ gjson.Result, found bool, cost int) {
	cost = cost0
	if !n.IsArray() {
		return gjson.Result{}, false, cost
	}
	if cost += t.prepare(left - cost); cost > left {
		return gjson.Result{}, false, cost
	}
	if i < 0 { // count the elements first
		length := 0
		for m := t.scan(n); ; length++ {
			_, _, ok, c := m.next(false, left-cost)
			meter.did(c)
			if cost += c; cost > left {
				return gjson.Result{}, false, cost
			}
			if !ok {
				break
			}
		}
		if i += length; i < 0 {
			return gjson.Result{}, false, cost
		}
	}
	for m, k := t.scan(n), 0; ; k++ {
		_, v, ok, c := m.next(false, left-cost)
		meter.did(c)
		if cost += c; cost > left || !ok {
			return gjson.Result{}, false, cost
		}
		if k == i {
			return parse(v, left, cost)
		}
	}
}

func (t jsonTree) elems(n gjson.Result, left int) (_ []gjson.Result, isArray bool, cost int) {
	if !n.IsArray() {
		return nil, false, 0
	}
	if cost = t.prepare(left); cost > left {
		return nil, true, cost
	}
	el, c := t.items(n, left-cost)
	return el, true, cost + c
}

// items returns the elements of the array n, and the cost of scanning,
// parsing and keeping them; it stops when that exceeds left.
func (t jsonTree) items(n gjson.Result, left int) (el []gjson.Result, cost int) {
	for m := t.scan(n); ; {
		_, v, ok, c := m.next(false, left-cost)
		if ok {
			c += keepCost + parseCost(v)
			if len(el) == cap(el) {
				c += growCost(len(el) * int(unsafe.Sizeof(gjson.Result{})))
			}
		}
		meter.did(c)
		if cost += c; cost > left {
			return nil, cost
		}
		if !ok {
			return el, cost
		}
		el = append(el, parseRaw(v))
	}
}

func (t jsonTree) children(n gjson.Result, left int) (_ []gjson.Result, cost int) {
	switch {
	case n.IsArray(), n.IsObject():
		if cost = t.prepare(left); cost > left {
			return nil, cost
		}
	default:
		return nil, 0
	}
	if n.IsArray() {
		el, c := t.items(n, left-cost)
		return el, cost + c
	}
	m := t.scan(n)
	buf := kvBuffers.Get().(*[]keyValue)
	ms, c := sortedMembers(&m, left-cost, (*buf)[:0])
	var vs []gjson.Result
	if cost += c; len(ms) > 0 {
		vs = make([]gjson.Result, len(ms))
		for i := range ms {
			vs[i] = ms[i].val
		}
	}
	clear(ms[:cap(ms)]) // no reference to this document outlives the call
	*buf = ms[:0]
	kvBuffers.Put(buf)
	return vs, cost
}

func (jsonTree) value(n gjson.Result) (Value, error) {
	var v Value
	setJSONValue(&v, n)
	return v, nil
}

func (jsonTree) compareLit(n gjson.Result, lit *Value, op cmpOp) (result, ok bool) {
	if lit.kind == KindString && n.Type == gjson.String {
		return compareStrings(stringOf(n), lit.str, op), true
	}
	return false, false
}

func (jsonTree) convCost(n gjson.Result) int {
	if n.Type == gjson.Number {
		return numCost(n.Raw)
	}
	return 0
}

func (jsonTree) check(gjson.Result) error { return nil }

// bytesView returns data as a string without copying. The string is
// valid only while data is not modified.
func bytesView(data []byte) string {
	return unsafe.String(unsafe.SliceData(data), len(data))
}

// detachCost returns the steps the copy detach makes of v costs: a step per
// textBytesPerStep bytes of a string, and per copyBytesPerStep bytes of the
// text of a map or list.
func detachCost(v *Value) int {
	switch v.kind {
	case KindString:
		return len(v.str) / textBytesPerStep
	case KindMap, KindList:
		return len(v.str) / copyBytesPerStep
	}
	return 0
}

// copyCost returns the steps the copy detach makes of v costs, when the
// values before it were charged with cover the text of the last map or
// list copied, and what cover is after v: a map or list inside cover is
// not copied (it refers into cover's copy), and costs nothing.
func copyCost(v *Value, cover string) (cost int, after string) {
	if (v.kind == KindMap || v.kind == KindList) && v.ref == nil && v.str != "" {
		if cover != "" && offsetIn(cover, v.str) >= 0 {
			return 0, cover
		}
		cover = v.str
	}
	return detachCost(v), cover
}

// detach makes the Values of one Eval call on the JSON document view
// independent of it: strings are cloned, and the raw text of maps and
// lists is copied, except for a map or list inside the last one copied
// (in the order of vs), which refers into that copy: values found by
// descent after the value they are nested in share its copy. It copies
// no more than the evaluation charged as it produced the values (see
// copyCost, which follows the same rule), however large the rest of the
// document.
func detach(vs []Value, view string) {
	var cover, copied string // the text of the last map or list copied, and its copy
	for i := range vs {
		v := &vs[i]
		switch {
		case v.kind == KindString:
			meter.did(detachCost(v))
			*v = v.Clone()
		case (v.kind == KindMap || v.kind == KindList) && v.ref == nil && v.str != "":
			if cover != "" {
				if off := offsetIn(cover, v.str); off >= 0 {
					v.str = copied[off : off+len(v.str)]
					continue
				}
			}
			meter.did(detachCost(v))
			cover, copied = v.str, strings.Clone(v.str)
			v.str = copied
		}
	}
}

// offsetIn returns the position of sub in s, if sub is a substring of s
// (shares its memory), else -1.
func offsetIn(s, sub string) int {
	base := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	if p < base || p-base+uintptr(len(sub)) > uintptr(len(s)) {
		return -1
	}
	return int(p - base)
}
