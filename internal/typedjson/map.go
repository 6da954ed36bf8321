package typedjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// typedMaps are common map types decoded without reflection (map types with the same
// underlying type share the code).
var typedMaps = map[reflect.Type]func(elem *plan) decFunc{
	reflect.TypeFor[map[string]string](): func(*plan) decFunc { return mapOf[string]((*decoder).stringValue) },
	reflect.TypeFor[map[string]any]():    func(*plan) decFunc { return mapOf[string]((*decoder).anyValue) },
	reflect.TypeFor[map[corev1.ResourceName]resource.Quantity](): func(*plan) decFunc {
		return mapOf[corev1.ResourceName]((*decoder).quantityValue)
	},
	reflect.TypeFor[map[string][]byte](): mapWith[string, []byte],
}

func (b *builder) mapDec(t reflect.Type) decFunc {
	kind := mapKeyOf(t.Key())
	if kind == keyString {
		if typed := typedMaps[reflect.MapOf(t.Key(), t.Elem())]; typed != nil {
			return typed(b.plan(t.Elem()))
		}
	}
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
		i, empty, err := d.open(i, '}')
		mv := reflect.NewAt(t, p).Elem()
		if err != nil || (empty && !mv.IsNil()) {
			return i, err
		}
		if mv.IsNil() {
			mv.Set(reflect.MakeMap(t))
		}
		if empty {
			return i, nil
		}
		kv := reflect.New(t.Key())
		ev := reflect.New(t.Elem()).Elem()
		ep := ev.Addr().UnsafePointer()
		for more := true; more; {
			start := i
			key, vi, err := d.key(i)
			if err != nil {
				return vi, err
			}
			if err := d.mapKey(kind, kv, data[start:], key); err != nil {
				return vi, err
			}
			ev.SetZero()
			if i, err = elem.dec(d, ep, vi); err != nil {
				return i, err
			}
			mv.SetMapIndex(kv.Elem(), ev)
			if i, more, err = d.next(i, '}'); err != nil {
				return i, err
			}
		}
		return i, nil
	}
}

// mapKey sets *kv (kv a pointer) to the map key of kind for the object key key; raw
// starts with its JSON text.
func (d *decoder) mapKey(kind mapKey, kv reflect.Value, raw, key []byte) error {
	kt := kv.Type().Elem()
	switch kind {
	case keyString:
		kv.Elem().SetString(d.string(key))
	case keyInt:
		n, err := strconv.ParseInt(view(key), 10, 64)
		if err != nil || kv.Elem().OverflowInt(n) {
			return &json.UnmarshalTypeError{Value: "number " + string(key), Type: kt}
		}
		kv.Elem().SetInt(n)
	case keyUint:
		n, err := strconv.ParseUint(view(key), 10, 64)
		if err != nil || kv.Elem().OverflowUint(n) {
			return &json.UnmarshalTypeError{Value: "number " + string(key), Type: kt}
		}
		kv.Elem().SetUint(n)
	case keyText:
		kv.Elem().SetZero()
		return kv.Interface().(encoding.TextUnmarshaler).UnmarshalText(append([]byte(nil), key...))
	case keyJSON:
		kv.Elem().SetZero()
		return kv.Interface().(json.Unmarshaler).UnmarshalJSON(raw[:quotedLen(raw)])
	}
	return nil
}

// quotedLen returns the length of the JSON string (valid) that starts raw.
func quotedLen(raw []byte) int {
	for j := 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// mapOf decodes into a map[K]V (K a string type without methods), decoding each value
// with value.
func mapOf[K ~string, V any](value func(d *decoder, i int) (V, int, error)) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		m, i, more, err := openMap[K, V](d, p, i)
		for more {
			var key []byte
			if key, i, err = d.key(i); err != nil {
				return i, err
			}
			k := K(d.string(key))
			var v V
			if v, i, err = value(d, i); err != nil {
				return i, err
			}
			m[k] = v
			if i, more, err = d.next(i, '}'); err != nil {
				return i, err
			}
		}
		return i, err
	}
}

// mapWith decodes into a map[K]V (K a string type without methods), decoding each value
// with the element's plan into a zeroed V, then storing it.
func mapWith[K ~string, V any](elem *plan) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		m, i, more, err := openMap[K, V](d, p, i)
		if !more {
			return i, err
		}
		v := new(V)
		for more {
			var key []byte
			if key, i, err = d.key(i); err != nil {
				return i, err
			}
			k := K(d.string(key))
			var zero V
			*v = zero
			if i, err = elem.dec(d, unsafe.Pointer(v), i); err != nil {
				return i, err
			}
			m[k] = *v
			if i, more, err = d.next(i, '}'); err != nil {
				return i, err
			}
		}
		return i, nil
	}
}

// openMap starts decoding the value at i into the map[K]V at p: for null it sets the map
// to nil; for an object it makes the map if it is nil and returns it, with more true
// unless the object is empty and i the offset of its first key; any other value is an
// error.
func openMap[K comparable, V any](d *decoder, p unsafe.Pointer, i int) (map[K]V, int, bool, error) {
	data := d.data
	mp := (*map[K]V)(p)
	if i < len(data) && data[i] == 'n' {
		end, err := d.literal(i, "null")
		if err == nil {
			*mp = nil
		}
		return nil, end, false, err
	}
	if i >= len(data) || data[i] != '{' {
		end, err := d.mismatch(reflect.TypeFor[map[K]V](), i)
		return nil, end, false, err
	}
	i, empty, err := d.open(i, '}')
	if err != nil {
		return nil, i, false, err
	}
	if *mp == nil {
		*mp = make(map[K]V)
	}
	return *mp, i, !empty, nil
}
