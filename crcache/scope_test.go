package crcache_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
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
