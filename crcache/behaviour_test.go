package crcache_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

var deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

func newDeployment(ns, name string) *appsv1.Deployment {
	one := int32(1)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

// TestReadsOfAGroupedKind: reads of a kind outside the core group (apps/v1 Deployment), typed,
// unstructured and metadata-only: each object and list item says its group, version and kind,
// and a missing object's NotFound names the group and the kind, as controller-runtime's
// cache's does (its message included).
func TestReadsOfAGroupedKind(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, n := range []string{"d-0", "d-1"} {
		require.NoError(t, cl.Create(ctx, newDeployment(ns, n)))
	}
	c := startCache(t, nil, cache.Options{})
	key := client.ObjectKey{Namespace: ns, Name: "d-1"}
	listGVK := deployGVK.GroupVersion().WithKind("DeploymentList")

	t.Run("get", func(t *testing.T) {
		var typed appsv1.Deployment
		require.NoError(t, c.Get(ctx, key, &typed))
		assert.Equal(t, deployGVK, typed.GroupVersionKind())
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(deployGVK)
		require.NoError(t, c.Get(ctx, key, u))
		assert.Equal(t, deployGVK, u.GroupVersionKind())
		assert.Equal(t, "d-1", u.GetName())
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(deployGVK)
		require.NoError(t, c.Get(ctx, key, m))
		assert.Equal(t, deployGVK, m.GroupVersionKind())
		assert.Equal(t, typed.UID, m.UID)
	})
	t.Run("list", func(t *testing.T) {
		var typed appsv1.DeploymentList
		require.NoError(t, c.List(ctx, &typed, client.InNamespace(ns)))
		require.Len(t, typed.Items, 2)
		for _, d := range typed.Items {
			assert.Equal(t, deployGVK, d.GroupVersionKind())
		}
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(listGVK)
		require.NoError(t, c.List(ctx, u, client.InNamespace(ns)))
		assert.Equal(t, listGVK, u.GroupVersionKind(), "the list keeps its kind")
		require.Len(t, u.Items, 2)
		for _, d := range u.Items {
			assert.Equal(t, deployGVK, d.GroupVersionKind())
		}
		m := &metav1.PartialObjectMetadataList{}
		m.SetGroupVersionKind(listGVK)
		require.NoError(t, c.List(ctx, m, client.InNamespace(ns)))
		assert.Equal(t, listGVK, m.GroupVersionKind(), "the list keeps its kind")
		require.Len(t, m.Items, 2)
		for _, d := range m.Items {
			assert.Equal(t, deployGVK, d.GroupVersionKind())
		}
	})
	t.Run("not found", func(t *testing.T) {
		want := apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "Deployment"}, "missing")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(deployGVK)
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(deployGVK)
		for _, out := range []client.Object{&appsv1.Deployment{}, u, m} {
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, out)
			require.True(t, apierrors.IsNotFound(err), "%T: %v", out, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.Equal(t, want.Status(), status.Status(), "%T", out)
			assert.EqualError(t, err, want.Error(), "%T", out)
		}
	})
}

// TestHandlerObjectsSayTheirKind: an unstructured or metadata-only informer's handlers get
// objects with their group, version and kind, in adds, in updates (old and new) and in
// deletes (controller-runtime's metadata informers set it on every object of their watch),
// so that a handler can tell what it was given.
func TestHandlerObjectsSayTheirKind(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	require.NoError(t, cl.Create(ctx, newDeployment(ns, "d")))
	require.NoError(t, cl.Create(ctx, newDeployment(ns, "e")))
	// The metadata-only informer is its own while only metadata is read.
	c := startCache(t, nil, cache.Options{})
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(deployGVK)
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(deployGVK)
	check := func(t *testing.T, obj client.Object) {
		inf, err := c.GetInformer(ctx, obj)
		require.NoError(t, err)
		var mu sync.Mutex
		var got []runtime.Object
		keep := func(o any) {
			mu.Lock()
			defer mu.Unlock()
			if r, ok := o.(runtime.Object); ok && r.(client.Object).GetNamespace() == ns {
				got = append(got, r)
			}
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    keep,
			UpdateFunc: func(o, n any) { keep(o); keep(n) },
			DeleteFunc: keep,
		})
		require.NoError(t, err)
		defer func() { require.NoError(t, inf.RemoveEventHandler(reg)) }()
		require.Eventually(t, reg.HasSynced, 10*time.Second, 20*time.Millisecond)
		var d appsv1.Deployment
		require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d"}, &d))
		d.Labels["changed"] = d.ResourceVersion
		require.NoError(t, cl.Update(ctx, &d))
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) >= 4 // two adds, an update's old and new
		}, 10*time.Second, 20*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		for _, r := range got {
			assert.Equal(t, deployGVK, r.GetObjectKind().GroupVersionKind(), "%T", r)
		}
	}
	check(t, m)
	check(t, u)
	check(t, m)
}

