package crcache_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// flipper is a CRD whose scope the tests change: deleted and re-created with the other one.
type flipper struct {
	t     *testing.T
	group string
	gvk   schema.GroupVersionKind
	gvr   schema.GroupVersionResource
}

func newFlipper(t *testing.T) *flipper {
	group := testenv.UniqueName(t) + ".crcache.test"
	return &flipper{
		t:     t,
		group: group,
		gvk:   schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Flipper"},
		gvr:   schema.GroupVersionResource{Group: group, Version: "v1", Resource: "flippers"},
	}
}

// install installs the CRD with the given scope.
func (f *flipper) install(namespaced bool) {
	crd := testenv.NewCRD(f.group, "Flipper", "flippers")
	if !namespaced {
		crd.Spec.Scope = apiextv1.ClusterScoped
	}
	cp.InstallCRD(f.t, crd)
}

// flip deletes the CRD and installs it again with the given scope.
func (f *flipper) flip(namespaced bool) {
	cp.DeleteCRD(f.t, f.gvr.GroupResource().String())
	f.install(namespaced)
}

// create creates an object (cluster-scoped when ns is "") with spec.size 3.
func (f *flipper) create(ns, name string) {
	u := f.object()
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"size": int64(3)}
	_, err := cp.Dynamic(f.t).Resource(f.gvr).Namespace(ns).Create(f.t.Context(), u, metav1.CreateOptions{})
	require.NoError(f.t, err)
}

func (f *flipper) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(f.gvk)
	return u
}

// list lists through c, returning "namespace/name" keys.
func (f *flipper) list(c *crcache.Cache, opts ...client.ListOption) ([]string, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(f.gvk.GroupVersion().WithKind("FlipperList"))
	if err := c.List(f.t.Context(), l, opts...); err != nil {
		return nil, err
	}
	out := []string{}
	for _, it := range l.Items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	return out, nil
}

func (f *flipper) get(c *crcache.Cache, ns, name string) error {
	return c.Get(f.t.Context(), client.ObjectKey{Namespace: ns, Name: name}, f.object())
}

// active returns the statuses of the cache's kindex informers of the resource that are not
// stopped.
func (f *flipper) active(c *crcache.Cache) []informer.Status {
	var out []informer.Status
	for _, s := range c.Statuses() {
		if s.Key.GVR.GroupResource() == f.gvr.GroupResource() && s.Phase != informer.PhaseStopped {
			out = append(out, s)
		}
	}
	return out
}

// liveSet is a handler's view of the cache: the keys added and not deleted since.
type liveSet struct {
	mu   sync.Mutex
	keys map[string]bool
}

func newLiveSet() *liveSet { return &liveSet{keys: map[string]bool{}} }

// watch returns the cache's informer of the flipper's resource, with a liveSet handler
// that has been handed what it holds.
func (f *flipper) watch(t *testing.T, c *crcache.Cache) (cache.Informer, toolscache.ResourceEventHandlerRegistration, *liveSet) {
	t.Helper()
	inf, err := c.GetInformer(t.Context(), f.object())
	require.NoError(t, err)
	live := newLiveSet()
	reg, err := inf.AddEventHandler(live.handler())
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "handler did not sync")
	return inf, reg, live
}

func (l *liveSet) handler() toolscache.ResourceEventHandler {
	key := func(obj any) string {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			if o, ok := t.Obj.(client.Object); ok {
				return o.GetNamespace() + "/" + o.GetName()
			}
			return t.Key
		}
		o := obj.(client.Object)
		return o.GetNamespace() + "/" + o.GetName()
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.keys[key(obj)] = true
		},
		UpdateFunc: func(_, obj any) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.keys[key(obj)] = true
		},
		DeleteFunc: func(obj any) {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.keys, key(obj))
		},
	}
}

func (l *liveSet) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for k := range l.keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sorted returns keys in List's order: by namespace, then name.
func sorted(keys ...string) []string {
	sort.Strings(keys)
	return keys
}

// wrongAnswers collects reads that answered with objects outside what was asked.
type wrongAnswers struct {
	mu  sync.Mutex
	got []string
}

func (w *wrongAnswers) add(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, fmt.Sprintf(format, args...))
}

func (w *wrongAnswers) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got)
}

