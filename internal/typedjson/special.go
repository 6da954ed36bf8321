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
				if v, ok := parseUTCSeconds(data[i+1 : end]); ok && layout == time.RFC3339 {
					set(p, v)
					return end + 1, nil
				}
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

// parseUTCSeconds parses the form the API server writes a metav1.Time in,
// "2006-01-02T15:04:05Z" with a year from 1970 to 2999, to what
// time.Parse(time.RFC3339, s).Local() gives; ok is false for anything else, left to
// time.Parse. It does not go through time.Date's normalisation, half of what time.Parse
// costs; TestParseUTCSeconds compares the two.
func parseUTCSeconds(s []byte) (t time.Time, ok bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return t, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hour, minute, sec := num(s[11:13]), num(s[14:16]), num(s[17:19])
	if year < 1970 || year > 2999 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return t, false
	}
	return time.Unix(daysSinceEpoch(year, month, day)*86400+int64(hour*3600+minute*60+sec), 0), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysSinceEpoch is the number of days from 1970-01-01 to the date (proleptic Gregorian
// calendar; Howard Hinnant's days_from_civil).
func daysSinceEpoch(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400 // years are positive here
	yoe := year - era*400
	mp := (month + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era*146097 + doe - 719468)
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
	b := data[i+1 : end]
	if q, ok := d.quantities.get(b); ok {
		return q, end + 1, true, nil
	}
	// ParseQuantity may keep its input in the result: it gets a copy.
	str := string(b)
	q, err = resource.ParseQuantity(str)
	if err != nil {
		return resource.Quantity{}, end, false, nil
	}
	if d.quantities == nil {
		d.quantities = new(quantityCache)
	}
	d.quantities.put(str, q)
	return q, end + 1, true, nil
}

// quantityCache remembers the last quantities a decoder parsed (a Pod's are mostly the
// same few: "100m", "128Mi"), in slots chosen by keyHash, each the string and what
// ParseQuantity made of it. Only quantities held as an int64 are kept: one that holds an
// *inf.Dec would share it between results.
type quantityCache [32]struct {
	s string
	q resource.Quantity
}

func (c *quantityCache) get(b []byte) (resource.Quantity, bool) {
	if c == nil {
		return resource.Quantity{}, false
	}
	e := &c[keyHash(b)%uint32(len(c))]
	if e.s != string(b) || len(b) == 0 {
		return resource.Quantity{}, false
	}
	return e.q, true
}

func (c *quantityCache) put(s string, q resource.Quantity) {
	if quantityDecOffset < 0 || *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(&q), quantityDecOffset)) != nil {
		return
	}
	e := &c[keyHash([]byte(s))%uint32(len(c))]
	e.s, e.q = s, q
}

// quantityDecOffset is the offset in a resource.Quantity of its *inf.Dec (field d, a
// struct of that one pointer), -1 if the type has no such field: nothing is cached then.
var quantityDecOffset = func() int {
	f, ok := quantityType.FieldByName("d")
	if !ok || f.Type.Kind() != reflect.Struct || f.Type.NumField() != 1 || f.Type.Field(0).Type.Kind() != reflect.Pointer {
		return -1
	}
	return int(f.Offset)
}()
