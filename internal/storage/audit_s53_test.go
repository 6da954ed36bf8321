package storage

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Every field a metadata-only object can carry survives a snapshot record, read copied or
// as a view: managedFields (kept), deletion fields, generateName, owner references with
// every flag, empty values, escapes and non-ASCII text.
func TestAuditS53MetadataRecordKeepsEveryField(t *testing.T) {
	m := newTestMetadataMode(t)
	yes, no := true, false
	grace := int64(30)
	del := metav1.NewTime(time.Unix(1700000100, 0))
	o := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1beta1", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "w-1", GenerateName: "w-", Namespace: "ns", UID: types.UID("u-1"),
			ResourceVersion: "18446744073709551615", Generation: 9223372036854775807,
			CreationTimestamp: metav1.Unix(1700000000, 0), DeletionTimestamp: &del, DeletionGracePeriodSeconds: &grace,
			Labels:      map[string]string{"empty": "", "app.kubernetes.io/name": "x"},
			Annotations: map[string]string{"json": `{"a":[1,"\u00e9\n\t\\"]}`, "emoji": "\U0001F600 \u2028 \x7f", "": "blank key"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u-2", Controller: &yes, BlockOwnerDeletion: &no},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u-3"},
			},
			Finalizers: []string{"a/b", "c"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				Time: &metav1.Time{Time: time.Unix(1700000050, 0)}, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)}, Subresource: "status",
			}},
		},
	}
	rec, ok := m.AppendSnapshot(nil, o)
	require.True(t, ok)
	var want metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal(rec, &want)) // the standard decoder's reading of the record
	for _, decode := range []func([]byte) (any, error){m.SnapshotDecode, m.SnapshotView} {
		got, err := decode(append([]byte(nil), rec...))
		require.NoError(t, err)
		require.Equal(t, &want, got)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		require.JSONEq(t, string(rec), string(b))
	}
}
