package compact

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/testenv"
)

// Integration tests against the real kube-apiserver: client-go's informer machinery driven
// by the compact ListerWatcher.

// requests records the list and watch requests a client sends.
type requests struct {
	mu  sync.Mutex
	all []*http.Request
}

func (r *requests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		r.mu.Lock()
		r.all = append(r.all, req)
		r.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// count returns how many LISTs, watch-list WATCHes and other WATCHes were sent, and the
// LISTs that carried a continue token.
func (r *requests) count() (lists, watchLists, watches, continued int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.all {
		q := req.URL.Query()
		switch {
		case q.Get("watch") != "true":
			lists++
			if q.Get("continue") != "" {
				continued++
			}
		case q.Get("sendInitialEvents") == "true":
			watchLists++
		default:
			watches++
		}
	}
	return
}

func (r *requests) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, req := range r.all {
		fmt.Fprintf(&b, "\n%s %s?%s", req.Method, req.URL.Path, req.URL.RawQuery)
	}
	return b.String()
}

// newMode returns a compact mode whose requests are recorded.
func newMode(t *testing.T, opts Options) (*Mode, *requests) {
	t.Helper()
	rec := &requests{}
	cfg := cp.AdminConfig()
	cfg.Wrap(rec.wrap)
	m, err := New(cfg, opts)
	require.NoError(t, err)
	return m, rec
}

// events collects what an informer's handler receives.
type events struct {
	mu                   sync.Mutex
	adds, updates, dels  []*Object
	initialAdds, nonObjs int
}

func (e *events) handler() cache.ResourceEventHandler {
	obj := func(o any) *Object {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		c, _ := o.(*Object)
		if c == nil {
			e.nonObjs++
		}
		return c
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.adds = append(e.adds, obj(o))
			if initial {
				e.initialAdds++
			}
		},
		UpdateFunc: func(_, o any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.updates = append(e.updates, obj(o))
		},
		DeleteFunc: func(o any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.dels = append(e.dels, obj(o))
		},
	}
}

func (e *events) find(list *[]*Object, name string) func() *Object {
	return func() *Object {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, o := range *list {
			if o != nil && o.GetName() == name {
				return o
			}
		}
		return nil
	}
}

// runInformer starts client-go's informer over the mode's ListerWatcher and waits until it
// has synced. It stops when the test ends.
func runInformer(t *testing.T, m *Mode, target storage.Target) (cache.Store, *events) {
	t.Helper()
	return runInformerLW(t, m, NewListerWatcher(m.client, target))
}

// runInformerLW is runInformer with the given ListerWatcher.
func runInformerLW(t *testing.T, m *Mode, lw cache.ListerWatcher) (cache.Store, *events) {
	t.Helper()
	ev := &events{}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    m.ExampleObject(),
		Handler:       ev.handler(),
		Transform:     m.Transform(nil),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, time.Minute)
	defer syncCancel()
	require.True(t, cache.WaitForCacheSync(syncCtx.Done(), ctrl.HasSynced), "informer did not sync")
	return store, ev
}

