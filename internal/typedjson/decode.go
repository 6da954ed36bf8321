package typedjson

import (
	"encoding/json"
	"reflect"
	"sync"
	"unsafe"
)

// decoder is the state of one Unmarshal call.
type decoder struct {
	data  []byte
	depth int // open objects and arrays
	hops  int // interfaces followed to the pointers they hold, without reading input
	buf   []byte
	// arena holds the bytes of the short strings decoded in this call (see str).
	arena []byte
	// words holds the words not yet handed out of this call's chunk (see word).
	words []uint64
	// shared: strings may be views of data (UnmarshalShared).
	shared bool
	// quantities outlive the call, with the decoder in the pool (made by the first
	// quantity decoded, so that a decoder that meets none stays small).
	quantities *quantityCache
}

var pool = sync.Pool{New: func() any { return new(decoder) }}

// maxKeptBuf is the largest unescaping buffer a pooled decoder keeps.
const maxKeptBuf = 64 << 10

// Unmarshal decodes the JSON value in data into v, which must be a non-nil pointer, with
// the semantics of sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts (the decoder of
// Kubernetes' JSON serializer): encoding/json's, except that object keys match struct
// fields case-sensitively and that numbers decoded into an interface are int64 when they
// are integers that fit, float64 otherwise. See the package documentation for what it
// costs and how errors differ.
//
// The input is not retained (UnmarshalJSON and UnmarshalText methods receive views of
// it, as with encoding/json) and may be modified once Unmarshal returns.
func Unmarshal(data []byte, v any) error { return unmarshal(data, v, false) }

// UnmarshalShared is Unmarshal for input that is never modified again, such as an object
// a cache holds as bytes: the strings of the result that need no unescaping are views of
// data rather than copies, so that decoding copies none of their bytes, and they keep
// data alive as long as they are used. Modifying data afterwards changes those strings
// (which Go assumes never happens): use Unmarshal for a buffer that is reused.
func UnmarshalShared(data []byte, v any) error { return unmarshal(data, v, true) }

func unmarshal(data []byte, v any, shared bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		// encoding/json checks the input first.
		d := decoder{data: data}
		i, err := d.skip(skipSpace(data, 0))
		if err == nil {
			err = d.end(i)
		}
		if err != nil {
			return err
		}
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	d := pool.Get().(*decoder)
	d.data, d.depth, d.hops, d.shared = data, 0, 0, shared
	i, err := d.intoPointer(rv.Type(), rv.UnsafePointer(), skipSpace(data, 0))
	if err == nil {
		err = d.end(i)
	}
	d.data, d.arena, d.words = nil, nil, nil
	if cap(d.buf) > maxKeptBuf {
		d.buf = nil
	}
	pool.Put(d)
	return err
}

// end checks that only space follows the top-level value, which ends at i.
func (d *decoder) end(i int) error {
	if i = skipSpace(d.data, i); i < len(d.data) {
		return d.syntaxErr(i, "invalid character "+quoteChar(d.data[i])+" after top-level value")
	}
	return nil
}

// intoPointer decodes the value at i through ptr, a non-nil pointer of type pt that is not
// itself to be changed: v at the top level, or a pointer held by an interface. As with
// encoding/json, methods of pt come first (UnmarshalJSON even for null), then the value
// it points to; an interface that holds ptr itself is replaced rather than followed.
func (d *decoder) intoPointer(pt reflect.Type, ptr unsafe.Pointer, i int) (int, error) {
	if et := pt.Elem(); et.Kind() == reflect.Interface {
		iv := reflect.NewAt(et, ptr).Elem()
		if !iv.IsNil() {
			if e := iv.Elem(); e.Type() == pt && e.UnsafePointer() == ptr {
				return d.ifaceValue(et, ptr, i)
			}
		}
	}
	return planFor(pt).through(d, ptr, i)
}

// Strings of up to maxArenaString bytes are copied into chunks of arenaChunk bytes, shared
// by the strings of one call, rather than allocated one by one: a Pod has about a hundred
// strings, mostly short. A string kept after the rest of the result is dropped keeps its
// chunk alive.
const (
	arenaChunk     = 1024
	maxArenaString = 128
)

// chunkSize is the size of a new arena chunk for a string whose bytes b are being copied:
// arenaChunk, or less when b is a view of the input and fewer bytes remain from it to the
// end of the input: the strings still to come are no longer than the input they are
// written in, so a small document (an object's metadata) gets a chunk no larger than
// itself rather than a kilobyte mostly unused.
func (d *decoder) chunkSize(b []byte) int {
	if len(d.data) == 0 {
		return arenaChunk
	}
	if !d.inInput(b) {
		return arenaChunk // unescaped into d.buf: no position
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(d.data)))
	return max(len(b), min(arenaChunk, len(d.data)-int(at)))
}

// inInput reports whether b, not empty, is a view of the input (rather than of d.buf).
func (d *decoder) inInput(b []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(d.data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= start && p-start < uintptr(len(d.data))
}

// string returns a string with the bytes of b (a view of the input or of d.buf): a view
// of the input itself when it is shared.
func (d *decoder) string(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if d.shared && d.inInput(b) {
		return unsafe.String(&b[0], n)
	}
	if n > maxArenaString {
		return string(b)
	}
	if len(d.arena)+n > cap(d.arena) {
		d.arena = make([]byte, 0, d.chunkSize(b))
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[start], n)
}

// wordChunk is the number of words in a chunk of word.
const wordChunk = 16

// word returns a zero word of memory without pointers, for a small value a pointer of the
// result points to: a word of a chunk shared by the values of one call, allocated once
// for wordChunk of them. A value kept after the rest of the result is dropped keeps its
// chunk alive.
func (d *decoder) word() unsafe.Pointer {
	if len(d.words) == 0 {
		d.words = make([]uint64, wordChunk)
	}
	p := unsafe.Pointer(&d.words[0])
	d.words = d.words[1:]
	return p
}
