package informer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The access re-checks of an informer parked on a 403 ask for the object its field selector
// names (metadata.name=x), which is what the apiserver authorizes its list and watch for,
// and for the whole resource otherwise.
func TestAccessRecheckAsksForTheSelectedName(t *testing.T) {
	for sel, want := range map[string]string{
		"metadata.name=a":                        "a",
		"metadata.name==a,metadata.namespace=ns": "a",
		"metadata.name!=a":                       "",
		"metadata.namespace=ns":                  "",
		"":                                       "",
	} {
		t.Run(sel, func(t *testing.T) {
			e := newEnv(t, Options[obj]{})
			e.mode.server(widgets.GVR).setErrors(forbidden("widgets"), nil)
			var opts []Option
			if sel != "" {
				opts = append(opts, WithFieldSelector(sel))
			}
			inf, err := e.f.Informer(context.Background(), "widgets", opts...)
			require.NoError(t, err)
			defer inf.Release()
			eventually(t, func() bool { return inf.Status().Phase == PhaseParked && e.access.lastName.Load() != nil },
				"parked and re-checked: %v", inf.Status())
			assert.Equal(t, want, *e.access.lastName.Load())
		})
	}
}

// A client that may not create SelfSubjectAccessReviews (the review itself refused) is not
// parked for good on a 403: the request itself is tried again on the park's backoff, so a
// grant takes effect; the refusal is logged once, and so is the park, however many tries.
func TestForbiddenParkWithoutAccessReviewsTriesTheRequest(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.setErrors(forbidden("widgets"), forbidden("widgets"))
	refused := forbidden("selfsubjectaccessreviews")
	e.access.err.Store(&refused)
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonForbidden, apierrors.IsForbidden)

	lists := srv.lists.Load()
	eventually(t, func() bool { return srv.lists.Load() >= lists+2 }, "the request is tried again")
	assert.NotEqual(t, PhaseSynced, inf.Status().Phase)

	srv.setErrors(nil, nil) // granted
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
	assert.Equal(t, 1, e.logs.count("Informer parked"), "%s", e.logs)
	assert.Equal(t, 1, e.logs.count("Access re-check refused"), "%s", e.logs)
	assert.Zero(t, e.logs.count("Informer resuming"), "%s", e.logs)
}

// A review that fails for another reason (the server unreachable) is no grant: the park
// holds, and the request is not tried.
func TestForbiddenParkWithFailingAccessReviewsHolds(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.setErrors(forbidden("widgets"), forbidden("widgets"))
	failing := error(apierrors.NewServiceUnavailable("down"))
	e.access.err.Store(&failing)
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonForbidden, apierrors.IsForbidden)
	lists := srv.lists.Load()
	checks := e.access.checks.Load()
	eventually(t, func() bool { return e.access.checks.Load() >= checks+3 }, "re-checked")
	assert.Equal(t, lists, srv.lists.Load(), "no request while the review fails")
}
