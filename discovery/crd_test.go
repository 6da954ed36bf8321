package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

// bound is the latency bound for following a CRD change.
const bound = 2 * time.Second

// TestCRDLifecycle follows one CRD through creation, a change of served versions and
// deletion, with a started client: each step is visible within 2 seconds, as an event and to
// Resolve, and costs a per-group re-discovery (never a full one).
func TestCRDLifecycle(t *testing.T) {
	ctx := context.Background()
	c, rec := startClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Hour})
	ev := subscribe(t, c)
	spec := uniqueCRD(t, "Gizmo")
	crds := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	rec.reset()

	// Create: Added within 2s of the create call (which includes the time to become
	// Established), and resolvable by every name at no cost.
	t0 := time.Now()
	_, err := crds.Create(ctx, spec.build(), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), spec.plural+"."+spec.group, metav1.DeleteOptions{}) })
	added := ev.waitFor(t, spec.gr(), 10*time.Second, "Added", func(e timedEvent) bool { return e.Type == discovery.Added })
	latency := added.At.Sub(t0)
	t.Logf("CRD create -> Added event: %v", latency.Round(time.Millisecond))
	assert.Less(t, latency, bound)
	assert.Equal(t, "v1", added.Resource.GVR.Version)

	discoveryAfterAdd := rec.discovery()
	t.Logf("requests to follow the creation: %v", discoveryAfterAdd)
	assert.Contains(t, discoveryAfterAdd, "GET /apis/"+spec.group+"/v1", "the group is re-discovered")
	assert.NotContains(t, discoveryAfterAdd, "GET /apis", "no full re-discovery")
	assert.NotContains(t, discoveryAfterAdd, "GET /api")

	rec.reset()
	for _, in := range []string{spec.plural, strings.ToLower(spec.kind), spec.kind, spec.shortNames[0], spec.categories[0],
		spec.plural + "." + spec.group, spec.kind + ".v1." + spec.group, spec.group + "/v1/" + spec.plural} {
		r, err := c.Resolve(ctx, in)
		require.NoError(t, err, in)
		assert.Equal(t, schema.GroupVersionResource{Group: spec.group, Version: "v1", Resource: spec.plural}, r.GVR, in)
		assert.Equal(t, spec.kind, r.GVK.Kind)
		assert.Equal(t, spec.shortNames, r.ShortNames)
		assert.Equal(t, spec.categories, r.Categories)
		assert.True(t, r.Namespaced)
		assert.True(t, r.Watchable())
	}
	members, err := c.ResolveCategory(ctx, spec.categories[0])
	require.NoError(t, err)
	require.Len(t, members, 1)
	assert.Equal(t, spec.plural, members[0].GVR.Resource)
	_, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Group: spec.group, Kind: spec.kind})
	require.NoError(t, err)
	list, err := c.Resources(ctx, discovery.Filter{IncludeGroups: []string{spec.group}})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Empty(t, rec.all(), "resolving a followed CRD sends nothing")

	// Change the served versions: v2 served and stored, v1 still served. The preferred version
	// moves to v2: a Changed event, not Removed plus Added.
	t0 = time.Now()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(ctx, spec.plural+"."+spec.group, metav1.GetOptions{})
		if err != nil {
			return err
		}
		crd.Spec.Versions[0].Storage = false
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Storage = "v2", true
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
		_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
		return err
	}))
	changed := ev.waitFor(t, spec.gr(), 10*time.Second, "Changed to v2", func(e timedEvent) bool {
		return e.Type == discovery.Changed && e.Resource.GVR.Version == "v2"
	})
	latency = changed.At.Sub(t0)
	t.Logf("CRD versions update -> Changed event: %v", latency.Round(time.Millisecond))
	assert.Less(t, latency, bound)
	require.NotNil(t, changed.Old)
	assert.Equal(t, "v1", changed.Old.GVR.Version)
	r, err := c.Resolve(ctx, spec.plural)
	require.NoError(t, err)
	assert.Equal(t, "v2", r.GVR.Version)
	assert.Equal(t, "v2", r.GVK.Version)
	r, err = c.Resolve(ctx, spec.plural+".v1."+spec.group)
	require.NoError(t, err)
	assert.Equal(t, "v1", r.GVR.Version, "an explicit version is kept")

	// Delete: Removed within 2s of the delete call, and the name stops resolving.
	t0 = time.Now()
	require.NoError(t, crds.Delete(ctx, spec.plural+"."+spec.group, metav1.DeleteOptions{}))
	removed := ev.waitFor(t, spec.gr(), 10*time.Second, "Removed", func(e timedEvent) bool { return e.Type == discovery.Removed })
	latency = removed.At.Sub(t0)
	t.Logf("CRD delete -> Removed event: %v", latency.Round(time.Millisecond))
	assert.Less(t, latency, bound)
	assert.NotContains(t, rec.discovery(), "GET /apis", "following a CRD never needs a full re-discovery")
	_, err = c.Resolve(ctx, spec.plural)
	assert.True(t, meta.IsNoMatchError(err), "%v", err)

	var types []string
	for _, e := range ev.forGR(spec.gr()) {
		types = append(types, e.Type.String())
	}
	t.Logf("events: %v", types)
	assert.Equal(t, "Added", types[0])
	assert.Equal(t, "Removed", types[len(types)-1])
	assert.Equal(t, 1, count(types, "Added"))
	assert.Equal(t, 1, count(types, "Removed"))
}

