package crcache_test

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
)

// TestSelectorsAndNamespaces follows controller-runtime's precedence for DefaultNamespaces,
// ByObject and the Default* selectors, for typed, unstructured and metadata-only reads.
func TestSelectorsAndNamespaces(t *testing.T) {
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	// Pods named after the test namespace so that name selectors see no other test's pods.
	pod := func(ns, name string, lbls map[string]string) {
		all := map[string]string{"name": name}
		for k, v := range lbls {
			all[k] = v
		}
		require.NoError(t, cl.Create(t.Context(), newPod(ns, ns1+"-"+name, all)))
	}
	pod(ns1, "p1", nil)
	pod(ns2, "p2", nil)
	pod(ns2, "p3", map[string]string{"common": "yes"})
	pod(ns3, "p4", map[string]string{"common": "yes"})
	pod(ns1, "p5", nil)
	pod(ns2, "p6", nil)
	ours := []string{ns1, ns2, ns3}
	byName := func(n string) fields.Selector { return fields.OneTermEqualSelector("metadata.name", ns1+"-"+n) }
	byNS := func(ns string) fields.Selector { return fields.OneTermEqualSelector("metadata.namespace", ns) }
	lbl := func(k, v string) labels.Selector { return labels.SelectorFromSet(labels.Set{k: v}) }
	nothing := lbl("not", "present")

	tests := []struct {
		name string
		opts cache.Options
		want []string
	}{
		{"no selector", cache.Options{}, []string{"p1", "p2", "p3", "p4", "p5", "p6"}},
		{"type-level field selector", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Field: byName("p2")}}}, []string{"p2"}},
		{"global field selector", cache.Options{DefaultFieldSelector: byName("p2")}, []string{"p2"}},
		{"type-level namespace field selector", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Field: byNS(ns2)}}}, []string{"p2", "p3", "p6"}},
		{"global namespace field selector", cache.Options{DefaultFieldSelector: byNS(ns2)}, []string{"p2", "p3", "p6"}},
		{"type-level label selector", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: lbl("name", "p4")}}}, []string{"p4"}},
		{"global label selector", cache.Options{DefaultLabelSelector: lbl("common", "yes")}, []string{"p3", "p4"}},
		{"type-level label and field selectors", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: lbl("common", "yes"), Field: byNS(ns2)}}}, []string{"p3"}},
		{"global label and field selectors", cache.Options{DefaultLabelSelector: lbl("common", "yes"), DefaultFieldSelector: byNS(ns2)}, []string{"p3"}},
		{"type-level selector that matches nothing", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: nothing}}}, []string{}},
		{"type-level selector overrides global one", cache.Options{
			DefaultNamespaces:    map[string]cache.Config{ns1: {}},
			ByObject:             map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.Everything()}},
			DefaultLabelSelector: nothing,
		}, []string{"p1", "p5"}},
		{"global selector applies under DefaultNamespaces", cache.Options{
			DefaultNamespaces:    map[string]cache.Config{ns2: {}},
			ByObject:             map[client.Object]cache.ByObject{&corev1.Pod{}: {}},
			DefaultLabelSelector: lbl("common", "yes"),
		}, []string{"p3"}},
		{"per-namespace field selector in ByObject", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Namespaces: map[string]cache.Config{
			ns2: {FieldSelector: byName("p2")},
		}}}}, []string{"p2"}},
		{"per-namespace label selector in DefaultNamespaces", cache.Options{DefaultNamespaces: map[string]cache.Config{
			ns2: {LabelSelector: lbl("name", "p2")},
		}}, []string{"p2"}},
		{"two namespaces", cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns3: {}}}, []string{"p1", "p4", "p5"}},
		{"AllNamespaces alone", cache.Options{DefaultNamespaces: map[string]cache.Config{metav1.NamespaceAll: {}}}, []string{"p1", "p2", "p3", "p4", "p5", "p6"}},
		{"AllNamespaces covers the namespaces not listed", cache.Options{DefaultNamespaces: map[string]cache.Config{
			metav1.NamespaceAll: {}, ns1: {LabelSelector: nothing},
		}}, []string{"p2", "p3", "p4", "p6"}},
		{"AllNamespaces in ByObject", cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Namespaces: map[string]cache.Config{
			metav1.NamespaceAll: {}, ns1: {LabelSelector: nothing},
		}}}}, []string{"p2", "p3", "p4", "p6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startCache(t, nil, tt.opts)
			ctx := t.Context()
			mine := func(objs []client.Object) []string {
				out := []string{}
				for _, o := range objs {
					if slices.Contains(ours, o.GetNamespace()) {
						out = append(out, strings.TrimPrefix(o.GetName(), ns1+"-"))
					}
				}
				slices.Sort(out)
				return out
			}
			var typed corev1.PodList
			require.NoError(t, c.List(ctx, &typed))
			assert.Equal(t, tt.want, mine(objects(ptrs(typed.Items))), "typed")
			uns := unstructuredPodList()
			require.NoError(t, c.List(ctx, uns))
			assert.Equal(t, tt.want, mine(objects(ptrs(uns.Items))), "unstructured")
			meta := metadataPodList()
			require.NoError(t, c.List(ctx, meta))
			assert.Equal(t, tt.want, mine(objects(ptrs(meta.Items))), "metadata")
			for i := range typed.Items {
				var p corev1.Pod
				require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(&typed.Items[i]), &p))
			}
		})
	}
}

