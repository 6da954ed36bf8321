package typedjson

import (
	"fmt"
	"reflect"
	"strconv"
	"unsafe"
)

// Booleans, numbers and strings. Each accepts its own JSON value and null (which leaves
// it alone); any other value is a *json.UnmarshalTypeError, as with encoding/json.

func boolDec(t reflect.Type) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		if i < len(d.data) {
			switch d.data[i] {
			case 't':
				end, err := d.literal(i, "true")
				if err == nil {
					*(*bool)(p) = true
				}
				return end, err
			case 'f':
				end, err := d.literal(i, "false")
				if err == nil {
					*(*bool)(p) = false
				}
				return end, err
			}
		}
		return d.nullOr(t, i)
	}
}

// isNumberStart reports whether a number starts at i.
func (d *decoder) isNumberStart(i int) bool {
	return i < len(d.data) && (d.data[i] == '-' || d.data[i]-'0' <= 9)
}

// view is a string that shares the bytes of b, for strconv's parsers, which do not keep
// their input (their errors copy it).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// parseInt parses an integer literal as strconv.ParseInt(lit, 10, 64) does.
func parseInt(lit []byte) (int64, bool) {
	digits := lit
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		n, err := strconv.ParseInt(view(lit), 10, 64)
		return n, err == nil
	}
	var n int64
	for _, c := range digits {
		if c-'0' > 9 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseUint parses an integer literal as strconv.ParseUint(lit, 10, 64) does (a sign is
// an error, "-0" too).
func parseUint(lit []byte) (uint64, bool) {
	if len(lit) == 0 || len(lit) > 19 {
		n, err := strconv.ParseUint(view(lit), 10, 64)
		return n, err == nil
	}
	var n uint64
	for _, c := range lit {
		if c-'0' > 9 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// numDec returns the decoder of a number type: store parses a number literal (isInt: it has
// no fraction or exponent) into the value at p and reports whether it fits; null is left to
// nullOr.
func numDec(t reflect.Type, store func(p unsafe.Pointer, lit []byte, isInt bool) bool) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		if !d.isNumberStart(i) {
			return d.nullOr(t, i)
		}
		end, isInt, err := d.scanNumber(i)
		if err != nil {
			return end, err
		}
		lit := d.data[i:end]
		if !store(p, lit, isInt) {
			return end, d.rangeErr(lit, t, end)
		}
		return end, nil
	}
}

func intDec(t reflect.Type) decFunc {
	size := t.Size()
	return numDec(t, func(p unsafe.Pointer, lit []byte, _ bool) bool {
		n, ok := parseInt(lit)
		return ok && storeInt(p, size, n)
	})
}

// storeInt stores n in the signed integer of size bytes at p, if it fits.
func storeInt(p unsafe.Pointer, size uintptr, n int64) bool {
	switch size {
	case 1:
		if int64(int8(n)) != n {
			return false
		}
		*(*int8)(p) = int8(n)
	case 2:
		if int64(int16(n)) != n {
			return false
		}
		*(*int16)(p) = int16(n)
	case 4:
		if int64(int32(n)) != n {
			return false
		}
		*(*int32)(p) = int32(n)
	default:
		*(*int64)(p) = n
	}
	return true
}

func uintDec(t reflect.Type) decFunc {
	size := t.Size()
	return numDec(t, func(p unsafe.Pointer, lit []byte, _ bool) bool {
		n, ok := parseUint(lit)
		return ok && storeUint(p, size, n)
	})
}

// storeUint stores n in the unsigned integer of size bytes at p, if it fits.
func storeUint(p unsafe.Pointer, size uintptr, n uint64) bool {
	switch size {
	case 1:
		if uint64(uint8(n)) != n {
			return false
		}
		*(*uint8)(p) = uint8(n)
	case 2:
		if uint64(uint16(n)) != n {
			return false
		}
		*(*uint16)(p) = uint16(n)
	case 4:
		if uint64(uint32(n)) != n {
			return false
		}
		*(*uint32)(p) = uint32(n)
	default:
		*(*uint64)(p) = n
	}
	return true
}

func floatDec(t reflect.Type) decFunc {
	bits := t.Bits()
	return numDec(t, func(p unsafe.Pointer, lit []byte, isInt bool) bool {
		f, ok := parseFloat(lit, isInt, bits)
		if !ok {
			return false
		}
		if bits == 32 {
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
		return true
	})
}

// parseFloat parses a number literal as strconv.ParseFloat(lit, bits) does. Integers of
// up to 15 digits are exact in a float64, so converting them is the same as parsing them.
func parseFloat(lit []byte, isInt bool, bits int) (float64, bool) {
	if isInt && len(lit) <= 15 && lit[0] != '-' {
		n, _ := parseInt(lit)
		return float64(n), true
	}
	f, err := strconv.ParseFloat(view(lit), bits)
	return f, err == nil
}

func stringDec(t reflect.Type) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		if i < len(d.data) && d.data[i] == '"' {
			s, end, err := d.str(i + 1)
			if err == nil {
				*(*string)(p) = d.string(s)
			}
			return end, err
		}
		return d.nullOr(t, i)
	}
}

var stringType = reflect.TypeFor[string]()

// stringValue decodes the value at i as a string variable that starts empty: a string,
// or null (which leaves it empty).
func (d *decoder) stringValue(i int) (string, int, error) {
	if i < len(d.data) && d.data[i] == '"' {
		s, end, err := d.str(i + 1)
		if err != nil {
			return "", end, err
		}
		return d.string(s), end, nil
	}
	end, err := d.nullOr(stringType, i)
	return "", end, err
}

// numberDec decodes into a json.Number: a number's literal, or a string holding a valid
// one.
func numberDec(t reflect.Type) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if d.isNumberStart(i) {
			end, _, err := d.scanNumber(i)
			if err == nil {
				*(*string)(p) = d.string(data[i:end])
			}
			return end, err
		}
		if i < len(data) && data[i] == '"' {
			s, end, err := d.str(i + 1)
			if err != nil {
				return end, err
			}
			if !validNumber(s) {
				return end, fmt.Errorf("json: invalid number literal, trying to unmarshal %q into Number", data[i:end])
			}
			*(*string)(p) = d.string(s)
			return end, nil
		}
		return d.nullOr(t, i)
	}
}
