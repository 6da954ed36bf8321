package metadataonly_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
)

// TestWatchAllWithBrokenAggregatedAPI: with an APIService whose Service does not exist (an
// aggregated API that is down), watch-everything sets start and sync every other resource,
// a set whose filter selects nothing served yet starts empty rather than failing on the
// unrelated group, and nothing is asked of the broken group; a CRD installed later joins
// that set, and deleting the APIService leaves every set synced.
func TestWatchAllWithBrokenAggregatedAPI(t *testing.T) {
	ctx := context.Background()
	group := testenv.UniqueName(t) + ".kindex.test"
	ns := cp.Namespace(t)
	port := int32(443)
	agg, err := aggregatorclient.NewForConfig(cp.AdminConfig())
	require.NoError(t, err)
	svcs := agg.ApiregistrationV1().APIServices()
	_, err = svcs.Create(ctx, &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1." + group},
		Spec: apiregv1.APIServiceSpec{Group: group, Version: "v1beta1",
			Service:               &apiregv1.ServiceReference{Namespace: ns, Name: "missing", Port: &port},
			InsecureSkipTLSVerify: true, GroupPriorityMinimum: 100, VersionPriority: 10},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	unregister := func() {
		err := svcs.Delete(context.Background(), "v1beta1."+group, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete APIService: %v", err)
		}
		testenv.Eventually(t, 30*time.Second, func() bool { return !slices.Contains(cp.FailedGroups(t), group) },
			"discovery still reports %s as failed", group)
	}
	t.Cleanup(unregister)
	testenv.Eventually(t, 30*time.Second, func() bool { return slices.Contains(cp.FailedGroups(t), group) },
		"discovery does not report %s as failed", group)

	fx := start(t, nil, metadataonly.Options{})
	all, err := fx.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	crdGroup := testenv.UniqueName(t) + ".kindex.test"
	notYet, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{crdGroup}})
	require.NoError(t, err, "a broken group elsewhere does not fail a set of a group not served yet")
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sets := []*informer.WatchAll[metadataonly.Object]{all, notYet}
	for _, w := range sets {
		require.NoError(t, w.WaitForSync(wctx))
	}
	require.NoError(t, fx.f.WaitForSync(wctx))
	_, ok := all.Informer(schema.GroupResource{Resource: "pods"})
	assert.True(t, ok, "pods is a member")
	assert.Greater(t, len(all.Informers()), 20, "every healthy resource is a member")
	assert.Empty(t, notYet.Informers())
	assert.Contains(t, fx.log.String(), group, "the log names the broken group")

	cp.InstallCRD(t, testenv.NewCRD(crdGroup, "Widget", "widgets"))
	widgets := schema.GroupResource{Group: crdGroup, Resource: "widgets"}
	for _, w := range sets {
		testenv.Eventually(t, 30*time.Second, func() bool { _, ok := w.Informer(widgets); return ok },
			"%s did not join", widgets)
		require.NoError(t, w.WaitForSync(wctx))
	}

	assert.Empty(t, fx.rec.Requests("/apis/"+group), "nothing is asked of the broken group")
	unregister()
	require.NoError(t, all.WaitForSync(wctx))
	for _, inf := range all.Informers() {
		assert.NotEqual(t, group, inf.Resource().GVR.Group)
	}
}
