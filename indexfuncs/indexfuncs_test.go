package indexfuncs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

const podJSON = `{
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1",
    "labels": {"app.kubernetes.io/name": "web", "tier": "front"},
    "annotations": {"note": "x"},
    "finalizers": ["kindex.io/hold"],
    "ownerReferences": [
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1", "controller": true},
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": "cm-1"}]},
  "spec": {"nodeName": "node-a", "priority": 7, "weight": 1.5, "hostNetwork": false,
    "containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "envoy:2"}, {"name": "c", "image": "nginx:1"}],
    "affinity": {"nodeAffinity": {}}},
  "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "False"}]}
}`

type raw []byte

func (r raw) RawJSON() []byte { return r }

func decoded(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(podJSON)))
	return u
}

func TestJSONPathIndexValues(t *testing.T) {
	cases := []struct {
		expr    string
		want    []string
		wantErr error
	}{
		{"{.spec.nodeName}", []string{"node-a"}, nil},
		{".spec.nodeName", []string{"node-a"}, nil},
		{"{.spec.containers[*].image}", []string{"nginx:1", "envoy:2", "nginx:1"}, nil},
		{`{.status.conditions[?(@.type=="Ready")].status}`, []string{"True"}, nil},
		{"{.metadata.labels['app.kubernetes.io/name']}", []string{"web"}, nil},
		{"{.spec.priority}", []string{"7"}, nil},
		{"{.spec.weight}", []string{"1.5"}, nil},
		{"{.spec.hostNetwork}", []string{"false"}, nil},
		{"{.spec.missing}", nil, nil},
		{"{.spec.affinity}", []string{query.NonScalar}, nil}, // present, nothing to compare
		{"{.metadata.namespace}/{.metadata.name}", []string{"shop/web-1"}, nil},
	}
	objects := map[string]any{
		"unstructured": decoded(t),
		"map":          decoded(t).Object,
		"raw JSON":     raw(podJSON),
		"tombstone":    cache.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: decoded(t)},
	}
	for _, tc := range cases {
		fn, err := indexfuncs.JSONPath(tc.expr)
		require.NoError(t, err, tc.expr)
		for name, obj := range objects {
			t.Run(tc.expr+"/"+name, func(t *testing.T) {
				got, err := fn(obj)
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, tc.want, got)
			})
		}
	}
}

func TestJSONPathSyntaxErrorIsPositioned(t *testing.T) {
	_, err := indexfuncs.JSONPath("{.spec[?(@.x==)]}")
	var se *jsonpath.SyntaxError
	require.True(t, errors.As(err, &se), "got %T %v", err, err)
	assert.Greater(t, se.Offset, 0)
}

func partial(t *testing.T) *metav1.PartialObjectMetadata {
	t.Helper()
	var p metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal([]byte(podJSON), &p))
	return &p
}

func TestJSONPathOnMetadataOnlyObjects(t *testing.T) {
	p := partial(t)
	for expr, want := range map[string][]string{
		"{.metadata.labels.tier}":                                 {"front"},
		"{.metadata.ownerReferences[*].uid}":                      {"rs-1", "cm-1"},
		"{.kind}":                                                 {"Pod"},
		"{.metadata.finalizers[0]}":                               {"kindex.io/hold"},
		"{.spec.nodeName}":                                        nil,
		"{.metadata.namespace}/{.metadata.name}":                  {"shop/web-1"},
		`{.metadata.ownerReferences[?(@.controller==true)].kind}`: {"ReplicaSet"},
	} {
		fn, err := indexfuncs.JSONPath(expr)
		require.NoError(t, err)
		got, err := fn(p)
		require.NoError(t, err, expr)
		assert.Equal(t, want, got, expr)
	}
}

