package crcache

import (
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