func count(l []string, s string) int {
	n := 0
	for _, x := range l {
		if x == s {
			n++
		}
	}
	return n
}

// TestNewCRDClearsNegativeCache: a miss is remembered (TTL one hour here), but the Added
// event of a matching CRD clears it at once.
func TestNewCRDClearsNegativeCache(t *testing.T) {
	ctx := context.Background()
	c, rec := startClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Hour})
	spec := uniqueCRD(t, "Doohickey")
	rec.reset()
	_, err := c.Resolve(ctx, spec.plural)
	require.True(t, meta.IsNoMatchError(err), "%v", err)
	_, err = c.Resolve(ctx, spec.plural)
	require.True(t, meta.IsNoMatchError(err))
	assert.Equal(t, []string{"GET /api", "GET /apis"}, rec.discovery(), "one re-discovery for the two misses")

	t0 := time.Now()
	cp.InstallCRD(t, spec.build())
	testenv.Eventually(t, bound, func() bool {
		_, err = c.Resolve(ctx, spec.plural)
		return err == nil
	}, "the CRD does not resolve: %v", errOf{&err})
	t.Logf("resolvable %v after the create call", time.Since(t0).Round(time.Millisecond))
}

// TestAmbiguityAndPriority: CRDs that clash with each other are ambiguous (the error lists
// them), CRDs that clash with built-ins never shadow them, and a group always selects.
func TestAmbiguityAndPriority(t *testing.T) {
	ctx := context.Background()
	sfx := suffix(6)
	a := crdSpec{group: "a" + sfx + ".kindex.io", kind: "Sprocket" + sfx, plural: "sprockets" + sfx,
		shortNames: []string{"spr" + sfx}, categories: []string{"cat" + sfx}}
	b := a
	b.group = "b" + sfx + ".kindex.io"
	// A CRD named like core pods in every way, and one whose plural is a built-in short name.
	pods := crdSpec{group: "p" + sfx + ".kindex.io", kind: "Pod", plural: "pods", shortNames: []string{"po"}, categories: []string{"only" + sfx}}
	svc := crdSpec{group: "s" + sfx + ".kindex.io", kind: "Svc", plural: "svc"}
	for _, s := range []crdSpec{a, b, pods, svc} {
		cp.InstallCRD(t, s.build())
	}
	c, _ := newClient(t, cp.AdminConfig(), discovery.Options{})
	require.NoError(t, c.Refresh(ctx))

	for _, in := range []string{a.plural, a.shortNames[0], a.kind, strings.ToLower(a.kind), a.categories[0]} {
		_, err := c.Resolve(ctx, in)
		var amb *discovery.AmbiguousError
		require.ErrorAs(t, err, &amb, in)
		assert.True(t, meta.IsAmbiguousError(err))
		var groups []string
		for _, cand := range amb.Candidates {
			groups = append(groups, cand.GVR.Group)
		}
		slices.Sort(groups)
		assert.Equal(t, []string{a.group, b.group}, groups, in)
		assert.Contains(t, err.Error(), a.plural+"."+a.group)
		assert.Contains(t, err.Error(), a.plural+"."+b.group)
	}
	for _, s := range []crdSpec{a, b} {
		for _, in := range []string{s.plural + "." + s.group, s.shortNames[0] + "." + s.group, s.kind + ".v1." + s.group} {
			r, err := c.Resolve(ctx, in)
			require.NoError(t, err, in)
			assert.Equal(t, s.group, r.GVR.Group)
		}
	}
	members, err := c.ResolveCategory(ctx, a.categories[0])
	require.NoError(t, err)
	assert.Len(t, members, 2)

	// Built-ins win for every name; the group selects the CRD.
	for _, in := range []string{"pods", "pod", "po", "Pod"} {
		r, err := c.Resolve(ctx, in)
		require.NoError(t, err, in)
		assert.Equal(t, "", r.GVR.Group, in)
	}
	r, err := c.Resolve(ctx, "svc")
	require.NoError(t, err)
	assert.Equal(t, schema.GroupVersionResource{Version: "v1", Resource: "services"}, r.GVR, "a CRD plural does not shadow a built-in short name")
	for _, in := range []string{"pods." + pods.group, "po." + pods.group, "Pod.v1." + pods.group, pods.group + "/v1/pods", pods.categories[0]} {
		r, err := c.Resolve(ctx, in)
		require.NoError(t, err, in)
		assert.Equal(t, pods.group, r.GVR.Group, in)
	}
	r, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Group: pods.group, Kind: "Pod"})
	require.NoError(t, err)
	assert.Equal(t, pods.group, r.GVR.Group)
	r, err = c.ResolveGVR(ctx, schema.GroupVersionResource{Group: svc.group, Resource: "svc"})
	require.NoError(t, err)
	assert.Equal(t, svc.group, r.GVR.Group)
}

