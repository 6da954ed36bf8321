package typedjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"unsafe"
)

// unmarshalerDec decodes into a t whose pointer type has UnmarshalJSON: the method gets
// the value's bytes, whatever the value (null included), once they are known to be valid
// JSON, as with encoding/json.
func unmarshalerDec(t reflect.Type) decFunc {
	w := typeWord(reflect.PointerTo(t))
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		end, err := d.skip(i)
		if err != nil {
			return end, err
		}
		u := pointerAny(w, p).(json.Unmarshaler)
		return end, u.UnmarshalJSON(d.data[i:end])
	}
}

// textDec decodes into a t whose pointer type has UnmarshalText (and not UnmarshalJSON): a
// string goes to the method, unescaped; null is decoded as for t's kind (other); any
// other value is an error.
func textDec(t reflect.Type, other decFunc) decFunc {
	w := typeWord(reflect.PointerTo(t))
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if i < len(data) && data[i] == '"' {
			end, rewrite, err := d.scanString(i + 1)
			if err != nil {
				return end, err
			}
			s := data[i+1 : end]
			if rewrite {
				s = unescape(nil, s) // the method's own: it may keep it (wrongly) or decode JSON itself
			}
			u := pointerAny(w, p).(encoding.TextUnmarshaler)
			return end + 1, u.UnmarshalText(s)
		}
		if i < len(data) && data[i] == 'n' {
			return other(d, p, i)
		}
		return d.mismatch(t, i)
	}
}
