package compact

import (
	"io"
	"unsafe"
)

// Known looks up a stored object by its cache key ("namespace/name" or "name").
type Known = func(key string) (any, bool)

// DecodeListFromReusing is DecodeListFrom for a relist against a cache: an item whose
// resourceVersion and uid equal those of the object known under its key (an *Object from
// this package) is that object, not a new one. Such an item is scanned and validated as
// usual, but nothing is allocated for it: its bytes are dropped with the stream buffer, so
// a relist that finds most objects unchanged costs the buffer and the changed objects,
// not a second copy of the cache. The known object came from a decoder with the same
// options (the cache's), so it is what the item would decode to.
func (d *Decoder) DecodeListFromReusing(r io.Reader, known Known) (*List, error) {
	st := listStream{d: d, in: streamInput{r: r, buf: make([]byte, streamBufferSize), maxBuf: streamBufferSize}, s: getScratch(), known: known}
	defer putScratch(st.s)
	return st.decode()
}

// decodeItem decodes the item at b[i], or returns the known object it is unchanged from.
func (st *listStream) decodeItem(b []byte, i int) (decoded, error) {
	if st.known == nil {
		return st.d.decodeAt(b, i, 0, st.s, st.inject)
	}
	end, err := scanObject(b, i, 0, st.s)
	if err != nil {
		return decoded{end: end}, err
	}
	if o := st.reuse(b); o != nil {
		return decoded{obj: o, end: end, reused: true}, nil
	}
	return st.d.build(b, i, end, 0, st.s, st.inject)
}

// reuse returns the known object with the scanned item's key, resourceVersion and uid.
func (st *listStream) reuse(b []byte) *Object {
	text, _, keyEnd, rvEnd := st.s.keys(b)
	if keyEnd == 0 || rvEnd == keyEnd {
		return nil
	}
	// A view for the lookup only: the scratch text is overwritten by the next item.
	key := unsafe.String(unsafe.SliceData(text), int(keyEnd))
	v, ok := st.known(key)
	if !ok {
		return nil
	}
	o, ok := v.(*Object)
	if !ok || o == nil || o.StoreKey() != key {
		return nil
	}
	if o.GetResourceVersion() != string(text[keyEnd:rvEnd]) || string(o.GetUID()) != string(text[rvEnd:]) {
		return nil
	}
	return o
}