// assertSameAsDynamic checks that the store holds exactly the objects the dynamic client
// lists, each decoded equal to the dynamic client's object less managedFields. It returns
// how many of the dynamic client's objects had managedFields.
func assertSameAsDynamic(t *testing.T, store cache.Store, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (withManagedFields int) {
	t.Helper()
	list, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(context.Background(), opts)
	require.NoError(t, err)
	require.Len(t, store.List(), len(list.Items))
	for _, want := range list.Items {
		item, ok, err := store.GetByKey(ns + "/" + want.GetName())
		require.NoError(t, err)
		require.True(t, ok, "%s missing", want.GetName())
		o, ok := item.(*Object)
		require.True(t, ok, "%T", item)
		if len(want.GetManagedFields()) > 0 {
			withManagedFields++
		}
		unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")
		got, err := o.Unstructured()
		require.NoError(t, err)
		assert.Equal(t, want.Object, got.Object, "%s", want.GetName())
		assert.False(t, o.HasManagedFields())
	}
	return withManagedFields
}

func newPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{"note": "caf\u00e9 \"quoted\" \\ {}[] 😀"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "ghcr.io/acme/app:v1", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}},
			{Name: "sidecar", Image: "fluent/fluent-bit:3.1.9"},
		}},
	}
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// addUpdateDelete creates pod "new", labels p-03 and deletes p-04, and waits until the
// informer's handler has seen all three.
func addUpdateDelete(t *testing.T, pods typedcorev1.PodInterface, ev *events) {
	t.Helper()
	ctx := context.Background()
	_, err := pods.Create(ctx, newPod("new", map[string]string{"app": "z"}), metav1.CreateOptions{})
	require.NoError(t, err)
	p, err := pods.Get(ctx, "p-03", metav1.GetOptions{})
	require.NoError(t, err)
	p.Labels["changed"] = "yes"
	_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, pods.Delete(ctx, "p-04", metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}))
	testenv.Eventually(t, 30*time.Second, func() bool {
		return ev.find(&ev.adds, "new")() != nil && ev.find(&ev.updates, "p-03")() != nil && ev.find(&ev.dels, "p-04")() != nil
	}, "add, update and delete not all received")
}

// TestSyncPodsWithWatchList: the initial sync is one watch-list stream (no LIST), the cache
// equals what the dynamic client lists, and adds, updates and deletes arrive.
func TestSyncPodsWithWatchList(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	pods := cp.Clientset(t).CoreV1().Pods(ns)
	for i := range 30 {
		_, err := pods.Create(ctx, newPod(fmt.Sprintf("p-%02d", i), map[string]string{"app": []string{"x", "y"}[i%2]}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	m, rec := newMode(t, Options{})
	store, ev := runInformer(t, m, storage.Target{Resource: podsResource, Namespace: ns})

	lists, watchLists, _, _ := rec.count()
	assert.Equal(t, 0, lists, "no LIST: %s", rec)
	assert.Equal(t, 1, watchLists, "one watch-list WATCH: %s", rec)
	assert.Len(t, store.List(), 30)
	ev.mu.Lock()
	assert.Equal(t, 30, ev.initialAdds)
	ev.mu.Unlock()
	assert.Equal(t, 30, assertSameAsDynamic(t, store, podsGVR, ns, metav1.ListOptions{}), "the server sent managedFields")

	addUpdateDelete(t, pods, ev)
	assert.Equal(t, "z", ev.find(&ev.adds, "new")().GetLabels()["app"])
	assert.Equal(t, "yes", ev.find(&ev.updates, "p-03")().GetLabels()["changed"])
	assert.Equal(t, ns, ev.find(&ev.dels, "p-04")().GetNamespace())
	assert.Zero(t, ev.nonObjs, "handlers only see compact objects")
	testenv.Eventually(t, 10*time.Second, func() bool { return len(store.List()) == 30 }, "store not updated")
	assertSameAsDynamic(t, store, podsGVR, ns, metav1.ListOptions{})
	_, _, watches, _ := rec.count()
	assert.Zero(t, watches, "the watch-list stream goes on as the watch: %s", rec)

	t.Run("selectors", func(t *testing.T) {
		m, _ := newMode(t, Options{})
		store, _ := runInformer(t, m, storage.Target{Resource: podsResource, Namespace: ns, LabelSelector: "app=x", FieldSelector: "metadata.name!=p-00"})
		assertSameAsDynamic(t, store, podsGVR, ns, metav1.ListOptions{LabelSelector: "app=x", FieldSelector: "metadata.name!=p-00"})
		assert.Len(t, store.List(), 13, "even pods but p-00 and the deleted p-04")
	})
	t.Run("all namespaces", func(t *testing.T) {
		m, _ := newMode(t, Options{})
		store, _ := runInformer(t, m, storage.Target{Resource: podsResource})
		n := 0
		for _, o := range store.List() {
			if o.(*Object).GetNamespace() == ns {
				n++
			}
		}
		assert.Equal(t, 30, n)
	})
	t.Run("projection", func(t *testing.T) {
		m, _ := newMode(t, Options{Projection: []string{"{.spec.containers[*].image}"}})
		store, _ := runInformer(t, m, storage.Target{Resource: podsResource, Namespace: ns})
		item, ok, err := store.GetByKey(ns + "/p-01")
		require.NoError(t, err)
		require.True(t, ok)
		u, err := item.(*Object).Unstructured()
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"apiVersion", "kind", "metadata", "spec"}, keysOf(u.Object))
		assert.ElementsMatch(t, []string{"containers"}, keysOf(u.Object["spec"].(map[string]any)))
		assert.Equal(t, "p-01", u.GetName())
	})
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSyncCustomResources: a custom resource's objects (which carry kind and apiVersion in
// lists, unlike built-in types) sync through watch-list and equal the dynamic client's.
func TestSyncCustomResources(t *testing.T) {
	ctx := context.Background()
	suffix := strings.ToLower(testenv.UniqueName(t)[len(testenv.UniqueName(t))-6:])
	group := "c" + suffix + ".kindex.io"
	crd := cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	gvr := schema.GroupVersionResource{Group: group, Version: crd.Spec.Versions[0].Name, Resource: "widgets"}
	ns := cp.Namespace(t)
	dyn := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	for i := range 12 {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.GroupVersion().String(), "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%02d", i), "labels": map[string]any{"size": fmt.Sprint(i % 3)}},
			"spec": map[string]any{
				"size": int64(i), "ratio": 0.25 * float64(i), "big": int64(1) << 53, "enabled": i%2 == 0, "none": nil,
				"tags":          []any{"a", "b\u00e9", "\"quoted\""},
				"managedFields": []any{"not metadata: kept"},
				"nested":        map[string]any{"metadata": map[string]any{"managedFields": "kept too"}},
			},
		}}
		_, err := dyn.Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	m, rec := newMode(t, Options{})
	store, _ := runInformer(t, m, storage.Target{Resource: discovery.Resource{GVR: gvr, Namespaced: true}, Namespace: ns})
	lists, watchLists, _, _ := rec.count()
	assert.Equal(t, 0, lists, "%s", rec)
	assert.Equal(t, 1, watchLists, "%s", rec)
	assert.Equal(t, 12, assertSameAsDynamic(t, store, gvr, ns, metav1.ListOptions{}), "the server sent managedFields")
	item, _, _ := store.GetByKey(ns + "/w-01")
	assert.Contains(t, string(item.(*Object).RawJSON()), `"managedFields":["not metadata: kept"]`)
	assert.Equal(t, gvr.GroupVersion().WithKind("Widget"), item.(*Object).GroupVersionKind())
}

