package compact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/store"
)

var podsResource = discovery.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "pods"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
	Namespaced: true,
	Verbs:      []string{"list", "watch"},
}

func TestModeBasics(t *testing.T) {
	m, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	var sm storage.Mode = m
	assert.Equal(t, "compact", sm.Name())
	assert.IsType(t, &Object{}, sm.ExampleObject())
	checkIndexedStore(t, store.New(store.Options{}))

	lw := sm.ListerWatcher(storage.Target{Resource: podsResource})
	assert.False(t, watchlist.DoesClientNotSupportWatchListSemantics(lw), "watch-list stays on")

	o := mustDecode(t, &Decoder{}, podJSON(t, 1))
	got, err := sm.Object(o)
	require.NoError(t, err)
	u, ok := got.(*unstructured.Unstructured)
	require.True(t, ok, "%T", got)
	assert.Equal(t, o.GetName(), u.GetName())
	assert.Equal(t, withoutManagedFields(t, podJSON(t, 1)), decodeJSON(t, must(u.MarshalJSON())))

	got, err = sm.Object(u)
	require.NoError(t, err)
	assert.Same(t, u, got)

	got, err = sm.Object(cache.DeletedFinalStateUnknown{Key: "k", Obj: o})
	require.NoError(t, err)
	assert.IsType(t, &unstructured.Unstructured{}, got.(cache.DeletedFinalStateUnknown).Obj)
	// A tombstone without its last state is still a delete, not an error.
	got, err = sm.Object(cache.DeletedFinalStateUnknown{Key: "ns/gone"})
	require.NoError(t, err)
	assert.Equal(t, cache.DeletedFinalStateUnknown{Key: "ns/gone"}, got)

	_, err = sm.Object("nope")
	assert.ErrorIs(t, err, ErrUnsupported)

	_, err = New(nil, Options{})
	assert.Error(t, err)

	_, err = (&ListerWatcher{}).List(metav1.ListOptions{})
	assert.Error(t, err, "a zero ListerWatcher fails, it does not panic")
	_, err = (*ListerWatcher)(nil).Watch(metav1.ListOptions{})
	assert.Error(t, err)
}

// checkIndexedStore: kindex's store indexes compact objects without decoding them.
func checkIndexedStore(t *testing.T, s *store.Store) {
	d := &Decoder{}
	for i := range 6 {
		require.NoError(t, s.Add(mustDecode(t, d, podJSON(t, i))))
	}
	node, err := indexfuncs.JSONPath("{.spec.nodeName}")
	require.NoError(t, err)
	require.NoError(t, s.AddIndex("node", store.IndexFunc(node)))
	label, _ := indexfuncs.Builtin(indexfuncs.IndexLabel)
	require.NoError(t, s.AddIndex("label", store.IndexFunc(label)))
	keys, err := s.IndexKeysIn("node", "worker-003", "", true)
	require.NoError(t, err)
	assert.Len(t, keys, 1)
	keys, err = s.IndexKeysIn("label", "app.kubernetes.io/name=catalog", "default", false)
	require.NoError(t, err)
	assert.Len(t, keys, 1)
	assert.Len(t, s.ListNamespace("default"), 6)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestModeTransform(t *testing.T) {
	m, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	kept := mustDecode(t, &Decoder{keep: true}, podJSON(t, 2))
	require.True(t, kept.HasManagedFields())

	t.Run("strip", func(t *testing.T) {
		out, err := m.Transform(nil)(kept)
		require.NoError(t, err)
		o := out.(*Object)
		assert.False(t, o.HasManagedFields())
		assert.NotContains(t, string(o.RawJSON()), "managedFields")
		assert.True(t, kept.HasManagedFields(), "the input is not modified")
		again, err := m.Transform(nil)(o)
		require.NoError(t, err)
		assert.Same(t, o, again, "idempotent without work")
	})
	t.Run("keep", func(t *testing.T) {
		keeping, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{KeepManagedFields: true})
		require.NoError(t, err)
		assert.Nil(t, keeping.Transform(nil), "nothing to do")
	})
	t.Run("user transform", func(t *testing.T) {
		var calls atomic.Int32
		user := func(obj any) (any, error) {
			calls.Add(1)
			u := obj.(*unstructured.Unstructured)
			u.SetLabels(map[string]string{"seen": "yes"})
			unstructured.RemoveNestedField(u.Object, "status")
			return u, nil
		}
		tr := m.Transform(user)
		out, err := tr(kept)
		require.NoError(t, err)
		o := out.(*Object)
		assert.Equal(t, map[string]string{"seen": "yes"}, o.GetLabels())
		assert.NotContains(t, string(o.RawJSON()), `"status"`)
		assert.False(t, o.HasManagedFields())
		assert.Equal(t, kept.GetName(), o.GetName())
		// client-go applies the transform twice to watch-list objects: once is enough.
		again, err := tr(o)
		require.NoError(t, err)
		assert.Same(t, o, again)
		assert.EqualValues(t, 1, calls.Load())
		// Tombstones go to the user transform as they are.
		tomb := cache.DeletedFinalStateUnknown{Key: "k"}
		out, err = m.Transform(func(obj any) (any, error) { return obj, nil })(tomb)
		require.NoError(t, err)
		assert.Equal(t, tomb, out)
	})
	t.Run("user transform errors", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := m.Transform(func(any) (any, error) { return nil, boom })(kept)
		assert.ErrorIs(t, err, boom)
		_, err = m.Transform(func(any) (any, error) { return "x", nil })(kept)
		assert.ErrorIs(t, err, ErrUnsupported)
	})
}

