package typedjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unsafe"
)

// The ",string" option: the field's value is a JSON string holding the JSON of a bool,
// number or string (or null, itself or quoted). encoding/json is lax with what the string
// holds (integers go to strconv as they are, so "+1" and "01" are accepted), and so is
// this. Rare enough to go through reflection.

func errQuoted(item []byte, t reflect.Type) error {
	return fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, t)
}

// quoted decodes the value at i into the field of type t at p, which has the option.
func (d *decoder) quoted(t reflect.Type, p unsafe.Pointer, i int) (int, error) {
	data := d.data
	if i < len(data) {
		switch data[i] {
		case 'n':
			return planFor(t).dec(d, p, i)
		case '"':
			s, end, err := d.str(i + 1)
			if err != nil {
				return end, err
			}
			return end, quotedStore(reflect.NewAt(t, p).Elem(), append([]byte(nil), s...))
		}
	}
	end, err := d.skip(i)
	if err != nil {
		return end, err
	}
	return end, fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal unquoted value into %v", t)
}

// quotedStore stores in v the JSON text item that a quoted field's string held.
func quotedStore(v reflect.Value, item []byte) error {
	if len(item) == 0 {
		return errQuoted(item, v.Type())
	}
	null := item[0] == 'n'
	// Through pointers (allocating them, but stopping at one for null) and methods.
	for {
		if v.Kind() != reflect.Pointer && v.Type().Name() != "" {
			pv := v.Addr()
			if u, ok := pv.Interface().(json.Unmarshaler); ok {
				return u.UnmarshalJSON(item)
			}
			if u, ok := pv.Interface().(encoding.TextUnmarshaler); ok && !null {
				return quotedText(u, item, v.Type())
			}
		}
		if v.Kind() != reflect.Pointer || null {
			break
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if u, ok := v.Interface().(json.Unmarshaler); ok {
			return u.UnmarshalJSON(item)
		}
		if u, ok := v.Interface().(encoding.TextUnmarshaler); ok {
			return quotedText(u, item, v.Type())
		}
		v = v.Elem()
	}
	switch c := item[0]; {
	case c == 'n':
		if string(item) != "null" {
			return errQuoted(item, v.Type())
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
			v.SetZero()
		}
	case c == 't' || c == 'f':
		if string(item) != "true" && string(item) != "false" || v.Kind() != reflect.Bool {
			return errQuoted(item, v.Type())
		}
		v.SetBool(c == 't')
	case c == '"':
		s, ok := unquoteLoose(item)
		if !ok || v.Kind() != reflect.String {
			if ok {
				return &json.UnmarshalTypeError{Value: "string", Type: v.Type()}
			}
			return errQuoted(item, v.Type())
		}
		if v.Type() == numberType && !validNumber(s) {
			return fmt.Errorf("json: invalid number literal, trying to unmarshal %q into Number", item)
		}
		v.SetString(string(s))
	case c == '-' || c-'0' <= 9:
		return quotedNumber(v, item)
	default:
		return errQuoted(item, v.Type())
	}
	return nil
}

// quotedNumber stores the number text item (not necessarily valid JSON) in v.
func quotedNumber(v reflect.Value, item []byte) error {
	s := string(item)
	switch v.Kind() {
	case reflect.String:
		if v.Type() == numberType {
			v.SetString(s)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return &json.UnmarshalTypeError{Value: "number " + s, Type: v.Type()}
		}
		v.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v.OverflowUint(n) {
			return &json.UnmarshalTypeError{Value: "number " + s, Type: v.Type()}
		}
		v.SetUint(n)
		return nil
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil || v.OverflowFloat(n) {
			return &json.UnmarshalTypeError{Value: "number " + s, Type: v.Type()}
		}
		v.SetFloat(n)
		return nil
	}
	return errQuoted(item, v.Type())
}

// quotedText hands a quoted field's inner string to UnmarshalText.
func quotedText(u encoding.TextUnmarshaler, item []byte, t reflect.Type) error {
	if item[0] != '"' {
		return errQuoted(item, t)
	}
	s, ok := unquoteLoose(item)
	if !ok {
		return errQuoted(item, t)
	}
	return u.UnmarshalText(s)
}

// unquoteLoose unquotes a JSON string as encoding/json does for the inside of a quoted
// field, which it has not validated: "\'" is accepted, a raw quote or control character
// is not.
func unquoteLoose(item []byte) ([]byte, bool) {
	if len(item) < 2 || item[0] != '"' || item[len(item)-1] != '"' {
		return nil, false
	}
	s := item[1 : len(item)-1]
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			switch s[i+1] {
			case '"', '\\', '/', '\'', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(s[i+2:]) < 0 {
					return nil, false
				}
				i += 6
			default:
				return nil, false
			}
		case c == '"' || c < ' ':
			return nil, false
		default:
			i++
		}
	}
	return unescape(nil, s), true
}