// TestScopeChangeClusterToNamespaced: a cluster-scoped CRD the cache holds is deleted and
// re-created namespaced. The cache plans it again: a List of one namespace returns that
// namespace's objects only (never every namespace's), a Get with a namespace finds its
// object, the index registered before works on the new informer, and the handler added
// before is told the old objects are gone and the new ones are there.
func TestScopeChangeClusterToNamespaced(t *testing.T) {
	f := newFlipper(t)
	f.install(false)
	f.create("", "a")
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	ctx := t.Context()

	c := startCache(t, nil, cache.Options{})
	inf, reg, live := f.watch(t, c)
	require.NoError(t, c.IndexJSONPath(ctx, f.object(), "size", "{.spec.size}"))
	got, err := f.list(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"/a"}, got)
	require.NoError(t, f.get(c, "", "a"))

	f.flip(true)
	f.create(ns1, "a")
	f.create(ns2, "a")
	f.create(ns2, "b")

	var wrong wrongAnswers
	var last []string
	var lastErr, getErr error
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		last, lastErr = f.list(c, client.InNamespace(ns1))
		for _, k := range last {
			if k != ns1+"/a" {
				wrong.add("List(InNamespace(%s)) returned %s", ns1, k)
			}
		}
		getErr = f.get(c, ns1, "a")
		return lastErr == nil && slices.Equal(last, []string{ns1 + "/a"}) && getErr == nil
	}, func() string {
		return fmt.Sprintf("List(InNamespace(%s)) = %v, %v; Get(%s/a): %v; informers: %v", ns1, last, lastErr, ns1, getErr, f.active(c))
	})
	assert.Empty(t, wrong.list(), "reads answered with the old scope")

	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		got, lastErr = f.list(c)
		return lastErr == nil && slices.Equal(got, sorted(ns1+"/a", ns2+"/a", ns2+"/b"))
	}, func() string { return fmt.Sprintf("List = %v, %v", got, lastErr) })
	require.NoError(t, f.get(c, ns2, "b"))
	assert.True(t, apierrors.IsNotFound(f.get(c, ns1, "b")), "b is in %s only", ns2)
	got, err = f.list(c, client.InNamespace(ns2), client.MatchingFields{"size": "3"})
	require.NoError(t, err, "the index registered before the change is on the new informer")
	assert.Equal(t, []string{ns2 + "/a", ns2 + "/b"}, got)

	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return slices.Equal(live.list(), sorted(ns1+"/a", ns2+"/a", ns2+"/b"))
	}, func() string { return fmt.Sprintf("the handler sees %v", live.list()) })
	assert.True(t, reg.HasSynced())
	assert.False(t, inf.IsStopped(), "the informer handed out before stays valid")
	st := f.active(c)
	require.Len(t, st, 1, "%v", st)
	assert.True(t, st[0].Resource.Namespaced)
	assert.Equal(t, informer.PhaseSynced, st[0].Phase)
	assert.Len(t, inf.(*crcache.Informer).Statuses(), 1)
}

