package typedjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"
	"unsafe"
)

// decFunc decodes the value that starts at data[i] (space skipped) into the Go value of
// its plan's type at p, and returns the offset after the value.
type decFunc func(d *decoder, p unsafe.Pointer, i int) (int, error)

// plan is how values of one Go type are decoded, compiled once per type.
type plan struct {
	t   reflect.Type
	dec decFunc
	// through, for pointer types only, decodes through a pointer of type t that is not to
	// be changed (see decoder.intoPointer); p is the pointer's value, not its address.
	through decFunc
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
)

var (
	plans   sync.Map // reflect.Type -> *plan, complete plans only
	buildMu sync.Mutex
)

// planFor returns the plan of t, compiling it (and the plans of the types it contains) on
// first use.
func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	b := builder{pending: map[reflect.Type]*plan{}}
	p := b.plan(t)
	for t, p := range b.pending {
		plans.Store(t, p)
	}
	return p
}

// builder compiles plans. A type that contains itself gets the plan under construction,
// whose functions are looked up when called, not when built.
type builder struct {
	pending map[reflect.Type]*plan
}

func (b *builder) plan(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := b.pending[t]; ok {
		return p
	}
	p := &plan{t: t}
	b.pending[t] = p
	p.dec = b.build(t)
	if t.Kind() == reflect.Pointer {
		p.through = b.through(t)
	}
	return p
}

// build returns the decoder of values of type t, as encoding/json's indirect and its
// callers choose it: the methods of *t for a named t, then t's kind.
func (b *builder) build(t reflect.Type) decFunc {
	if dec := specialDec(t); dec != nil {
		return dec
	}
	if t.Kind() != reflect.Pointer && t.Name() != "" {
		pt := reflect.PointerTo(t)
		if pt.Implements(unmarshalerType) {
			return unmarshalerDec(t)
		}
		if pt.Implements(textUnmarshalerType) {
			return textDec(t, b.kindDec(t))
		}
	}
	return b.kindDec(t)
}

func (b *builder) kindDec(t reflect.Type) decFunc {
	switch t.Kind() {
	case reflect.Bool:
		return boolDec(t)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intDec(t)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintDec(t)
	case reflect.Float32, reflect.Float64:
		return floatDec(t)
	case reflect.String:
		if t == numberType {
			return numberDec(t)
		}
		return stringDec(t)
	case reflect.Pointer:
		return pointerDec(t, b.plan(t))
	case reflect.Interface:
		return ifaceDec(t)
	case reflect.Struct:
		return b.structDec(t)
	case reflect.Slice:
		return sliceDec(t, b.plan(t.Elem()))
	case reflect.Array:
		return arrayDec(t, b.plan(t.Elem()))
	case reflect.Map:
		return b.mapDec(t)
	}
	return otherDec(t)
}

// through returns the plan's through function of pointer type t. The methods of t are
// those the plan of a named element type checks first; only an unnamed element type (a
// struct literal embedding a type with methods) needs them checked here.
func (b *builder) through(t reflect.Type) decFunc {
	et := t.Elem()
	elem := b.plan(et)
	if et.Name() == "" {
		if t.Implements(unmarshalerType) {
			return unmarshalerDec(et)
		}
		if t.Implements(textUnmarshalerType) {
			return textDec(et, func(d *decoder, p unsafe.Pointer, i int) (int, error) {
				return elem.dec(d, p, i)
			})
		}
	}
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		return elem.dec(d, p, i)
	}
}

// pointerDec decodes into a pointer of type t: null sets it to nil; anything else is
// decoded through it, allocating its value first if it is nil.
func pointerDec(t reflect.Type, self *plan) decFunc {
	et := t.Elem()
	// A pointer to a small value without pointers (*bool, *int32, *int64: a Pod has
	// about ten) gets a word of the call's chunk rather than an allocation of its own.
	word := false
	switch et.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		word = true
	}
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		if i < len(d.data) && d.data[i] == 'n' {
			end, err := d.literal(i, "null")
			if err == nil {
				*(*unsafe.Pointer)(p) = nil
			}
			return end, err
		}
		v := *(*unsafe.Pointer)(p)
		if v == nil {
			if word {
				v = d.word()
			} else {
				v = reflect.New(et).UnsafePointer()
			}
			*(*unsafe.Pointer)(p) = v
		}
		return self.through(d, v, i)
	}
}

// otherDec decodes into kinds JSON has no value for (channels, functions, complex
// numbers, unsafe pointers): null leaves them alone, anything else is an error.
func otherDec(t reflect.Type) decFunc {
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		return d.nullOr(t, i)
	}
}

// nullOr accepts null at i and leaves the value alone, as encoding/json does for a value
// that is not a pointer, map, slice or interface; anything else cannot be a t.
func (d *decoder) nullOr(t reflect.Type, i int) (int, error) {
	if i < len(d.data) && d.data[i] == 'n' {
		return d.literal(i, "null")
	}
	return d.mismatch(t, i)
}
