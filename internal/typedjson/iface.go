package typedjson

import (
	"encoding/json"
	"reflect"
	"strconv"
	"unsafe"
)

// Interfaces. An interface that holds a non-nil pointer is decoded through the pointer
// (for null, only if it points to a pointer), as encoding/json does; otherwise an empty
// interface gets the value as map[string]any, []any, string, bool, nil, and int64 for an
// integer that fits (no fraction, no exponent) or float64 for any other number (the
// "preserve ints" of sigs.k8s.io/json), and an interface with methods accepts only null.

func ifaceDec(t reflect.Type) decFunc {
	empty := t.NumMethod() == 0
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		if empty && *(*any)(p) == nil {
			v, end, err := d.anyValue(i)
			if err == nil {
				*(*any)(p) = v
			}
			return end, err
		}
		iv := reflect.NewAt(t, p).Elem()
		if !iv.IsNil() {
			e := iv.Elem()
			null := i < len(d.data) && d.data[i] == 'n'
			if e.Kind() == reflect.Pointer && !e.IsNil() && (!null || e.Type().Elem().Kind() == reflect.Pointer) {
				if d.hops++; d.hops > maxDepth {
					return i, errDepth
				}
				end, err := d.intoPointer(e.Type(), e.UnsafePointer(), i)
				d.hops--
				return end, err
			}
		}
		return d.ifaceValue(t, p, i)
	}
}

// ifaceValue replaces the interface of type t at p with the value at i.
func (d *decoder) ifaceValue(t reflect.Type, p unsafe.Pointer, i int) (int, error) {
	if t.NumMethod() == 0 {
		v, end, err := d.anyValue(i)
		if err == nil {
			*(*any)(p) = v
		}
		return end, err
	}
	if i < len(d.data) && d.data[i] == 'n' {
		end, err := d.literal(i, "null")
		if err == nil {
			reflect.NewAt(t, p).Elem().SetZero()
		}
		return end, err
	}
	return d.mismatch(t, i)
}

// anyValue decodes the value at i as encoding/json decodes it into an empty interface.
func (d *decoder) anyValue(i int) (any, int, error) {
	data := d.data
	if i >= len(data) {
		return nil, i, d.errEOF()
	}
	switch c := data[i]; c {
	case '{':
		return d.anyObject(i)
	case '[':
		return d.anyArray(i)
	case '"':
		s, end, err := d.str(i + 1)
		if err != nil {
			return nil, end, err
		}
		return d.string(s), end, nil
	case 't':
		end, err := d.literal(i, "true")
		return true, end, err
	case 'f':
		end, err := d.literal(i, "false")
		return false, end, err
	case 'n':
		end, err := d.literal(i, "null")
		return nil, end, err
	default:
		if c == '-' || c-'0' <= 9 {
			return d.anyNumber(i)
		}
		return nil, i, d.syntaxErr(i, "invalid character "+quoteChar(c)+" looking for beginning of value")
	}
}

var float64Type = reflect.TypeFor[float64]()

// anyNumber decodes the number at i as an int64 if it is an integer that fits, else as a
// float64; a magnitude beyond float64's range is an error.
func (d *decoder) anyNumber(i int) (any, int, error) {
	end, isInt, err := d.scanNumber(i)
	if err != nil {
		return nil, end, err
	}
	lit := d.data[i:end]
	if isInt {
		if n, ok := parseInt(lit); ok {
			return n, end, nil
		}
	}
	f, err := strconv.ParseFloat(view(lit), 64)
	if err != nil {
		return nil, end, &json.UnmarshalTypeError{Value: "number " + string(lit), Type: float64Type, Offset: int64(end)}
	}
	return f, end, nil
}

func (d *decoder) anyObject(i int) (any, int, error) {
	if err := d.enter(i); err != nil {
		return nil, i, err
	}
	data := d.data
	m := make(map[string]any)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		d.depth--
		return m, i + 1, nil
	}
	for {
		var err error
		if i, err = d.objectKey(i); err != nil {
			return nil, i, err
		}
		k, end, err := d.str(i + 1)
		if err != nil {
			return nil, end, err
		}
		key := d.string(k)
		if i, err = d.colon(end); err != nil {
			return nil, i, err
		}
		var v any
		if v, i, err = d.anyValue(i); err != nil {
			return nil, i, err
		}
		m[key] = v
		var more bool
		if i, more, err = d.next(i, '}'); err != nil {
			return nil, i, err
		}
		if !more {
			return m, i, nil
		}
	}
}

func (d *decoder) anyArray(i int) (any, int, error) {
	if err := d.enter(i); err != nil {
		return nil, i, err
	}
	data := d.data
	a := make([]any, 0)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		d.depth--
		return a, i + 1, nil
	}
	for {
		v, end, err := d.anyValue(i)
		if err != nil {
			return nil, end, err
		}
		a = append(a, v)
		var more bool
		if i, more, err = d.next(end, ']'); err != nil {
			return nil, i, err
		}
		if !more {
			return a, i, nil
		}
	}
}