// TestScopeChangeNamespacedToCluster: in a cache restricted to two namespaces, a namespaced
// CRD (one informer per namespace) is re-created cluster-scoped: the cache plans it again
// with one informer of the whole resource, whose reads and handlers see the new objects;
// re-created namespaced again, it is planned per namespace again, and objects of a
// namespace outside the cache stay out.
func TestScopeChangeNamespacedToCluster(t *testing.T) {
	f := newFlipper(t)
	f.install(true)
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	f.create(ns1, "a")
	f.create(ns2, "b")
	f.create(ns3, "c")

	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}})
	_, _, live := f.watch(t, c)
	got, err := f.list(c)
	require.NoError(t, err)
	assert.Equal(t, sorted(ns1+"/a", ns2+"/b"), got)
	require.Len(t, f.active(c), 2, "one informer per namespace")
	pageList := &unstructured.UnstructuredList{}
	pageList.SetGroupVersionKind(f.gvk.GroupVersion().WithKind("FlipperList"))
	require.NoError(t, c.List(t.Context(), pageList, client.Limit(1)))
	require.NotEmpty(t, pageList.GetContinue())
	token := pageList.GetContinue()

	f.flip(false)
	f.create("", "x")
	f.create("", "y")

	var lastErr, getErr error
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		got, lastErr = f.list(c)
		getErr = f.get(c, "", "x")
		return lastErr == nil && slices.Equal(got, []string{"/x", "/y"}) && getErr == nil
	}, func() string {
		return fmt.Sprintf("List = %v, %v; Get(x): %v; informers: %v", got, lastErr, getErr, f.active(c))
	})
	require.NoError(t, f.get(c, ns1, "y"), "a cluster-scoped object is read whatever the namespace")
	err = c.List(t.Context(), pageList, client.Limit(1), client.Continue(token))
	assert.ErrorIs(t, err, crcache.ErrContinueExpired, "a token of the old scope's informers")
	got, err = f.list(c, client.InNamespace(ns1))
	require.NoError(t, err)
	assert.Equal(t, []string{"/x", "/y"}, got, "a List of a cluster-scoped type with a namespace returns its objects, as the API server does")
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return slices.Equal(live.list(), []string{"/x", "/y"})
	}, func() string { return fmt.Sprintf("the handler sees %v", live.list()) })
	st := f.active(c)
	require.Len(t, st, 1, "one informer of the whole resource: %v", st)
	assert.Equal(t, "", st[0].Key.Namespace)
	assert.False(t, st[0].Resource.Namespaced)
	assert.Equal(t, informer.PhaseSynced, st[0].Phase)

	// Back to namespaced: one informer per namespace of the cache again.
	f.flip(true)
	f.create(ns1, "d")
	f.create(ns3, "e")
	var wrong wrongAnswers
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		got, lastErr = f.list(c)
		for _, k := range got {
			if k == ns3+"/e" {
				wrong.add("List returned %s, of a namespace outside the cache", k)
			}
		}
		getErr = f.get(c, ns1, "d")
		return lastErr == nil && slices.Equal(got, []string{ns1 + "/d"}) && getErr == nil
	}, func() string {
		return fmt.Sprintf("List = %v, %v; Get(%s/d): %v; informers: %v", got, lastErr, ns1, getErr, f.active(c))
	})
	assert.Empty(t, wrong.list())
	err = f.get(c, ns3, "e")
	assert.Error(t, err, "a namespace outside the cache")
	assert.False(t, errors.Is(err, crcache.ErrScopeChanged), "%v", err)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return slices.Equal(live.list(), []string{ns1 + "/d"})
	}, func() string { return fmt.Sprintf("the handler sees %v", live.list()) })
	require.Len(t, f.active(c), 2, "one informer per namespace again")
}

// gate holds a handler's calls while it is closed: the first call made after close blocks
// until open, and entered says it has begun.
type gate struct {
	mu      sync.Mutex
	held    chan struct{} // nil while open
	entered chan struct{}
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.entered = make(chan struct{}), make(chan struct{})
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

func (g *gate) pass() {
	g.mu.Lock()
	held, entered := g.held, g.entered
	g.mu.Unlock()
	if held == nil {
		return
	}
	select {
	case <-entered:
	default:
		close(entered)
	}
	<-held
}

// gated wraps h so that its calls pass g first.
func gated(g *gate, h toolscache.ResourceEventHandler) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { g.pass(); h.OnAdd(obj, initial) },
		UpdateFunc: func(old, obj any) { g.pass(); h.OnUpdate(old, obj) },
		DeleteFunc: func(obj any) { g.pass(); h.OnDelete(obj) },
	}
}

// watchGated is watch with a handler held by g.
func (f *flipper) watchGated(t *testing.T, c *crcache.Cache, g *gate) *liveSet {
	t.Helper()
	inf, err := c.GetInformer(t.Context(), f.object())
	require.NoError(t, err)
	live := newLiveSet()
	reg, err := inf.AddEventHandler(gated(g, live.handler()))
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "handler did not sync")
	return live
}

// hold closes g and makes the handler enter a call that it holds: the add of a new object
// (ns, name).
func (f *flipper) hold(t *testing.T, g *gate, ns, name string) {
	t.Helper()
	g.close()
	f.create(ns, name)
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the handler was not called")
	}
}

// awaitList waits until a List through c returns want.
func (f *flipper) awaitList(t *testing.T, c *crcache.Cache, want ...string) {
	t.Helper()
	var got []string
	var err error
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		got, err = f.list(c)
		return err == nil && slices.Equal(got, want)
	}, func() string {
		return fmt.Sprintf("List = %v, %v (want %v); informers: %v", got, err, want, f.active(c))
	})
}

// awaitLive waits until the handler's view is want.
func awaitLive(t *testing.T, live *liveSet, want ...string) {
	t.Helper()
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return slices.Equal(live.list(), want) },
		func() string { return fmt.Sprintf("the handler holds %v, want %v", live.list(), want) })
}

