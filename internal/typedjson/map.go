package typedjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"unsafe"
)

// Maps. Keys may be strings, integers (the key's text in decimal) or types whose pointer
// has UnmarshalText (or UnmarshalJSON, which then gets the quoted key, as with
// encoding/json); each value is decoded into a zero value of the element type and then
// stored, replacing what the key held. A nil map is made on the first object; null sets it
// to nil.

// mapKey describes how a map's keys are made from an object's keys.
type mapKey int

const (
	keyInvalid mapKey = iota
	keyString
	keyInt
	keyUint
	keyText // UnmarshalText of the pointer type
	keyJSON // UnmarshalJSON of the pointer type, which has UnmarshalText too
)

func mapKeyOf(kt reflect.Type) mapKey {
	pt := reflect.PointerTo(kt)
	if pt.Implements(textUnmarshalerType) {
		if pt.Implements(unmarshalerType) {
			return keyJSON
		}
		return keyText
	}
	switch kt.Kind() {
	case reflect.String:
		return keyString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return keyInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return keyUint
	}
	return keyInvalid
}

var (
	mapStringString = reflect.TypeFor[map[string]string]()
	mapStringAny    = reflect.TypeFor[map[string]any]()
)

func (b *builder) mapDec(t reflect.Type) decFunc {
	switch t {
	case mapStringString:
		return mapOf((*decoder).stringValue)
	case mapStringAny:
		return mapOf((*decoder).anyValue)
	}
	kind := mapKeyOf(t.Key())
	elem := b.plan(t.Elem())
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if i < len(data) && data[i] == 'n' {
			end, err := d.literal(i, "null")
			if err == nil {
				*(*unsafe.Pointer)(p) = nil
			}
			return end, err
		}
		if i >= len(data) || data[i] != '{' || kind == keyInvalid {
			return d.mismatch(t, i)
		}
		mv := reflect.NewAt(t, p).Elem()
		if mv.IsNil() {
			mv.Set(reflect.MakeMap(t))
		}
		kv := reflect.New(t.Key())
		ev := reflect.New(t.Elem()).Elem()
		ep := ev.Addr().UnsafePointer()
		return d.members(i, func(start int, key []byte, i int) (int, error) {
			if err := d.mapKey(kind, kv, data[start:i], key); err != nil {
				return i, err
			}
			i, err := d.colon(i)
			if err != nil {
				return i, err
			}
			ev.SetZero()
			if i, err = elem.dec(d, ep, i); err != nil {
				return i, err
			}
			mv.SetMapIndex(kv.Elem(), ev)
			return i, nil
		})
	}
}

// mapKey sets *kv (kv a pointer) to the map key of kind for the object key key (raw is
// its JSON text, quotes included).
func (d *decoder) mapKey(kind mapKey, kv reflect.Value, raw, key []byte) error {
	kt := kv.Type().Elem()
	switch kind {
	case keyString:
		kv.Elem().SetString(d.string(key))
	case keyInt:
		n, err := strconv.ParseInt(view(key), 10, 64)
		if err != nil || kv.Elem().OverflowInt(n) {
			return &json.UnmarshalTypeError{Value: "number " + string(key), Type: kt, Offset: int64(len(raw))}
		}
		kv.Elem().SetInt(n)
	case keyUint:
		n, err := strconv.ParseUint(view(key), 10, 64)
		if err != nil || kv.Elem().OverflowUint(n) {
			return &json.UnmarshalTypeError{Value: "number " + string(key), Type: kt, Offset: int64(len(raw))}
		}
		kv.Elem().SetUint(n)
	case keyText:
		kv.Elem().SetZero()
		return kv.Interface().(encoding.TextUnmarshaler).UnmarshalText(append([]byte(nil), key...))
	case keyJSON:
		kv.Elem().SetZero()
		return kv.Interface().(json.Unmarshaler).UnmarshalJSON(raw)
	}
	return nil
}

// mapOf decodes into a map[string]V, without reflection.
func mapOf[V any](value func(d *decoder, i int) (V, int, error)) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if i < len(data) && data[i] == 'n' {
			end, err := d.literal(i, "null")
			if err == nil {
				*(*map[string]V)(p) = nil
			}
			return end, err
		}
		if i >= len(data) || data[i] != '{' {
			return d.mismatch(reflect.TypeFor[map[string]V](), i)
		}
		m := *(*map[string]V)(p)
		if m == nil {
			m = make(map[string]V)
			*(*map[string]V)(p) = m
		}
		return d.members(i, func(_ int, key []byte, i int) (int, error) {
			k := d.string(key)
			i, err := d.colon(i)
			if err != nil {
				return i, err
			}
			v, end, err := value(d, i)
			if err != nil {
				return end, err
			}
			m[k] = v
			return end, nil
		})
	}
}

// members reads the object whose '{' is at i, calling member for each key: start is the
// offset of its opening quote, key the key unescaped (valid until the next key is read),
// and i the offset after its closing quote; member reads the ':' and the value and
// returns the offset after it.
func (d *decoder) members(i int, member func(start int, key []byte, i int) (int, error)) (int, error) {
	if err := d.enter(i); err != nil {
		return i, err
	}
	data := d.data
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		d.depth--
		return i + 1, nil
	}
	for {
		var err error
		if i, err = d.objectKey(i); err != nil {
			return i, err
		}
		key, end, err := d.str(i + 1)
		if err != nil {
			return end, err
		}
		if i, err = member(i, key, end); err != nil {
			return i, err
		}
		var more bool
		if i, more, err = d.next(i, '}'); err != nil || !more {
			return i, err
		}
	}
}
