package typedjson

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"
)

// Structs. Keys match field names exactly (case-sensitively); a key that matches no field
// is skipped (validated, not decoded); a key that repeats decodes into the same field
// again, as with encoding/json.

// field is a JSON field of a struct plan.
type field struct {
	name   string
	offset uintptr // in the struct, or in the target of the last embedded pointer
	embeds []embed // embedded pointers on the way to the field, outermost first
	plan   *plan
	quoted bool
	plain  bool // name has only bytes that stand for themselves in a JSON string
	// str: a string field (of a string type without methods, not json.Number) at offset
	// of the struct itself, decoded in the loop rather than by its plan.
	str bool
}

// embed is an embedded pointer to a struct on the way to a promoted field.
type embed struct {
	offset   uintptr // in the struct, or in the target of the previous embedded pointer
	elem     reflect.Type
	exported bool // a nil unexported one cannot be set: an error, as with encoding/json
}

type structPlan struct {
	t      reflect.Type
	fields []field // in the order encoding/json writes them
	// words holds, for each field, the first eight bytes a key that names it starts with
	// (the name and its closing quote, masked when shorter), in a slice of their own so
	// that comparing a key with the next few fields reads one cache line.
	words []keyWord
	// table finds a field by its name without hashing all of it: open addressing on
	// keyHash, each slot 1 + a field's number, 0 if free.
	table []uint32
}

func (b *builder) structDec(t reflect.Type) decFunc {
	sp := &structPlan{t: t}
	for _, fi := range jsonFields(t) {
		f := field{name: fi.name, plan: b.plan(fi.typ), quoted: fi.quoted, plain: true}
		for k := 0; k < len(f.name); k++ {
			f.plain = f.plain && plain[f.name[k]]
		}
		cur := t
		for k, idx := range fi.index {
			sf := cur.Field(idx)
			if k == len(fi.index)-1 {
				f.offset += sf.Offset
				break
			}
			if sf.Type.Kind() == reflect.Pointer {
				f.embeds = append(f.embeds, embed{offset: f.offset + sf.Offset, elem: sf.Type.Elem(), exported: sf.IsExported()})
				f.offset = 0
				cur = sf.Type.Elem()
			} else {
				f.offset += sf.Offset
				cur = sf.Type
			}
		}
		ft := fi.typ
		f.str = ft.Kind() == reflect.String && ft != numberType && len(f.embeds) == 0 && !f.quoted &&
			!reflect.PointerTo(ft).Implements(unmarshalerType) && !reflect.PointerTo(ft).Implements(textUnmarshalerType)
		sp.fields = append(sp.fields, f)
		sp.words = append(sp.words, wordOf(f))
	}
	size := 8
	for size < 2*len(sp.fields) {
		size *= 2
	}
	sp.table = make([]uint32, size)
	for k, f := range sp.fields {
		h := keyHash([]byte(f.name))
		for sp.table[h&uint32(size-1)] != 0 {
			h++
		}
		sp.table[h&uint32(size-1)] = uint32(k + 1)
	}
	return sp.dec
}

// keyWord is what a key that names a field is compared with in place: its first eight
// bytes in the input (after its opening quote) as a little-endian word, with the mask of
// those that belong to it (the name and its closing quote when the name is shorter than
// eight bytes, the name's first eight bytes otherwise), and the rest of a longer name. A
// name with bytes that need escaping has mask 0, which no key is compared with in place.
type keyWord struct {
	w, mask uint64
	n       int    // length of the name
	tail    string // the name from its ninth byte, when longer than 8
}

func wordOf(f field) keyWord {
	if !f.plain {
		return keyWord{}
	}
	var b [8]byte
	n := copy(b[:], f.name)
	kw := keyWord{n: len(f.name), mask: ^uint64(0)}
	if n < 8 {
		b[n] = '"'
		n++
		if n < 8 {
			kw.mask = 1<<(8*n) - 1
		}
	} else {
		kw.tail = f.name[8:]
	}
	kw.w = binary.LittleEndian.Uint64(b[:])
	return kw
}

// keyHash hashes a key by its length and four of its bytes.
func keyHash(b []byte) uint32 {
	n := len(b)
	if n == 0 {
		return 0
	}
	h := uint32(n)*0x9e3779b1 ^ uint32(b[0])*0x85ebca6b ^ uint32(b[n-1])*0xc2b2ae35 ^
		uint32(b[n/2])*0x27d4eb2f ^ uint32(b[n/4])*0x165667b1
	return h ^ h>>15
}