// TestInformerLifecycle: HasSynced, IsStopped, handlers after RemoveInformer, a second Start,
// WaitForCacheSync with an ended context, GetInformer of a type the scheme lacks.
func TestInformerLifecycle(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	c := newCache(t, nil, cache.Options{})

	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err, "before Start, without waiting")
	assert.False(t, inf.HasSynced(), "not started")
	assert.False(t, inf.IsStopped())
	ev := newEvents()
	reg, err := inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	assert.False(t, reg.HasSynced())

	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))
	assert.True(t, inf.HasSynced())
	require.Eventually(t, reg.HasSynced, 10*time.Second, 20*time.Millisecond)
	assert.NotNil(t, ev.added(ns+"/p-00"))
	assert.NotNil(t, ev.added(ns+"/p-01"))

	assert.Error(t, c.Start(ctx), "a second Start")

	// Removing a handler twice is no error; it gets nothing more.
	require.NoError(t, inf.RemoveEventHandler(reg))
	require.NoError(t, inf.RemoveEventHandler(reg))
	require.NoError(t, cl.Create(ctx, newPod(ns, "after", nil)))
	var p corev1.Pod
	require.Eventually(t, func() bool { return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "after"}, &p) == nil },
		10*time.Second, 20*time.Millisecond)
	assert.Nil(t, ev.added(ns+"/after"))

	// Removed: stopped for good, no new handler.
	require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
	assert.True(t, inf.IsStopped())
	_, err = inf.AddEventHandler(newEvents().handler())
	assert.Error(t, err, "a handler on a stopped informer")
	again, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	assert.False(t, again.IsStopped())
	assert.True(t, again.HasSynced())

	// Removing an informer that does not exist is no error.
	require.NoError(t, c.RemoveInformer(ctx, &corev1.Secret{}))

	// A type the scheme lacks.
	_, err = c.GetInformer(ctx, &notInScheme{})
	assert.True(t, runtime.IsNotRegisteredError(err), "%v", err)
	assert.Error(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &notInScheme{}))

	// Synced informers: an ended context does not make WaitForCacheSync false by itself
	// (client-go checks the informers before the stop channel).
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_ = c.WaitForCacheSync(ended) // either answer: a started cache and an ended context race in controller-runtime too
}

// notInScheme is a client.Object of a type no scheme knows.
type notInScheme struct {
	corev1.ConfigMap
}

func (n *notInScheme) DeepCopyObject() runtime.Object {
	return &notInScheme{ConfigMap: *n.ConfigMap.DeepCopy()}
}

// TestFieldSelectorsLikeControllerRuntime: plain field selectors on IndexField names, in one
// namespace and in all of them, with several requirements, and errors for a name that is not
// an index (metadata.name and metadata.namespace included: the cache has no such index unless
// one is registered).
func TestFieldSelectorsLikeControllerRuntime(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "a", 4, "set", ns1)
	createPods(t, cl, ns2, "b", 4, "set", ns1)
	c := startCache(t, nil, cache.Options{})
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "spec.restartPolicy", func(o client.Object) []string {
		return []string{string(o.(*corev1.Pod).Spec.RestartPolicy)}
	}))
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "metadata.name", func(o client.Object) []string {
		return []string{o.GetName()}
	}))

	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns1), client.MatchingFields{"spec.restartPolicy": "Never"}))
	assert.Equal(t, []string{"a-01", "a-03"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"metadata.name": "b-02"}, client.MatchingLabels{"set": ns1}))
	assert.Equal(t, []string{"b-02"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"metadata.name": "b-02", "spec.restartPolicy": "Never"}))
	assert.Empty(t, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns2), client.MatchingFields{"metadata.name": "a-02"}))
	assert.Empty(t, podNames(&l), "the namespace applies to indexed values")

	// Pages of a field and label selection.
	var got []string
	token := ""
	for range 5 {
		var page corev1.PodList
		require.NoError(t, c.List(ctx, &page, client.MatchingFields{"spec.restartPolicy": "Always"},
			client.MatchingLabels{"group": "even", "set": ns1}, client.Limit(1), client.Continue(token)))
		got = append(got, podNames(&page)...)
		if token = page.Continue; token == "" {
			break
		}
	}
	wantPages := []string{"a-00", "a-02", "b-00", "b-02"}
	if ns2 < ns1 {
		wantPages = []string{"b-00", "b-02", "a-00", "a-02"}
	}
	assert.Equal(t, wantPages, got)

	for _, sel := range []fields.Selector{
		fields.OneTermEqualSelector("metadata.namespace", ns1),
		fields.OneTermEqualSelector("spec.nodeName", "n"),
		fields.AndSelectors(fields.OneTermEqualSelector("metadata.name", "a-00"), fields.OneTermEqualSelector("nope", "x")),
	} {
		err := c.List(ctx, &l, client.MatchingFieldsSelector{Selector: sel})
		assert.Error(t, err, "%s: no such index", sel)
	}
}

var _ toolscache.ResourceEventHandler = toolscache.ResourceEventHandlerFuncs{}

// TestHandlerDetails: initial adds say so, a registration has synced only once its handler
// has returned from every initial add, updates carry the old and the new object.
func TestHandlerDetails(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	c := startCache(t, nil, cache.Options{})
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)

	release := make(chan struct{})
	type add struct {
		key     string
		initial bool
	}
	adds := make(chan add, 100)
	updates := make(chan [2]*corev1.Pod, 10)
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			p := obj.(*corev1.Pod)
			if p.Namespace != ns {
				return
			}
			<-release
			adds <- add{p.Name, initial}
		},
		UpdateFunc: func(o, n any) {
			if n.(*corev1.Pod).Namespace == ns {
				updates <- [2]*corev1.Pod{o.(*corev1.Pod), n.(*corev1.Pod)}
			}
		},
	})
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	assert.False(t, reg.HasSynced(), "a handler still busy with its initial adds has not synced")
	close(release)
	require.Eventually(t, reg.HasSynced, 10*time.Second, 20*time.Millisecond)
	require.Len(t, adds, 2)
	for range 2 {
		assert.True(t, (<-adds).initial)
	}
	require.NoError(t, cl.Create(ctx, newPod(ns, "later", nil)))
	select {
	case a := <-adds:
		assert.Equal(t, add{"later", false}, a)
	case <-time.After(10 * time.Second):
		t.Fatal("no add")
	}
	var p corev1.Pod
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, &p))
	p.Labels["changed"] = "yes"
	require.NoError(t, cl.Update(ctx, &p))
	select {
	case u := <-updates:
		assert.NotContains(t, u[0].Labels, "changed")
		assert.Equal(t, "yes", u[1].Labels["changed"])
		assert.Equal(t, p.ResourceVersion, u[1].ResourceVersion)
	case <-time.After(10 * time.Second):
		t.Fatal("no update")
	}
}

