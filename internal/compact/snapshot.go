package compact

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

var _ storage.Snapshotter = (*Mode)(nil)

// SnapshotIdentity names what the mode keeps of each object: managedFields kept or not and
// the projection, in a canonical form.
func (m *Mode) SnapshotIdentity() string {
	var b strings.Builder
	fmt.Fprintf(&b, "compact record=1 keepManagedFields=%v projection=", m.dec.keep)
	if m.dec.proj == nil {
		b.WriteString("none")
	} else {
		m.dec.proj.writeTo(&b)
	}
	return b.String()
}

// writeTo writes the projection tree in a canonical form (sorted keys, JSON-quoted).
func (p *projection) writeTo(b *strings.Builder) {
	if p.leaf {
		b.WriteString("*")
		return
	}
	b.WriteString("{")
	for i, k := range slices.Sorted(maps.Keys(p.children)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(b, "%q:", k)
		p.children[k].writeTo(b)
	}
	b.WriteString("}")
}

// snapshotTrailer is the layout after an object's JSON and key text (and spans) in a
// snapshot record: nsEnd, keyEnd, rvEnd, metaStart, metaEnd, the JSON's length (uint32
// each) and flags.
const snapshotTrailer = 6*4 + 1

// recordSpans is a record's flag (never an object's) saying that the key text is followed by
// the object's spans, n pairs of uint32, and n (big-endian each).
const recordSpans uint8 = 1 << 7

// AppendSnapshot appends an *Object's snapshot record to dst: its JSON, its key text, its
// spans (Options.Spans) and its layout, so that SnapshotDecode rebuilds it with one copy
// instead of a decode and a scan. A compressed object (Options.Compress) is written
// decompressed: a record never depends on the dictionary of the process that wrote it. The
// loading informer's transform compresses the objects again, with a dictionary of its own.
// An object that does not decompress (ErrCorrupt) is not written.
func (m *Mode) AppendSnapshot(dst []byte, item any) ([]byte, bool) {
	o, ok := item.(*Object)
	if !ok || o == nil {
		return dst, false
	}
	raw, err := o.JSON()
	if err != nil {
		return dst, false
	}
	dst = append(dst, raw...)
	dst = append(dst, o.keyText()...)
	flags := o.flags
	if sp := o.Spans(); len(sp) > 0 {
		for _, v := range sp {
			dst = binary.BigEndian.AppendUint32(dst, v)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(sp)/2))
		flags |= recordSpans
	}
	for _, v := range []uint32{o.nsEnd, o.keyEnd, o.rvEnd, o.metaStart, o.metaEnd, uint32(len(raw))} {
		dst = binary.BigEndian.AppendUint32(dst, v)
	}
	return append(dst, flags), true
}

// SnapshotDecode rebuilds an object from its AppendSnapshot record, in its own allocation
// (data is not retained). It checks every offset against the record's bounds, so a
// corrupt record is an error, never an out-of-range access; it does not re-validate the
// JSON: the snapshot file's checksum (and, encrypted, its authentication) vouch for the
// bytes (see the informer package's "Warm restart"). With Options.Spans the object gets the
// record's spans, or finds them again (a record of an object that had none): an object
// loaded without them would be scanned by every index function and Item.Eval, about 10x
// slower, until it changed.
func (m *Mode) SnapshotDecode(data []byte) (any, error) { return m.snapshotObject(data, true) }

// SnapshotView is SnapshotDecode without the copy: the object is a view of data, which
// must stay valid and unchanged for as long as anything refers to the object or to what
// was read from it (a snapshot file mapped for good: snapshot.Reader.Keep). With
// Options.Spans its spans are copied beside it (8 bytes each: 152 for a realistic Pod).
func (m *Mode) SnapshotView(data []byte) (any, error) { return m.snapshotObject(data, false) }

// SnapshotViews reports whether loaded objects are kept as views: not with Options.Compress,
// whose transform compresses every object into an allocation of its own.
func (m *Mode) SnapshotViews() bool { return !m.compress }

