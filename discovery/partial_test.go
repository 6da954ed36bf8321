package discovery_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

func apiServices(t *testing.T) aggregatorclient.Interface {
	c, err := aggregatorclient.NewForConfig(cp.AdminConfig())
	require.NoError(t, err)
	return c
}

// brokenAPIService registers v1alpha1.broken.kindex.io backed by a Service that does not exist,
// waits until discovery reports the group as failed, and removes it when the test ends
// (waiting until discovery is whole again, so that later tests see a healthy server).
func brokenAPIService(t *testing.T) string {
	const group = "broken.kindex.io"
	ns := cp.Namespace(t)
	port := int32(443)
	svcs := apiServices(t).ApiregistrationV1().APIServices()
	_, err := svcs.Create(context.Background(), &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1." + group},
		Spec: apiregv1.APIServiceSpec{
			Group: group, Version: "v1alpha1",
			Service:               &apiregv1.ServiceReference{Namespace: ns, Name: "missing", Port: &port},
			InsecureSkipTLSVerify: true, GroupPriorityMinimum: 100, VersionPriority: 10,
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		err := svcs.Delete(context.Background(), "v1alpha1."+group, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete APIService: %v", err)
		}
		testenv.Eventually(t, 30*time.Second, func() bool { return !slices.Contains(cp.FailedGroups(t), group) },
			"discovery still reports %s as failed", group)
	})
	testenv.Eventually(t, 30*time.Second, func() bool { return slices.Contains(cp.FailedGroups(t), group) },
		"discovery does not report %s as failed", group)
	return group
}

// TestBrokenAggregatedAPI: with one aggregated API down from the start, the client starts,
// every other group resolves, the failure names the group, and the group's resources are
// unavailable rather than absent.
func TestBrokenAggregatedAPI(t *testing.T) {
	ctx := context.Background()
	group := brokenAPIService(t)
	c, _ := startClient(t, cp.AdminConfig(), discovery.Options{})

	list, err := c.Resources(ctx, discovery.Filter{})
	require.Error(t, err)
	assert.NotEmpty(t, list, "the known resources come with the error")
	assert.True(t, slices.ContainsFunc(list, func(r discovery.Resource) bool { return r.GVR.Resource == "pods" }))
	var pe *discovery.PartialDiscoveryError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.FailedGroups(), group)
	assert.Contains(t, err.Error(), group)
	assert.ErrorIs(t, err, discovery.ErrGroupUnavailable)
	var gu *discovery.GroupUnavailableError
	require.ErrorAs(t, err, &gu)
	assert.Equal(t, group, gu.Group)
	assert.Equal(t, []string{"v1alpha1"}, gu.Versions)
	var stale cgdiscovery.StaleGroupVersionError
	assert.True(t, errors.As(err, &stale), "the cause is client-go's stale group version: %v", gu.Err)

	for _, in := range []string{"pods", "deploy.apps", "crd"} {
		_, err := c.Resolve(ctx, in)
		assert.NoError(t, err, in)
	}
	// The group's name cut short, as kubectl's "deploy.app" ("foos.broken"): unavailable too.
	for _, in := range []string{"foos." + group, "foos.v1alpha1." + group, group + "/v1alpha1/foos", "foos.broken", "foos.broken.kindex"} {
		_, err := c.Resolve(ctx, in)
		assert.ErrorIs(t, err, discovery.ErrGroupUnavailable, in)
		assert.False(t, meta.IsNoMatchError(err), in)
		require.ErrorAs(t, err, &gu)
		assert.Equal(t, group, gu.Group)
	}
	_, err = c.Resolve(ctx, "nosuchthing")
	assert.True(t, meta.IsNoMatchError(err), "a bare unknown name is a miss: %v", err)

	// A new CRD still appears within the bound while the broken group stays broken.
	spec := uniqueCRD(t, "Gasket")
	t0 := time.Now()
	cp.InstallCRD(t, spec.build())
	testenv.Eventually(t, bound, func() bool {
		_, err := c.Resolve(ctx, spec.plural)
		return err == nil
	}, "CRD not resolvable next to a broken group")
	t.Logf("CRD resolvable %v after create, with a broken group", time.Since(t0).Round(time.Millisecond))
}