// TestAfterStop: once Start has returned, informers say they have stopped and take no
// handler.
func TestAfterStop(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns, "p", 1)
	c := newCache(t, nil, cache.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	require.True(t, c.WaitForCacheSync(t.Context()))
	inf, err := c.GetInformer(t.Context(), &corev1.Pod{})
	require.NoError(t, err)
	cancel()
	require.NoError(t, <-done)
	assert.True(t, inf.IsStopped())
	_, err = inf.AddEventHandler(newEvents().handler())
	assert.Error(t, err)
	assert.Error(t, c.Start(t.Context()), "a stopped cache does not start again")
}

// TestLabelSelectorsMatchLikeTheirMatches: every kind of label requirement selects what the
// selector's own Matches selects (controller-runtime's cache filters with it), with and without
// Limit; labels.Nothing selects nothing.
func TestLabelSelectorsMatchLikeTheirMatches(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	pods := createPods(t, cl, ns, "p", 6)
	require.NoError(t, cl.Create(ctx, newPod(ns, "bare", nil)))
	require.NoError(t, cl.Create(ctx, newPod(ns, "empty", map[string]string{"i": "", "group": ""})))
	var all []*corev1.Pod
	all = append(all, pods...)
	all = append(all, newPod(ns, "bare", nil), newPod(ns, "empty", map[string]string{"i": "", "group": ""}))
	c := startCache(t, nil, cache.Options{})

	for _, s := range []string{
		"i=1", "i==1", "i!=1", "i in (1,3,x)", "i notin (1,3)", "i", "!i", "i>2", "i<2", "i>0",
		"group=even,i>1", "group!=even,i notin (5)", "i=", "i!=", "i in ()", "group in (even,odd),!nope",
	} {
		sel := mustSelector(t, s)
		want := []string{}
		for _, p := range all {
			if sel.Matches(labels.Set(p.Labels)) {
				want = append(want, p.Name)
			}
		}
		slices.Sort(want)
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}), s)
		assert.Equal(t, want, podNames(&l), "%q", s)
		var paged []string
		token := ""
		for range 20 {
			var page corev1.PodList
			require.NoError(t, c.List(ctx, &page, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel},
				client.Limit(2), client.Continue(token)), s)
			paged = append(paged, podNames(&page)...)
			if token = page.Continue; token == "" {
				break
			}
		}
		assert.Equal(t, want, append([]string{}, paged...), "%q in pages", s)
	}

	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.Nothing()}))
	assert.Empty(t, podNames(&l), "labels.Nothing()")
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.Everything()}))
	assert.Len(t, l.Items, len(all), "labels.Everything()")
}

// TestKeysWithoutANamespace: a Get of a namespaced kind without a namespace finds nothing
// (controller-runtime's cache keys it by name alone), and in a cache restricted to some
// namespaces it is an error, as controller-runtime's multi-namespace cache says it; a
// GetInformerForKind of a kind the scheme knows hands typed objects to its handlers.
func TestKeysWithoutANamespace(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 1)

	c := startCache(t, nil, cache.Options{})
	err := c.Get(ctx, client.ObjectKey{Name: "p-00"}, &corev1.Pod{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	err = c.Get(ctx, client.ObjectKey{Namespace: ns}, &corev1.Pod{})
	assert.True(t, apierrors.IsNotFound(err), "no name: %v", err)

	inf, err := c.GetInformerForKind(ctx, podGVK)
	require.NoError(t, err)
	ev := newEvents()
	reg, err := inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	require.Eventually(t, reg.HasSynced, 10*time.Second, 20*time.Millisecond)
	assert.IsType(t, &corev1.Pod{}, ev.added(ns+"/p-00"))

	restricted := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	err = restricted.Get(ctx, client.ObjectKey{Name: "p-00"}, &corev1.Pod{})
	assert.ErrorContains(t, err, "unknown namespace for the cache")
	var p corev1.Pod
	require.NoError(t, restricted.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, &p))
}

// TestIndexFieldEmptyValue: an IndexField function that returns the empty string indexes the
// object under it, as controller-runtime's does: MatchingFields{field: ""} selects it (the
// usual index of spec.nodeName finds the Pods not scheduled).
func TestIndexFieldEmptyValue(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	require.NoError(t, cl.Create(ctx, newPod(ns, "s", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n1" })))
	c := startCache(t, nil, cache.Options{})
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}))
	u := unstructuredPod()
	require.NoError(t, c.IndexField(ctx, u, "spec.nodeName", func(o client.Object) []string {
		n, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "nodeName")
		return []string{n}
	}))
	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": ""}))
	assert.Equal(t, []string{"p-00", "p-01"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": "n1"}))
	assert.Equal(t, []string{"s"}, podNames(&l))
	ul := unstructuredPodList()
	require.NoError(t, c.List(ctx, ul, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": ""}))
	assert.Equal(t, []string{"p-00", "p-01"}, names(ptrs(ul.Items)))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"spec.nodeName": ""}, client.MatchingLabels{"i": "1"}))
	assert.Contains(t, podNames(&l), "p-01")
}

