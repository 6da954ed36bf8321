package discovery_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

// TestResolveBuiltins resolves every input form of the issue against the real server.
func TestResolveBuiltins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := newClient(t, cp.AdminConfig(), discovery.Options{})
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	pods, deployments := gvr("", "v1", "pods"), gvr("apps", "v1", "deployments")
	for _, tt := range []struct {
		in   string
		want schema.GroupVersionResource
	}{
		{"po", pods}, {"pods", pods}, {"pod", pods}, {"Pod", pods}, {"PODS", pods}, {"v1/pods", pods},
		{"deployments.apps", deployments}, {"deploy.apps", deployments}, {"Deployment.v1.apps", deployments},
		{"deployments.v1.apps", deployments}, {"apps/v1/deployments", deployments}, {"deploy", deployments},
		{"Deployment", deployments}, {"apps/deployments", deployments},
		// Core wins over events.k8s.io for events, event, ev and Event; the group selects it.
		{"events", gvr("", "v1", "events")}, {"ev", gvr("", "v1", "events")}, {"Event", gvr("", "v1", "events")},
		{"events.events.k8s.io", gvr("events.k8s.io", "v1", "events")}, {"ev.events.k8s.io", gvr("events.k8s.io", "v1", "events")},
		// Preferred version unless one is given.
		{"hpa", gvr("autoscaling", "v2", "horizontalpodautoscalers")},
		{"hpa.v1.autoscaling", gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{"crd", gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions")},
		{"ns", gvr("", "v1", "namespaces")},
		{"apiservices", gvr("apiregistration.k8s.io", "v1", "apiservices")},
	} {
		t.Run(tt.in, func(t *testing.T) {
			r, err := c.Resolve(ctx, tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.GVR)
			assert.Equal(t, tt.want.GroupVersion(), r.GVK.GroupVersion())
		})
	}

	r, err := c.Resolve(ctx, "po")
	require.NoError(t, err)
	assert.Equal(t, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, r.GVK)
	assert.True(t, r.Namespaced)
	assert.Equal(t, "pod", r.Singular)
	assert.True(t, r.Watchable())
	assert.True(t, r.Supports("create", "delete", "patch"))
	assert.Contains(t, r.ShortNames, "po")
	assert.Contains(t, r.Categories, "all")
	ns, err := c.Resolve(ctx, "namespaces")
	require.NoError(t, err)
	assert.False(t, ns.Namespaced)

	for _, in := range []string{"pods/status", "deployments/scale", "nosuchthing", "deployments.v9.apps", "pods.nosuch.io", ""} {
		_, err := c.Resolve(ctx, in)
		assert.True(t, meta.IsNoMatchError(err), "%q: want no match, got %v", in, err)
	}
	_, err = c.Resolve(ctx, "all")
	var amb *discovery.AmbiguousError
	require.ErrorAs(t, err, &amb, "a category with several members is ambiguous")
	assert.True(t, meta.IsAmbiguousError(err))

	all, err := c.ResolveCategory(ctx, "all")
	require.NoError(t, err)
	var names []string
	for _, r := range all {
		names = append(names, r.GVR.GroupResource().String())
	}
	assert.Subset(t, names, []string{"pods", "services", "deployments.apps", "jobs.batch", "cronjobs.batch", "horizontalpodautoscalers.autoscaling"})
	assert.Equal(t, "pods", names[0], "core first")

	k, err := c.ResolveGVK(ctx, schema.GroupVersionKind{Group: "apps", Kind: "Deployment"})
	require.NoError(t, err)
	assert.Equal(t, deployments, k.GVR)
	k, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"})
	require.NoError(t, err)
	assert.Equal(t, "v1", k.GVR.Version)
	_, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Kind: "Deployment"})
	var nk *meta.NoKindMatchError
	assert.ErrorAs(t, err, &nk, "the core group has no Deployment")
	g, err := c.ResolveGVR(ctx, schema.GroupVersionResource{Group: "apps", Resource: "deployments"})
	require.NoError(t, err)
	assert.Equal(t, deployments, g.GVR)
	_, err = c.ResolveGVR(ctx, schema.GroupVersionResource{Resource: "deployments"})
	assert.True(t, meta.IsNoMatchError(err))

	list, err := c.Resources(ctx, discovery.Filter{})
	require.NoError(t, err)
	var got []string
	for _, r := range list {
		assert.True(t, r.Watchable(), r.GVR.String())
		got = append(got, r.GVR.GroupResource().String())
	}
	assert.Subset(t, got, []string{"pods", "configmaps", "deployments.apps", "customresourcedefinitions.apiextensions.k8s.io"})
	assert.NotContains(t, got, "bindings", "create-only resources cannot be watched")
	assert.NotContains(t, got, "pods/status")
	hpa := slices.IndexFunc(list, func(r discovery.Resource) bool { return r.GVR.Resource == "horizontalpodautoscalers" })
	require.GreaterOrEqual(t, hpa, 0)
	assert.Equal(t, "v2", list[hpa].GVR.Version, "preferred version")

	apps, err := c.Resources(ctx, discovery.Filter{IncludeGroups: []string{"apps"}, ExcludeResources: []string{"replicasets.apps"}})
	require.NoError(t, err)
	for _, r := range apps {
		assert.Equal(t, "apps", r.GVR.Group)
		assert.NotEqual(t, "replicasets", r.GVR.Resource)
	}
	assert.NotEmpty(t, apps)
}