// fakeServer serves LIST and WATCH of pods like an API server, recording queries.
type fakeServer struct {
	mu      sync.Mutex
	queries []url.Values
	list    func(q url.Values) (int, string)
	watch   func(q url.Values) (int, string)
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	handler := f.list
	if q.Get("watch") == "true" {
		handler = f.watch
	}
	code, body := handler(q)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

func newFakeLW(t *testing.T, f *fakeServer, target storage.Target) *ListerWatcher {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client, err := NewClient(&rest.Config{Host: srv.URL}, &Decoder{})
	require.NoError(t, err)
	return NewListerWatcher(client, target)
}

// TestListerWatcherRequests checks the requests (as the dynamic client makes them) and the
// decoding of answers and errors, against a fake server.
func TestListerWatcherRequests(t *testing.T) {
	f := &fakeServer{
		list: func(q url.Values) (int, string) {
			if q.Get("continue") == "" {
				return 200, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5","continue":"next"},"items":[{"metadata":{"name":"a","namespace":"ns"}}]}`
			}
			return 410, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The provided continue parameter is too old","reason":"Expired","code":410}`
		},
		watch: func(q url.Values) (int, string) {
			return 200, frameAdded + "\n" + frameBookmark + "\n" + frameGone + "\n"
		},
	}
	target := storage.Target{Resource: podsResource, Namespace: "ns", LabelSelector: "app=x", FieldSelector: "spec.nodeName=n1"}
	lw := newFakeLW(t, f, target)
	ctx := context.Background()

	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 500, ResourceVersion: "0", LabelSelector: "ignored"})
	require.NoError(t, err)
	l := obj.(*List)
	assert.Equal(t, "next", l.Continue)
	assert.Equal(t, "Pod", l.Items[0].GroupVersionKind().Kind)

	_, err = lw.ListWithContext(ctx, metav1.ListOptions{Limit: 500, Continue: "next"})
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)

	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{
		ResourceVersion: "5", SendInitialEvents: ptrTo(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptrTo(int64(300)),
	})
	require.NoError(t, err)
	var types []watch.EventType
	for ev := range w.ResultChan() {
		types = append(types, ev.Type)
	}
	assert.Equal(t, []watch.EventType{watch.Added, watch.Bookmark, watch.Error}, types)

	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.queries, 3)
	first, wq := f.queries[0], f.queries[2]
	assert.Equal(t, "app=x", first.Get("labelSelector"))
	assert.Equal(t, "spec.nodeName=n1", first.Get("fieldSelector"))
	assert.Equal(t, "500", first.Get("limit"))
	assert.Equal(t, "0", first.Get("resourceVersion"))
	assert.Equal(t, "true", wq.Get("watch"))
	assert.Equal(t, "true", wq.Get("sendInitialEvents"))
	assert.Equal(t, "true", wq.Get("allowWatchBookmarks"))
	assert.Equal(t, "NotOlderThan", wq.Get("resourceVersionMatch"))
	assert.Equal(t, "300", wq.Get("timeoutSeconds"))
	assert.Equal(t, "app=x", wq.Get("labelSelector"))
}

