package typedjson

import (
	"reflect"
	"unsafe"
)

// Interfaces and reflect.Values of pointers without reflect.NewAt, which looks the pointer
// type up (in a sync.Map for unnamed types) on every call: an empty interface is a type
// word and a data word, and the type word of a pointer type is found once, when a plan is
// compiled.

type eface struct{ typ, data unsafe.Pointer }

// typeWord returns the type word of the interfaces that hold a value of pointer type pt.
func typeWord(pt reflect.Type) unsafe.Pointer {
	v := reflect.Zero(pt).Interface()
	return (*eface)(unsafe.Pointer(&v)).typ
}

// pointerAny returns the interface holding pointer p of the pointer type of type word w.
func pointerAny(w, p unsafe.Pointer) any {
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: w, data: p}
	return v
}
