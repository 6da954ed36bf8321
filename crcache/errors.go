package crcache

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// errCacheNotStarted is controller-runtime's error for a read before Start.
var errCacheNotStarted error = &cache.ErrCacheNotStarted{}

// timeoutError is a wait that ended with its context: apierrors.IsTimeout holds for it, as
// for controller-runtime's cache, and it unwraps to the cause (the context's error, or the
// informer's *informer.SyncError with its reason and last error).
type timeoutError struct {
	status *apierrors.StatusError
	cause  error
}

func newTimeoutError(msg string, cause error) error {
	return &timeoutError{status: apierrors.NewTimeoutError(msg, 0), cause: cause}
}

func (e *timeoutError) Error() string {
	if e.cause == nil {
		return e.status.Error()
	}
	return e.status.Error() + ": " + e.cause.Error()
}

// Unwrap returns the Timeout status first, so that apierrors' checks find it, then the cause.
func (e *timeoutError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.status}
	}
	return []error{e.status, e.cause}
}

// ErrScopeChanged is returned (wrapped, errors.Is matches it) by a read of a resource whose
// scope changed while the cache held it (a CRD deleted and re-created cluster-scoped instead
// of namespaced, or the reverse) when the cache could not plan its informers again for the
// new scope: the resource is not served at the moment (deleted again, or its version no
// longer served). The cache plans a resource again by itself as soon as discovery shows the
// new scope, so a read made later (or after RemoveInformer) answers with the new scope.
var ErrScopeChanged = errors.New("crcache: the resource's scope changed")

// errReplanned tells a read that the resource it was reading was planned again for a new
// scope (or its informers changed under it): the read starts again with the new plan.
var errReplanned = errors.New("crcache: the resource was planned again")