// TestListsAreCopies: without UnsafeDisableDeepCopy every List returns objects of its own,
// typed, unstructured and metadata-only (from a metadata-only informer too): a change to one
// is seen by no other read.
func TestListsAreCopies(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	for _, n := range []string{"s-0", "s-1"} {
		require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"a": "b"}}}))
	}
	c := startCache(t, nil, cache.Options{})

	var t1, t2 corev1.PodList
	require.NoError(t, c.List(ctx, &t1, client.InNamespace(ns)))
	t1.Items[0].Labels["i"] = "changed"
	t1.Items[0].Spec.Containers[0].Image = "changed"
	require.NoError(t, c.List(ctx, &t2, client.InNamespace(ns)))
	assert.Equal(t, "0", t2.Items[0].Labels["i"])
	assert.Equal(t, "nginx:1.27", t2.Items[0].Spec.Containers[0].Image)

	u1, u2 := unstructuredPodList(), unstructuredPodList()
	require.NoError(t, c.List(ctx, u1, client.InNamespace(ns)))
	require.NoError(t, unstructured.SetNestedField(u1.Items[0].Object, "changed", "metadata", "labels", "i"))
	require.NoError(t, c.List(ctx, u2, client.InNamespace(ns)))
	assert.Equal(t, "0", u2.Items[0].GetLabels()["i"])

	secretList := func() *metav1.PartialObjectMetadataList {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		require.NoError(t, c.List(ctx, l, client.InNamespace(ns)))
		require.Len(t, l.Items, 2)
		return l
	}
	m1 := secretList()
	m1.Items[0].Labels["a"] = "changed"
	m1.Items[1].Annotations = map[string]string{"x": "y"}
	m2 := secretList()
	assert.Equal(t, "b", m2.Items[0].Labels["a"])
	assert.Empty(t, m2.Items[1].Annotations)
	var got metav1.PartialObjectMetadata
	got.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s-0"}, &got))
	assert.Equal(t, "b", got.Labels["a"])
}

// TestTypedReadsEqualTheServers: objects of many shapes (quantities, int-or-strings, []byte,
// micro-times, raw JSON, pointers, maps of structs) read typed from the cache equal what a
// typed client reads from the server, for Get and List.
func TestTypedReadsEqualTheServers(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	now := metav1.NewMicroTime(time.Now().Round(time.Microsecond))
	dur := int32(30)
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Annotations: map[string]string{"a": "\u00e9\"\\<>&"}},
			Data: map[string]string{"k": "v", "empty": ""}, BinaryData: map[string][]byte{"b": {0, 1, 2, 255}, "e": {}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec"}, Data: map[string][]byte{"x": []byte("hello\x00")}, Type: corev1.SecretTypeOpaque},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"}, Spec: corev1.ServiceSpec{
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("web")}, {Name: "x", Port: 81, TargetPort: intstr.FromInt32(8081)}},
			Selector: map[string]string{"app": "x"}}},
		newPod(ns, "pod", map[string]string{"a": "b"}, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1"), corev1.ResourceMemory: resource.MustParse("100M")},
			}
			p.Spec.ActiveDeadlineSeconds = ptr(int64(1 << 30))
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "E", Value: "1"}}
		}),
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lease"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("me"), LeaseDurationSeconds: &dur, RenewTime: &now, AcquireTime: &now}},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ev"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "pod"},
			Reason: "R", Message: "m", EventTime: now, Action: "A", ReportingController: "c/x", ReportingInstance: "i", Type: "Normal"},
		newDeployment(ns, "dep"),
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromString("50%")), Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"b"}}}}}},
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hpa"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "dep", APIVersion: "apps/v1"},
				MinReplicas:    ptr(int32(1)), MaxReplicas: 3,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("1.5Gi"))}}}}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ns + "-vwc"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v.example.com", AdmissionReviewVersions: []string{"v1"},
				SideEffects:       ptr(admissionregistrationv1.SideEffectClassNone),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"never": ns}},
				ClientConfig:      admissionregistrationv1.WebhookClientConfig{URL: ptr("https://127.0.0.1:1/x"), CABundle: []byte("-----BEGIN-----\n\x00\xff")}}}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-pc"}, Value: -5, Description: "d"},
	}
	for _, o := range objs {
		require.NoError(t, cl.Create(ctx, o), "%T", o)
	}
	c := startCache(t, nil, cache.Options{})
	for _, o := range objs {
		key := client.ObjectKeyFromObject(o)
		fromServer := o.DeepCopyObject().(client.Object)
		require.NoError(t, cl.Get(ctx, key, fromServer))
		fromCache := o.DeepCopyObject().(client.Object)
		require.Eventually(t, func() bool {
			return c.Get(ctx, key, fromCache) == nil && fromCache.GetResourceVersion() == fromServer.GetResourceVersion()
		}, 10*time.Second, 20*time.Millisecond, "%T", o)
		gvk, err := apiutil.GVKForObject(o, cl.Scheme())
		require.NoError(t, err)
		fromServer.GetObjectKind().SetGroupVersionKind(gvk)
		fromCache.GetObjectKind().SetGroupVersionKind(gvk)
		assert.Equal(t, fromServer, fromCache, "%T", o)

		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		require.NoError(t, c.Get(ctx, key, u))
		us := &unstructured.Unstructured{}
		us.SetGroupVersionKind(gvk)
		require.NoError(t, cl.Get(ctx, key, us))
		assert.Equal(t, us.Object, u.Object, "%T unstructured", o)
	}
}