// TestNamespacedCache: a cache restricted to namespaces refuses others, lists each
// namespace's share, and still reads cluster-scoped resources, once each.
func TestNamespacedCache(t *testing.T) {
	ns1, ns2, other := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns1, "a", 2)
	createPods(t, cl, ns2, "b", 1)
	createPods(t, cl, other, "c", 1)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}})
	ctx := t.Context()

	var all corev1.PodList
	require.NoError(t, c.List(ctx, &all))
	assert.ElementsMatch(t, []string{"a-00", "a-01", "b-00"}, podNames(&all))
	var one corev1.PodList
	require.NoError(t, c.List(ctx, &one, client.InNamespace(ns2)))
	assert.Equal(t, []string{"b-00"}, podNames(&one))

	err := c.Get(ctx, client.ObjectKey{Namespace: other, Name: "c-00"}, &corev1.Pod{})
	assert.ErrorContains(t, err, "unknown namespace for the cache")
	assert.ErrorContains(t, c.List(ctx, &corev1.PodList{}, client.InNamespace(other)), "unknown namespace for the cache")

	// Before anything waits, as in controller-runtime: before Start, and for a type whose
	// informer does not exist yet (which would otherwise start one and wait for it).
	idle := newCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}}})
	assert.ErrorContains(t, idle.Get(ctx, client.ObjectKey{Namespace: other, Name: "c-00"}, &corev1.Pod{}),
		"unknown namespace for the cache", "before Start")
	assert.ErrorContains(t, idle.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(other)),
		"unknown namespace for the cache", "before Start")
	assert.ErrorContains(t, c.Get(ctx, client.ObjectKey{Namespace: other, Name: "x"}, &corev1.ServiceAccount{}),
		"unknown namespace for the cache", "a type not cached yet")

	var nss corev1.NamespaceList
	require.NoError(t, c.List(ctx, &nss))
	seen := map[string]int{}
	for _, n := range nss.Items {
		seen[n.Name]++
	}
	assert.Equal(t, 1, seen[ns1], "a cluster-scoped resource is cached once")
	assert.Equal(t, 1, seen[other], "cluster-scoped resources are not restricted to the namespaces")
	var nsObj corev1.Namespace
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: other}, &nsObj))

	// Paging across namespaces follows (namespace, name) order.
	var page1, page2 corev1.PodList
	require.NoError(t, c.List(ctx, &page1, client.Limit(2)))
	require.NoError(t, c.List(ctx, &page2, client.Limit(2), client.Continue(page1.Continue)))
	got := append(objects(ptrs(page1.Items)), objects(ptrs(page2.Items))...)
	require.Len(t, got, 3)
	assert.True(t, slices.IsSortedFunc(got, func(x, y client.Object) int {
		return strings.Compare(x.GetNamespace()+"/"+x.GetName(), y.GetNamespace()+"/"+y.GetName())
	}), "pages in order")
	assert.Empty(t, page2.Continue)

	// One informer over both namespaces: a handler sees both, and nothing of the others.
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	require.Len(t, inf.(*crcache.Informer).Statuses(), 2, "one kindex informer per namespace")
	ev := newEvents()
	reg, err := inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	require.Eventually(t, reg.HasSynced, 10*time.Second, 20*time.Millisecond)
	assert.NotNil(t, ev.added(ns1+"/a-01"))
	assert.NotNil(t, ev.added(ns2+"/b-00"))
	assert.Nil(t, ev.added(other+"/c-00"))
	require.NoError(t, cl.Create(ctx, newPod(ns2, "late", nil)))
	require.Eventually(t, func() bool { return ev.added(ns2+"/late") != nil }, 10*time.Second, 20*time.Millisecond)
}

