package storage

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/internal/typedjson"
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
	_ ResourceVersionProber = (*probingLW)(nil)
)

// SnapshotIdentity names what the mode keeps: managedFields or not.
func (m *metadataMode) SnapshotIdentity() string {
	return fmt.Sprintf("metadata record=1 keepManagedFields=%v", m.keep)
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
	o := &metav1.PartialObjectMetadata{}
	if err := typedjson.Unmarshal(data, o); err != nil {
		return nil, fmt.Errorf("metadata snapshot record: %w", err)
	}
	if o.Name == "" {
		return nil, fmt.Errorf("metadata snapshot record: an object without a name")
	}
	return o, nil
}

// SnapshotList returns a *metav1.PartialObjectMetadataList of items at resourceVersion rv.
func (m *metadataMode) SnapshotList(items []any, rv string) runtime.Object {
	l := &metav1.PartialObjectMetadataList{Items: make([]metav1.PartialObjectMetadata, 0, len(items))}
	l.ResourceVersion = rv
	for _, it := range items {
		if o, ok := it.(*metav1.PartialObjectMetadata); ok {
			l.Items = append(l.Items, *o)
		}
	}
	return l
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