// TestGroupBreaksAndRecovers: a group that was available breaks (its APIService is pointed
// at a Service that does not exist) and recovers. Its resource is never reported Removed;
// while broken it resolves to ErrGroupUnavailable with its last known description. The log
// says when the group became unavailable and when it recovered, once each.
func TestGroupBreaksAndRecovers(t *testing.T) {
	ctx := context.Background()
	spec := uniqueCRD(t, "Valve")
	cp.InstallCRD(t, spec.build())
	ns := cp.Namespace(t)
	log := &testsupport.Lines{}
	c, _ := startClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Hour, Logger: log.Logger(0)})
	ev := subscribe(t, c)
	_, err := c.Resolve(ctx, spec.plural)
	require.NoError(t, err)

	svcs := apiServices(t).ApiregistrationV1().APIServices()
	name := "v1." + spec.group
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err := svcs.Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}, "the CRD's APIService %s was not registered", name)
	update := func(mutate func(*apiregv1.APIService)) {
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := svcs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			mutate(s)
			_, err = svcs.Update(ctx, s, metav1.UpdateOptions{})
			return err
		}))
	}
	restore := func(s *apiregv1.APIService) {
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[automanagedLabel] = "true"
		s.Spec.Service, s.Spec.InsecureSkipTLSVerify = nil, false
	}

	// Take the APIService over from the aggregator's auto-registration and break it.
	t0 := time.Now()
	port := int32(443)
	update(func(s *apiregv1.APIService) {
		delete(s.Labels, automanagedLabel)
		s.Spec.Service = &apiregv1.ServiceReference{Namespace: ns, Name: "missing", Port: &port}
		s.Spec.InsecureSkipTLSVerify = true
	})
	t.Cleanup(func() {
		update(restore)
		cp.DeleteCRD(t, spec.plural+"."+spec.group)
		testenv.Eventually(t, 30*time.Second, func() bool { return !slices.Contains(cp.FailedGroups(t), spec.group) },
			"discovery still reports %s as failed", spec.group)
	})
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err = c.Resolve(ctx, spec.plural)
		return errors.Is(err, discovery.ErrGroupUnavailable)
	}, "the broken group does not resolve to ErrGroupUnavailable: %v", errOf{&err})
	t.Logf("group unavailable %v after the APIService broke", time.Since(t0).Round(time.Millisecond))
	var gu *discovery.GroupUnavailableError
	require.ErrorAs(t, err, &gu)
	assert.Equal(t, spec.group, gu.Group)
	require.NotNil(t, gu.LastKnown)
	assert.Equal(t, spec.plural, gu.LastKnown.GVR.Resource)
	assert.False(t, meta.IsNoMatchError(err))
	assert.Len(t, log.Matching("API group unavailable", spec.group), 1, "the failure is logged once: %v", log.Matching())

	list, err := c.Resources(ctx, discovery.Filter{IncludeGroups: []string{spec.group}})
	require.ErrorIs(t, err, discovery.ErrGroupUnavailable)
	assert.Contains(t, err.Error(), spec.group)
	require.Len(t, list, 1, "the last known resource is still listed: it was never removed")
	_, err = c.Resolve(ctx, "pods")
	require.NoError(t, err)
	// A full re-discovery (aggregated: the group version is stale) keeps it unavailable too.
	require.NoError(t, c.Refresh(ctx))
	_, err = c.Resolve(ctx, spec.plural)
	require.ErrorIs(t, err, discovery.ErrGroupUnavailable)

	// Recover.
	t0 = time.Now()
	update(restore)
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err = c.Resolve(ctx, spec.plural)
		return err == nil
	}, "the group did not recover: %v", errOf{&err})
	t.Logf("group resolvable %v after the APIService was repaired", time.Since(t0).Round(time.Millisecond))
	assert.Len(t, log.Matching("API group unavailable", spec.group), 1, "%v", log.Matching())
	assert.Len(t, log.Matching("API group available again", spec.group), 1, "the recovery is logged once: %v", log.Matching())

	var types []string
	for _, e := range ev.forGR(spec.gr()) {
		types = append(types, e.Type.String())
	}
	assert.NotContains(t, types, "Removed", "a failed group's resources are never reported Removed")
	assert.NotContains(t, types, "Added", "nor re-Added when it recovers")
}
