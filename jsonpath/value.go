package jsonpath

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds of Value. The zero Value has KindInvalid.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindInt   // an integer that fits int64
	KindFloat // any other number
	KindString
	KindMap  // a JSON object
	KindList // a JSON array
)

var kindNames = [...]string{"invalid", "null", "bool", "int", "float", "string", "map", "list"}

// String returns the kind's name in lower case ("invalid", "null", "bool", "int", "float",
// "string", "map", "list"), or "Kind(n)" for a value that is none of them.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one result of an evaluation. It is a small struct, passed by
// value; it never boxes scalars. A Value of KindMap or KindList refers to
// the evaluated data (the map or slice of a decoded object, or the raw
// JSON text of a JSON document); it does not copy it. Compare Values by Kind and
// String: == panics on Values that hold maps or lists.
type Value struct {
	kind Kind
	f32  bool   // KindFloat that came from a float32: printed with 32-bit precision
	bits uint64 // KindBool (0/1), KindInt (int64 bits), KindFloat (float64 bits)
	str  string // KindString; raw JSON text of a KindMap/KindList from JSON
	ref  any    // map[string]any or []any of a KindMap/KindList from a decoded object
}

func nullValue() Value           { return Value{kind: KindNull} }
func boolValue(b bool) Value     { v := Value{kind: KindBool}; v.setBool(b); return v }
func intValue(i int64) Value     { return Value{kind: KindInt, bits: uint64(i)} }
func floatValue(f float64) Value { return Value{kind: KindFloat, bits: math.Float64bits(f)} }
func stringValue(s string) Value { return Value{kind: KindString, str: s} }

func (v *Value) setBool(b bool) {
	if b {
		v.bits = 1
	}
}

func (v Value) int() int64     { return int64(v.bits) }
func (v Value) float() float64 { return math.Float64frombits(v.bits) }
func (v Value) bool() bool     { return v.bits != 0 }

// Kind returns the JSON type of v.
func (v Value) Kind() Kind { return v.kind }

// IsScalar reports whether v is a string, number or boolean: a value
// whose String form is usable as an index key. Null, maps, lists and the
// zero Value are not scalars.
func (v Value) IsScalar() bool {
	switch v.kind {
	case KindBool, KindInt, KindFloat, KindString:
		return true
	}
	return false
}

// String returns the canonical text of v, which is what kubectl prints
// for it with -o jsonpath:
//
//   - a string is itself, unquoted;
//   - an int is in decimal; a float is formatted like fmt.Sprint does
//     ("1.5", "1e+21", "1e+06");
//   - a bool is "true" or "false"; null is "null";
//   - a map or list is compact JSON as encoding/json.Marshal writes it
//     (keys sorted, HTML characters escaped).
//
// The zero Value returns "". String does not allocate for strings. If a
// map or list cannot be encoded (it holds a NaN, an unsupported Go type
// or nests deeper than MaxDataDepth) String returns "!(ERROR ...)".
func (v Value) String() string {
	switch v.kind {
	case KindInvalid:
		return ""
	case KindString:
		return v.str
	case KindNull:
		return "null"
	case KindBool:
		return strconv.FormatBool(v.bool())
	case KindInt:
		return strconv.FormatInt(v.int(), 10)
	case KindFloat:
		if v.f32 {
			return strconv.FormatFloat(v.float(), 'g', -1, 32)
		}
		return strconv.FormatFloat(v.float(), 'g', -1, 64)
	}
	b, err := v.appendJSON(nil, nil)
	if err != nil {
		return "!(ERROR " + err.Error() + ")"
	}
	return string(b)
}

// AppendText appends the canonical text of v (see String) to dst. It
// lets callers build composite keys without allocating.
func (v Value) AppendText(dst []byte) ([]byte, error) {
	return v.appendText(dst, nil)
}

// appendText appends the canonical text; b is the encoding budget for
// maps and lists (nil means unlimited).
func (v Value) appendText(dst []byte, b *budget) ([]byte, error) {
	switch v.kind {
	case KindInvalid:
		return dst, nil
	case KindNull:
		return append(dst, "null"...), nil
	case KindBool:
		return strconv.AppendBool(dst, v.bool()), nil
	case KindInt:
		return strconv.AppendInt(dst, v.int(), 10), nil
	case KindFloat:
		if v.f32 {
			return strconv.AppendFloat(dst, v.float(), 'g', -1, 32), nil
		}
		return strconv.AppendFloat(dst, v.float(), 'g', -1, 64), nil
	case KindString:
		return append(dst, v.str...), nil
	}
	return v.appendJSON(dst, b)
}