func (m *Mode) snapshotObject(data []byte, copied bool) (*Object, error) {
	if len(data) < snapshotTrailer {
		return nil, malformed("snapshot record of %d bytes", len(data))
	}
	t := data[len(data)-snapshotTrailer:]
	u := func(i int) uint32 { return binary.BigEndian.Uint32(t[4*i:]) }
	nsEnd, keyEnd, rvEnd, metaStart, metaEnd, rawLen := u(0), u(1), u(2), u(3), u(4), u(5)
	flags := t[24]
	body := data[:len(data)-snapshotTrailer]
	var spans []byte // the record's spans, big-endian
	if flags&recordSpans != 0 {
		flags &^= recordSpans
		if len(body) < 4 {
			return nil, malformed("snapshot record: no span count")
		}
		n := int64(binary.BigEndian.Uint32(body[len(body)-4:]))
		if n == 0 || 8*n+4 > int64(len(body)) || n > math.MaxUint16 {
			return nil, malformed("snapshot record: %d spans in %d bytes", n, len(body))
		}
		spans = body[len(body)-4-8*int(n) : len(body)-4]
		body = body[:len(body)-4-8*int(n)]
	}
	if int64(rawLen) > int64(len(body)) {
		return nil, malformed("snapshot record: JSON of %d bytes in %d", rawLen, len(body))
	}
	keyLen := uint32(len(body)) - rawLen
	if nsEnd > keyEnd || keyEnd > rvEnd || rvEnd > keyLen || metaStart > metaEnd || metaEnd > rawLen ||
		rawLen == 0 || body[0] != '{' || flags&^(flagManagedFields|flagTransformed) != 0 {
		return nil, malformed("snapshot record: inconsistent layout")
	}
	o := &Object{nsEnd: nsEnd, keyEnd: keyEnd, rvEnd: rvEnd, metaStart: metaStart, metaEnd: metaEnd, flags: flags}
	if copied && m.spans() {
		o.raw, o.spanPad, o.nspans = withSpans(body, int(rawLen), spans)
		return o, nil
	}
	if m.spans() {
		o.ext, o.nspans = spansBeside(body[:rawLen], spans)
	}
	if copied {
		// append rather than make and copy: the allocation is not zeroed before the copy.
		body = append([]byte(nil), body...)
	}
	// The capacity is cut to the key text, which must end where the slice does.
	o.raw = body[:rawLen:len(body)]
	return o, nil
}

// spans reports whether the mode keeps spans with its objects (Options.Spans).
func (m *Mode) spans() bool { return m.dec != nil && m.dec.spans }

// loadSpans appends to dst the spans of a record: those it carries (big-endian pairs), or
// those of json, found again, when it carries none.
func loadSpans(dst jsonpath.Spans, json, recorded []byte) jsonpath.Spans {
	if recorded == nil {
		return jsonpath.BuildSpans(dst, json, spanSize)
	}
	for i := 0; i+4 <= len(recorded); i += 4 {
		dst = append(dst, binary.BigEndian.Uint32(recorded[i:]))
	}
	return dst
}

// spansBeside returns the spans of a view's JSON (loadSpans) in an allocation of their own,
// as Object.ext.
func spansBeside(json, recorded []byte) (*uint32, uint16) {
	sp := loadSpans(nil, json, recorded)
	if len(sp) == 0 || len(sp)/2 > math.MaxUint16 {
		return nil, 0
	}
	return &sp[0], uint16(len(sp) / 2)
}

// spanScratch holds the spans of an object being loaded (the informers of a Mode load their
// snapshots concurrently).
var spanScratch = sync.Pool{New: func() any { return new(jsonpath.Spans) }}

// withSpans copies body (an object's JSON, its first rawLen bytes, and its key text) into
// an allocation laid out as Decoder.build lays out one with spans (appendSpans), the spans
// those of loadSpans. It returns the JSON as Object.raw, whose capacity ends with the
// spans, and their padding and count.
func withSpans(body []byte, rawLen int, recorded []byte) (raw []byte, pad uint8, n uint16) {
	sp := spanScratch.Get().(*jsonpath.Spans)
	defer spanScratch.Put(sp)
	*sp = loadSpans((*sp)[:0], body[:rawLen], recorded)
	spans := *sp
	if len(spans)/2 > math.MaxUint16 || int64(len(body))+3+4*int64(len(spans)) > math.MaxUint32 {
		spans = nil
	}
	full := make([]byte, 0, len(body)+3+4*len(spans))
	full, p := appendSpans(append(full, body...), spans)
	return full[:rawLen:len(full)], uint8(p), uint16(len(spans) / 2)
}

// SnapshotList returns a *List of items (each an *Object) at resourceVersion rv.
func (m *Mode) SnapshotList(items []any, rv string) runtime.Object {
	l := &List{Items: make([]*Object, 0, len(items))}
	l.ResourceVersion = rv
	for _, it := range items {
		if o, ok := it.(*Object); ok {
			l.Items = append(l.Items, o)
		}
	}
	return l
}
