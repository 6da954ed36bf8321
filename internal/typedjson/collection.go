package typedjson

import (
	"encoding/base64"
	"reflect"
	"sync/atomic"
	"unsafe"
)

// Slices and arrays.

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// sliceDec decodes into a slice of type t: null gives nil; a string is base64 for a slice
// of bytes; an array's elements are decoded in place into the slice's elements if it has
// room (those it has are reused, as encoding/json does when a key repeats), then it is
// cut to the array's length; an empty array gives an empty non-nil slice.
//
// An array decoded into a slice without room (nil, usually) is decoded into a new slice
// with room for as many elements as the last such array of the slice's type had (see
// fresh): usually one allocation, where appending costs log2(n)+1.
func sliceDec(t reflect.Type, elem *plan) decFunc {
	sp := &slicePlan{
		t: t, elem: elem, size: t.Elem().Size(),
		w:         typeWord(reflect.PointerTo(t)),
		emptyData: reflect.MakeSlice(t, 0, 0).UnsafePointer(),
	}
	sp.maxHint = hintBytes / max(int(sp.size), 1)
	sp.hint.Store(1)
	bytes := t.Elem().Kind() == reflect.Uint8
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if i >= len(data) {
			return i, d.errEOF()
		}
		sh := (*sliceHeader)(p)
		switch data[i] {
		case '[':
		case 'n':
			end, err := d.literal(i, "null")
			if err == nil {
				*sh = sliceHeader{}
			}
			return end, err
		case '"':
			if bytes {
				return d.base64(sh, i)
			}
			return d.mismatch(t, i)
		default:
			return d.mismatch(t, i)
		}
		i, empty, err := d.open(i, ']')
		if err != nil {
			return i, err
		}
		if empty {
			*sh = sliceHeader{data: sp.emptyData}
			return i, nil
		}
		if sh.cap == 0 {
			return d.fresh(sp, sh, i)
		}
		return d.inPlace(sp, sh, 0, i)
	}
}

// hintBytes bounds the room a new slice is given before its array is decoded, so that
// one long array does not make every later slice of its type large.
const hintBytes = 4 << 10

type slicePlan struct {
	t         reflect.Type
	elem      *plan
	size      uintptr
	w         unsafe.Pointer // type word of *t
	emptyData unsafe.Pointer // of an empty slice, not nil
	hint      atomic.Int32   // the length of the last array decoded into a new slice
	maxHint   int            // the most hint says
}

// value returns the slice sh as a reflect.Value (settable).
func (sp *slicePlan) value(sh *sliceHeader) reflect.Value {
	return reflect.ValueOf(pointerAny(sp.w, unsafe.Pointer(sh))).Elem()
}

// inPlace decodes the elements of the array at i (its first element; n read already)
// into the slice sh, growing it as append does.
func (d *decoder) inPlace(sp *slicePlan, sh *sliceHeader, n, i int) (int, error) {
	data := d.data
	for {
		if n >= sh.cap {
			sp.value(sh).Grow(1)
		}
		if n >= sh.len {
			sh.len = n + 1
		}
		var err error
		i, err = sp.elem.dec(d, unsafe.Add(sh.data, uintptr(n)*sp.size), i)
		if err != nil {
			return i, err
		}
		n++
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		var more bool
		if i, more, err = d.next(i, ']'); err != nil || !more {
			if n < sh.len {
				sh.len = n
			}
			return i, err
		}
	}
}

// fresh decodes the elements of the array at i (its first element) into the slice sh,
// which has no room: it is allocated first with room for as many elements as the last
// array of its type had (sp.hint), then grown as append does if the array is longer.
// Arrays of one type tend to have the same length in objects of one kind (two containers,
// one port, two tolerations), so this is usually one allocation and no copy.
func (d *decoder) fresh(sp *slicePlan, sh *sliceHeader, i int) (int, error) {
	sp.value(sh).Grow(int(sp.hint.Load()))
	i, err := d.inPlace(sp, sh, 0, i)
	if err == nil {
		sp.hint.Store(int32(max(min(sh.len, sp.maxHint), 1)))
	}
	return i, err
}

// base64 decodes the string at i into the byte slice sh, as encoding/json does.
func (d *decoder) base64(sh *sliceHeader, i int) (int, error) {
	s, end, err := d.str(i + 1)
	if err != nil {
		return end, err
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, s)
	if err != nil {
		return end, err
	}
	*sh = sliceHeader{data: unsafe.Pointer(unsafe.SliceData(b)), len: n, cap: len(b)}
	return end, nil
}

// arrayDec decodes into an array of type t: the first elements of a JSON array fill it,
// the rest are skipped, elements it lacks are zeroed; null leaves it alone.
func arrayDec(t reflect.Type, elem *plan) decFunc {
	size := t.Elem().Size()
	length := t.Len()
	return func(d *decoder, p unsafe.Pointer, i int) (int, error) {
		data := d.data
		if i >= len(data) || data[i] != '[' {
			return d.nullOr(t, i)
		}
		if err := d.enter(i); err != nil {
			return i, err
		}
		i = skipSpace(data, i+1)
		n := 0
		if i < len(data) && data[i] == ']' {
			d.depth--
			i++
		} else {
			for {
				var end int
				var err error
				if n < length {
					end, err = elem.dec(d, unsafe.Add(p, uintptr(n)*size), i)
				} else {
					end, err = d.skip(i)
				}
				if err != nil {
					return end, err
				}
				n++
				var more bool
				if i, more, err = d.next(end, ']'); err != nil {
					return i, err
				}
				if !more {
					break
				}
			}
		}
		if n < length {
			av := reflect.NewAt(t, p).Elem()
			for ; n < length; n++ {
				av.Index(n).SetZero()
			}
		}
		return i, nil
	}
}
