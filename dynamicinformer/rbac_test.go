package dynamicinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

func rule(resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: verbs}
}

// Without permission an informer parks (Forbidden) instead of retrying forever; it never
// holds back the others; a grant resumes it without a restart.
func TestForbiddenThenGranted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rule("secrets", "list", "watch"))
	fx := start(t, cfg, dynamicinformer.Options{Namespace: ns})

	secrets, err := fx.f.Informer(ctx, "secrets")
	require.NoError(t, err)
	defer secrets.Release()
	cms, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer cms.Release()

	waitSync(t, secrets) // not held back by the forbidden one
	testenv.Eventually(t, 10*time.Second, func() bool { return cms.Status().Phase == informer.PhaseParked },
		"parked: %v", cms.Status())
	st := cms.Status()
	assert.Equal(t, informer.ReasonForbidden, st.Reason)
	assert.True(t, apierrors.IsForbidden(st.LastError), "%v", st.LastError)

	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	err = fx.f.WaitForSync(wctx)
	assert.Less(t, time.Since(start), 3*time.Second, "a deadline bounds the wait")
	var se *informer.SyncError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, map[string]informer.Reason{"configmaps": informer.ReasonForbidden}, se.Reasons())
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	granted := time.Now()
	cp.Grant(t, user, ns, rule("configmaps", "list", "watch"))
	waitSync(t, cms)
	t.Logf("resume latency after grant: %v", time.Since(granted).Round(time.Millisecond))
	assert.Equal(t, []string{"cm"}, names(must(cms.List(nil))))
	assert.Equal(t, 1, fx.log.Count("Informer parked", "configmaps"), "%s", fx.log)
	assert.Zero(t, fx.log.Count("Failed to watch"))
}

// With list but not watch, the informer lists once, keeps that snapshot and parks as
// WatchForbidden instead of re-listing every 30 seconds.
func TestListOnlyGrantParksWithoutRelisting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rule("configmaps", "list"))
	fx := start(t, cfg, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	st := inf.Status()
	assert.Equal(t, informer.ReasonWatchForbidden, st.Reason)
	assert.Equal(t, 1, st.Objects, "the listed snapshot is kept")
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	lists, watches := fx.rec.Count(path)
	assert.Equal(t, 1, lists)
	// The parked informer keeps re-checking with access reviews; across three of them it
	// neither lists nor watches.
	reviews := len(fx.rec.Requests("selfsubjectaccessreviews"))
	testenv.Eventually(t, 30*time.Second, func() bool { return len(fx.rec.Requests("selfsubjectaccessreviews")) >= reviews+3 },
		"re-checked with access reviews")
	l2, w2 := fx.rec.Count(path)
	assert.Equal(t, lists, l2, "no re-list")
	assert.Equal(t, watches, w2, "no re-watch")
	assert.Equal(t, 1, fx.log.Count("Informer parked", "WatchForbidden"), "%s", fx.log)

	cp.Grant(t, user, ns, rule("configmaps", "watch"))
	waitSync(t, inf)
}

// After list and watch are both revoked from a synced informer, its next watch is refused
// and the informer parks as Forbidden in every storage mode (the reason does not depend on
// how the mode lists), keeping what it held; a new grant resumes it.
func TestBothRevokedParksForbiddenInEveryMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, m := range []struct {
		name string
		new  func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error)
	}{
		{"unstructured", dynamicinformer.NewFactory},
		{"compact", func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
		}},
		{"client-go", dynamicinformer.NewClientGoFactory},
	} {
		t.Run(m.name, func(t *testing.T) {
			user, cfg, err := cp.NewUser()
			require.NoError(t, err)
			revoke := cp.Grant(t, user, ns, rule("configmaps", "list", "watch"))
			f, rec, _ := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Namespace: ns}, m.new)
			inf, err := f.Informer(ctx, "configmaps")
			require.NoError(t, err)
			defer inf.Release()
			waitSync(t, inf)

			revoke()
			// RBAC does not end a watch that is open: cut it, as a dropped connection would,
			// again until the revocation has reached the apiserver's authorizer.
			testenv.Eventually(t, 30*time.Second, func() bool {
				rec.Cut("/configmaps")
				return inf.Status().Phase == informer.PhaseParked
			}, "parked: %v", inf.Status())
			st := inf.Status()
			assert.Equal(t, informer.ReasonForbidden, st.Reason, "%v", st)
			assert.True(t, apierrors.IsForbidden(st.LastError), "%v", st.LastError)
			assert.Equal(t, 1, st.Objects, "what was listed is kept")

			cp.Grant(t, user, ns, rule("configmaps", "list", "watch"))
			waitSync(t, inf)
		})
	}
}
