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
// KindFloat. (When an object has duplicate keys, the first one wins, where
// those decoders keep the last; API servers do not send duplicates.)
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
// gjson.Results, which refer to the input text.
//
// When an object has duplicate keys, the first one wins (encoding/json
// and Kubernetes' decoders keep the last); API servers never send
// duplicate keys.
type jsonTree struct{}

func (jsonTree) lookup(n gjson.Result, key string) (gjson.Result, bool) {
	if !n.IsObject() {
		return gjson.Result{}, false
	}
	var out gjson.Result
	found := false
	n.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			out, found = v, true
			return false
		}
		return true
	})
	return out, found
}

func (t jsonTree) walk(n gjson.Result, segs []segment) (gjson.Result, int) {
	for i := range segs {
		s := &segs[i]
		var c gjson.Result
		var ok bool
		if s.kind == segField {
			c, ok = t.lookup(n, s.name)
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
