package compact

import (
	"encoding/json"
	"sort"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/indexfuncs"
)

var _ indexfuncs.RawJSON = (*Object)(nil)

func mustDecode(t testing.TB, d *Decoder, data []byte) *Object {
	t.Helper()
	o, err := d.DecodeObject(data)
	require.NoError(t, err)
	return o
}

// metaOf reads every metav1.Object getter.
func metaOf(m metav1.Object) map[string]any {
	return map[string]any{
		"namespace": m.GetNamespace(), "name": m.GetName(), "generateName": m.GetGenerateName(),
		"uid": m.GetUID(), "resourceVersion": m.GetResourceVersion(), "generation": m.GetGeneration(),
		"selfLink": m.GetSelfLink(), "creationTimestamp": m.GetCreationTimestamp().UTC(),
		"deletionTimestamp": m.GetDeletionTimestamp(), "deletionGracePeriodSeconds": m.GetDeletionGracePeriodSeconds(),
		"labels": m.GetLabels(), "annotations": m.GetAnnotations(), "finalizers": m.GetFinalizers(),
		"ownerReferences": m.GetOwnerReferences(), "managedFields": normalizeFields(m.GetManagedFields()),
	}
}

// normalizeFields decodes FieldsV1, whose bytes unstructured objects re-encode with sorted
// keys.
func normalizeFields(mf []metav1.ManagedFieldsEntry) []any {
	if mf == nil {
		return nil
	}
	out := make([]any, len(mf))
	for i, e := range mf {
		var fields any
		if e.FieldsV1 != nil {
			_ = json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields)
		}
		e.FieldsV1 = nil
		out[i] = []any{e, fields}
	}
	return out
}

// TestGettersMatchUnstructured: every getter reads what the unstructured object's reads.
func TestGettersMatchUnstructured(t *testing.T) {
	del := metav1.NewTime(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC))
	grace := int64(30)
	pod := realisticPod("ns", 1)
	pod.Generation = 4
	pod.SelfLink = "/api/v1/namespaces/ns/pods/x"
	pod.DeletionTimestamp = &del
	pod.DeletionGracePeriodSeconds = &grace
	pod.Finalizers = []string{"a/b", "c"}
	withEverything, err := json.Marshal(pod)
	require.NoError(t, err)

	inputs := map[string][]byte{
		"realistic pod":  podJSON(t, 2),
		"every field":    withEverything,
		"bare":           []byte(`{"kind":"X","apiVersion":"v1","metadata":{}}`),
		"no metadata":    []byte(`{"kind":"X"}`),
		"wrong types":    []byte(`{"metadata":{"labels":{"a":1},"annotations":"x","finalizers":[1],"generation":"3","name":["x"]}}`),
		"empty maps":     []byte(`{"metadata":{"labels":{},"annotations":{},"finalizers":[]}}`),
		"duplicate keys": []byte(`{"metadata":{"labels":{"a":"1"},"labels":{"b":"2"}}}`),
	}
	d, err := NewDecoder(Options{KeepManagedFields: true})
	require.NoError(t, err)
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			o := mustDecode(t, d, in)
			u, err := o.Unstructured()
			require.NoError(t, err)
			assert.Equal(t, metaOf(u), metaOf(o))
			assert.Equal(t, u.GroupVersionKind(), o.GroupVersionKind())
		})
	}
}

func TestUnstructuredIsClientGoDecoding(t *testing.T) {
	in := []byte(`{"kind":"X","apiVersion":"v1","metadata":{"name":"a"},"spec":{"int":3,"big":12345678901234,"float":1.5,"exp":1e3,"neg":-2,"list":[1,"a",null,true]}}`)
	o := mustDecode(t, &Decoder{}, in)
	u, err := o.Unstructured()
	require.NoError(t, err)
	var want unstructured.Unstructured
	require.NoError(t, want.UnmarshalJSON(in))
	assert.Equal(t, want.Object, u.Object)
	assert.IsType(t, int64(0), u.Object["spec"].(map[string]any)["int"])

	// Each call decodes anew: results are not shared.
	u.Object["spec"] = nil
	u2, err := o.Unstructured()
	require.NoError(t, err)
	assert.NotNil(t, u2.Object["spec"])
}

