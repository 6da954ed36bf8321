package compact

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kindex/kindex/internal/storage"
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

// snapshotTrailer is the layout after an object's JSON and key text in a snapshot record:
// nsEnd, keyEnd, rvEnd, metaStart, metaEnd, the JSON's length (uint32 each) and flags.
const snapshotTrailer = 6*4 + 1

// AppendSnapshot appends an *Object's snapshot record to dst: its JSON, its key text and
// its layout, so that SnapshotDecode rebuilds it with one copy instead of a decode. A
// compressed object (Options.Compress) is written decompressed: a record never depends on
// the dictionary of the process that wrote it. The loading informer's transform
// compresses the objects again, with a dictionary of its own. An object that does not
// decompress (ErrCorrupt) is not written.
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
	for _, v := range []uint32{o.nsEnd, o.keyEnd, o.rvEnd, o.metaStart, o.metaEnd, uint32(len(raw))} {
		dst = binary.BigEndian.AppendUint32(dst, v)
	}
	return append(dst, o.flags), true
}

// SnapshotDecode rebuilds an object from its AppendSnapshot record, in its own allocation
// (data is not retained). It checks every offset against the record's bounds, so a
// corrupt record is an error, never an out-of-range access; it does not re-validate the
// JSON: the snapshot file's checksum (and, encrypted, its authentication) vouch for the
// bytes (see the informer package's "Warm restart").
func (m *Mode) SnapshotDecode(data []byte) (any, error) { return snapshotObject(data, true) }

// SnapshotView is SnapshotDecode without the copy: the object is a view of data, which
// must stay valid and unchanged for as long as anything refers to the object or to what
// was read from it (a snapshot file mapped for good: snapshot.Reader.Keep).
func (m *Mode) SnapshotView(data []byte) (any, error) { return snapshotObject(data, false) }

// SnapshotViews reports whether loaded objects are kept as views: not with Options.Compress,
// whose transform compresses every object into an allocation of its own.
func (m *Mode) SnapshotViews() bool { return !m.compress }

func snapshotObject(data []byte, copied bool) (*Object, error) {
	if len(data) < snapshotTrailer {
		return nil, malformed("snapshot record of %d bytes", len(data))
	}
	t := data[len(data)-snapshotTrailer:]
	u := func(i int) uint32 { return binary.BigEndian.Uint32(t[4*i:]) }
	nsEnd, keyEnd, rvEnd, metaStart, metaEnd, rawLen := u(0), u(1), u(2), u(3), u(4), u(5)
	flags := t[24]
	body := data[:len(data)-snapshotTrailer]
	if int64(rawLen) > int64(len(body)) {
		return nil, malformed("snapshot record: JSON of %d bytes in %d", rawLen, len(body))
	}
	keyLen := uint32(len(body)) - rawLen
	if nsEnd > keyEnd || keyEnd > rvEnd || rvEnd > keyLen || metaStart > metaEnd || metaEnd > rawLen ||
		rawLen == 0 || body[0] != '{' || flags&^(flagManagedFields|flagTransformed) != 0 {
		return nil, malformed("snapshot record: inconsistent layout")
	}
	if copied {
		// append rather than make and copy: the allocation is not zeroed before the copy.
		body = append([]byte(nil), body...)
	}
	// The capacity is cut to the record, whose key text must end where the slice does.
	return &Object{raw: body[:rawLen:len(body)], nsEnd: nsEnd, keyEnd: keyEnd, rvEnd: rvEnd,
		metaStart: metaStart, metaEnd: metaEnd, flags: flags}, nil
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