// TestMetadataOnlyOverNamespaces: a resource read only as metadata in a cache of several
// namespaces: lists of all of them and of one, in order and in pages, the namespace refused
// outside them, and cluster-scoped metadata reads with or without a namespace.
func TestMetadataOnlyOverNamespaces(t *testing.T) {
	ns1, ns2, other := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, n := range []string{ns1, ns2, other} {
		for _, name := range []string{"b", "a", "c"} {
			require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: name, Labels: map[string]string{"n": name}}}))
		}
	}
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}})
	secretGVK := corev1.SchemeGroupVersion.WithKind("Secret")
	list := func(opts ...client.ListOption) (*metav1.PartialObjectMetadataList, error) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		return l, c.List(ctx, l, opts...)
	}
	keys := func(l *metav1.PartialObjectMetadataList) []string {
		out := []string{}
		for _, m := range l.Items {
			if m.Labels["n"] != "" {
				out = append(out, m.Namespace+"/"+m.Name)
			}
		}
		return out
	}
	first, second := min(ns1, ns2), max(ns1, ns2)
	want := []string{first + "/a", first + "/b", first + "/c", second + "/a", second + "/b", second + "/c"}
	l, err := list(client.HasLabels{"n"})
	require.NoError(t, err)
	assert.Equal(t, want, keys(l))
	for _, m := range l.Items {
		assert.Equal(t, secretGVK, m.GroupVersionKind())
	}
	l, err = list(client.InNamespace(ns2), client.MatchingLabels{"n": "b"})
	require.NoError(t, err)
	assert.Equal(t, []string{ns2 + "/b"}, keys(l))
	_, err = list(client.InNamespace(other))
	assert.ErrorContains(t, err, "unknown namespace for the cache")

	var paged []string
	token := ""
	for range 10 {
		l, err := list(client.HasLabels{"n"}, client.Limit(4), client.Continue(token))
		require.NoError(t, err)
		paged = append(paged, keys(l)...)
		if token = l.Continue; token == "" {
			break
		}
		assert.Equal(t, int64(2), *l.RemainingItemCount)
	}
	assert.Equal(t, want, paged)

	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(secretGVK)
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: "c"}, m))
	assert.Equal(t, "c", m.Labels["n"])
	assert.ErrorContains(t, c.Get(ctx, client.ObjectKey{Namespace: other, Name: "c"}, m), "unknown namespace for the cache")

	nsObj := &metav1.PartialObjectMetadata{}
	nsObj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: other}, nsObj), "cluster-scoped: the namespace is ignored")
	assert.Equal(t, other, nsObj.Name)
	nsl := &metav1.PartialObjectMetadataList{}
	nsl.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	require.NoError(t, c.List(ctx, nsl))
	assert.Contains(t, names(ptrs(nsl.Items)), other)
}

// TestHandlersCallTheCache: a handler may read the cache, get informers, add a handler and
// remove its own registration from within a call, as client-go's informers allow; none of
// it blocks delivery.
func TestHandlersCallTheCache(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	c := startCache(t, nil, cache.Options{})
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)

	var reg toolscache.ResourceEventHandlerRegistration
	regSet := make(chan struct{})
	done := make(chan error, 10)
	calls := make(chan string, 100)
	inner := newEvents()
	reg, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		p := obj.(*corev1.Pod)
		if p.Namespace != ns {
			return
		}
		calls <- p.Name
		if p.Name != "p-01" {
			return
		}
		<-regSet
		done <- func() error {
			var got corev1.Pod
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
				return err
			}
			var l corev1.PodList
			if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
				return err
			}
			other, err := c.GetInformer(ctx, &corev1.ConfigMap{})
			if err != nil {
				return err
			}
			if _, err := other.AddEventHandler(newEvents().handler()); err != nil {
				return err
			}
			if _, err := inf.AddEventHandler(inner.handler()); err != nil {
				return err
			}
			return inf.RemoveEventHandler(reg)
		}()
	}})
	require.NoError(t, err)
	close(regSet)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("a handler calling the cache blocked")
	}
	require.Eventually(t, func() bool { return inner.added(ns+"/p-02") != nil }, 10*time.Second, 20*time.Millisecond,
		"the handler added from a handler gets its adds")
	require.NoError(t, cl.Create(ctx, newPod(ns, "late", nil)))
	require.Eventually(t, func() bool { return inner.added(ns+"/late") != nil }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	close(calls)
	for name := range calls {
		assert.NotEqual(t, "late", name, "the removed handler got nothing more")
	}
}

// TestMetadataIndexAcrossTheMove: an IndexField index of metadata-only reads keeps answering
// (with metadata objects given to its function) once a typed read moves those reads to the
// informer of whole objects, and keeps following changes.
func TestMetadataIndexAcrossTheMove(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 4)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	var badKind atomic.Int32
	require.NoError(t, c.IndexField(ctx, metadataPod(), "group", func(o client.Object) []string {
		if _, ok := o.(*metav1.PartialObjectMetadata); !ok {
			badKind.Add(1)
		}
		return []string{o.GetLabels()["group"]}
	}))
	meta := func(opts ...client.ListOption) []string {
		l := metadataPodList()
		require.NoError(t, c.List(ctx, l, opts...))
		return names(ptrs(l.Items))
	}
	assert.Equal(t, []string{"p-01", "p-03"}, meta(client.MatchingFields{"group": "odd"}))

	var typed corev1.PodList
	require.NoError(t, c.List(ctx, &typed))
	require.Eventually(t, func() bool {
		for _, s := range c.Statuses() {
			if s.Key.GVR.Resource == "pods" && s.Key.Mode == "metadata" && s.Phase != informer.PhaseStopped {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "the metadata reads did not move")
	assert.Equal(t, []string{"p-01", "p-03"}, meta(client.MatchingFields{"group": "odd"}))
	p := typed.Items[0].DeepCopy()
	p.Labels["group"] = "odd"
	require.NoError(t, cl.Update(ctx, p))
	require.Eventually(t, func() bool {
		return slices.Equal([]string{"p-00", "p-01", "p-03"}, meta(client.MatchingFields{"group": "odd"}))
	}, 10*time.Second, 20*time.Millisecond)
	var tl corev1.PodList
	require.NoError(t, c.List(ctx, &tl, client.MatchingFields{"group": "odd"}),
		"the index of the informer the typed reads share serves them (they have none of that name)")
	assert.Equal(t, []string{"p-00", "p-01", "p-03"}, podNames(&tl))
	assert.Zero(t, badKind.Load(), "the function got metadata objects only")
}

// TestNamespaceAllWithOthers: DefaultNamespaces naming some namespaces and NamespaceAll:
// every namespace is read (the others through the NamespaceAll informer, with its
// configuration), a list of all of them is in order and pages across the informers, and an
// IndexField index answers across them.
func TestNamespaceAllWithOthers(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "a", 3, "set", ns1)
	createPods(t, cl, ns2, "b", 3, "set", ns1)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{
		ns1:                 {},
		cache.AllNamespaces: {LabelSelector: mustSelector(t, "i!=0")},
	}})
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "group", func(o client.Object) []string { return []string{o.GetLabels()["group"]} }))
	var p corev1.Pod
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns2, Name: "b-01"}, &p))
	err := c.Get(ctx, client.ObjectKey{Namespace: ns2, Name: "b-00"}, &p)
	assert.True(t, apierrors.IsNotFound(err), "the NamespaceAll configuration's selector: %v", err)
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: "a-00"}, &p), "ns1's own configuration")

	want := []string{"a-00", "a-01", "a-02", "b-01", "b-02"}
	if ns2 < ns1 {
		want = []string{"b-01", "b-02", "a-00", "a-01", "a-02"}
	}
	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.MatchingLabels{"set": ns1}))
	assert.Equal(t, want, podNames(&l))
	var paged []string
	token := ""
	for range 10 {
		var page corev1.PodList
		require.NoError(t, c.List(ctx, &page, client.MatchingLabels{"set": ns1}, client.Limit(2), client.Continue(token)))
		paged = append(paged, podNames(&page)...)
		if token = page.Continue; token == "" {
			break
		}
	}
	assert.Equal(t, want, paged)
	require.NoError(t, c.List(ctx, &l, client.MatchingLabels{"set": ns1}, client.MatchingFields{"group": "even"}))
	assert.ElementsMatch(t, []string{"a-00", "a-02", "b-02"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns2), client.MatchingFields{"group": "odd"}))
	assert.Equal(t, []string{"b-01"}, podNames(&l))
}