func TestSetters(t *testing.T) {
	orig := mustDecode(t, &Decoder{}, podJSON(t, 5))
	o := orig.DeepCopy()
	now := metav1.NewTime(time.Date(2025, 6, 1, 2, 3, 4, 0, time.UTC))
	grace := int64(7)
	refs := []metav1.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "x", UID: "u-x"}}
	mf := []metav1.ManagedFieldsEntry{{Manager: "me", Operation: metav1.ManagedFieldsOperationApply}}

	o.SetNamespace("ns2")
	o.SetName("n2")
	o.SetGenerateName("g-")
	o.SetUID("uid2")
	o.SetResourceVersion("42")
	o.SetGeneration(9)
	o.SetSelfLink("/x")
	o.SetCreationTimestamp(now)
	o.SetDeletionTimestamp(&now)
	o.SetDeletionGracePeriodSeconds(&grace)
	o.SetLabels(map[string]string{"l": "1"})
	o.SetAnnotations(map[string]string{"a": "2"})
	o.SetFinalizers([]string{"f"})
	o.SetOwnerReferences(refs)
	o.SetManagedFields(mf)
	o.SetGroupVersionKind(schema.GroupVersionKind{Group: "g", Version: "v9", Kind: "K"})

	assert.Equal(t, "ns2", o.GetNamespace())
	assert.Equal(t, "n2", o.GetName())
	assert.Equal(t, "g-", o.GetGenerateName())
	assert.EqualValues(t, "uid2", o.GetUID())
	assert.Equal(t, "42", o.GetResourceVersion())
	assert.EqualValues(t, 9, o.GetGeneration())
	assert.Equal(t, "/x", o.GetSelfLink())
	assert.True(t, now.Equal(ptrTo(o.GetCreationTimestamp())))
	assert.True(t, now.Equal(o.GetDeletionTimestamp()))
	assert.Equal(t, &grace, o.GetDeletionGracePeriodSeconds())
	assert.Equal(t, map[string]string{"l": "1"}, o.GetLabels())
	assert.Equal(t, map[string]string{"a": "2"}, o.GetAnnotations())
	assert.Equal(t, []string{"f"}, o.GetFinalizers())
	assert.Equal(t, refs, o.GetOwnerReferences())
	assert.True(t, o.HasManagedFields())
	assert.Equal(t, "me", o.GetManagedFields()[0].Manager)
	assert.Equal(t, schema.GroupVersionKind{Group: "g", Version: "v9", Kind: "K"}, o.GroupVersionKind())
	assert.True(t, json.Valid(o.RawJSON()))

	o.SetManagedFields(nil)
	assert.False(t, o.HasManagedFields())
	assert.NotContains(t, string(o.RawJSON()), "managedFields")
	o.SetLabels(nil)
	assert.Nil(t, o.GetLabels())
	o.SetDeletionTimestamp(nil)
	assert.Nil(t, o.GetDeletionTimestamp())

	// The copy it was made from shares no change.
	assert.Equal(t, "default", orig.GetNamespace())
	assert.NotEqual(t, "n2", orig.GetName())
	assert.Len(t, orig.GetLabels(), 4)
	assert.Equal(t, withoutManagedFields(t, podJSON(t, 5)), decodeJSON(t, orig.RawJSON()))
}

// TestNeverPanics calls every method on a nil object, a zero object and an undecodable one.
func TestNeverPanics(t *testing.T) {
	for name, o := range map[string]*Object{"nil": nil, "zero": {}, "garbage": {raw: []byte("{not json")}} {
		t.Run(name, func(t *testing.T) {
			assert.NotPanics(t, func() {
				var m metav1.Object = o
				metaOf(m)
				m.SetName("x")
				m.SetLabels(map[string]string{"a": "b"})
				m.SetManagedFields(nil)
				m.SetManagedFields([]metav1.ManagedFieldsEntry{{}})
				o.SetGroupVersionKind(schema.GroupVersionKind{Kind: "K"})
				_ = o.GroupVersionKind()
				_ = o.GetObjectKind()
				_ = o.DeepCopyObject()
				_ = o.RawJSON()
				_, _ = o.MarshalJSON()
				_, _ = o.Unstructured()
				_ = o.HasManagedFields()
			})
		})
	}
}

// TestObjectSize: the header stays in the 64-byte size class, and decoding an object makes
// exactly two allocations that outlive it: the header, and the JSON with its key text.
func TestObjectSize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Object{}), uintptr(64))
	data := podJSON(t, 1)
	d := &Decoder{}
	mustDecode(t, d, data) // warm the scratch pool
	if raceEnabled {
		t.Skip("allocation counts are not exact with the race detector")
	}
	allocs := testing.AllocsPerRun(50, func() { _, _ = d.DecodeObject(data) })
	assert.Equal(t, 2.0, allocs)
}