// TestPagedListWithoutWatchList: with client-go's WatchListClient feature off, the initial
// sync is a paged LIST (continue tokens) followed by a WATCH, with the same result.
func TestPagedListWithoutWatchList(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	for i := range 25 {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-%02d", i)},
			Data: map[string]string{"k": strings.Repeat("v", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	m, rec := newMode(t, Options{})
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	lw := NewListerWatcher(m.client, storage.Target{Resource: configMapsResource, Namespace: ns})
	r := cache.NewReflectorWithOptions(lw, m.ExampleObject(), store, cache.ReflectorOptions{})
	r.WatchListPageSize = 10
	runReflector(t, r)
	testenv.Eventually(t, 30*time.Second, func() bool { return len(store.List()) == 25 }, "not synced: %d", len(store.List()))

	lists, watchLists, _, continued := rec.count()
	assert.Zero(t, watchLists, "%s", rec)
	assert.Equal(t, 3, lists, "three pages of 10: %s", rec)
	assert.Equal(t, 2, continued, "%s", rec)
	assertSameAsDynamic(t, store, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ns, metav1.ListOptions{})

	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool { return len(store.List()) == 26 }, "watch event not applied")
}

var configMapsResource = discovery.Resource{
	GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true,
}

func runReflector(t *testing.T, r *cache.Reflector) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// holdingLW wraps a ListerWatcher: it makes the server end every watch after a second, can
// hold new watches until released, and records the ERROR events watches deliver.
type holdingLW struct {
	inner cache.ListerWatcherWithContext

	mu        sync.Mutex
	hold      chan struct{} // non-nil: WatchWithContext waits for it to close
	waiting   chan struct{} // closed when a watch is waiting on hold
	errs      []error       // every watch error
	eventErrs []error       // those delivered as ERROR events
	lists     int
}

func (h *holdingLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	h.mu.Lock()
	h.lists++
	h.mu.Unlock()
	return h.inner.ListWithContext(ctx, opts)
}

func (h *holdingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	h.mu.Lock()
	hold, waiting := h.hold, h.waiting
	h.mu.Unlock()
	if hold != nil {
		close(waiting)
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	opts.TimeoutSeconds = ptrTo(int64(1))
	w, err := h.inner.WatchWithContext(ctx, opts)
	if err != nil {
		h.record(err, false)
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Error {
			h.record(apierrors.FromObject(ev.Object), true)
		}
		return ev, true
	}), nil
}

func (h *holdingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return h.ListWithContext(context.Background(), opts)
}

func (h *holdingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return h.WatchWithContext(context.Background(), opts)
}

// record notes a watch error, from an ERROR event or from the request.
func (h *holdingLW) record(err error, event bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
	if event {
		h.eventErrs = append(h.eventErrs, err)
	}
}

// TestSyncPodsWithStreamedList: with StreamList, the initial sync is one consistent LIST
// with no page limit (decoded as it streams), then a WATCH from its resourceVersion; the
// cache equals what the dynamic client lists and follows adds, updates and deletes.
func TestSyncPodsWithStreamedList(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	pods := cp.Clientset(t).CoreV1().Pods(ns)
	for i := range 40 {
		_, err := pods.Create(ctx, newPod(fmt.Sprintf("p-%02d", i), map[string]string{"app": []string{"x", "y"}[i%2]}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	m, rec := newMode(t, Options{StreamList: true})
	lw := m.ListerWatcher(storage.Target{Resource: podsResource, Namespace: ns}).(*ListerWatcher)
	require.True(t, watchlist.DoesClientNotSupportWatchListSemantics(lw), "a streaming lister declines watch-list")
	store, ev := runInformerLW(t, m, lw)

	lists, watchLists, _, continued := rec.count()
	assert.Equal(t, 1, lists, "one LIST: %s", rec)
	assert.Zero(t, watchLists, "no watch-list: %s", rec)
	assert.Zero(t, continued, "no pages: %s", rec)
	rec.mu.Lock()
	for _, req := range rec.all {
		if q := req.URL.Query(); q.Get("watch") != "true" {
			assert.Empty(t, q.Get("limit"), "no page limit: %s", req.URL)
			assert.Empty(t, q.Get("resourceVersion"), "a consistent read, not resourceVersion=0: %s", req.URL)
		}
	}
	rec.mu.Unlock()
	assert.Len(t, store.List(), 40)
	ev.mu.Lock()
	assert.Equal(t, 40, ev.initialAdds)
	ev.mu.Unlock()
	assert.Equal(t, 40, assertSameAsDynamic(t, store, podsGVR, ns, metav1.ListOptions{}), "the server sent managedFields")

	addUpdateDelete(t, pods, ev)
	testenv.Eventually(t, 10*time.Second, func() bool { return len(store.List()) == 40 }, "store not updated")
	assertSameAsDynamic(t, store, podsGVR, ns, metav1.ListOptions{})
	_, _, watches, _ := rec.count()
	assert.GreaterOrEqual(t, watches, 1, "a WATCH after the LIST: %s", rec)

	t.Run("selectors", func(t *testing.T) {
		m, _ := newMode(t, Options{StreamList: true})
		target := storage.Target{Resource: podsResource, Namespace: ns, LabelSelector: "app=x", FieldSelector: "metadata.name!=p-00"}
		store, _ := runInformerLW(t, m, m.ListerWatcher(target).(*ListerWatcher))
		assertSameAsDynamic(t, store, podsGVR, ns, metav1.ListOptions{LabelSelector: "app=x", FieldSelector: "metadata.name!=p-00"})
		assert.Len(t, store.List(), 18, "even pods but p-00 and the deleted p-04")
	})
}

// TestRecoversFromGone: a watch restarted from a compacted resourceVersion gets 410 Gone
// (an ERROR event decoded into a Status); the Reflector relists and the cache catches up,
// with paged LISTs and with streamed ones.
func TestRecoversFromGone(t *testing.T) {
	t.Run("paged", func(t *testing.T) { testRecoversFromGone(t, Options{}) })
	t.Run("streamed", func(t *testing.T) { testRecoversFromGone(t, Options{StreamList: true}) })
}

func testRecoversFromGone(t *testing.T, opts Options) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	for i := range 3 {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-%d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	m, _ := newMode(t, opts)
	lw := &holdingLW{inner: m.ListerWatcher(storage.Target{Resource: configMapsResource, Namespace: ns})}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflectorWithOptions(lw, m.ExampleObject(), store, cache.ReflectorOptions{})
	runReflector(t, r)
	testenv.Eventually(t, 30*time.Second, func() bool { return len(store.List()) == 3 }, "not synced")

	// Hold the next watch (the server ends the current one within a second), change
	// everything and compact etcd, then let the watch resume from its old resourceVersion.
	release := make(chan struct{})
	waiting := make(chan struct{})
	lw.mu.Lock()
	lw.hold, lw.waiting = release, waiting
	listsBefore := lw.lists
	lw.mu.Unlock()
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch was not restarted")
	}
	for i := range 3 {
		cm, err := cms.Get(ctx, fmt.Sprintf("c-%d", i), metav1.GetOptions{})
		require.NoError(t, err)
		cm.Data = map[string]string{"v": "2"}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, cms.Delete(ctx, "c-0", metav1.DeleteOptions{}))
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c-new"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cp.CompactEtcd(ctx)
	require.NoError(t, err)
	lw.mu.Lock()
	lw.hold = nil
	lw.mu.Unlock()
	close(release)

	testenv.Eventually(t, 60*time.Second, func() bool {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return lw.lists > listsBefore
	}, "no relist after the compaction")
	lw.mu.Lock()
	var gone []error
	// With the watch cache off, the API server accepts the watch and reports the
	// compaction in an ERROR event: the compact decoder's Status made the Reflector relist.
	for _, err := range lw.eventErrs {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			gone = append(gone, err)
		}
	}
	errs := fmt.Sprint(lw.errs)
	lw.mu.Unlock()
	require.NotEmpty(t, gone, "no 410 in an ERROR event; watch errors: %s", errs)
	t.Logf("watch errors: %s", errs)
	testenv.Eventually(t, 30*time.Second, func() bool {
		item, ok, _ := store.GetByKey(ns + "/c-1")
		_, gotNew, _ := store.GetByKey(ns + "/c-new")
		_, gotOld, _ := store.GetByKey(ns + "/c-0")
		return ok && gotNew && !gotOld && strings.Contains(string(item.(*Object).RawJSON()), `"v":"2"`)
	}, "cache did not catch up after the relist")
	assertSameAsDynamic(t, store, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ns, metav1.ListOptions{})
}

// TestListErrorsAreAPIErrors: errors from the real server keep their apierrors type, from
// paged and streamed LISTs alike.
func TestListErrorsAreAPIErrors(t *testing.T) {
	t.Run("paged", func(t *testing.T) { testListErrorsAreAPIErrors(t, Options{}) })
	t.Run("streamed", func(t *testing.T) { testListErrorsAreAPIErrors(t, Options{StreamList: true}) })
}

func testListErrorsAreAPIErrors(t *testing.T, opts Options) {
	m, _ := newMode(t, opts)
	missing := discovery.Resource{GVR: schema.GroupVersionResource{Group: "nope.kindex.io", Version: "v1", Resource: "things"}, Namespaced: true}
	lw := m.ListerWatcher(storage.Target{Resource: missing})
	_, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	_, err = lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)

	_, userCfg, err := cp.NewUser()
	require.NoError(t, err)
	forbidden, err := New(userCfg, opts)
	require.NoError(t, err)
	_, err = forbidden.ListerWatcher(storage.Target{Resource: podsResource}).ListWithContext(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	var _ *rest.Config = userCfg
}