func TestBuiltins(t *testing.T) {
	want := map[string][]string{
		indexfuncs.IndexNamespace:     {"shop"},
		indexfuncs.IndexName:          {"web-1"},
		indexfuncs.IndexUID:           {"u-1"},
		indexfuncs.IndexLabel:         {"app.kubernetes.io/name=web", "tier=front"},
		indexfuncs.IndexLabelKey:      {"app.kubernetes.io/name", "tier"},
		indexfuncs.IndexAnnotationKey: {"note"},
		indexfuncs.IndexOwnerUID:      {"rs-1", "cm-1"},
		indexfuncs.IndexControllerUID: {"rs-1"},
		indexfuncs.IndexFinalizer:     {"kindex.io/hold"},
	}
	require.ElementsMatch(t, indexfuncs.BuiltinNames(), keys(want))
	for name, values := range want {
		fn, ok := indexfuncs.Builtin(name)
		require.True(t, ok)
		for kind, obj := range map[string]any{"unstructured": decoded(t), "metadata": partial(t)} {
			got, err := fn(obj)
			require.NoError(t, err)
			assert.ElementsMatch(t, values, got, "%s on %s", name, kind)
		}
	}
	_, err := indexfuncs.OwnerUID("not an object")
	assert.Error(t, err, "an unreadable object is an error, not a panic")
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestValuesOfEveryObjectType(t *testing.T) {
	p := jsonpath.MustCompile("{.spec.containers[*].image}")
	buf := []byte(podJSON)
	for name, obj := range map[string]any{
		"unstructured": decoded(t),
		"map":          decoded(t).Object,
		"raw JSON":     raw(buf),
	} {
		vs, err := indexfuncs.Values(p, obj)
		require.NoError(t, err, name)
		if name == "raw JSON" {
			for i := range buf {
				buf[i] = ' ' // values do not refer to the bytes of a RawJSON object
			}
		}
		got := make([]string, len(vs))
		for i, v := range vs {
			got[i] = v.String()
		}
		assert.Equal(t, []string{"nginx:1", "envoy:2", "nginx:1"}, got, name)
	}
	_, err := indexfuncs.Values(p, 42)
	assert.ErrorIs(t, err, indexfuncs.ErrUnsupportedObject)
}

// fullMetadataJSON sets every field of ObjectMeta, as the API server writes an object being
// deleted whose managedFields are kept.
const fullMetadataJSON = `{"apiVersion": "example.com/v1", "kind": "Widget",
  "metadata": {"name": "w", "generateName": "w-", "namespace": "ns", "selfLink": "/apis/example.com/v1/namespaces/ns/widgets/w",
    "uid": "u-1", "resourceVersion": "42", "generation": 3,
    "creationTimestamp": "2026-01-02T03:04:05Z", "deletionTimestamp": "2026-01-02T04:05:06Z",
    "deletionGracePeriodSeconds": 0,
    "labels": {"a": "", "b": "7"}, "annotations": {"n": "x"},
    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "cm-1", "controller": false, "blockOwnerDeletion": true}],
    "finalizers": ["example.com/hold"],
    "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "example.com/v1",
      "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}},
      "subresource": "status"}]}}`

// TestMetadataOnlyObjectsHoldTheServersMetadata: a path into metadata gives a metadata-only
// object the values it gives the server's object, for every field of metadata, so that
// the metadata-only mode answers as the others.
func TestMetadataOnlyObjectsHoldTheServersMetadata(t *testing.T) {
	var p metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal([]byte(fullMetadataJSON), &p))
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(fullMetadataJSON)))
	for _, expr := range []string{
		"{.metadata}", "{.metadata.deletionGracePeriodSeconds}", "{.metadata.selfLink}",
		"{.metadata.managedFields[*].manager}", "{.metadata.managedFields[0].fieldsV1}", "{..f:a}",
		"{.metadata.*}", "{.apiVersion}/{.kind}",
	} {
		path := jsonpath.MustCompile(expr)
		want, err := path.ExecuteString(u.Object)
		require.NoError(t, err, expr)
		got, err := indexfuncs.Values(path, &p)
		require.NoError(t, err, expr)
		var text []string
		for _, v := range got {
			text = append(text, v.String())
		}
		wantVals, err := indexfuncs.Values(path, u)
		require.NoError(t, err, expr)
		var wantText []string
		for _, v := range wantVals {
			wantText = append(wantText, v.String())
		}
		assert.ElementsMatch(t, wantText, text, "%s (server's: %s)", expr, want)
		fn := indexfuncs.FromPath(path)
		gotIdx, err := fn(&p)
		require.NoError(t, err, expr)
		wantIdx, err := fn(u)
		require.NoError(t, err, expr)
		assert.ElementsMatch(t, wantIdx, gotIdx, expr)
	}
}

