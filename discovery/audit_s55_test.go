package discovery_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

// s55Established reports whether crd has the Established condition.
func s55Established(crd *apiextv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextv1.Established {
			return c.Status == apiextv1.ConditionTrue
		}
	}
	return false
}

// TestS55CRDWithNoServedVersion: an Established CRD whose versions are all served: false is
// in no discovery document. A started client used to expect it there and re-discover its
// group with backoff for 30 seconds, then every RefreshInterval, forever. It must send
// nothing for it, resolve its names as a plain miss (negatively cached as any other), and
// find the resource as usual once a version is served.
func TestS55CRDWithNoServedVersion(t *testing.T) {
	ctx := context.Background()
	c, rec := startClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Hour})
	ev := subscribe(t, c)
	spec := uniqueCRD(t, "Unserved")
	crd := spec.build()
	crd.Spec.Versions[0].Served = false
	crds := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	name := spec.plural + "." + spec.group
	groupPath := "/apis/" + spec.group
	groupRequests := func() []string {
		var out []string
		for _, r := range rec.discovery() {
			if p := strings.TrimPrefix(r, "GET "); p == groupPath || strings.HasPrefix(p, groupPath+"/") {
				out = append(out, r)
			}
		}
		return out
	}
	rec.reset()

	_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	testenv.Eventually(t, 10*time.Second, func() bool {
		got, err := crds.Get(ctx, name, metav1.GetOptions{})
		return err == nil && s55Established(got)
	}, "CRD %s not Established", name)

	// Absence of requests can only be shown over a window: the retries it used to cause
	// start 50ms after the Established event and double, so there were five in this one.
	time.Sleep(bound)
	assert.Empty(t, groupRequests(), "a CRD that serves no version causes no re-discovery of its group")

	// Its names are a plain miss: one full re-discovery on the first miss, then negatively
	// cached.
	rec.reset()
	for _, in := range []string{spec.plural, spec.kind, spec.plural + "." + spec.group} {
		_, err = c.Resolve(ctx, in)
		assert.True(t, meta.IsNoMatchError(err), "%s: %v", in, err)
	}
	first := rec.discovery()
	assert.Equal(t, []string{"GET /api", "GET /apis"}, first[:min(2, len(first))], "the first miss re-discovers everything once")
	rec.reset()
	_, err = c.Resolve(ctx, spec.plural)
	assert.True(t, meta.IsNoMatchError(err), "%v", err)
	assert.Empty(t, rec.discovery(), "a repeated miss is negatively cached")
	assert.Empty(t, ev.forGR(spec.gr()), "no event for a resource that is not served")

	// Serve v1: the resource is followed as any new one, by a per-group round.
	rec.reset()
	t0 := time.Now()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got.Spec.Versions[0].Served = true
		_, err = crds.Update(ctx, got, metav1.UpdateOptions{})
		return err
	}))
	added := ev.waitFor(t, spec.gr(), 10*time.Second, "Added", func(e timedEvent) bool { return e.Type == discovery.Added })
	t.Logf("served -> Added event: %v", added.At.Sub(t0).Round(time.Millisecond))
	assert.Less(t, added.At.Sub(t0), bound)
	assert.Equal(t, "v1", added.Resource.GVR.Version)
	r, err := c.Resolve(ctx, spec.plural)
	require.NoError(t, err, "the negative cache is cleared by the Added event")
	assert.Equal(t, spec.kind, r.GVK.Kind)
	assert.True(t, slices.Contains(groupRequests(), "GET "+groupPath+"/v1"), "found by a per-group round: %v", rec.discovery())

	// Unserve it again: the resource is removed (the expectation is its absence) and then
	// nothing more is sent for it.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got.Spec.Versions[0].Served = false
		_, err = crds.Update(ctx, got, metav1.UpdateOptions{})
		return err
	}))
	ev.waitFor(t, spec.gr(), 10*time.Second, "Removed", func(e timedEvent) bool { return e.Type == discovery.Removed })
	rec.reset()
	time.Sleep(bound)
	assert.Empty(t, groupRequests(), "no re-discovery once the unserved resource is gone")
}

// TestS55CRDWithSomeVersionsServed: a CRD serving v2 but not v1 is found in v2 only, and
// its group settles (no retries once discovery shows it).
func TestS55CRDWithSomeVersionsServed(t *testing.T) {
	ctx := context.Background()
	c, rec := startClient(t, cp.AdminConfig(), discovery.Options{})
	ev := subscribe(t, c)
	spec := uniqueCRD(t, "Halfserved")
	spec.versions = []string{"v1", "v2"}
	crd := spec.build()
	crd.Spec.Versions[0].Served = false // v1 is the storage version, not served
	crds := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	rec.reset()
	_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	added := ev.waitFor(t, spec.gr(), 10*time.Second, "Added", func(e timedEvent) bool { return e.Type == discovery.Added })
	assert.Equal(t, "v2", added.Resource.GVR.Version)
	r, err := c.Resolve(ctx, spec.plural)
	require.NoError(t, err)
	assert.Equal(t, "v2", r.GVR.Version)
	_, err = c.Resolve(ctx, spec.plural+".v1."+spec.group)
	assert.True(t, meta.IsNoMatchError(err), "v1 is not served: %v", err)

	// Settled: over a window, at most the rounds that were in flight when it was found.
	rec.reset()
	time.Sleep(bound)
	var group []string
	for _, p := range rec.discovery() {
		if strings.Contains(p, "/apis/"+spec.group) {
			group = append(group, p)
		}
	}
	assert.Empty(t, group, "the group settles once v2 is listed")
}
