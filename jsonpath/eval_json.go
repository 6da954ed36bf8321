package jsonpath

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// JSON is a JSON document in its encoded form, as an API server sends
// it. Passed to Eval, AppendEval, Each, Execute or ExecuteString in place
// of a decoded object, it is read with gjson without being decoded: only
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

// jsonTree evaluates on raw JSON through gjson, without decoding the
// document: lookups scan only the objects on the path. Nodes are
// gjson.Results, which refer to the input text. When an object has
// duplicate keys, the last one wins, as in encoding/json and Kubernetes'
// decoders.
type jsonTree struct{}

// lookup returns the member of the object n named seg.name. When the name
// occurs more than once the last occurrence wins, as in encoding/json.
// The scan stops at the first occurrence unless the rest of the object
// may hold another (see mayRepeat), so that a document without duplicate
// keys costs little more than a lookup that keeps the first.
func (jsonTree) lookup(n gjson.Result, seg *segment) (gjson.Result, bool) {
	if !n.IsObject() {
		return gjson.Result{}, false
	}
	var out gjson.Result
	found, checked := false, false
	n.ForEach(func(k, v gjson.Result) bool {
		if k.Str != seg.name {
			return true
		}
		out, found = v, true
		if checked {
			return true
		}
		checked = true // from here on, scan to the end
		return mayRepeat(rest(n.Raw, v.Raw), seg)
	})
	return out, found
}

// rest returns the text of obj after its part part (a substring of it),
// or all of obj if part is not one.
func rest(obj, part string) string {
	off := uintptr(unsafe.Pointer(unsafe.StringData(part))) - uintptr(unsafe.Pointer(unsafe.StringData(obj)))
	if end := off + uintptr(len(part)); off < uintptr(len(obj)) && end <= uintptr(len(obj)) {
		return obj[end:]
	}
	return obj
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
	// The search is for the name and its closing quote, then for the
	// opening quote: strings.Index finds candidates by their first byte,
	// and quotes are frequent in JSON.
	tail := seg.quoted[1:]
	m := 0 // rest[:m] is whole members of the object
	for i := 0; ; {
		j := strings.Index(rest[i:], tail)
		if j < 0 {
			return false
		}
		if i += j; i == 0 || rest[i-1] != '"' {
			i++
			continue
		}
		q := i - 1 // the quote before the name
		for m <= q {
			key, end, more := nextMember(rest, m)
			switch {
			case !more:
				return end == len(rest) // false at the end of the object
			case key == q:
				return true
			}
			m = end
		}
		i = m // the occurrence is inside a member's key or value
	}
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

// nextMember scans the member of an object that follows position i of its
// text s, which is just after a member's value. It returns the positions
// of the key's opening quote and of the end of the value; more is false
// at the end of the object (then end is not len(s)) or at anything but a
// member (then end is len(s)).
func nextMember(s string, i int) (key, end int, more bool) {
	i = skipSpace(s, i)
	if i < len(s) && s[i] == '}' {
		return 0, i, false
	}
	if i >= len(s) || s[i] != ',' {
		return 0, len(s), false
	}
	if key = skipSpace(s, i+1); key >= len(s) || s[key] != '"' {
		return 0, len(s), false
	}
	if i = skipString(s, key); i >= len(s) {
		return 0, len(s), false
	}
	if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
		return 0, len(s), false
	}
	i = skipSpace(s, i+1)
	if end = skipValue(s, i); end == i || end >= len(s) {
		return 0, len(s), false
	}
	return key, end, true
}

// skipSpace returns the position of the first byte at or after i that is
// not white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the position just after the string that starts at
// s[i] (a quote), or len(s) if it does not end.
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		c := s[i]
		if c > '\\' {
			continue
		}
		if c == '"' {
			return i + 1
		}
		if c == '\\' {
			i++
		}
	}
	return len(s)
}

// skipValue returns the position just after the value that starts at
// s[i], or i if none does. It expects valid JSON.
func skipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = skipString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	for j := i; j < len(s); j++ { // a number or a literal
		switch s[j] {
		case ',', '}', ']', ' ', '\n', '\t', '\r':
			return j
		}
	}
	return len(s)
}

// quotedName returns name as a JSON string if no character of it needs
// escaping, else "". Names longer than 60 bytes get "" too: strings.Index
// is linear for needles up to 63 bytes only.
func quotedName(name string) string {
	if len(name) > 60 {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c == '"' || c == '\\' {
			return ""
		}
	}
	return `"` + name + `"`
}

func (t jsonTree) walk(n gjson.Result, segs []segment) (gjson.Result, int) {
	for i := range segs {
		s := &segs[i]
		var c gjson.Result
		var ok bool
		if s.kind == segField {
			c, ok = t.lookup(n, s)
		} else {
			c, ok = index(n, s.index)
		}
		if !ok {
			return n, i
		}
		n = c
	}
	return n, len(segs)
}

// index returns element i of an array; negative i counts from the end.
func index(n gjson.Result, i int) (gjson.Result, bool) {
	if !n.IsArray() {
		return gjson.Result{}, false
	}
	if i < 0 { // count the elements first, without allocating
		length := 0
		n.ForEach(func(_, _ gjson.Result) bool { length++; return true })
		if i += length; i < 0 {
			return gjson.Result{}, false
		}
	}
	var out gjson.Result
	found := false
	k := 0
	n.ForEach(func(_, v gjson.Result) bool {
		if k == i {
			out, found = v, true
			return false
		}
		k++
		return true
	})
	return out, found
}

func (jsonTree) elems(n gjson.Result) ([]gjson.Result, bool) {
	if !n.IsArray() {
		return nil, false
	}
	return n.Array(), true
}

func (jsonTree) children(n gjson.Result) []gjson.Result {
	switch {
	case n.IsArray():
		return n.Array()
	case n.IsObject():
		ms := sortedMembers(n)
		if len(ms) == 0 {
			return nil
		}
		vs := make([]gjson.Result, len(ms))
		for i := range ms {
			vs[i] = ms[i].val
		}
		return vs
	}
	return nil
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

func (jsonTree) scan(n gjson.Result) int {
	if n.Type != gjson.JSON {
		return 0
	}
	return len(n.Raw) / scanBytesPerStep
}

func (jsonTree) check(gjson.Result) error { return nil }

// bytesView returns data as a string without copying. The string is
// valid only while data is not modified.
func bytesView(data []byte) string {
	return unsafe.String(unsafe.SliceData(data), len(data))
}

// detacher makes Values of one Eval call on JSON independent of its input:
// strings are cloned, and the raw text of maps and lists is re-pointed
// into a single private copy of the document, made on first need.
type detacher struct {
	view string // the caller's buffer
	doc  string // private copy of view
}

func (d *detacher) detach(v Value) Value {
	switch v.kind {
	case KindString:
		return v.Clone()
	case KindMap, KindList:
		if v.ref != nil || v.str == "" {
			return v
		}
		base := uintptr(unsafe.Pointer(unsafe.StringData(d.view)))
		p := uintptr(unsafe.Pointer(unsafe.StringData(v.str)))
		if p < base || p-base+uintptr(len(v.str)) > uintptr(len(d.view)) {
			return v.Clone() // not from the buffer (cannot happen); copy it
		}
		if d.doc == "" {
			d.doc = strings.Clone(d.view)
		}
		off := int(p - base)
		v.str = d.doc[off : off+len(v.str)]
	}
	return v
}