// TestRequestCounts proves the caching contract by counting requests: the first resolution
// uses aggregated discovery (exactly /api and /apis), cached resolutions cost nothing, 100
// concurrent misses of one name cost one re-discovery, and a repeated typo costs nothing until
// its negative-cache entry expires.
func TestRequestCounts(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Now())
	c, rec := newClient(t, cp.AdminConfig(), discovery.Options{Clock: clk, NegativeCacheTTL: 5 * time.Second})

	_, err := c.Resolve(ctx, "pods")
	require.NoError(t, err)
	require.Equal(t, []string{"GET /api", "GET /apis"}, rec.discovery(), "first resolution")
	require.Len(t, rec.all(), 2, "and nothing else")
	for _, r := range rec.all() {
		assert.Contains(t, r.Accept, "as=APIGroupDiscoveryList", "client-go asks for aggregated discovery")
		assert.Contains(t, r.ContentType, "as=APIGroupDiscoveryList", "the server answers with aggregated discovery")
		assert.Equal(t, 200, r.Status)
	}

	rec.reset()
	inputs := []string{"po", "deploy.apps", "Deployment.v1.apps", "apps/v1/deployments", "v1/pods", "svc", "hpa", "crd"}
	for i := range 1000 {
		_, err := c.Resolve(ctx, inputs[i%len(inputs)])
		require.NoError(t, err)
	}
	_, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	require.NoError(t, err)
	_, err = c.Resources(ctx, discovery.Filter{})
	require.NoError(t, err)
	assert.Empty(t, rec.all(), "cached resolutions send no request")

	// 100 concurrent misses of the same unknown name: one re-discovery.
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.Resolve(ctx, "nosuchkind-typo") })
	}
	wg.Wait()
	for _, err := range errs {
		require.True(t, meta.IsNoMatchError(err), "%v", err)
	}
	assert.Equal(t, []string{"GET /api", "GET /apis"}, rec.discovery(), "100 concurrent misses")

	// The typo again, many times, within the TTL: nothing.
	rec.reset()
	for range 100 {
		_, err := c.Resolve(ctx, "nosuchkind-typo")
		require.True(t, meta.IsNoMatchError(err))
	}
	assert.Empty(t, rec.all(), "a typo within NegativeCacheTTL")

	// After the TTL: one more re-discovery.
	clk.Step(5*time.Second + time.Millisecond)
	_, err = c.Resolve(ctx, "nosuchkind-typo")
	require.True(t, meta.IsNoMatchError(err))
	assert.Equal(t, []string{"GET /api", "GET /apis"}, rec.discovery(), "the typo after NegativeCacheTTL")

	// Other miss kinds are negatively cached too.
	rec.reset()
	for range 3 {
		_, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Group: "apps", Kind: "NoSuchKind"})
		require.True(t, meta.IsNoMatchError(err))
		_, err = c.ResolveCategory(ctx, "nosuchcategory")
		require.True(t, meta.IsNoMatchError(err))
	}
	assert.Len(t, rec.discovery(), 4, "one re-discovery for each of the two new misses")
}

// waitingContext counts the calls to Done: a Refresh caller asks for it once, as it starts
// waiting for the round it started or joined.
type waitingContext struct {
	context.Context
	n *atomic.Int32
}

func (c waitingContext) Done() <-chan struct{} {
	c.n.Add(1)
	return c.Context.Done()
}

// TestRefreshIsCollapsed: concurrent Refresh calls share the re-discovery in flight.
func TestRefreshIsCollapsed(t *testing.T) {
	ctx := context.Background()
	c, rec := newClient(t, cp.AdminConfig(), discovery.Options{})
	require.NoError(t, c.Refresh(ctx))
	rec.reset()

	gate := make(chan struct{})
	rec.mu.Lock()
	rec.gate = gate
	rec.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 50)
	var waiting atomic.Int32
	wctx := waitingContext{Context: ctx, n: &waiting}
	for i := range errs {
		wg.Go(func() { errs[i] = c.Refresh(wctx) })
	}
	// Every caller has joined the held round: each waits for it and for its context together.
	testenv.Eventually(t, 30*time.Second, func() bool { return waiting.Load() == int32(len(errs)) },
		"callers waiting: %d", waiting.Load())
	close(gate)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"GET /api", "GET /apis"}, rec.discovery(), "50 concurrent Refresh calls")

	// A caller whose context ends stops waiting; the round itself is not cancelled.
	rec.mu.Lock()
	rec.gate = make(chan struct{})
	held := rec.gate
	rec.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err := c.Refresh(cctx)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	close(held)
	require.NoError(t, c.Refresh(ctx))
}
