package informer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/kindex/kindex/internal/jsondecode"
	"github.com/kindex/kindex/query"
)

// rawItem stands for a compact-mode object: its JSON bytes.
type rawItem []byte

func (r rawItem) RawJSON() []byte { return r }

// sharedItem is an uncompressed compact-mode object, whose bytes are never modified.
type sharedItem struct{ rawItem }

func (s sharedItem) SharedJSON() []byte { return s.rawItem }

// keyedItem is a stored object that knows its key, as the compact mode's do (store.Keyed),
// even when its JSON is not an object's.
type keyedItem struct {
	rawItem
	key string
}

func (k keyedItem) StoreKey() string { return k.key }

const decodePod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","Labels":{"x":"y"},` +
	`"labels":{"app":"a"},"creationTimestamp":"2026-01-02T03:04:05Z"},"spec":{"containers":[{"name":"c","image":"i",` +
	`"ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"requests":{"cpu":"250m"}},` +
	`"readinessProbe":{"httpGet":{"port":"http","path":"/"}}}],"priority":7},"status":{"phase":"Running"}}`

// In compact mode DecodeInto decodes the bytes as Kubernetes' serializer does
// (sigs.k8s.io/json), not as encoding/json: keys match case-sensitively, and integers in
// interfaces are int64.
func TestItemDecodeIntoCompact(t *testing.T) {
	it := Item[obj]{obj: rawItem(decodePod)}

	var got, want corev1.Pod
	require.NoError(t, it.DecodeInto(&got))
	require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(decodePod), &want))
	assert.True(t, reflect.DeepEqual(want, got), "as sigs.k8s.io/json decodes it")
	assert.Equal(t, map[string]string{"app": "a"}, got.Labels, `"Labels" is not "labels"`)
	var folded corev1.Pod
	require.NoError(t, json.Unmarshal([]byte(decodePod), &folded))
	assert.NotEqual(t, folded.Labels, got.Labels, "encoding/json would have matched \"Labels\" too")

	var m map[string]any
	require.NoError(t, it.DecodeInto(&m))
	assert.Equal(t, int64(7), m["spec"].(map[string]any)["priority"])

	bad := Item[obj]{obj: keyedItem{rawItem(`{"metadata":{"name":1}}`), "ns/bad"}}
	err := bad.DecodeInto(&got)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "ns/bad", de.Key)
	var te *json.UnmarshalTypeError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "metadata.name", te.Field)

	// Strings are views of bytes that are never modified, copies of those that may be.
	view := func(s string, b []byte) bool {
		p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return p >= start && p < start+uintptr(len(b))
	}
	shared := sharedItem{rawItem(decodePod)}
	var sp corev1.Pod
	require.NoError(t, Item[obj]{obj: shared}.DecodeInto(&sp))
	assert.True(t, reflect.DeepEqual(want, sp))
	assert.True(t, view(sp.Spec.Containers[0].Image, shared.rawItem), "a view of the shared bytes")
	assert.False(t, view(got.Spec.Containers[0].Image, it.obj.(rawItem)), "a copy of bytes that are not shared")

	var meta metav1.PartialObjectMetadata
	require.Error(t, Item[obj]{obj: rawItem(`{"metadata":`)}.DecodeInto(&meta))
	assert.True(t, errors.As(Item[obj]{obj: rawItem(`{}`)}.DecodeInto(nil), &de))
}

// DecodeInto decodes an object of every mode as Kubernetes' serializer decodes the JSON the
// server sent (sigs.k8s.io/json): a metadata-only object, whose JSON is only its metadata,
// gives the same integers (int64 in an interface) and the same case-sensitive fields as
// the other modes.
func TestItemDecodeIntoEveryMode(t *testing.T) {
	const doc = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","generation":3,` +
		`"deletionGracePeriodSeconds":0,"labels":{"a":""},"creationTimestamp":"2026-01-02T03:04:05Z"}}`
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(doc)))
	var pm metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal([]byte(doc), &pm))
	type folded struct {
		Meta map[string]any `json:"Metadata"`
	}
	for name, it := range map[string]Item[obj]{"compact": {obj: rawItem(doc)}, "unstructured": {obj: u}, "metadata": {obj: &pm}} {
		var m, want map[string]any
		require.NoError(t, it.DecodeInto(&m), name)
		require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(doc), &want))
		assert.True(t, reflect.DeepEqual(want, m), "%s: %#v", name, m)
		assert.Equal(t, int64(3), m["metadata"].(map[string]any)["generation"], name)
		var f folded
		require.NoError(t, it.DecodeInto(&f), name)
		assert.Nil(t, f.Meta, "%s: \"Metadata\" is not \"metadata\"", name)
	}
}

// In the unstructured mode too, DecodeInto decodes as sigs.k8s.io/json decodes the
// server's JSON, in what it accepts and in what it refuses: fixed arrays, ",string" fields,
// numbers out of a field's range or with a fraction for an integer field.
func TestItemDecodeIntoUnstructuredAsJSON(t *testing.T) {
	type target struct {
		Arr   [2]int  `json:"arr"`
		Str   string  `json:"str,string"`
		Small uint8   `json:"small"`
		Int   int32   `json:"int"`
		Data  []byte  `json:"data"`
		Num   float64 `json:"num"`
		Any   any     `json:"any"`
	}
	for _, doc := range []string{
		`{"arr":[1,2,3],"str":"\"q\"","small":7,"int":-3,"data":"aGk=","num":2,"any":{"a":[1,1.5,null]}}`,
		`{"arr":[1]}`,
		`{"small":300}`,
		`{"int":1.5}`,
		`{"int":3000000000}`,
		`{"str":"q"}`,
		`{"num":"7"}`,
	} {
		m, err := jsondecode.Object([]byte(doc))
		require.NoError(t, err)
		var got, want target
		err = Item[obj]{obj: &unstructured.Unstructured{Object: m}}.DecodeInto(&got)
		werr := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(doc), &want)
		if werr != nil {
			assert.Error(t, err, doc)
			continue
		}
		require.NoError(t, err, doc)
		assert.True(t, reflect.DeepEqual(want, got), "%s: got %#v, want %#v", doc, got, want)
	}
}