// TestTransforms: the default and per-type transforms apply to every kind of read; a typed
// kind's transform receives the typed object.
func TestTransforms(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns, "p", 2)
	require.NoError(t, cl.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	mark := func(value string) func(any) (any, error) {
		return func(in any) (any, error) {
			o := in.(client.Object)
			a := o.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["transformed"] = value
			o.SetAnnotations(a)
			o.SetManagedFields(nil)
			return o, nil
		}
	}
	var podTypes []string
	c := startCache(t, nil, cache.Options{
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		DefaultTransform:  mark("default"),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: func(in any) (any, error) {
			podTypes = append(podTypes, reflect.TypeOf(in).String())
			return mark("explicit")(in)
		}}},
	})
	ctx := t.Context()
	key := client.ObjectKey{Namespace: ns, Name: "p-01"}
	var p corev1.Pod
	require.NoError(t, c.Get(ctx, key, &p))
	assert.Equal(t, "explicit", p.Annotations["transformed"])
	u := unstructuredPod()
	require.NoError(t, c.Get(ctx, key, u))
	assert.Equal(t, "explicit", u.GetAnnotations()["transformed"])
	m := metadataPod()
	require.NoError(t, c.Get(ctx, key, m))
	assert.Equal(t, "explicit", m.Annotations["transformed"])
	assert.Contains(t, podTypes, "*v1.Pod", "the typed kind's transform sees the typed object")

	var svc corev1.ServiceAccountList
	require.NoError(t, cl.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sa"}}))
	require.Eventually(t, func() bool {
		return c.List(ctx, &svc) == nil && len(svc.Items) == 1
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "default", svc.Items[0].Annotations["transformed"])
	// A metadata-only informer (no typed read of ConfigMaps) applies the transform too.
	cms := &metav1.PartialObjectMetadataList{}
	cms.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	require.NoError(t, c.List(ctx, cms))
	require.Len(t, cms.Items, 1)
	assert.Equal(t, "default", cms.Items[0].Annotations["transformed"])
}

// TestDeepCopy: reads are the caller's own copies unless UnsafeDisableDeepCopy, with which
// they share objects as controller-runtime's do: two reads of an unchanged object share
// their maps, a change made through one is seen by the next, and a change on the server
// gives a new object. The same for typed, unstructured and metadata reads, from the compact
// store and from a metadata-only informer, for Get and List.
func TestDeepCopy(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Labels: map[string]string{"a": "b"}}}
	require.NoError(t, cl.Create(t.Context(), cm))
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	key := client.ObjectKey{Namespace: ns, Name: "cm"}
	getMeta := func(t *testing.T, c *crcache.Cache, opts ...client.GetOption) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(cmGVK)
		require.NoError(t, c.Get(t.Context(), key, m, opts...))
		return m
	}
	getTyped := func(t *testing.T, c *crcache.Cache, opts ...client.GetOption) *corev1.ConfigMap {
		var x corev1.ConfigMap
		require.NoError(t, c.Get(t.Context(), key, &x, opts...))
		return &x
	}
	getUns := func(t *testing.T, c *crcache.Cache, opts ...client.GetOption) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(cmGVK)
		require.NoError(t, c.Get(t.Context(), key, u, opts...))
		return u
	}
	sameMap := func(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }

	t.Run("default", func(t *testing.T) {
		c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		a, b := getMeta(t, c), getMeta(t, c)
		assert.False(t, sameMap(a.Labels, b.Labels))
		a.Labels["a"] = "changed"
		assert.Equal(t, "b", getMeta(t, c).Labels["a"])
		shared := getMeta(t, c, client.UnsafeDisableDeepCopy)
		assert.True(t, sameMap(shared.Labels, getMeta(t, c, client.UnsafeDisableDeepCopy).Labels), "per-call UnsafeDisableDeepCopy")

		x, y := getTyped(t, c), getTyped(t, c)
		assert.False(t, sameMap(x.Labels, y.Labels), "typed reads are copies")
		x.Labels["a"] = "changed"
		assert.Equal(t, "b", getTyped(t, c).Labels["a"])
		p, q := getTyped(t, c, client.UnsafeDisableDeepCopy), getTyped(t, c, client.UnsafeDisableDeepCopy)
		assert.True(t, sameMap(p.Labels, q.Labels), "per-call UnsafeDisableDeepCopy shares typed objects")
		assert.False(t, sameMap(p.Labels, getTyped(t, c).Labels), "a read that copies does not")
	})
	t.Run("UnsafeDisableDeepCopy", func(t *testing.T) {
		yes := true
		c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultUnsafeDisableDeepCopy: &yes})
		x, y := getTyped(t, c), getTyped(t, c)
		assert.True(t, sameMap(x.Labels, y.Labels), "typed objects are shared")
		assert.Equal(t, cm.UID, x.UID)
		u, v := getUns(t, c), getUns(t, c)
		assert.True(t, sameMap(u.Object, v.Object), "unstructured objects are shared")
		assert.Equal(t, cmGVK, v.GroupVersionKind())
		// Typed reads came first: metadata reads are served from the compact informer.
		for _, s := range c.Statuses() {
			assert.NotEqual(t, "metadata", s.Key.Mode, "no metadata-only informer: %v", s.Key)
		}
		assert.True(t, sameMap(getMeta(t, c).Labels, getMeta(t, c).Labels), "metadata from the compact store is shared")

		// A change through a read is seen by the next, as in controller-runtime.
		x.Labels["a"] = "changed in the cache"
		assert.Equal(t, "changed in the cache", getTyped(t, c).Labels["a"])
		var list corev1.ConfigMapList
		require.NoError(t, c.List(t.Context(), &list, client.InNamespace(ns)))
		require.Len(t, list.Items, 1)
		assert.True(t, sameMap(x.Labels, list.Items[0].Labels), "List shares the same objects")
		ul := &unstructured.UnstructuredList{}
		ul.SetGroupVersionKind(cmGVK.GroupVersion().WithKind("ConfigMapList"))
		require.NoError(t, c.List(t.Context(), ul, client.InNamespace(ns)))
		require.Len(t, ul.Items, 1)
		assert.True(t, sameMap(u.Object, ul.Items[0].Object))
		assert.False(t, sameMap(x.Labels, getTyped(t, c, client.UnsafeDisableDeepCopyOption(false)).Labels),
			"a per-call copy overrides the default")

		// A change on the server: a new object, shared again.
		cm.Labels["a"] = "updated"
		require.NoError(t, cl.Update(t.Context(), cm))
		testenv.Eventually(t, 10*time.Second, func() bool {
			return getTyped(t, c).ResourceVersion == cm.ResourceVersion
		}, "the cache did not see the update")
		z := getTyped(t, c)
		assert.Equal(t, "updated", z.Labels["a"])
		assert.False(t, sameMap(x.Labels, z.Labels), "the old shared object is not the new version's")
		assert.True(t, sameMap(z.Labels, getTyped(t, c).Labels))

		// Concurrent shared reads: no race (go test -race) and one object.
		var wg sync.WaitGroup
		got := make([]*corev1.ConfigMap, 8)
		for i := range got {
			wg.Go(func() {
				var o corev1.ConfigMap
				if err := c.Get(t.Context(), key, &o); err == nil {
					got[i] = &o
				}
			})
		}
		wg.Wait()
		for _, o := range got {
			require.NotNil(t, o)
			assert.True(t, sameMap(z.Labels, o.Labels))
		}

		// Deleted: not found, and the shared object goes with the informer's data.
		require.NoError(t, cl.Delete(t.Context(), cm))
		testenv.Eventually(t, 10*time.Second, func() bool {
			return apierrors.IsNotFound(c.Get(t.Context(), key, &corev1.ConfigMap{}))
		}, "the cache did not see the delete")
	})
	// Over several namespaces, a List shares the objects of each namespace whose
	// configuration says so, as controller-runtime's cache over several namespaces does
	// (it lists each namespace's informer in turn): not only a List of one namespace.
	t.Run("UnsafeDisableDeepCopy over several namespaces", func(t *testing.T) {
		yes, no := true, false
		n1, n2, n3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
		for _, n := range []string{n1, n2, n3} {
			require.NoError(t, cl.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: "cm", Labels: map[string]string{"a": "b"}}}))
		}
		list := func(t *testing.T, c *crcache.Cache) map[string]*corev1.ConfigMap {
			var l corev1.ConfigMapList
			require.NoError(t, c.List(t.Context(), &l, client.MatchingLabels{"a": "b"}))
			out := map[string]*corev1.ConfigMap{}
			for i := range l.Items {
				out[l.Items[i].Namespace] = &l.Items[i]
			}
			return out
		}

		c := startCache(t, nil, cache.Options{
			DefaultNamespaces:            map[string]cache.Config{n1: {}, n2: {}},
			DefaultUnsafeDisableDeepCopy: &yes,
		})
		x, y := list(t, c), list(t, c)
		require.Len(t, x, 2)
		assert.True(t, sameMap(x[n1].Labels, y[n1].Labels), "shared in %s", n1)
		assert.True(t, sameMap(x[n2].Labels, y[n2].Labels), "shared in %s", n2)
		x[n2].Labels["c"] = "set through a shared object"
		assert.Equal(t, x[n2].Labels, list(t, c)[n2].Labels, "a change through a read is seen by the next")

		c = startCache(t, nil, cache.Options{
			DefaultNamespaces:            map[string]cache.Config{n1: {}, n3: {UnsafeDisableDeepCopy: &no}},
			DefaultUnsafeDisableDeepCopy: &yes,
		})
		x, y = list(t, c), list(t, c)
		require.Len(t, x, 2)
		assert.True(t, sameMap(x[n1].Labels, y[n1].Labels), "shared in %s", n1)
		assert.False(t, sameMap(x[n3].Labels, y[n3].Labels), "copied in %s", n3)
		x[n3].Labels["c"] = "set on a copy"
		assert.NotContains(t, list(t, c)[n3].Labels, "c")
	})
}