// TestClusterScopedCRD: the scope comes from discovery.
func TestClusterScopedCRD(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spec := uniqueCRD(t, "Realm")
	crd := spec.build()
	crd.Spec.Scope = apiextv1.ClusterScoped
	cp.InstallCRD(t, crd)
	c, _ := newClient(t, cp.AdminConfig(), discovery.Options{})
	r, err := c.Resolve(ctx, spec.kind)
	require.NoError(t, err)
	assert.False(t, r.Namespaced)
}

// RecheckGVR corrects a cache that missed a deletion (a client that is not started learns of
// none): it asks the group's own endpoints, publishes the removal, and answers a miss, with
// the requests of one per-group round; a resource still served stays.
func TestRecheckCorrectsAMissedDeletion(t *testing.T) {
	ctx := context.Background()
	gone, kept := uniqueCRD(t, "Gizmo"), uniqueCRD(t, "Gadget")
	kept.group = gone.group
	crd := cp.InstallCRD(t, gone.build())
	cp.InstallCRD(t, kept.build())
	c, rec := newClient(t, cp.AdminConfig(), discovery.Options{})
	gvr := gone.gr().WithVersion("v1")
	_, err := c.ResolveGVR(ctx, gvr)
	require.NoError(t, err)
	ev := subscribe(t, c)

	cp.DeleteCRD(t, crd.Name)
	_, err = c.ResolveGVR(ctx, gvr)
	require.NoError(t, err, "the cache does not know yet")
	rec.reset()
	var r discovery.Resource
	testenv.Eventually(t, bound, func() bool { // the server's own documents may lag by a moment
		r, err = c.RecheckGVR(ctx, gvr)
		return meta.IsNoMatchError(err)
	}, "recheck after the deletion: %v %v", r.GVR, errOf{&err})
	reqs := rec.discovery()
	require.NotEmpty(t, reqs)
	for _, p := range reqs {
		assert.Contains(t, p, "/apis/"+gone.group, "only the group's own endpoints: %v", reqs)
	}
	ev.waitFor(t, gone.gr(), bound, "Removed", func(e timedEvent) bool { return e.Type == discovery.Removed })
	_, err = c.ResolveGVR(ctx, gvr)
	assert.True(t, meta.IsNoMatchError(err), "the cache is corrected: %v", err)

	r, err = c.RecheckGVR(ctx, kept.gr().WithVersion("v1"))
	require.NoError(t, err)
	assert.Equal(t, kept.kind, r.GVK.Kind)
	assert.Empty(t, ev.forGR(kept.gr()), "nothing changed for the resource still served")
}

// A client that follows nothing (never started) finds a CRD created after its first
// discovery by re-discovering on the miss: client-go's memory cache answers such a miss
// from its stale cache until invalidated. Concurrent callers of one miss share the
// re-discovery, and each gets a result of its own: the writes below race (and the race
// detector fails the test) if two callers were handed the same slices.
func TestMissReDiscoversAndEachCallerGetsItsOwnResult(t *testing.T) {
	ctx := context.Background()
	c, rec := newClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Millisecond})
	_, err := c.Resolve(ctx, "pods")
	require.NoError(t, err)
	spec := uniqueCRD(t, "Sprocket")
	cp.InstallCRD(t, spec.build())
	rec.reset()

	const callers = 4
	var errs [callers]error
	testenv.EventuallyWith(t, 10*time.Second, func() bool {
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				r, err := c.Resolve(ctx, spec.plural)
				if errs[i] = err; err != nil {
					return
				}
				mine := fmt.Sprint("caller-", i)
				r.Verbs[0], r.ShortNames[0], r.Categories[0] = mine, mine, mine
				if r.Verbs[0] != mine || r.ShortNames[0] != mine || r.Categories[0] != mine {
					errs[i] = fmt.Errorf("caller %d's result changed under it: %v", i, r)
				}
			})
		}
		wg.Wait()
		return errors.Join(errs[:]...) == nil
	}, func() string { return fmt.Sprint("resolved by every caller: ", errors.Join(errs[:]...)) })
	assert.Contains(t, rec.discovery(), "GET /apis", "found by a re-discovery")

	rec.reset()
	r, err := c.Resolve(ctx, spec.shortNames[0])
	require.NoError(t, err)
	assert.Equal(t, spec.group, r.GVR.Group)
	assert.Contains(t, r.Verbs, "watch", "the cached resource was not changed by the callers' writes")
	assert.Equal(t, spec.shortNames, r.ShortNames)
	assert.Equal(t, spec.categories, r.Categories)
	assert.Empty(t, rec.discovery(), "now a hit: no request")
}