// A stored object that cannot be decoded is an error that names it in every read that
// decodes it (Get, List, a namespace's List, Query, an item's Object), never a silent drop;
// reads that need no decode (items, counts) and the other objects are unaffected.
func TestUndecodableObjectIsAnErrorInEveryRead(t *testing.T) {
	for _, decodes := range []bool{false, true} { // results made under the store's lock, or after
		t.Run(fmt.Sprintf("decodes=%v", decodes), func(t *testing.T) { testUndecodable(t, decodes) })
	}
}

func testUndecodable(t *testing.T, decodes bool) {
	mode := newFakeMode()
	mode.decodes = decodes
	e := newEnvMode(t, mode, Options[obj]{}, hooks{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "good", nil))
	srv.add(newObj("ns", "bad", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	e.mode.undecodable.Store("bad", true)

	names := func(what string, err error) {
		t.Helper()
		var de *DecodeError
		require.ErrorAs(t, err, &de, what)
		assert.Equal(t, "ns/bad", de.Key, what)
		assert.Contains(t, err.Error(), "ns/bad", what)
	}
	_, err = inf.Get("ns", "bad")
	names("Get", err)
	_, err = inf.List(nil)
	names("List", err)
	_, err = inf.Namespace("ns").List(nil)
	names("Namespace.List", err)
	_, err = inf.Query(ctx, query.Query{Scan: true})
	names("Query", err)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	_, err = inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "bad")}})
	names("Query of one equality", err)
	res, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "good")}})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, "good", res.Items[0].Name)
	it, err := inf.GetItem("ns", "bad")
	require.NoError(t, err, "an item is not decoded")
	_, err = it.Object()
	names("Item.Object", err)

	good, err := inf.Get("ns", "good")
	require.NoError(t, err)
	assert.Equal(t, "good", good.Name)
	items, err := inf.ListItems("ns")
	require.NoError(t, err)
	assert.Len(t, items, 2)
	n, err := inf.Count(ctx, query.Query{})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

// An Item's key is made from its object (Items carry none): every read and handler gives
// "namespace/name", or "name" for an object without a namespace, and the compact mode's
// objects give the key they store (keyedItem).
func TestItemKeys(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", map[string]string{"x": "1"}))
	srv.add(newObj("ns2", "b", map[string]string{"x": "1"}))
	srv.add(newObj("", "c", map[string]string{"x": "1"}))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	keys := func(items []Item[obj]) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Key())
		}
		slices.Sort(out)
		return out
	}
	all := []string{"c", "ns/a", "ns2/b"}
	items, err := inf.ListItems("")
	require.NoError(t, err)
	assert.Equal(t, all, keys(items))
	items, err = inf.ListItems("ns2")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns2/b"}, keys(items))
	require.NoError(t, inf.AddIndex("x", "{.metadata.labels.x}"))
	res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("x", "1")}})
	require.NoError(t, err)
	assert.Equal(t, all, keys(res.Items))
	it, err := inf.GetItem("ns", "a")
	require.NoError(t, err)
	assert.Equal(t, "ns/a", it.Key())
	assert.Equal(t, "a", it.Name())
	assert.Equal(t, "ns", it.Namespace())

	got := make(chan string, 3)
	_, err = inf.AddEventHandler(ItemHandlerFuncs[obj]{AddFunc: func(it Item[obj], _ bool) { got <- it.Key() }})
	require.NoError(t, err)
	var handed []string
	for range 3 {
		handed = append(handed, <-got)
	}
	slices.Sort(handed)
	assert.Equal(t, all, handed)

	assert.Equal(t, "ns/k", Item[obj]{obj: keyedItem{rawItem(`{}`), "ns/k"}}.Key())
	assert.Empty(t, Item[obj]{}.Key())
}

// A notification whose object cannot be decoded for its handler is skipped, counted
// (kindex_informer_errors_total, reason DecodeError) and logged the first time only, not
// once per event.
func TestUndecodableNotificationsAreCountedAndLoggedOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	mode := newFakeMode()
	mode.decodes = true
	e := newEnvMode(t, mode, Options[obj]{Registerer: reg}, hooks{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	for _, n := range []string{"bad1", "bad2", "bad3", "good"} {
		srv.add(newObj("ns", n, nil))
	}
	for _, n := range []string{"bad1", "bad2", "bad3"} {
		e.mode.undecodable.Store(n, true)
	}
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	var got atomic.Int32
	reg1, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { got.Add(1) }})
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	eventually(t, reg1.HasSynced, "handler synced")
	assert.EqualValues(t, 1, got.Load(), "the good object only")
	base := `resource="widgets.example.com",version="v1",namespace="",selector="",mode="fake"`
	eventually(t, func() bool { return gather(t, reg)["kindex_informer_errors_total{"+base+`,reason="DecodeError"}`] == 3 }, "three counted")
	assert.Equal(t, 1, e.logs.count("Cannot decode a cached object for a handler"), "logged once:\n%s", e.logs)
}