// TestManagedFields: managedFields are kept, as in controller-runtime, unless
// TransformStripManagedFields is configured, which kindex does on the stored bytes; the same
// for metadata-only informers.
func TestManagedFields(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns, "p", 1)
	key := client.ObjectKey{Namespace: ns, Name: "p-00"}
	var created corev1.Pod
	require.NoError(t, cl.Get(t.Context(), key, &created))
	require.NotEmpty(t, created.ManagedFields)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"k": "v"}}
	require.NoError(t, cl.Create(t.Context(), cm))
	require.NotEmpty(t, cm.ManagedFields)
	for _, strip := range []bool{false, true} {
		opts := cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
		if strip {
			opts.DefaultTransform = cache.TransformStripManagedFields()
		}
		c, err := crcache.NewCache(cp.AdminConfig(), opts, crcache.Options{})
		require.NoError(t, err)
		run(t, c)
		require.True(t, c.WaitForCacheSync(t.Context()))
		var p corev1.Pod
		require.NoError(t, c.Get(t.Context(), key, &p))
		u := unstructuredPod()
		require.NoError(t, c.Get(t.Context(), key, u))
		cms := &metav1.PartialObjectMetadataList{}
		cms.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
		require.NoError(t, c.List(t.Context(), cms))
		require.NotEmpty(t, cms.Items)
		if strip {
			assert.Empty(t, p.ManagedFields)
			assert.Empty(t, u.GetManagedFields())
			assert.Empty(t, cms.Items[0].ManagedFields, "metadata-only")
			continue
		}
		assert.Equal(t, created.ManagedFields, p.ManagedFields, "kept by default")
		assert.Len(t, u.GetManagedFields(), len(created.ManagedFields))
		assert.Equal(t, cm.ManagedFields, cms.Items[0].ManagedFields, "metadata-only")
	}
}

