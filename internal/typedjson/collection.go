package typedjson

import (
	"encoding/base64"
	"reflect"
	"unsafe"
)

// Slices and arrays.

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// sliceDec decodes into a slice of type t: an array's elements are decoded in place into
// the slice's elements (those it has are reused, as encoding/json does when a key
// repeats), growing it as append does, then the slice is cut to the array's length; an
// empty array gives an empty non-nil slice; null gives nil; a string is base64 for a slice
// of bytes.
func sliceDec(t reflect.Type, elem *plan) decFunc {
	size := t.Elem().Size()
	bytes := t.Elem().Kind() == reflect.Uint8
	empty := reflect.MakeSlice(t, 0, 0).UnsafePointer() // not nil
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
				if n >= sh.cap {
					reflect.NewAt(t, p).Elem().Grow(1)
				}
				if n >= sh.len {
					sh.len = n + 1
				}
				end, err := elem.dec(d, unsafe.Add(sh.data, uintptr(n)*size), i)
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
		if n < sh.len {
			sh.len = n
		}
		if n == 0 {
			*sh = sliceHeader{data: empty}
		}
		return i, nil
	}
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