func TestListerWatcherPaths(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path+" "+r.Header.Get("Accept"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`))
	}))
	defer srv.Close()
	client, err := NewClient(&rest.Config{Host: srv.URL}, &Decoder{})
	require.NoError(t, err)
	widgets := discovery.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
	nodes := discovery.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	for _, tg := range []storage.Target{
		{Resource: podsResource},
		{Resource: podsResource, Namespace: "ns"},
		{Resource: widgets, Namespace: "ns"},
		{Resource: nodes, Namespace: "ns"},
	} {
		_, err := NewListerWatcher(client, tg).List(metav1.ListOptions{})
		require.NoError(t, err)
	}
	assert.Equal(t, []string{
		"/api/v1/pods application/json",
		"/api/v1/namespaces/ns/pods application/json",
		"/apis/example.com/v1/namespaces/ns/widgets application/json",
		"/api/v1/nodes application/json",
	}, paths)
}

// TestListerWatcherErrors: API errors keep their type (apierrors), non-JSON errors too.
func TestListerWatcherErrors(t *testing.T) {
	for _, tc := range []struct {
		code int
		body string
		is   func(error) bool
	}{
		{403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden","reason":"Forbidden","code":403}`, apierrors.IsForbidden},
		{404, `404 page not found`, apierrors.IsNotFound},
		{410, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"gone","reason":"Expired","code":410}`, apierrors.IsResourceExpired},
		{500, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"boom","reason":"InternalError","code":500}`, apierrors.IsInternalError},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			f := &fakeServer{
				list:  func(url.Values) (int, string) { return tc.code, tc.body },
				watch: func(url.Values) (int, string) { return tc.code, tc.body },
			}
			lw := newFakeLW(t, f, storage.Target{Resource: podsResource})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := lw.ListWithContext(ctx, metav1.ListOptions{})
			assert.True(t, tc.is(err), "list: %v", err)
			_, err = lw.WatchWithContext(ctx, metav1.ListOptions{})
			assert.True(t, tc.is(err), "watch: %v", err)
		})
	}
	t.Run("malformed body", func(t *testing.T) {
		f := &fakeServer{list: func(url.Values) (int, string) { return 200, `{"items":[1]}` }}
		lw := newFakeLW(t, f, storage.Target{Resource: podsResource})
		_, err := lw.List(metav1.ListOptions{})
		assert.ErrorIs(t, err, ErrMalformed)
		assert.True(t, strings.Contains(err.Error(), "item 0"), "%v", err)
	})
}

// TestStreamingListerRequests: a streaming lister asks for a consistent read of everything
// where the Reflector asks for resourceVersion=0 in pages, keeps an explicit resourceVersion,
// decodes the streamed body, and returns API errors and truncated bodies as errors.
func TestStreamingListerRequests(t *testing.T) {
	f := &fakeServer{
		list: func(q url.Values) (int, string) {
			switch q.Get("labelSelector") {
			case "app=gone":
				return 410, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}`
			case "app=cut":
				return 200, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"`
			}
			return 200, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","namespace":"ns"}},{"metadata":{"name":"b","namespace":"ns"}}]}`
		},
	}
	ctx := context.Background()
	lw := newFakeLW(t, f, storage.Target{Resource: podsResource, Namespace: "ns", LabelSelector: "app=x"}).StreamingLists(&Decoder{})
	assert.True(t, lw.IsWatchListSemanticsUnSupported())
	assert.False(t, newFakeLW(t, f, storage.Target{Resource: podsResource}).IsWatchListSemanticsUnSupported())

	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 500, ResourceVersion: "0"})
	require.NoError(t, err)
	l := obj.(*List)
	assert.Equal(t, "7", l.ResourceVersion)
	require.Len(t, l.Items, 2)
	assert.Equal(t, "ns/b", l.Items[1].StoreKey())
	assert.Equal(t, "Pod", l.Items[1].GroupVersionKind().Kind)

	_, err = lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "42", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	require.NoError(t, err)

	gone := newFakeLW(t, f, storage.Target{Resource: podsResource, Namespace: "ns", LabelSelector: "app=gone"}).StreamingLists(&Decoder{})
	_, err = gone.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)
	cut := newFakeLW(t, f, storage.Target{Resource: podsResource, Namespace: "ns", LabelSelector: "app=cut"}).StreamingLists(&Decoder{})
	_, err = cut.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	assert.ErrorIs(t, err, ErrMalformed, "a truncated body is an error, not a short list")

	f.mu.Lock()
	defer f.mu.Unlock()
	require.GreaterOrEqual(t, len(f.queries), 2)
	first, second := f.queries[0], f.queries[1]
	assert.Empty(t, first.Get("limit"), "no pages")
	assert.Empty(t, first.Get("resourceVersion"), "resourceVersion=0 becomes a consistent read")
	assert.Equal(t, "app=x", first.Get("labelSelector"))
	assert.Equal(t, "42", second.Get("resourceVersion"), "an explicit resourceVersion is kept")
	assert.Equal(t, "NotOlderThan", second.Get("resourceVersionMatch"))
}