// TestConcurrentUse: reads of every kind (copies and shared), paged lists, field selectors,
// handlers added and removed, indexes registered and RemoveInformer, all at once while the
// objects change: no data race (go test -race), no error but the expected ones, and every
// page sequence complete.
func TestConcurrentUse(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 12)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "group", func(o client.Object) []string { return []string{o.GetLabels()["group"]} }))

	deadline := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	report := func(err error) {
		if err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	for w := range 6 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				key := client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("p-%02d", i%12)}
				switch (w + i) % 6 {
				case 0:
					var p corev1.Pod
					report(c.Get(ctx, key, &p, client.UnsafeDisableDeepCopy))
				case 1:
					report(c.Get(ctx, key, unstructuredPod()))
				case 2:
					report(c.Get(ctx, key, metadataPod(), client.UnsafeDisableDeepCopy))
				case 3:
					seen := map[string]bool{}
					token := ""
					for range 20 {
						var page corev1.PodList
						if err := c.List(ctx, &page, client.InNamespace(ns), client.Limit(5), client.Continue(token)); err != nil {
							report(err)
							break
						}
						for _, n := range podNames(&page) {
							if seen[n] {
								report(fmt.Errorf("%s twice in pages", n))
							}
							seen[n] = true
						}
						if token = page.Continue; token == "" {
							break
						}
					}
					if len(seen) < 12 {
						report(fmt.Errorf("pages had %d pods", len(seen)))
					}
				case 4:
					l := unstructuredPodList()
					report(c.List(ctx, l, client.MatchingFields{"group": "odd"}, client.UnsafeDisableDeepCopy))
				case 5:
					inf, err := c.GetInformer(ctx, metadataPod())
					if err != nil {
						report(err)
						continue
					}
					reg, err := inf.AddEventHandler(newEvents().handler())
					if err != nil {
						report(err)
						continue
					}
					report(inf.RemoveEventHandler(reg))
				}
			}
		})
	}
	wg.Go(func() {
		for i := 0; time.Now().Before(deadline); i++ {
			var p corev1.Pod
			if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("p-%02d", i%12)}, &p); err != nil {
				report(err)
				return
			}
			p.Labels["n"] = fmt.Sprint(i)
			if err := cl.Update(ctx, &p); err != nil && !apierrors.IsConflict(err) {
				report(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	wg.Go(func() {
		for i := 0; time.Now().Before(deadline); i++ {
			time.Sleep(300 * time.Millisecond)
			report(c.RemoveInformer(ctx, &corev1.ConfigMap{}))
			_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
			report(err)
			report(c.IndexField(ctx, &corev1.ConfigMap{}, "x", func(client.Object) []string { return []string{"y"} }))
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestTypedDecodeLikeTheClient: a custom resource whose JSON has keys that differ from the
// Go type's only by case, nulls, and characters that JSON escapes, decodes from the cache as
// a typed client decodes it from the server (apimachinery's case-sensitive JSON decoder).
func TestTypedDecodeLikeTheClient(t *testing.T) {
	group := testenv.UniqueName(t) + ".crcache.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Gizmo", "gizmos"))
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	scheme := schemeWith(t, gv, &Gizmo{}, &GizmoList{})
	ns := cp.Namespace(t)
	ctx := t.Context()
	cl, err := client.New(cp.AdminConfig(), client.Options{Scheme: scheme})
	require.NoError(t, err)
	objs := map[string]map[string]any{
		"case":  {"spec": map[string]any{"size": int64(1), "Size": int64(7), "TAGS": []any{"x"}, "tags": []any{"a"}}, "Spec": map[string]any{"size": int64(9)}},
		"nulls": {"spec": map[string]any{"size": int64(2), "tags": nil, "extra": nil, "labels": map[string]any{"a": nil, "b": "c"}}},
		"chars": {"spec": map[string]any{"size": int64(3), "tags": []any{"\u00e9\U0001F600", "<&>", "\"\\/\t\n", "\u2028\u2029", ""},
			"extra": map[string]any{"f": 1.5, "big": int64(1) << 62, "neg": int64(-1), "nested": map[string]any{"a": []any{int64(1), "b", true, nil}}}}},
	}
	for name, content := range objs {
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(gv.WithKind("Gizmo"))
		u.SetNamespace(ns)
		u.SetName(name)
		require.NoError(t, cl.Create(ctx, u), name)
	}
	c, err := crcache.NewCache(cp.AdminConfig(), cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}}, crcache.Options{})
	require.NoError(t, err)
	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))
	for name := range objs {
		key := client.ObjectKey{Namespace: ns, Name: name}
		var fromServer, fromCache Gizmo
		require.NoError(t, cl.Get(ctx, key, &fromServer))
		require.NoError(t, c.Get(ctx, key, &fromCache), name)
		fromServer.SetGroupVersionKind(gv.WithKind("Gizmo"))
		assert.Equal(t, fromServer, fromCache, name)
		if name == "case" {
			assert.Equal(t, int64(1), fromCache.Spec.Size, "keys are case-sensitive")
			assert.Equal(t, []string{"a"}, fromCache.Spec.Tags)
		}
	}
	var fromServer, fromCache GizmoList
	require.NoError(t, cl.List(ctx, &fromServer, client.InNamespace(ns)))
	require.NoError(t, c.List(ctx, &fromCache, client.InNamespace(ns)))
	require.Len(t, fromCache.Items, len(fromServer.Items))
	for i := range fromServer.Items {
		fromServer.Items[i].SetGroupVersionKind(gv.WithKind("Gizmo"))
		assert.Equal(t, fromServer.Items[i], fromCache.Items[i])
	}
}

