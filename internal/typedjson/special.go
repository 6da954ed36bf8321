package typedjson

import (
	"reflect"
	"strings"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Four apimachinery types that are in most objects (a Pod has about twenty of them) get
// the result of their UnmarshalJSON directly in their common case, without the method's
// second decoding by encoding/json (metav1.Time, MicroTime and intstr.IntOrString: half a
// microsecond and three allocations a call) or its copy of the input (resource.Quantity):
// a timestamp string that time.Parse accepts, an IntOrString's string or int32, a
// quantity string that resource.ParseQuantity accepts. Anything else (null, strings with
// escapes, other values, parse errors) goes to the method itself, so the
// results and errors are the method's; TestSpecialTypes and FuzzUnmarshal check that
// against the methods.

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
)

// specialDec returns the decoder of t if it is one of those types, nil otherwise.
func specialDec(t reflect.Type) decFunc {
	switch t {
	case timeType:
		return timeDec(time.RFC3339, func(p unsafe.Pointer, v time.Time) { (*metav1.Time)(p).Time = v }, unmarshalerDec(t))
	case microTimeType:
		return timeDec(metav1.RFC3339Micro, func(p unsafe.Pointer, v time.Time) { (*metav1.MicroTime)(p).Time = v }, unmarshalerDec(t))
	case intOrStringType:
		return intOrStringDec(unmarshalerDec(t))
	case quantityType:
		method := unmarshalerDec(t)
		return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
			if q, end, ok, err := d.quantity(i); ok || err != nil {
				if err == nil {
					*(*resource.Quantity)(p) = q
				}
				return end, err
			}
			return method(d, p, i)
		}
	}
	return nil
}

// timeDec decodes what metav1.Time.UnmarshalJSON (layout RFC3339) and
// metav1.MicroTime.UnmarshalJSON (RFC3339Micro) decode: time.Parse(layout, s).Local() of
// a string s.
func timeDec(layout string, set func(unsafe.Pointer, time.Time), method decFunc) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if i < len(data) && data[i] == '"' {
			end, rewrite, err := d.scanString(i + 1)
			if err != nil {
				return end, err
			}
			if !rewrite {
				// time.Parse keeps nothing of its input when it succeeds with these
				// layouts (no zone names).
				if v, err := time.Parse(layout, view(data[i+1:end])); err == nil {
					set(p, v.Local())
					return end + 1, nil
				}
			}
		}
		return method(d, p, i)
	}
}

// intOrStringDec decodes what intstr.IntOrString.UnmarshalJSON decodes: a string sets
// Type and StrVal, an integer that fits an int32 sets Type and IntVal.
func intOrStringDec(method decFunc) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		v := (*intstr.IntOrString)(p)
		if i < len(data) && data[i] == '"' {
			end, rewrite, err := d.scanString(i + 1)
			if err != nil {
				return end, err
			}
			if !rewrite {
				v.Type, v.StrVal = intstr.String, d.string(data[i+1:end])
				return end + 1, nil
			}
		}
		if d.isNumberStart(i) {
			end, isInt, err := d.scanNumber(i)
			if err != nil {
				return end, err
			}
			if isInt {
				if n, ok := parseInt(data[i:end]); ok && int64(int32(n)) == n {
					v.Type, v.IntVal = intstr.Int, int32(n)
					return end, nil
				}
			}
		}
		return method(d, p, i)
	}
}

// quantityValue decodes the value at i as resource.Quantity.UnmarshalJSON decodes it into
// a zero Quantity.
func (d *decoder) quantityValue(i int) (resource.Quantity, int, error) {
	q, end, ok, err := d.quantity(i)
	if ok || err != nil {
		return q, end, err
	}
	if end, err = d.skip(i); err != nil {
		return q, end, err
	}
	return q, end, q.UnmarshalJSON(d.data[i:end])
}

// quantity decodes the common case of a quantity at i, a string without escapes or space
// around it that ParseQuantity accepts, as UnmarshalJSON does; ok is false for any other
// value (err is set only for invalid JSON).
func (d *decoder) quantity(i int) (q resource.Quantity, end int, ok bool, err error) {
	data := d.data
	if i >= len(data) || data[i] != '"' {
		return q, i, false, nil
	}
	end, rewrite, err := d.scanString(i + 1)
	if err != nil || rewrite {
		return q, end, false, err
	}
	if s := view(data[i+1 : end]); len(s) == 0 || strings.TrimSpace(s) != s {
		return q, end, false, nil
	}
	// ParseQuantity may keep its input in the result: it gets a copy.
	q, err = resource.ParseQuantity(d.string(data[i+1 : end]))
	if err != nil {
		return resource.Quantity{}, end, false, nil
	}
	return q, end + 1, true, nil
}
