package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/internal/typedjson"
	"github.com/kindex/kindex/jsonpath"
)

// metadataMode is the metadata mode: a client mode whose stored items
// (*metav1.PartialObjectMetadata) are written to snapshots as JSON and read back with
// kindex's typed decoder. JSON rather than protobuf: the apimachinery types carry no
// protobuf TypeMeta, and a record decodes in a few microseconds either way (a metadata
// object is a few hundred bytes).
type metadataMode struct {
	clientMode
}

var (
	_ Snapshotter           = (*metadataMode)(nil)
	_ SnapshotViewer        = (*metadataMode)(nil)
	_ PathChecker           = (*metadataMode)(nil)
	_ ResourceVersionProber = (*probingLW)(nil)
)

// SnapshotIdentity names what the mode keeps: managedFields or not. record=2: objects of
// built-in resources carry their kind and apiVersion (kindSetter); a record=1 snapshot,
// written before they did, is ignored and the informer lists instead, rather than serving
// objects without a kind until each one changes.
func (m *metadataMode) SnapshotIdentity() string {
	return fmt.Sprintf("metadata record=2 keepManagedFields=%v", m.keep)
}

// AppendSnapshot appends the item's JSON to dst.
func (m *metadataMode) AppendSnapshot(dst []byte, item any) ([]byte, bool) {
	o, ok := item.(*metav1.PartialObjectMetadata)
	if !ok || o == nil {
		return dst, false
	}
	b, err := json.Marshal(o)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// SnapshotDecode decodes a record of AppendSnapshot into a new object. A record that is
// not the JSON of an object with a name is an error.
func (m *metadataMode) SnapshotDecode(data []byte) (any, error) {
	return decodeMetadataRecord(data, false)
}

// SnapshotView decodes a record as SnapshotDecode does, its strings views of data (which
// must stay valid and unchanged for as long as the object is used: a mapped snapshot
// kept) rather than copies.
func (m *metadataMode) SnapshotView(data []byte) (any, error) {
	return decodeMetadataRecord(data, true)
}

// SnapshotViews is true: the mode keeps the objects it loads as they are.
func (m *metadataMode) SnapshotViews() bool { return true }

func decodeMetadataRecord(data []byte, shared bool) (any, error) {
	o := &metav1.PartialObjectMetadata{}
	decode := typedjson.Unmarshal
	if shared {
		decode = typedjson.UnmarshalShared
	}
	if err := decode(data, o); err != nil {
		return nil, fmt.Errorf("metadata snapshot record: %w", err)
	}
	if o.Name == "" {
		return nil, fmt.Errorf("metadata snapshot record: an object without a name")
	}
	return o, nil
}

// SnapshotList returns a list of items (*metav1.PartialObjectMetadata) at resourceVersion
// rv. Its items are the decoded objects themselves: metav1.PartialObjectMetadataList holds
// values, which the list and then the reflector (meta.ExtractListWithAlloc) would copy.
func (m *metadataMode) SnapshotList(items []any, rv string) runtime.Object {
	l := &metadataList{Items: make([]*metav1.PartialObjectMetadata, 0, len(items))}
	l.ResourceVersion = rv
	for _, it := range items {
		if o, ok := it.(*metav1.PartialObjectMetadata); ok {
			l.Items = append(l.Items, o)
		}
	}
	return l
}

// metadataList is a list of metadata objects held by pointer.
type metadataList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []*metav1.PartialObjectMetadata `json:"items"`
}

// DeepCopyObject copies the list and its items.
func (l *metadataList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	c := &metadataList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	if l.Items != nil {
		c.Items = make([]*metav1.PartialObjectMetadata, len(l.Items))
		for i, o := range l.Items {
			c.Items[i] = o.DeepCopy()
		}
	}
	return c
}

// probingLW is a client ListerWatcher that can also learn the server's current
// resourceVersion (ResourceVersionProber), with the client's Watch.
type probingLW struct {
	cache.ListerWatcherWithContext
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func (lw *probingLW) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(lw.ListerWatcherWithContext)
}

// CurrentResourceVersion opens the probe watch (ProbeOptions) on the target's resource
// and namespace and returns the resourceVersion its initial-events-end bookmark carries.
func (lw *probingLW) CurrentResourceVersion(ctx context.Context) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := lw.watch(ctx, ProbeOptions())
	if err != nil {
		return "", err
	}
	defer w.Stop()
	return InitialEventsEnd(ctx, w)
}

// ErrNotMetadata is wrapped by the error for an expression that reads fields metadata-only
// objects do not hold.
var ErrNotMetadata = errors.New("metadata-only objects do not hold it")

// CheckPath refuses an expression that reads more than a metadata-only object holds:
// fields outside apiVersion, kind and metadata (an index on {.spec.nodeName} would index
// nothing while every Pod has one), metadata.managedFields unless kept, and the whole object.
//
// A quoted key with dots at the top ({['metadata.name']}) is read as the path its dots
// split it into, which is checked instead: a metadata-only object has no such key.
func (m *metadataMode) CheckPath(p *jsonpath.Path) error {
	fields := p.Fields()
	for _, path := range fields {
		kept := len(path) > 0 && (path[0] == "apiVersion" || path[0] == "kind" || path[0] == "metadata")
		if kept && len(path) > 1 && path[0] == "metadata" && path[1] == "managedFields" {
			kept = m.keep
		}
		if !kept && !dottedFallback(path, fields) {
			return fmt.Errorf("metadata-only: %s reads %s: %w", p.String(), FieldString(path), ErrNotMetadata)
		}
	}
	return nil
}
