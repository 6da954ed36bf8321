package refs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// A metadata-only object's metadata, as rules read it, is the metadata an unstructured
// object of the same JSON holds (managedFields and selfLink aside): rules reading
// .metadata.finalizers or an owner reference's blockOwnerDeletion found nothing on
// metadata-only resources and found it on the same object in the other modes.
func TestMetadataMapIsTheWholeMetadata(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
	full := metav1.ObjectMeta{Name: "n", GenerateName: "n-", Namespace: "ns", UID: "u", ResourceVersion: "7",
		Generation: 3, CreationTimestamp: now, DeletionTimestamp: &now, DeletionGracePeriodSeconds: ptr.To[int64](30),
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}, Finalizers: []string{"x/y", "z"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r", UID: "ru",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}}}
	for _, om := range []metav1.ObjectMeta{full, {Name: "bare"}} {
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&om)
		require.NoError(t, err)
		delete(want, "creationTimestamp")
		if !om.CreationTimestamp.IsZero() {
			want["creationTimestamp"] = om.CreationTimestamp.UTC().Format(time.RFC3339)
		}
		assert.Equal(t, map[string]any{"metadata": want}, metadataMap(&om), om.Name)
	}

	rules := []Rule{{Name: "finalizers", From: AnyResource, Path: "{.metadata.finalizers[*]}", To: configMaps, Namespace: NamespaceSame},
		{Name: "blocking", From: AnyResource, Path: "{.metadata.ownerReferences[?(@.blockOwnerDeletion==false)]}",
			To: configMaps, NameField: "name", Namespace: NamespaceSame}}
	tg := newTestGraph(t, rules)
	tg.upsert(tg.g.rulesOf(secrets), &metav1.PartialObjectMetadata{ObjectMeta: full})
	assert.Equal(t, lines(`
		secrets/ns/n -[blocking]-> configmaps/ns/r (Missing: not found)
		secrets/ns/n -[finalizers]-> configmaps/ns/x/y (Missing: not found)
		secrets/ns/n -[finalizers]-> configmaps/ns/z (Missing: not found)
	`), strs(tg.References(oref(secrets, "ns", "n"), 1)))
}