// objects turns a slice of object pointers into client.Objects.
func objects[T client.Object](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i, o := range items {
		out[i] = o
	}
	return out
}

// TestMetrics: kindex's informer metrics go to Options.Registerer, one series per informer.
// The cache is made by NewFunc, as a manager would make it: the options reach it.
func TestMetrics(t *testing.T) {
	ns := cp.Namespace(t)
	createPods(t, adminClient(t), ns, "p", 2)
	reg := prometheus.NewRegistry()
	var newCache cache.NewCacheFunc = crcache.NewFunc(crcache.Options{Registerer: reg})
	cc, err := newCache(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	require.NoError(t, err)
	c, ok := cc.(*crcache.Cache)
	require.True(t, ok, "NewFunc makes a *crcache.Cache, not a %T", cc)
	run(t, c)
	require.True(t, c.WaitForCacheSync(t.Context()))
	require.NoError(t, c.List(t.Context(), &corev1.PodList{}))
	cms := &metav1.PartialObjectMetadataList{}
	cms.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	require.NoError(t, c.List(t.Context(), cms))
	families, err := reg.Gather()
	require.NoError(t, err)
	objects := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kindex_informer_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			res := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "resource" {
					res = l.GetValue()
				}
			}
			objects[res] = m.GetGauge().GetValue()
		}
	}
	assert.Equal(t, 2.0, objects["pods"], "%v", objects)
	assert.Contains(t, objects, "configmaps", "both resources' informers, from factories of their own, share the collectors")
}

// TestSyncPeriods: a type's own SyncPeriod (ByObject) resyncs its informer (handlers get an
// update with the same resourceVersion) while the cache's period holds for other types.
func TestSyncPeriods(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}))
	short := 500 * time.Millisecond
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {SyncPeriod: &short}}})
	var cmResyncs, secretUpdates atomic.Int64
	for obj, n := range map[client.Object]*atomic.Int64{&corev1.ConfigMap{}: &cmResyncs, &corev1.Secret{}: &secretUpdates} {
		inf, err := c.GetInformer(ctx, obj)
		require.NoError(t, err)
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(old, cur any) {
			if old.(client.Object).GetResourceVersion() == cur.(client.Object).GetResourceVersion() {
				n.Add(1)
			}
		}})
		require.NoError(t, err)
	}
	testenv.Eventually(t, 20*time.Second, func() bool { return cmResyncs.Load() >= 2 }, "the ConfigMap informer resyncs")
	assert.Zero(t, secretUpdates.Load(), "the Secret informer keeps the cache's 10 hours")
}