// lookup returns the field named key, nil if there is none. Objects written by
// encoding/json (and the API server) list their members in field order, so the field
// after the previous key's (*next) is tried first.
func (sp *structPlan) lookup(key []byte, next *int) *field {
	if k := *next; k < len(sp.fields) && sp.fields[k].name == string(key) {
		*next = k + 1
		return &sp.fields[k]
	}
	mask := uint32(len(sp.table) - 1)
	for h := keyHash(key); ; h++ {
		k := sp.table[h&mask]
		if k == 0 {
			return nil
		}
		if f := &sp.fields[k-1]; f.name == string(key) {
			*next = int(k)
			return f
		}
	}
}

func (sp *structPlan) dec(d *decoder, p unsafe.Pointer, i int) (int, error) {
	data := d.data
	if i >= len(data) || data[i] != '{' {
		return d.nullOr(sp.t, i)
	}
	i, empty, err := d.open(i, '}')
	if err != nil || empty {
		return i, err
	}
	fields := sp.fields
	next := 0 // the field expected next
	for {
		// The key: first compared in place with the names of the field expected next and
		// the few after it (those left out by omitempty are passed over), one of which is
		// usually it, else read and looked up.
		var f *field
		if i+9 <= len(data) && data[i] == '"' {
			x := binary.LittleEndian.Uint64(data[i+1:])
			for k := next; k < len(fields) && k < next+maxAhead; k++ {
				kw := &sp.words[k]
				if kw.mask == 0 {
					break
				}
				if x&kw.mask != kw.w {
					continue
				}
				e := i + 1 + kw.n
				if kw.n >= 8 && (e >= len(data) || data[e] != '"' || string(data[i+9:e]) != kw.tail) {
					continue
				}
				f, next = &fields[k], k+1
				if e+2 < len(data) && data[e+1] == ':' && data[e+2] > ' ' {
					i = e + 2
				} else {
					i, err = d.colon(e + 1)
				}
				break
			}
		} else if i < len(data) && data[i] == '"' {
			for k := next; k < len(fields) && k < next+maxAhead; k++ {
				c := &fields[k]
				if !c.plain {
					break
				}
				if e := i + 1 + len(c.name); e < len(data) && data[e] == '"' && string(data[i+1:e]) == c.name {
					f, next = c, k+1
					if e+2 < len(data) && data[e+1] == ':' && data[e+2] > ' ' {
						i = e + 2
					} else {
						i, err = d.colon(e + 1)
					}
					break
				}
			}
		}
		if f == nil {
			var key []byte
			key, i, err = d.key(i)
			if err == nil {
				f = sp.lookup(key, &next)
			}
		}
		if err != nil {
			return i, err
		}
		if f == nil {
			i, err = d.skip(i)
		} else if f.str && i < len(data) && data[i] == '"' {
			var s []byte
			if s, i, err = d.str(i + 1); err == nil {
				*(*string)(unsafe.Add(p, f.offset)) = d.string(s)
			}
		} else if len(f.embeds) == 0 && !f.quoted {
			if i, err = f.plan.dec(d, unsafe.Add(p, f.offset), i); err != nil {
				err = inField(err, sp.t, f.name)
			}
		} else if i, err = d.field(f, p, i); err != nil {
			err = inField(err, sp.t, f.name)
		}
		if err != nil {
			return i, err
		}
		if i < len(data) && data[i] == ',' {
			if i++; i < len(data) && data[i] != '"' {
				i = skipSpace(data, i)
			}
			continue
		}
		var more bool
		if i, more, err = d.next(i, '}'); err != nil || !more {
			return i, err
		}
	}
}

// maxAhead is how many fields, from the one expected next, a key is compared with in
// place before it is looked up.
const maxAhead = 8

// field decodes the value at i into field f of the struct at p.
func (d *decoder) field(f *field, p unsafe.Pointer, i int) (int, error) {
	for _, e := range f.embeds {
		pp := (*unsafe.Pointer)(unsafe.Add(p, e.offset))
		if *pp == nil {
			if !e.exported {
				return i, fmt.Errorf("json: cannot set embedded pointer to unexported struct: %v", e.elem)
			}
			*pp = reflect.New(e.elem).UnsafePointer()
		}
		p = *pp
	}
	p = unsafe.Add(p, f.offset)
	if f.quoted {
		return d.quoted(f.plan.t, p, i)
	}
	return f.plan.dec(d, p, i)
}