func TestDeepCopyAndKeys(t *testing.T) {
	o := mustDecode(t, &Decoder{}, podJSON(t, 9))
	c := o.DeepCopyObject().(*Object)
	assert.Equal(t, o, c)
	assert.NotSame(t, o, c)
	c.SetName("other")
	assert.NotEqual(t, o.GetName(), c.GetName())

	// client-go's key functions and accessors.
	key, err := cache.MetaNamespaceKeyFunc(o)
	require.NoError(t, err)
	assert.Equal(t, "default/"+o.GetName(), key)
	acc, err := meta.Accessor(o)
	require.NoError(t, err)
	assert.Equal(t, o.GetResourceVersion(), acc.GetResourceVersion())

	data, err := json.Marshal(struct{ O *Object }{o})
	require.NoError(t, err)
	assert.Contains(t, string(data), `"O":{"kind":"Pod"`)
}

// TestIndexFunctionsOnBytes: kindex's index functions read compact objects (JSONPath on the
// bytes, built-ins through the getters) as they read the unstructured object.
func TestIndexFunctionsOnBytes(t *testing.T) {
	o := mustDecode(t, &Decoder{}, podJSON(t, 11))
	u, err := o.Unstructured()
	require.NoError(t, err)
	for _, expr := range []string{
		"{.spec.nodeName}", "{.spec.containers[*].image}", "{.status.phase}",
		"{.metadata.labels.app\\.kubernetes\\.io/name}", "{.status.containerStatuses[?(@.ready==true)].name}",
		"{.metadata.namespace}/{.metadata.name}", "{.spec.missing}",
	} {
		fn, err := indexfuncs.JSONPath(expr)
		require.NoError(t, err, expr)
		want, werr := fn(u)
		got, gerr := fn(o)
		assert.Equal(t, werr, gerr, expr)
		sort.Strings(want)
		sort.Strings(got)
		assert.Equal(t, want, got, expr)
	}
	for _, name := range indexfuncs.BuiltinNames() {
		fn, _ := indexfuncs.Builtin(name)
		want, werr := fn(u)
		got, gerr := fn(o)
		require.NoError(t, werr)
		require.NoError(t, gerr)
		sort.Strings(want)
		sort.Strings(got)
		assert.Equal(t, want, got, name)
	}
}

// TestKeyTextSharesTheAllocation: the key fields and StoreKey are views of the text kept
// after the JSON, they match client-go's key function (escaped and non-ASCII names included),
// and appending to RawJSON cannot overwrite them.
func TestKeyTextSharesTheAllocation(t *testing.T) {
	cases := []struct{ data, key, ns, name, rv, uid string }{
		{`{"metadata":{"namespace":"ns","name":"a","resourceVersion":"7","uid":"u-1"}}`, "ns/a", "ns", "a", "7", "u-1"},
		{`{"metadata":{"name":"cluster-wide","uid":"u-2"}}`, "cluster-wide", "", "cluster-wide", "", "u-2"},
		{`{"metadata":{"namespace":"n\u0073","name":"caf\u00e9","resourceVersion":"9"}}`, "ns/café", "ns", "café", "9", ""},
		{`{"kind":"X"}`, "", "", "", "", ""},
	}
	for _, c := range cases {
		for _, d := range []*Decoder{{}, {keep: true}} {
			o := mustDecode(t, d, []byte(c.data))
			want, err := cache.MetaNamespaceKeyFunc(o)
			require.NoError(t, err)
			assert.Equal(t, want, o.StoreKey(), c.data)
			assert.Equal(t, c.key, o.StoreKey(), c.data)
			assert.Equal(t, c.ns, o.GetNamespace(), c.data)
			assert.Equal(t, c.name, o.GetName(), c.data)
			assert.Equal(t, c.rv, o.GetResourceVersion(), c.data)
			assert.Equal(t, c.uid, string(o.GetUID()), c.data)
			assert.Equal(t, len(o.RawJSON()), cap(o.RawJSON()), "RawJSON is capped")
			assert.Equal(t, unsafe.SliceData(o.RawJSON()), unsafe.SliceData(o.SharedJSON()), "an uncompressed object shares its own bytes")
			assert.Equal(t, len(o.RawJSON()), len(o.SharedJSON()))
			_ = append(o.RawJSON(), "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"...)
			assert.Equal(t, c.key, o.StoreKey(), "after an append to RawJSON")
			assert.Equal(t, c.uid, string(o.GetUID()), "after an append to RawJSON")
			if o.StoreKey() != "" {
				raw := o.RawJSON()
				key := o.StoreKey()
				end := uintptr(unsafe.Pointer(unsafe.SliceData(raw))) + uintptr(len(raw))
				assert.Equal(t, end, uintptr(unsafe.Pointer(unsafe.StringData(key))), "the key text follows the JSON")
			}
		}
	}
	var zero Object
	assert.Empty(t, zero.StoreKey())
	assert.Empty(t, zero.GetName())
	var nilObj *Object
	assert.Empty(t, nilObj.StoreKey())
}
