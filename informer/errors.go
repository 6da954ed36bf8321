package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/internal/store"
)

var (
	// ErrNotStarted is returned when an informer is requested before Factory.Start.
	ErrNotStarted = errors.New("kindex: factory not started")
	// ErrAlreadyStarted is returned by a second Factory.Start.
	ErrAlreadyStarted = errors.New("kindex: factory already started")
	// ErrShutdown is returned once the factory was shut down or its context ended.
	ErrShutdown = errors.New("kindex: factory shut down")
	// ErrReleased is returned by an Informer after Release.
	ErrReleased = errors.New("kindex: informer released")
	// ErrNotWatchable is returned for a resource that does not support list and watch.
	ErrNotWatchable = errors.New("kindex: resource does not support list and watch")
	// ErrIndexNotFound is returned for an index name not registered on the informer (or, by
	// RemoveIndex, not registered through this reference).
	ErrIndexNotFound = store.ErrIndexNotFound
	// ErrIndexConflict is returned when an index name is registered on an informer with
	// another expression or function than the one it already has.
	ErrIndexConflict = errors.New("kindex: index name already registered with another definition")
	// ErrInvalidIndex is returned for an empty index name, a JSONPath expression that does not
	// compile (the error also wraps the positioned *jsonpath.SyntaxError), an unknown built-in
	// or a nil function.
	ErrInvalidIndex = errors.New("kindex: invalid index")
	// ErrInvalidContinue is matched by the error of a query whose continue token was not
	// issued by the same query on the same informer, or was modified.
	ErrInvalidContinue = store.ErrInvalidContinue
	// ErrParked is the Cause of the *SyncError of WaitForSyncOrPark when the informer
	// parked: the server refuses the resource or no longer serves it.
	ErrParked = errors.New("kindex: informer parked")
	// ErrOwnerNotCached explains an UnknownOwner: no synced informer of the factory caches
	// every object of the owner's resource where the owner would be.
	ErrOwnerNotCached = errors.New("kindex: owner's resource is not cached")
	// ErrCalledFromCallback is returned by a method called from inside an index function
	// (AddIndexFunc, AddItemIndexFunc) of the same informer, which runs while the informer
	// holds its cache's write lock, for every method that would have to wait for that lock
	// or for the informer's processing: the reads (Get, List, ListItems, GetItem, the
	// NamespaceLister's, Query, QueryItems, Count, CountBy, IndexStats), AddIndex and its
	// variants, RemoveIndex, AddEventHandler (and Factory.Informer's WithEventHandler),
	// RemoveEventHandler, HandOffEventHandler, a watch-all set's queries over the informer,
	// Factory.Dependents and Factory.Orphans; and, from an index function or the Transform,
	// an acquire of the informer (Factory.Informer, ForResource) while it stops after its
	// last reference was released there. The call did nothing. See the package
	// documentation, "Concurrency".
	ErrCalledFromCallback = errors.New("kindex: called from an index function of the same informer, which runs under its cache's lock")
)

// PanicError is a panic of the caller's code that kindex recovered: an event handler, a
// transform, a status subscriber or a watch-all handler factory. It is what
// Status.LastCallbackError holds and what the log line says.
type PanicError struct {
	Callback string // "handler", "transform", "status", "handler factory"
	Value    any    // what was passed to panic
	Stack    string // the panicking goroutine's stack (runtime/debug.Stack)
}

// Error names the callback and what it panicked with; the stack is in Stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("kindex: %s panicked: %v", e.Callback, e.Value)
}

// Unwrap returns what the callback panicked with if that is an error (a runtime.Error such
// as a nil dereference, an error passed to panic), so that errors.Is and errors.As see it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// ErrNilCallback is returned when a nil function or handler is passed where kindex would
// call it later (AddEventHandler, SubscribeStatus, WatchAll.AddEventHandler).
var ErrNilCallback = errors.New("kindex: nil callback")

// ErrUninitialized is returned by the methods of a Factory, Informer or WatchAll that this
// package did not make: a zero value (var f informer.Factory[T]) or a nil pointer (the
// *Informer of a failed Factory.Informer). New and the front ends' NewFactory make
// factories; Factory.Informer and its variants, informers; Factory.WatchAll, watch-all sets.
// Their methods without an error result do nothing and return zero values.
var ErrUninitialized = errors.New("kindex: zero or nil Factory, Informer or WatchAll: make it with New, Factory.Informer or Factory.WatchAll")

// ErrNilContext is returned by every method that takes a context when given a nil one:
// Factory.Start, Informer, InformerForGVR, InformerForGVK, WatchAll, Dependents, Orphans, the
// waits (WaitForSync, WaitForSyncOrPark) and the queries (Query, QueryItems, Count, CountBy,
// and a watch-all set's).
var ErrNilContext = errors.New("kindex: nil context")

// DecodeError is returned by Get, List, Query, Dependents and Orphans when a cached object
// cannot be turned into the front end's object type (in the compact mode, bytes that do not
// decode): the call fails and names the object instead of leaving it out.
type DecodeError struct {
	// Key is the object's cache key: "namespace/name", or "name" if cluster-scoped.
	Key string
	// Err is the decoder's error.
	Err error
}

// Error names the object and the decoder's error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("kindex: cached object %s cannot be decoded: %v", e.Key, e.Err)
}

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// maxQuoted is how many bytes of a caller's text (an index name, a namespace, a selector)
// an error message quotes, as package query's and discovery's errors do: a 100 KB input must
// not make a 100 KB message.
const maxQuoted = 256

// quote quotes s for an error message as strconv.Quote does, cut to its first maxQuoted
// bytes (at a character boundary) and marked "...".
func quote(s string) string {
	if c, ok := cut(s, maxQuoted); ok {
		return strconv.Quote(c) + "..."
	}
	return strconv.Quote(s)
}

