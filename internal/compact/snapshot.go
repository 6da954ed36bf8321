package compact

import (
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
	fmt.Fprintf(&b, "compact keepManagedFields=%v projection=", m.dec.keep)
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

// SnapshotBytes returns an *Object's JSON (shared).
func (m *Mode) SnapshotBytes(item any) ([]byte, bool) {
	o, ok := item.(*Object)
	if !ok || o == nil {
		return nil, false
	}
	return o.RawJSON(), true
}

// SnapshotDecode decodes one object's JSON with the mode's decoder (idempotent on bytes it
// produced: managedFields already cut, projection already applied).
func (m *Mode) SnapshotDecode(data []byte) (any, error) {
	return m.dec.DecodeObject(data)
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