// TestScopeChangeDeliversQueuedDeletes: a handler busy with one call while its resource's
// CRD is deleted (its informer queues the deletes to it) and re-created with the other
// scope still gets those deletes: what it was handed before the change and was deleted
// does not stay in its view.
func TestScopeChangeDeliversQueuedDeletes(t *testing.T) {
	f := newFlipper(t)
	f.install(true)
	ns := cp.Namespace(t)
	f.create(ns, "a")
	f.create(ns, "b")
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	var g gate
	live := f.watchGated(t, c, &g)
	awaitLive(t, live, ns+"/a", ns+"/b")

	f.hold(t, &g, ns, "c")
	cp.DeleteCRD(t, f.gvr.GroupResource().String())
	// The old informer has taken the deletes (queued to the handler) before the new scope.
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		st := f.active(c)
		return len(st) == 1 && st[0].Objects == 0
	}, func() string { return fmt.Sprintf("informers: %v", f.active(c)) })
	f.install(false)
	f.create("", "x")
	f.awaitList(t, c, "/x")
	g.open()
	awaitLive(t, live, "/x")
}

// TestScopeChangeTwiceWhileHandlerBusy: two scope changes in quick succession, the second
// before the handler has been moved for the first: the handler ends with the objects of
// the last scope only.
func TestScopeChangeTwiceWhileHandlerBusy(t *testing.T) {
	f := newFlipper(t)
	f.install(true)
	ns := cp.Namespace(t)
	f.create(ns, "a")
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	var g gate
	live := f.watchGated(t, c, &g)
	awaitLive(t, live, ns+"/a")

	f.hold(t, &g, ns, "b")
	f.flip(false)
	f.create("", "x")
	f.awaitList(t, c, "/x")
	f.flip(true)
	f.create(ns, "d")
	f.awaitList(t, c, ns+"/d")
	g.open()
	awaitLive(t, live, ns+"/d")
}

// informerGoroutines counts the goroutines of kindex informers (their supervisors) and of
// kindex factories (the goroutine that follows each factory's context).
func informerGoroutines() (informers, factories int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		switch {
		case strings.Contains(g, "kindex/informer.(*entry).supervise"):
			informers++
		case strings.Contains(g, "kindex/informer.(*core).start.func"):
			factories++
		}
	}
	return informers, factories
}

// TestScopeChangeMoveFailure: when the informers of the new scope cannot be had, the old
// ones stop anyway (no goroutine of theirs is left), the handler is told their objects are
// gone, reads and the informer's status show the error, and once the informers can be had
// the cache moves to them by itself.
func TestScopeChangeMoveFailure(t *testing.T) {
	f := newFlipper(t)
	f.install(true)
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	f.create(ns1, "a")
	f.create(ns2, "b")
	c := newCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}})
	injected := errors.New("injected acquisition failure")
	var failing atomic.Bool
	crcache.FailAcquire(c, f.gvr, func(bool) error {
		if failing.Load() {
			return injected
		}
		return nil
	})
	run(t, c)
	inf, _, live := f.watch(t, c)
	awaitLive(t, live, sorted(ns1+"/a", ns2+"/b")...)
	require.Len(t, f.active(c), 2)
	informers, factories := informerGoroutines()
	require.Equal(t, 2, informers, "one informer per namespace")
	require.Equal(t, 1, factories)

	failing.Store(true)
	f.flip(false)
	f.create("", "x")
	var err error
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		_, err = f.list(c)
		return errors.Is(err, injected)
	}, func() string { return fmt.Sprintf("List: %v", err) })
	assert.ErrorIs(t, err, crcache.ErrScopeChanged)
	awaitLive(t, live)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		informers, factories = informerGoroutines()
		return informers == 0 && factories == 1
	}, func() string {
		return fmt.Sprintf("%d informers and %d factories run, want none and the new plan's", informers, factories)
	})
	st := inf.(*crcache.Informer).Statuses()
	require.Len(t, st, 1, "one informer of the whole resource lacking: %v", st)
	assert.Equal(t, informer.PhaseStopped, st[0].Phase)
	assert.ErrorIs(t, st[0].LastError, injected)
	assert.False(t, st[0].Resource.Namespaced)
	var failed []informer.Status
	for _, s := range c.Statuses() {
		if s.Key.GVR == f.gvr && errors.Is(s.LastError, injected) {
			failed = append(failed, s)
		}
	}
	assert.Len(t, failed, 1, "the cache's statuses show it: %v", c.Statuses())
	assert.False(t, c.WaitForCacheSync(t.Context()))

	failing.Store(false)
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		return slices.Equal(live.list(), []string{"/x"})
	}, func() string { return fmt.Sprintf("the handler holds %v", live.list()) })
	f.awaitList(t, c, "/x")
	assert.Empty(t, inf.(*crcache.Informer).Statuses()[0].LastError)
	informers, factories = informerGoroutines()
	assert.Equal(t, 1, informers)
	assert.Equal(t, 1, factories)
}