// A path whose values are maps or lists means "present" however large they are: an index
// function looks at its values without printing them, so that the budget Eval charges for
// printing the maps and lists it returns (see package jsonpath) never makes a large object
// look as if it had no value. A spec of 50,000 keys (about 1 MB) is far beyond what
// printing may cost with the default budget.
func TestLargeMapsArePresent(t *testing.T) {
	spec := map[string]any{}
	for i := 0; i < 50000; i++ {
		spec[fmt.Sprintf("key-%05d", i)] = "value"
	}
	obj := map[string]any{"metadata": map[string]any{"name": "big"}, "spec": spec}
	doc, err := json.Marshal(obj)
	require.NoError(t, err)
	p := jsonpath.MustCompile("{.spec}")
	_, err = p.Eval(obj)
	require.ErrorIs(t, err, jsonpath.ErrBudgetExceeded, "Eval charges printing what it returns")
	f := indexfuncs.FromPath(p)
	for name, in := range map[string]any{"decoded": &unstructured.Unstructured{Object: obj}, "raw": raw(doc)} {
		keys, err := f(in)
		require.NoError(t, err, name)
		assert.Equal(t, []string{query.NonScalar}, keys, name)
	}
}

// A nil pointer (a nil *unstructured.Unstructured, a tombstone holding one) has no metadata
// to read, nor has an object of another type: every function returns ErrUnsupportedObject
// for it (the built-ins returned apimachinery's error, which errors.Is could not tell from
// another), never a panic, which a client-go indexer would not recover.
func TestNilObjectsAreErrors(t *testing.T) {
	var nilU *unstructured.Unstructured
	var nilP *metav1.PartialObjectMetadata
	fns := map[string]cache.IndexFunc{"FromPath": indexfuncs.FromPath(jsonpath.MustCompile("{.metadata.name}")),
		"FromPath template": indexfuncs.FromPath(jsonpath.MustCompile("{.metadata.namespace}/{.metadata.name}"))}
	for _, name := range indexfuncs.BuiltinNames() {
		fns[name], _ = indexfuncs.Builtin(name)
	}
	for fname, fn := range fns {
		for oname, obj := range map[string]any{"nil": nil, "nil unstructured": nilU, "nil metadata": nilP,
			"tombstone of nil": cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: nilU}, "int": 42, "string": "ns/a"} {
			require.NotPanics(t, func() {
				values, err := fn(obj)
				assert.ErrorIs(t, err, indexfuncs.ErrUnsupportedObject, "%s of %s", fname, oname)
				assert.Empty(t, values, "%s of %s", fname, oname)
			}, "%s of %s", fname, oname)
		}
	}
	_, err := indexfuncs.Values(jsonpath.MustCompile("{.a}"), nilU)
	assert.ErrorIs(t, err, indexfuncs.ErrUnsupportedObject)
}

// A nil path is an error at every call, never a nil dereference.
func TestNilPath(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}
	_, err := indexfuncs.FromPath(nil)(obj)
	assert.ErrorIs(t, err, indexfuncs.ErrNilPath)
	_, err = indexfuncs.Values(nil, obj)
	assert.ErrorIs(t, err, indexfuncs.ErrNilPath)
}
