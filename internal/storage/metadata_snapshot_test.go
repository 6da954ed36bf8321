package storage

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata/fake"
)

func newTestMetadataMode(t *testing.T) *metadataMode {
	t.Helper()
	m, ok := NewMetadataMode(MetadataClientFrom(fake.NewSimpleMetadataClient(runtime.NewScheme())), Config{}).(*metadataMode)
	require.True(t, ok)
	return m
}

// A metadata record decodes back to the object it was written from; a list of records is
// the mode's list type at the snapshot's resourceVersion.
func TestMetadataSnapshotRoundTrip(t *testing.T) {
	m := newTestMetadataMode(t)
	ctrl := true
	o := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: types.UID("u-1"), ResourceVersion: "42", Generation: 3,
			Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"note": "é \"quoted\""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u-2", Controller: &ctrl}},
			Finalizers:      []string{"f"}, CreationTimestamp: metav1.Unix(1700000000, 0)},
	}
	rec, ok := m.AppendSnapshot([]byte("prefix"), o)
	require.True(t, ok)
	got, err := m.SnapshotDecode(rec[len("prefix"):])
	require.NoError(t, err)
	require.Equal(t, o, got)
	view, err := m.SnapshotView(rec[len("prefix"):])
	require.NoError(t, err)
	require.Equal(t, o, view)
	at := uintptr(unsafe.Pointer(unsafe.StringData(view.(*metav1.PartialObjectMetadata).Name)))
	start := uintptr(unsafe.Pointer(&rec[0]))
	require.True(t, at >= start && at < start+uintptr(len(rec)), "a view's strings are the record's bytes")

	_, ok = m.AppendSnapshot(nil, "not an object")
	require.False(t, ok)
	list := m.SnapshotList([]any{got, got}, "42")
	lm, err := meta.ListAccessor(list)
	require.NoError(t, err)
	require.Equal(t, "42", lm.GetResourceVersion())
	items, err := meta.ExtractListWithAlloc(list) // as the reflector reads a list
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Same(t, got, items[0], "the decoded objects themselves, not copies")
	require.Equal(t, list, list.DeepCopyObject())
	require.Contains(t, m.SnapshotIdentity(), "keepManagedFields=false")
}

// A damaged record is an error, never a panic nor an object without a name: every prefix
// of a record and a few corruptions.
func TestMetadataSnapshotDecodeRejectsDamage(t *testing.T) {
	m := newTestMetadataMode(t)
	rec, ok := m.AppendSnapshot(nil, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}})
	require.True(t, ok)
	for n := range len(rec) {
		o, err := m.SnapshotDecode(rec[:n])
		v, verr := m.SnapshotView(rec[:n])
		require.Equal(t, err == nil, verr == nil, "prefix %q", rec[:n])
		if err == nil {
			require.NotEmpty(t, o.(*metav1.PartialObjectMetadata).Name, "prefix %q", rec[:n])
			require.Equal(t, o, v)
		}
	}
	for _, bad := range []string{`{}`, `[]`, `null`, `{"metadata":{"name":7}}`, `{"metadata":{"labels":{"k":1},"name":"a"}}`, "\x00"} {
		_, err := m.SnapshotDecode([]byte(bad))
		require.Error(t, err, bad)
	}
}
