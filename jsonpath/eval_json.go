package jsonpath

import (
	"slices"
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
type jsonTree struct{}

// lookup returns the member of the object n named seg.name. When the name
// occurs more than once the last occurrence wins, as in encoding/json.
// The scan stops at the first occurrence unless the rest of the object
// may hold another (see mayRepeat), so that a document without duplicate
// keys costs little more than a lookup that keeps the first. cost is the
// steps the lookup took, added to cost0; the lookup stops when it exceeds
// left.
func (jsonTree) lookup(n gjson.Result, seg *segment, left, cost0 int) (_ gjson.Result, found bool, cost int) {
	cost = cost0
	if !n.IsObject() {
		return gjson.Result{}, false, cost
	}
	s := n.Raw
	var val string
	checked := false
	for i := 1; ; {
		k, _, v, next, ok, c := scanItem(s, i, true, left-cost)
		meter.did(c)
		if cost += c; cost > left {
			return gjson.Result{}, false, cost
		}
		if !ok {
			break
		}
		i = next
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
		if checked {
			continue
		}
		checked = true // from here on, scan to the end
		c = len(s[i:]) / scanBytesPerStep
		if cost += c; cost > left {
			return gjson.Result{}, false, cost
		}
		meter.did(c)
		if !mayRepeat(s[i:], seg) {
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
			c, ok, cost = index(n, s.index, left, cost)
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
func index(n gjson.Result, i, left, cost0 int) (_ gjson.Result, found bool, cost int) {
	cost = cost0
	if !n.IsArray() {
		return gjson.Result{}, false, cost
	}
	s := n.Raw
	if i < 0 { // count the elements first
		length := 0
		for j := 1; ; length++ {
			_, _, _, next, ok, c := scanItem(s, j, false, left-cost)
			meter.did(c)
			if cost += c; cost > left {
				return gjson.Result{}, false, cost
			}
			if !ok {
				break
			}
			j = next
		}
		if i += length; i < 0 {
			return gjson.Result{}, false, cost
		}
	}
	for j, k := 1, 0; ; k++ {
		_, _, v, next, ok, c := scanItem(s, j, false, left-cost)
		meter.did(c)
		if cost += c; cost > left || !ok {
			return gjson.Result{}, false, cost
		}
		if k == i {
			return parse(v, left, cost)
		}
		j = next
	}
}

func (jsonTree) elems(n gjson.Result, left int) (_ []gjson.Result, isArray bool, cost int) {
	if !n.IsArray() {
		return nil, false, 0
	}
	el, cost := items(n.Raw, left)
	return el, true, cost
}

// items returns the elements of the array s (its text), and the cost of
// scanning, parsing and keeping them; it stops when that exceeds left.
func items(s string, left int) (el []gjson.Result, cost int) {
	for j := 1; ; {
		_, _, v, next, ok, c := scanItem(s, j, false, left-cost)
		if ok {
			c += keepCost + parseCost(v)
		}
		meter.did(c)
		if cost += c; cost > left {
			return nil, cost
		}
		if !ok {
			return el, cost
		}
		el = append(el, parseRaw(v))
		j = next
	}
}

func (jsonTree) children(n gjson.Result, left int) ([]gjson.Result, int) {
	switch {
	case n.IsArray():
		return items(n.Raw, left)
	case n.IsObject():
		ms, cost := sortedMembers(n.Raw, left)
		if len(ms) == 0 {
			return nil, cost
		}
		vs := make([]gjson.Result, len(ms))
		for i := range ms {
			vs[i] = ms[i].val
		}
		return vs, cost
	}
	return nil, 0
}

func (jsonTree) value(n gjson.Result) (Value, error) {
	var v Value
	setJSONValue(&v, n)
	return v, nil
}

func (jsonTree) compareLit(n gjson.Result, lit *Value, op cmpOp) (result, ok bool) {
	if lit.kind == KindString && n.Type == gjson.String {
		return compareStrings(n.Str, lit.str, op), true
	}
	return false, false
}

func (jsonTree) convCost(n gjson.Result) int {
	if n.Type == gjson.Number {
		return numCost(len(n.Raw))
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

// detach makes the Values of one Eval call on the JSON document view
// independent of it: strings are cloned, and the raw text of maps and
// lists is re-pointed into copies of the outermost of them (a value nested
// in another shares its copy). It copies no more than the text of the
// values, which the evaluation charged as it produced them (see
// detachCost), however large the rest of the document.
func detach(vs []Value, view string) {
	var buf [8]int
	raw := buf[:0] // the maps and lists in view, by position
	for i := range vs {
		v := &vs[i]
		switch {
		case v.kind == KindString:
			meter.did(detachCost(v))
			*v = v.Clone()
		case (v.kind == KindMap || v.kind == KindList) && v.ref == nil && v.str != "":
			if offsetIn(view, v.str) < 0 {
				*v = v.Clone() // not from the buffer (cannot happen); copy it
				continue
			}
			raw = append(raw, i)
		}
	}
	if len(raw) > 1 {
		slices.SortFunc(raw, func(a, b int) int {
			oa, ob := offsetIn(view, vs[a].str), offsetIn(view, vs[b].str)
			if oa != ob {
				return oa - ob
			}
			return len(vs[b].str) - len(vs[a].str) // the outer one first
		})
	}
	var outer string // the copy of the last outermost value
	start, end := 0, -1
	for _, i := range raw {
		v := &vs[i]
		off := offsetIn(view, v.str)
		if off < start || off+len(v.str) > end {
			start, end = off, off+len(v.str)
			meter.did(detachCost(v))
			outer = strings.Clone(v.str)
		}
		v.str = outer[off-start : off-start+len(v.str)]
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
