package dynamicinformer_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// refuseReviews makes every SelfSubjectAccessReview of cfg's client answered 403, as for an
// identity a cluster does not let create them; every other request goes to the server.
func refuseReviews(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if !strings.HasSuffix(req.URL.Path, "/selfsubjectaccessreviews") {
				return rt.RoundTrip(req)
			}
			body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
				`"message":"selfsubjectaccessreviews.authorization.k8s.io is forbidden"}`
			return &http.Response{StatusCode: http.StatusForbidden, Request: req,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// An identity that may not create SelfSubjectAccessReviews, parked on a 403, is not parked
// for good: the list is tried again on the park's backoff, so a grant takes effect, with
// one log line for the refused reviews and one for the park.
func TestAuditS53GrantTakesEffectWithoutAccessReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "mine")
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	refuseReviews(cfg)
	fx := start(t, cfg, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	require.Equal(t, informer.ReasonForbidden, inf.Status().Reason)
	testenv.Eventually(t, 20*time.Second, func() bool { return fx.log.Count("Access re-check refused") == 1 },
		"the refused review logged: %s", fx.log)

	cp.Grant(t, user, ns, rule("configmaps", "list", "watch"))
	sctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	require.NoError(t, inf.WaitForSync(sctx), "the grant takes effect: %v", inf.Status())
	assert.Equal(t, []string{"mine"}, names(must(inf.List(nil))))
	assert.Equal(t, 1, fx.log.Count("Access re-check refused"), "%s", fx.log)
	assert.Equal(t, 1, fx.log.Count("Informer parked"), "%s", fx.log)
}