// shorten is s cut to max bytes, the cut marked "...".
func shorten(s string, max int) string {
	if c, ok := cut(s, max); ok {
		return c + "..."
	}
	return s
}

// cut returns s cut to at most max bytes at a character boundary, and whether it cut.
func cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// cappedError is err with its message cut to 4*maxQuoted bytes: a parser's error may repeat
// the whole input (labels.Parse quotes a key it refuses). errors.Is and errors.As see err.
type cappedError struct{ err error }

func (e cappedError) Error() string { return shorten(e.err.Error(), 4*maxQuoted) }

func (e cappedError) Unwrap() error { return e.err }

// IndexConflictError names the index and both definitions; errors.Is(err, ErrIndexConflict).
type IndexConflictError struct {
	// Name is the index name both registrations use.
	Name string
	// Existing and Requested are the definitions: a canonical JSONPath expression,
	// "builtin:<name>" or "func:<name>".
	Existing, Requested string
}

// Error names the index and both definitions, each cut to its first 256 bytes.
func (e *IndexConflictError) Error() string {
	return fmt.Sprintf("kindex: index %s is registered as %s, cannot register it as %s", quote(e.Name),
		shorten(e.Existing, maxQuoted), shorten(e.Requested, maxQuoted))
}

// Is makes errors.Is(err, ErrIndexConflict) true.
func (e *IndexConflictError) Is(target error) bool { return target == ErrIndexConflict }

// SyncFailure is one informer that did not sync in time.
type SyncFailure struct {
	// Key identifies the informer.
	Key Key
	// Phase and Reason are the informer's Status.Phase and Status.Reason when the wait
	// ended; Reason is ReasonNotSynced for one still syncing without an error.
	Phase  Phase
	Reason Reason
	// Err is the informer's last list or watch error, if any.
	Err error
}

// String prints the key, the phase, the reason if any and the last error if any.
func (f SyncFailure) String() string {
	s := f.Key.String() + ": " + string(f.Phase)
	if f.Reason != ReasonNone {
		s += " " + string(f.Reason)
	}
	if f.Err != nil {
		s += ": " + f.Err.Error()
	}
	return s
}

// SyncError is returned by WaitForSync when the context ended before every informer synced,
// or an informer parked (WaitForSyncOrPark) or stopped.
// It unwraps to the context's error and to each informer's last error, so errors.Is(err,
// context.DeadlineExceeded) and apierrors.IsForbidden(err) keep working.
type SyncError struct {
	// Failures lists the informers that did not sync, sorted by key.
	Failures []SyncFailure
	// Cause is why the wait ended: the context's error, ErrParked (WaitForSyncOrPark),
	// ErrShutdown (the factory stopped) or ErrReleased (the last reference was released).
	Cause error
}

// Error names the cause and every informer that did not sync.
func (e *SyncError) Error() string {
	parts := make([]string, 0, len(e.Failures))
	for _, f := range e.Failures {
		parts = append(parts, f.String())
	}
	return fmt.Sprintf("kindex: %d informer(s) not synced (%v): %s", len(e.Failures), e.Cause, strings.Join(parts, "; "))
}

// Unwrap returns the cause and every failure's error.
func (e *SyncError) Unwrap() []error {
	out := []error{e.Cause}
	for _, f := range e.Failures {
		if f.Err != nil {
			out = append(out, f.Err)
		}
	}
	return out
}

// Reasons maps each failed informer's resource ("plural.group") to its reason; for a
// resource with several informers (namespaces, selectors) the first by key wins.
func (e *SyncError) Reasons() map[string]Reason {
	out := map[string]Reason{}
	for _, f := range e.Failures {
		name := resourceName(f.Key.GVR.GroupResource())
		if _, ok := out[name]; !ok {
			out[name] = f.Reason
		}
	}
	return out
}

func newSyncError(cause error, failures []SyncFailure) *SyncError {
	sort.Slice(failures, func(i, j int) bool { return failures[i].Key.String() < failures[j].Key.String() })
	return &SyncError{Failures: failures, Cause: cause}
}

// classify maps a list or watch error to a Reason.
func classify(err error) Reason {
	switch {
	case err == nil:
		return ReasonNone
	case apierrors.IsNotFound(err):
		return ReasonNotFound
	case apierrors.IsForbidden(err):
		return ReasonForbidden
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized
	case apierrors.IsTooManyRequests(err):
		return ReasonTooManyRequests
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return ReasonExpired
	case apierrors.IsBadRequest(err), apierrors.IsInvalid(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err):
		return ReasonInvalid
	case apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err), apierrors.IsUnexpectedServerError(err), serverCode(err) >= 500:
		return ReasonServerError
	case isNetworkError(err):
		return ReasonUnreachable
	}
	return ReasonUnknown
}

func serverCode(err error) int32 {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Code
	}
	return 0
}

func isNetworkError(err error) bool {
	var ne net.Error
	var errno syscall.Errno
	return errors.As(err, &ne) || errors.As(err, &errno) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded)
}

// observedError marks an error kindex's ListerWatcher has already classified and reported,
// so that the reflector's own "Failed to watch" line for it is dropped (see logfilter.go).
// It unwraps, so the reflector's checks (410, 429, connection refused) still see the cause.
type observedError struct{ err error }

func (e *observedError) Error() string { return e.err.Error() }
func (e *observedError) Unwrap() error { return e.err }

// groupResourceOf is a small helper for NotFound errors from Get.
func notFound(gvr schema.GroupVersionResource, name string) error {
	return apierrors.NewNotFound(gvr.GroupResource(), shorten(name, maxQuoted))
}
