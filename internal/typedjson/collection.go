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
// An array decoded into a slice without room (nil, usually) is first decoded into a
// scratch buffer of the decoder, then copied into a slice of its exact length: one
// allocation instead of the log2(n)+1 of growing it as append does. Only the elements
// past a buffer's bound (scratchBytes) are decoded into the slice growing as append
// does.
func sliceDec(t reflect.Type, elem *plan) decFunc {
	sp := &slicePlan{
		t: t, elem: elem, size: t.Elem().Size(),
		w:         typeWord(reflect.PointerTo(t)),
		emptyData: reflect.MakeSlice(t, 0, 0).UnsafePointer(),
		id:        int(slicePlans.Add(1) - 1),
	}
	sp.maxScratch = scratchBytes / max(int(sp.size), 1)
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

// slicePlans numbers the slice plans, for the decoders' scratch buffers.
var slicePlans atomic.Int64

// scratchBytes bounds the scratch buffer of a slice type, so that a decoder in the pool
// keeps little.
const scratchBytes = 16 << 10

type slicePlan struct {
	t          reflect.Type
	elem       *plan
	size       uintptr
	w          unsafe.Pointer // type word of *t
	emptyData  unsafe.Pointer // of an empty slice, not nil
	id         int            // index of its buffers in decoder.scratch
	maxScratch int            // elements in a scratch buffer at most
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

// fresh decodes the elements of the array at i (its first element) into a scratch buffer,
// then into the slice sh, which has no room, at their exact number.
func (d *decoder) fresh(sp *slicePlan, sh *sliceHeader, i int) (int, error) {
	buf := d.scratchFor(sp)
	data := d.data
	n := 0
	for {
		if n == buf.cap {
			if n >= sp.maxScratch {
				// Long: on in the slice itself.
				d.spill(sp, sh, buf, n)
				d.release(sp, buf)
				return d.inPlace(sp, sh, n, i)
			}
			buf.len = n
			sp.value(buf).Grow(max(n, 4))
		}
		var err error
		i, err = sp.elem.dec(d, unsafe.Add(buf.data, uintptr(n)*sp.size), i)
		if err != nil {
			return i, err // the buffer is not zero any more: dropped
		}
		n++
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		var more bool
		if i, more, err = d.next(i, ']'); err != nil {
			return i, err
		}
		if !more {
			d.spill(sp, sh, buf, n)
			d.release(sp, buf)
			return i, nil
		}
	}
}

// spill moves the n elements of the scratch buffer into sh, made of length n, and zeroes
// them in the buffer.
func (d *decoder) spill(sp *slicePlan, sh *sliceHeader, buf *sliceHeader, n int) {
	dst := sp.value(sh)
	dst.Grow(n)
	sh.len = n
	buf.len = n
	src := sp.value(buf)
	reflect.Copy(dst, src)
	src.Clear()
	buf.len = 0
}

// scratchFor takes the scratch buffer of slice plan sp (length 0, elements zero) from the
// decoder, or makes one; release gives it back.
func (d *decoder) scratchFor(sp *slicePlan) *sliceHeader {
	if sp.id >= len(d.scratch) {
		d.scratch = append(d.scratch, make([]*sliceHeader, sp.id+1-len(d.scratch))...)
	}
	buf := d.scratch[sp.id]
	if buf == nil {
		return new(sliceHeader)
	}
	d.scratch[sp.id] = nil // an array of the same type inside gets another
	return buf
}

func (d *decoder) release(sp *slicePlan, buf *sliceHeader) {
	d.scratch[sp.id] = buf
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