// TestSelectorsSeeTransformedObjects: label selectors, IndexField functions, JSONPath field
// selectors and handlers see objects as the transform left them, as controller-runtime's
// cache, which stores the transformed objects, answers; in a metadata-only informer too.
func TestSelectorsSeeTransformedObjects(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 4)
	for _, n := range []string{"s-0", "s-1"} {
		require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"group": "x"}}}))
	}
	relabel := func(in any) (any, error) {
		o, ok := in.(client.Object)
		if !ok {
			return in, nil
		}
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		delete(l, "group")
		l["t"] = "1"
		o.SetLabels(l)
		if p, ok := in.(*corev1.Pod); ok {
			p.Spec.NodeName = "n-" + p.Name
		}
		return o, nil
	}
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: relabel})
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "group", func(o client.Object) []string { return []string{o.GetLabels()["group"]} }))

	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.MatchingLabels{"group": "odd"}))
	assert.Empty(t, podNames(&l), "the label the transform removed")
	require.NoError(t, c.List(ctx, &l, client.MatchingLabels{"t": "1"}))
	assert.Len(t, l.Items, 4, "the label the transform added")
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"group": ""}))
	assert.Len(t, l.Items, 4, "IndexField functions see the transformed object")
	require.NoError(t, c.List(ctx, &l, crcache.MustParseFields("spec.nodeName=n-p-02")))
	assert.Equal(t, []string{"p-02"}, podNames(&l), "JSONPath selectors see the transformed object")
	require.NoError(t, c.List(ctx, &l, client.MatchingLabels{"t": "1"}, client.Limit(3)))
	assert.Len(t, l.Items, 3)

	sl := &metav1.PartialObjectMetadataList{}
	sl.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	require.NoError(t, c.List(ctx, sl, client.MatchingLabels{"group": "x"}))
	assert.Empty(t, sl.Items, "metadata-only: the label the transform removed")
	require.NoError(t, c.List(ctx, sl, client.MatchingLabels{"t": "1"}))
	assert.Len(t, sl.Items, 2, "metadata-only: the label the transform added")

	// After a change on the server, the same.
	var p corev1.Pod
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, &p))
	p.Labels["group"] = "changed"
	require.NoError(t, cl.Update(ctx, &p))
	require.Eventually(t, func() bool {
		var got corev1.Pod
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, &got) == nil && got.ResourceVersion == p.ResourceVersion
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, c.List(ctx, &l, client.MatchingLabels{"group": "changed"}))
	assert.Empty(t, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"group": "changed"}))
	assert.Empty(t, podNames(&l))
}

// TestWaitForCacheSyncEndedContext: with an informer whose first list is slow, WaitForCacheSync
// returns false as soon as its context ends (at once for one already ended), a read or a
// blocking GetInformer fails with a timeout, and once the list is in, all succeed.
func TestWaitForCacheSyncEndedContext(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	release := make(chan struct{})
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/configmaps") && r.URL.Query().Get("watch") == "" {
				select {
				case <-release:
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			}
			return rt.RoundTrip(r)
		})
	})
	c := startCache(t, cfg, cache.Options{})
	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	require.NoError(t, err)
	assert.False(t, inf.HasSynced())

	ended, cancel := context.WithCancel(ctx)
	cancel()
	start := time.Now()
	assert.False(t, c.WaitForCacheSync(ended), "an ended context")
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	assert.False(t, c.WaitForCacheSync(short), "a context that ends while waiting")
	assert.Less(t, time.Since(start), 5*time.Second)
	_, err = c.GetInformer(ended, &corev1.ConfigMap{})
	assert.True(t, apierrors.IsTimeout(err), "%v", err)
	err = c.Get(ended, client.ObjectKey{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{})
	assert.True(t, apierrors.IsTimeout(err), "%v", err)

	close(release)
	require.True(t, c.WaitForCacheSync(ctx))
	assert.True(t, inf.HasSynced())
	var got corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, &got))
}

