package crcache_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
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

// statusOf returns the status of the cache's kindex informer of a resource (by plural).
func statusOf(c *crcache.Cache, resource string) (informer.Status, bool) {
	for _, s := range c.Statuses() {
		if s.Key.GVR.Resource == resource && s.Phase != informer.PhaseStopped {
			return s, true
		}
	}
	return informer.Status{}, false
}

// TestDeletedCRDParks: when a CRD is deleted, its informer parks (no request until the CRD
// is back), handlers are told the objects are gone, reads see an empty cache, and the
// informer resumes when the CRD returns.
func TestDeletedCRDParks(t *testing.T) {
	group := testenv.UniqueName(t) + ".crcache.test"
	crd := cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	ns := cp.Namespace(t)
	dyn := cp.Dynamic(t)
	ctx := t.Context()
	create := func(name string) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		u.Object["spec"] = map[string]any{"size": int64(3)}
		_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	create("g1")
	create("g2")

	rc := &requestCounter{}
	c := startCache(t, rc.wrap(cp.AdminConfig()), cache.Options{})
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	inf, err := c.GetInformer(ctx, obj)
	require.NoError(t, err)
	ev := newEvents()
	reg, err := inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "handler did not sync")

	cp.DeleteCRD(t, crd.Name)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		s, ok := statusOf(c, "gadgets")
		return ok && s.Phase == informer.PhaseParked && s.Reason == informer.ReasonNotFound
	}, func() string { s, _ := statusOf(c, "gadgets"); return "informer did not park: " + s.String() })
	testenv.Eventually(t, 10*time.Second, func() bool {
		return ev.deleted(ns+"/g1") != nil && ev.deleted(ns+"/g2") != nil
	}, "handlers were not told the objects are gone")
	if tomb, ok := ev.deleted(ns + "/g1").(toolscache.DeletedFinalStateUnknown); ok {
		assert.IsType(t, &unstructured.Unstructured{}, tomb.Obj)
	}
	st := inf.(*crcache.Informer).Statuses()
	require.Len(t, st, 1)
	assert.Equal(t, informer.PhaseParked, st[0].Phase, "the informer's own status says so")

	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind("GadgetList"))
	require.NoError(t, c.List(ctx, list))
	assert.Empty(t, list.Items, "the server deleted them")

	before := rc.count("/gadgets")
	time.Sleep(3 * time.Second)
	assert.LessOrEqual(t, rc.count("/gadgets")-before, 1, "a parked informer does not retry: %d requests", rc.count("/gadgets")-before)

	// The CRD comes back: the informer resumes by itself.
	cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	create("g3")
	testenv.EventuallyWith(t, 60*time.Second, func() bool { return ev.added(ns+"/g3") != nil },
		func() string { s, _ := statusOf(c, "gadgets"); return "informer did not resume: " + s.String() })
	s, _ := statusOf(c, "gadgets")
	assert.Equal(t, informer.PhaseSynced, s.Phase)
}

// TestForbiddenParks: without RBAC grants a read fails at once with the server's 403
// instead of waiting for a sync that cannot happen, the informer parks without retrying, and
// a grant resumes it (and ends a WaitForCacheSync waiting for it).
func TestForbiddenParks(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	user, ucfg, err := cp.NewUser()
	require.NoError(t, err)
	rc := &requestCounter{}
	c := startCache(t, rc.wrap(ucfg), cache.Options{})
	key := client.ObjectKey{Namespace: ns, Name: "cm"}

	start := time.Now()
	err = c.Get(ctx, key, &corev1.ConfigMap{})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.ErrorIs(t, err, informer.ErrParked)
	assert.Less(t, time.Since(start), 20*time.Second, "the read waited for a sync that cannot happen")
	s, ok := statusOf(c, "configmaps")
	require.True(t, ok)
	assert.Equal(t, informer.PhaseParked, s.Phase)
	assert.Equal(t, informer.ReasonForbidden, s.Reason)

	_, err = c.GetInformer(ctx, &corev1.ConfigMap{})
	assert.True(t, apierrors.IsForbidden(err), "GetInformer too: %v", err)
	// WaitForCacheSync waits for the parked informer until its context ends, as
	// controller-runtime's waits for its reflector: a grant resumes it.
	waitCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	assert.False(t, c.WaitForCacheSync(waitCtx))
	synced := make(chan bool, 1)
	go func() { synced <- c.WaitForCacheSync(ctx) }()

	before := rc.count("/configmaps")
	time.Sleep(3 * time.Second)
	assert.LessOrEqual(t, rc.count("/configmaps")-before, 1, "a parked informer does not retry")

	cp.Grant(t, user, "", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		var got corev1.ConfigMap
		return c.Get(ctx, key, &got) == nil && got.Name == "cm"
	}, func() string {
		s, _ := statusOf(c, "configmaps")
		return "informer did not resume after the grant: " + s.String()
	})
	select {
	case ok := <-synced:
		assert.True(t, ok, "WaitForCacheSync called before the grant")
	case <-time.After(30 * time.Second):
		t.Error("WaitForCacheSync called before the grant did not return after it")
	}
	assert.True(t, c.WaitForCacheSync(ctx))
}

