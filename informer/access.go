package informer

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// accessChecker answers whether the client may perform verbs on a resource, or on the one
// object name names ("" for every object). The default asks the server with
// SelfSubjectAccessReviews, which every authenticated user may create.
type accessChecker interface {
	Allowed(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, verbs ...string) (bool, error)
}

// newAccessChecker returns the SelfSubjectAccessReview checker for cfg.
func newAccessChecker(cfg *rest.Config) (accessChecker, error) {
	c, err := authzclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &ssarChecker{client: c.SelfSubjectAccessReviews()}, nil
}

type ssarChecker struct {
	client authzclient.SelfSubjectAccessReviewInterface
}

func (c *ssarChecker) Allowed(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, verbs ...string) (bool, error) {
	for _, verb := range verbs {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace,
				Verb:      verb,
				Group:     gvr.Group,
				Version:   gvr.Version,
				Resource:  gvr.Resource,
				Name:      name,
			},
		}}
		out, err := c.client.Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		if !out.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}

// AccessChecks is a rate of access re-checks shared by the informers parked on a 403 of
// every factory given it (Options.AccessChecks): with n of them parked, each waits at least
// n/perSecond between its re-checks. Safe for concurrent use. The zero AccessChecks has
// the default rate, 4 a second, as NewAccessChecks(0).
type AccessChecks struct {
	perSecond float64
	parked    atomic.Int64
}

// NewAccessChecks returns a rate of perSecond access re-checks a second (4 if perSecond is
// not a positive number: zero, negative or NaN).
func NewAccessChecks(perSecond float64) *AccessChecks {
	return &AccessChecks{perSecond: perSecond} // floor reads a rate that is not positive as the default
}

// defaultAccessChecksPerSecond is the rate of NewAccessChecks(0) and of the zero AccessChecks.
const defaultAccessChecksPerSecond = 4

// floor is the least wait between one parked informer's re-checks. A wait beyond a
// Duration's range is the longest Duration: converted, it would wrap to a negative one,
// which would lift the limit instead.
func (a *AccessChecks) floor() time.Duration {
	perSecond := a.perSecond
	if !(perSecond > 0) { // zero (the zero AccessChecks: n/0 would be a wait without end), negative or NaN
		perSecond = defaultAccessChecksPerSecond
	}
	d := float64(a.parked.Load()) / perSecond * float64(time.Second)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}