// TestSlowHandlerBlocksNoOther: events to one handler are sequential, but a handler that
// does not return holds up neither the other handlers of the informer (typed or of another
// kind of read) nor the cache's reads, as with client-go's informers.
func TestSlowHandlerBlocksNoOther(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	release := make(chan struct{})
	defer close(release)
	var blocked atomic.Int32
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		blocked.Add(1)
		<-release
	}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return blocked.Load() == 1 }, 10*time.Second, 20*time.Millisecond)

	typed := newEvents()
	_, err = inf.AddEventHandler(typed.handler())
	require.NoError(t, err)
	minf, err := c.GetInformer(ctx, metadataPod())
	require.NoError(t, err)
	meta := newEvents()
	_, err = minf.AddEventHandler(meta.handler())
	require.NoError(t, err)
	require.NoError(t, cl.Create(ctx, newPod(ns, "late", nil)))
	for _, ev := range []*events{typed, meta} {
		require.Eventually(t, func() bool { return ev.added(ns+"/late") != nil && ev.added(ns+"/p-01") != nil },
			10*time.Second, 20*time.Millisecond, "another handler waits for a blocked one")
	}
	var p corev1.Pod
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "late"}, &p), "reads wait for no handler")
	assert.Equal(t, int32(1), blocked.Load(), "the blocked handler got nothing while busy")
}

// TestIndexFieldSeveralValues: an IndexField function may return several values; equality
// selects the objects one of whose values is the one asked for, as controller-runtime
// documents.
func TestIndexFieldSeveralValues(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	c := startCache(t, nil, cache.Options{})
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "tags", func(o client.Object) []string {
		if o.GetNamespace() != ns {
			return nil
		}
		i := o.GetLabels()["i"]
		return []string{"all", "i" + i, o.GetLabels()["group"]}
	}))
	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"tags": "all"}))
	assert.Equal(t, []string{"p-00", "p-01", "p-02"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"tags": "i1"}))
	assert.Equal(t, []string{"p-01"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"tags": "even"}))
	assert.Equal(t, []string{"p-00", "p-02"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"tags": "even"}, client.Limit(1)))
	assert.Equal(t, []string{"p-00"}, podNames(&l))
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"tags": "even"}, client.Limit(1), client.Continue(l.Continue)))
	assert.Equal(t, []string{"p-02"}, podNames(&l), "an object with several values is listed once")
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"tags": "i9"}))
	assert.Empty(t, podNames(&l))
}

// TestStartRacingInformers: informers, indexes and handlers asked for while Start runs (typed,
// unstructured and metadata-only, of several kinds) all start, sync and deliver, and the cache
// stops cleanly.
func TestStartRacingInformers(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	objs := func() []client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		return []client.Object{&corev1.Pod{}, metadataPod(), unstructuredPod(), u, m, &corev1.ConfigMap{}}
	}
	for round := range 4 {
		c := newCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		var wg sync.WaitGroup
		regs := make([]toolscache.ResourceEventHandlerRegistration, len(objs()))
		evs := make([]*events, len(regs))
		for i, obj := range objs() {
			wg.Go(func() {
				if (i+round)%2 == 0 {
					time.Sleep(time.Duration(i) * time.Millisecond)
				}
				inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, c.IndexField(ctx, obj, "name", func(o client.Object) []string { return []string{o.GetName()} }))
				evs[i] = newEvents()
				regs[i], err = inf.AddEventHandler(evs[i].handler())
				assert.NoError(t, err)
			})
		}
		if round%2 == 1 {
			time.Sleep(2 * time.Millisecond)
		}
		go func() { done <- c.Start(runCtx) }()
		wg.Wait()
		require.True(t, c.WaitForCacheSync(ctx), "round %d", round)
		for i, reg := range regs {
			require.NotNil(t, reg)
			require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond, "round %d handler %d", round, i)
			want := ns + "/p-00"
			if i >= 3 {
				want = ns + "/cm"
			}
			assert.NotNil(t, evs[i].added(want), "round %d handler %d", round, i)
		}
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, client.MatchingFields{"name": "p-01"}))
		assert.Equal(t, []string{"p-01"}, podNames(&l))
		stop()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("Start did not return")
		}
	}
}

// TestReadsAfterStop: once Start has returned, the informers that had synced still answer
// reads with what they held, as controller-runtime's cache does: a manager stops its caches
// before its webhooks and HTTP servers, which "might be still serving some requests" and read
// through the manager's client. Informers say they have stopped and take no new handler.
// controller-runtime's own cache runs the same checks, as the reference.
func TestReadsAfterStop(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns, "p", 2)
	for name, newFn := range map[string]cache.NewCacheFunc{"controller-runtime": cache.New, "crcache": crcache.New} {
		t.Run(name, func(t *testing.T) {
			c, err := newFn(cp.AdminConfig(), cache.Options{})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- c.Start(ctx) }()
			require.True(t, c.WaitForCacheSync(t.Context()))
			key := client.ObjectKey{Namespace: ns, Name: "p-01"}
			require.NoError(t, c.Get(t.Context(), key, &corev1.Pod{}))
			require.NoError(t, c.Get(t.Context(), key, metadataPod()))
			inf, err := c.GetInformer(t.Context(), &corev1.Pod{})
			require.NoError(t, err)
			cancel()
			require.NoError(t, <-done)

			assert.True(t, inf.IsStopped())
			var p corev1.Pod
			require.NoError(t, c.Get(t.Context(), key, &p), "a synced informer's data after stop")
			assert.Equal(t, "p-01", p.Name)
			var l corev1.PodList
			require.NoError(t, c.List(t.Context(), &l, client.InNamespace(ns)))
			assert.ElementsMatch(t, []string{"p-00", "p-01"}, podNames(&l), "in any order: controller-runtime's is not sorted")
			m := metadataPodList()
			require.NoError(t, c.List(t.Context(), m, client.InNamespace(ns)))
			assert.Len(t, m.Items, 2)
			err = c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "missing"}, &corev1.Pod{})
			assert.True(t, apierrors.IsNotFound(err), "%v", err)
		})
	}
}