// TestWatchForbidden: list without watch parks after the list; reads serve that snapshot.
func TestWatchForbidden(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}))
	user, ucfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}})
	c := startCache(t, ucfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})

	var got corev1.Secret
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s"}, &got))
	testenv.EventuallyWith(t, 20*time.Second, func() bool {
		s, ok := statusOf(c, "secrets")
		return ok && s.Phase == informer.PhaseParked && s.Reason == informer.ReasonWatchForbidden
	}, func() string { s, _ := statusOf(c, "secrets"); return "did not park on watch: " + s.String() })
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s"}, &got))
	assert.True(t, strings.HasPrefix(got.Name, "s"))
}

// TestDefaultWatchErrorHandler: controller-runtime's DefaultWatchErrorHandler hears of a
// 403 once the informer records it, with a stand-in reflector that client-go's own handler
// accepts, and not again while the informer is parked.
func TestDefaultWatchErrorHandler(t *testing.T) {
	ns := cp.Namespace(t)
	ctx := t.Context()
	_, ucfg, err := cp.NewUser()
	require.NoError(t, err)
	var mu sync.Mutex
	var errs []error
	var names []string
	h := func(ctx context.Context, r *toolscache.Reflector, err error) {
		toolscache.DefaultWatchErrorHandler(ctx, r, err) // logs, as client-go's informers do
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
		names = append(names, r.Name())
	}
	c := startCache(t, ucfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultWatchErrorHandler: h})
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{})
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	calls := func() int { mu.Lock(); defer mu.Unlock(); return len(errs) }
	testenv.Eventually(t, 10*time.Second, func() bool { return calls() >= 1 }, "the handler was called")
	time.Sleep(3 * time.Second) // a parked informer makes no request, so no error
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, errs, 1, "%v", errs)
	assert.True(t, apierrors.IsForbidden(errs[0]), "%v", errs[0])
	assert.Contains(t, names[0], "configmaps")
}

// TestForbiddenNamespaceLeavesTheOthersReadable: in a cache over several namespaces, a 403
// in one of them fails the reads of that namespace (and of all namespaces) only: the
// namespaces the user may read are served.
func TestForbiddenNamespaceLeavesTheOthersReadable(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, ns := range []string{ns1, ns2} {
		require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	}
	user, ucfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns1, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	c := startCache(t, ucfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}})

	var got corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: "cm"}, &got))
	var l corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns1)))
	assert.Len(t, l.Items, 1)

	err = c.Get(ctx, client.ObjectKey{Namespace: ns2, Name: "cm"}, &got)
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	err = c.List(ctx, &l)
	assert.True(t, apierrors.IsForbidden(err), "a list of every namespace needs ns2: %v", err)
}

// TestParkedResourcesShareTheAccessCheckRate: informers of many resources parked on a 403
// (a controller watching kinds it may not read) share one rate of access reviews, as one
// kindex factory's do, although the cache has a factory per resource: about 4 a second in
// all, not a review per resource every 1.5 s.
func TestParkedResourcesShareTheAccessCheckRate(t *testing.T) {
	ctx := t.Context()
	_, ucfg, err := cp.NewUser()
	require.NoError(t, err)
	rc := &requestCounter{}
	c := startCache(t, rc.wrap(ucfg), cache.Options{})
	lists := []client.ObjectList{
		&corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{}, &corev1.PodList{},
		&corev1.ServiceAccountList{}, &corev1.PersistentVolumeClaimList{}, &corev1.PodTemplateList{},
		&corev1.ReplicationControllerList{}, &corev1.LimitRangeList{}, &corev1.ResourceQuotaList{},
		&corev1.EndpointsList{}, &corev1.EventList{}, &corev1.NodeList{}, &corev1.NamespaceList{},
		&corev1.PersistentVolumeList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{},
		&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}, &storagev1.StorageClassList{},
	}
	for _, l := range lists {
		err := c.List(ctx, l)
		require.True(t, apierrors.IsForbidden(err), "%T: %v", l, err)
	}
	const reviews = "/selfsubjectaccessreviews"
	before := rc.count(reviews)
	window := 6 * time.Second
	time.Sleep(window) // the rate is what is measured: reviews sent during the window
	sent := rc.count(reviews) - before
	t.Logf("%d access reviews in %v for %d parked resources", sent, window, len(lists))
	// 20 parked share 4 a second: each waits at least 5 s, so at most 2 each in the window
	// (a rate per resource would be 4 each).
	assert.LessOrEqual(t, sent, 2*len(lists))
	assert.Positive(t, sent, "they still re-check")
}
