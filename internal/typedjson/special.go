package typedjson

import (
	"reflect"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Three apimachinery types whose UnmarshalJSON decodes its input again with encoding/json
// (about half a microsecond and three allocations a call; a Pod has a dozen of them) get
// the same result directly in their common case: a timestamp string that time.Parse
// accepts, an IntOrString's string or int32. Anything else (null, escapes in a timestamp,
// other values, parse errors) goes to the method itself, so the results and errors are
// the method's; TestSpecialTypes and FuzzSpecial check that against the methods.

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
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
			s, end, err := d.str(i + 1)
			if err != nil {
				return end, err
			}
			v.Type, v.StrVal = intstr.String, d.string(s)
			return end, nil
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