// appendJSON appends v as JSON, the way encoding/json.Marshal would.
func (v Value) appendJSON(dst []byte, b *budget) ([]byte, error) {
	switch v.kind {
	case KindMap, KindList:
		if v.ref != nil {
			return appendJSONAny(dst, v.ref, 0, b)
		}
		return appendJSONRaw(dst, v.str, b)
	case KindString:
		dst, ok := appendJSONStringCharged(dst, v.str, b)
		if !ok {
			return dst, b.err
		}
		return dst, nil
	case KindFloat:
		return appendJSONFloat(dst, v.float(), v.f32)
	case KindInvalid:
		return append(dst, "null"...), nil
	}
	return v.appendText(dst, b)
}

// Interface returns v as the Go value an unstructured object holds:
// nil, bool, int64, float64, string, map[string]any or []any. A map or
// list from a decoded object is returned as is (shared, not copied); one
// from raw JSON is decoded (and nil is returned if it nests deeper than
// MaxDataDepth). The zero Value returns nil.
func (v Value) Interface() any {
	switch v.kind {
	case KindBool:
		return v.bool()
	case KindInt:
		return v.int()
	case KindFloat:
		return v.float()
	case KindString:
		return v.str
	case KindMap, KindList:
		if v.ref != nil {
			return v.ref
		}
		x, err := decodeRaw(v.str)
		if err != nil {
			return nil
		}
		return x
	}
	return nil
}

// Clone returns a copy of v that shares no memory with the raw JSON it
// came from. Values passed to the Each callback for a JSON document refer
// to the caller's buffer; Clone them to keep them after the buffer
// changes. Values from a decoded object still refer to that object's maps
// and slices.
func (v Value) Clone() Value {
	v.str = strings.Clone(v.str)
	return v
}

// valueOf converts a Go value of a decoded object into a Value, without
// reflection. ok is false for unsupported types.
func valueOf(x any) (Value, bool) {
	var v Value
	ok := setValue(&v, x)
	return v, ok
}

// setValue stores x into *dst, which must be the zero Value. Hot paths
// build Values in place through it: returning a freshly built Value and
// copying it makes the CPU stall (a wide load of narrower pending
// stores), which once cost a third of an evaluation.
func setValue(dst *Value, x any) bool {
	switch t := x.(type) {
	case string:
		dst.kind, dst.str = KindString, t
	case map[string]any:
		dst.kind, dst.ref = KindMap, x
	case []any:
		dst.kind, dst.ref = KindList, x
	case int64:
		dst.kind, dst.bits = KindInt, uint64(t)
	case nil:
		dst.kind = KindNull
	case bool:
		dst.kind = KindBool
		dst.setBool(t)
	case float64:
		dst.kind, dst.bits = KindFloat, math.Float64bits(t)
	case int:
		dst.kind, dst.bits = KindInt, uint64(int64(t))
	case int32:
		dst.kind, dst.bits = KindInt, uint64(int64(t))
	case int16:
		dst.kind, dst.bits = KindInt, uint64(int64(t))
	case int8:
		dst.kind, dst.bits = KindInt, uint64(int64(t))
	case uint:
		*dst = uintValue(uint64(t))
	case uint64:
		*dst = uintValue(t)
	case uint32:
		dst.kind, dst.bits = KindInt, uint64(t)
	case uint16:
		dst.kind, dst.bits = KindInt, uint64(t)
	case uint8:
		dst.kind, dst.bits = KindInt, uint64(t)
	case float32:
		dst.kind, dst.bits, dst.f32 = KindFloat, math.Float64bits(float64(t)), true
	case json.Number:
		*dst = numberValue(string(t))
	default:
		return false
	}
	return true
}

// supported reports whether setValue accepts x, without converting it.
func supported(x any) bool {
	switch x.(type) {
	case string, map[string]any, []any, int64, nil, bool, float64,
		int, int32, int16, int8, uint, uint64, uint32, uint16, uint8, float32, json.Number:
		return true
	}
	return false
}

func uintValue(u uint64) Value {
	if u > math.MaxInt64 {
		return floatValue(float64(u))
	}
	return intValue(int64(u))
}

// numberValue converts the text of a JSON number the way Kubernetes'
// decoders do: an integer that fits int64 becomes KindInt exactly,
// anything else KindFloat. Text that is not a number becomes a string.
func numberValue(text string) Value {
	meter.did(numCost(text))
	if len(text) <= 32 { // longer ones are not int64 (ParseInt copies the text on error)
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return intValue(i)
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) {
		return stringValue(text)
	}
	return floatValue(f)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