// TestStreamingListerPagesAfterCuts: a streaming lister whose LISTs are cut before their end
// twice in a row (an apiserver's --request-timeout cutting a slow reader) lists in
// consistent pages from then on; a success in between resets the count, and API errors
// before the body never count.
func TestStreamingListerPagesAfterCuts(t *testing.T) {
	const page1 = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"next"},"items":[{"metadata":{"name":"a","namespace":"ns"}}]}`
	const page2 = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"b","namespace":"ns"}}]}`
	const whole = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","namespace":"ns"}},{"metadata":{"name":"b","namespace":"ns"}}]}`
	var mu sync.Mutex
	cut := true
	f := &fakeServer{list: func(q url.Values) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case q.Get("continue") == "next":
			return 200, page2
		case q.Get("limit") != "":
			return 200, page1
		case cut:
			return 200, whole[:60] // the body ends mid-object
		}
		return 200, whole
	}}
	setCut := func(v bool) { mu.Lock(); cut = v; mu.Unlock() }
	ctx := context.Background()
	lw := newFakeLW(t, f, storage.Target{Resource: podsResource, Namespace: "ns"}).StreamingLists(&Decoder{})
	reflectorList := metav1.ListOptions{Limit: 500, ResourceVersion: "0"}
	list := func() (*List, error) {
		obj, err := lw.ListWithContext(ctx, reflectorList)
		if err != nil {
			return nil, err
		}
		return obj.(*List), nil
	}

	_, err := list()
	require.Error(t, err, "cut once")
	setCut(false)
	l, err := list()
	require.NoError(t, err, "whole: the count starts again")
	assert.Len(t, l.Items, 2)
	setCut(true)
	_, err = list()
	require.Error(t, err, "cut once more")
	_, err = list()
	require.Error(t, err, "cut twice in a row")

	setCut(false) // pages from now on, even though a whole LIST would now go through
	l, err = list()
	require.NoError(t, err)
	assert.Equal(t, "next", l.Continue, "a first page")
	require.Len(t, l.Items, 1)
	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 500, Continue: "next"})
	require.NoError(t, err)
	assert.Equal(t, "ns/b", obj.(*List).Items[0].StoreKey())
	obj, err = lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err, "a Reflector that asks for no limit gets pages too")
	assert.Equal(t, "next", obj.(*List).Continue)

	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.queries, 7)
	for i, q := range f.queries[:4] {
		assert.Empty(t, q.Get("limit"), "request %d streams everything", i)
	}
	for i, q := range []url.Values{f.queries[4], f.queries[6]} {
		assert.Equal(t, "500", q.Get("limit"), "first page %d", i)
		assert.Empty(t, q.Get("resourceVersion"), "first page %d: a consistent read, not resourceVersion=0", i)
	}
	assert.Equal(t, "next", f.queries[5].Get("continue"))

	// API errors answered before the body are not cuts.
	gone := &fakeServer{list: func(url.Values) (int, string) {
		return 410, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Expired","code":410}`
	}}
	glw := newFakeLW(t, gone, storage.Target{Resource: podsResource}).StreamingLists(&Decoder{})
	for range 3 {
		_, err := glw.ListWithContext(ctx, reflectorList)
		require.True(t, apierrors.IsResourceExpired(err), "%v", err)
	}
	gone.mu.Lock()
	defer gone.mu.Unlock()
	for _, q := range gone.queries {
		assert.Empty(t, q.Get("limit"), "still streamed")
	}
}
