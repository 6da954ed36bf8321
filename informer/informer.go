package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/mailbox"
	"github.com/kindex/kindex/internal/store"
)

// handle is one reference to an entry, with the handlers added through it.
type handle struct {
	c        *core
	e        *entry
	released atomic.Bool
	borrowed bool // a watch-all member's view: Release by users does nothing
	mu       sync.Mutex
	regs     []*Registration // added through this reference, oldest first; nil once released
	// idxMu guards indexes, the index names registered through this reference. It is not mu:
	// AddIndex holds it while the cache is indexed, which runs the caller's index function,
	// and that function may still ask for Registrations.
	idxMu   sync.Mutex
	indexes map[string]struct{}
	// testGone, set by tests before the reference is read, runs in gone between its
	// checks of the reference and of its informer.
	testGone func()
}

func (h *handle) release() {
	if h.borrowed {
		return
	}
	h.dropRefs()
}

// forceRelease ends a borrowed view: its handlers are removed, the reference it borrowed is
// released by its owner.
func (h *handle) forceRelease() {
	if h.released.CompareAndSwap(false, true) {
		if h.e.ownGoroutine(mailbox.GoroutineID()) {
			h.later(h.removeAll) // as dropRefs: the caller holds the locks removeAll takes
			return
		}
		h.removeAll()
	}
}

// later runs fn, the rest of a release made from the informer's own Transform or index
// function, on a goroutine of its own: fn takes locks the caller holds, or waits for the
// caller's return. Shutdown waits for it (core.releases), so nothing of the release runs
// once Shutdown has returned.
func (h *handle) later(fn func()) {
	h.c.releases.Add(1)
	go func() {
		defer h.c.releases.Done()
		if hook := h.c.in.CallbackRelease; hook != nil {
			hook()
		}
		fn()
	}()
}

func (h *handle) dropRefs() {
	if !h.released.CompareAndSwap(false, true) {
		return
	}
	if h.e.ownGoroutine(mailbox.GoroutineID()) {
		// Called from the informer's own Transform or index function (reentry.go): the
		// removals wait for locks the caller holds, and the stop of the last reference
		// waits for the caller's own processing. The reference is released now (reads
		// through it fail with ErrReleased); the rest is done once the callback returns.
		h.later(func() {
			h.removeAll()
			h.c.reg.release(h.e)
		})
		return
	}
	h.removeAll()
	h.c.reg.release(h.e)
}

func (h *handle) removeAll() {
	h.mu.Lock()
	regs := h.regs
	h.regs = nil
	h.mu.Unlock()
	h.idxMu.Lock()
	indexes := h.indexes
	h.indexes = nil
	h.idxMu.Unlock()
	for _, r := range regs {
		h.e.removeHandler(r, false, false)
	}
	for name := range indexes {
		_ = h.e.removeIndex(name)
	}
}

func (h *handle) addHandler(handler cache.ResourceEventHandler) (*Registration, error) {
	if err := h.c.checkHandler(handler, "AddEventHandler"); err != nil {
		return nil, err
	}
	if err := h.e.reentered(); err != nil {
		return nil, err
	}
	if h.released.Load() {
		return nil, ErrReleased
	}
	r, err := h.e.addHandler(handler)
	if err != nil {
		return nil, h.stoppedErr(err)
	}
	r.owner = h
	if !h.track(r) {
		h.e.removeHandler(r, false, false)
		return nil, ErrReleased
	}
	return r, nil
}

// track records r as added through this reference; false if the reference was released.
func (h *handle) track(r *Registration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.regs == nil {
		return false
	}
	h.regs = append(h.regs, r)
	return true
}

// registrations returns the registrations made through this reference, oldest first.
func (h *handle) registrations() []*Registration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.regs)
}

func (h *handle) removeHandler(r *Registration, tombstones, drain bool) error {
	if err := h.e.reentered(); err != nil {
		return err
	}
	h.mu.Lock()
	i := slices.Index(h.regs, r)
	ok := i >= 0
	if ok {
		h.regs = slices.Delete(h.regs, i, i+1)
	}
	h.mu.Unlock()
	if !ok {
		switch {
		case r == nil || r.owner == h:
			return nil // nil, or removed already (by a call, or by the reference's Release)
		case h.released.Load():
			return ErrReleased
		}
		return fmt.Errorf("%w: it was made through another reference or informer", ErrNotRegistered)
	}
	h.e.removeHandler(r, tombstones, drain)
	return nil
}

// Informer is one reference to a shared informer. Objects it returns, and objects handed to
// handlers, are shared with every other user of the cache: treat them as read-only (copy
// with DeepCopy before changing one). Its methods are safe for concurrent use; the
// handlers and indexes added through it are this reference's, removed by its Release.
type Informer[T Object] struct {
	h *handle
}

// Release drops this reference and removes the handlers and indexes added through it.
// Releasing the last reference stops the informer: its reflector and processing loop have
// ended when Release returns, its handler goroutines end after the call in progress, and its
// cache is freed. Release may be called from a handler, and more than once. Called from the
// informer's own Transform or index function, which that stop would wait for, it releases
// the reference (reads through it fail with ErrReleased) and returns at once; the handlers
// and indexes are removed, and the informer stopped, once the callback has returned, and
// before Factory.Shutdown returns. A zero or nil Informer (not made by a Factory) is
// ErrUninitialized, in Release and in every method of Informer and NamespaceLister that
// returns an error; the others do nothing and return zero values.
func (i *Informer[T]) Release() {
	if i.valid() {
		i.h.release()
	}
}

// valid reports whether i was made by a Factory (or a watch-all set): the zero Informer and
// a nil *Informer were not.
func (i *Informer[T]) valid() bool { return i != nil && i.h != nil }

// Resource is the resource the informer watches, as discovery last described it at the
// informer's version: a CRD re-created with another kind, scope, short names or categories
// shows them here and in Status.
func (i *Informer[T]) Resource() discovery.Resource {
	if !i.valid() {
		return discovery.Resource{}
	}
	return i.h.e.resource()
}

// Key identifies the shared informer.
func (i *Informer[T]) Key() Key {
	if !i.valid() {
		return Key{}
	}
	return i.h.e.key
}

// Status returns the informer's current status.
func (i *Informer[T]) Status() Status {
	if !i.valid() {
		return Status{}
	}
	return i.h.e.Status()
}

// HasSynced reports whether the informer has applied a complete list from the server at
// least once; once true it stays true, as client-go's HasSynced and Registration.HasSynced
// do (the handler's form adds that the handler was given that list). Whether the cache is
// current now (not parked, not resyncing) is Status().Phase == PhaseSynced, which
// WaitForSync waits for.
func (i *Informer[T]) HasSynced() bool { return !i.Status().LastSyncTime.IsZero() }

// WaitForSync waits until the informer is Synced. When ctx ends first it returns a
// *SyncError with the informer's phase, reason and last error, for which errors.Is(err,
// ctx.Err()) holds. Called from the informer's own Transform before it synced, it cannot
// succeed (the sync waits for that call) and returns only when ctx ends: give it a deadline.
func (i *Informer[T]) WaitForSync(ctx context.Context) error {
	if !i.valid() {
		return ErrUninitialized
	}
	if i.h.released.Load() {
		return ErrReleased
	}
	return waitEntries(ctx, []*entry{i.h.e}, false)
}

// WaitForSyncOrPark is WaitForSync for callers that want an answer, not a wait: it also
// returns as soon as the informer parks, with a *SyncError whose Cause is ErrParked and
// whose failure gives the reason (ReasonForbidden, ReasonNotFound, ReasonWatchForbidden,
// ReasonInvalid) and the server's error, so apierrors.IsForbidden and apierrors.IsNotFound
// hold for it. A parked informer stays parked until the outside world changes (a grant, the
// resource served again); a command-line tool reports it and exits rather than waiting.
func (i *Informer[T]) WaitForSyncOrPark(ctx context.Context) error {
	if !i.valid() {
		return ErrUninitialized
	}
	if i.h.released.Load() {
		return ErrReleased
	}
	return waitEntries(ctx, []*entry{i.h.e}, true)
}

// AddEventHandler adds a handler. It is called on its own goroutine with T objects (and
// cache.DeletedFinalStateUnknown wrapping a T for deletions the informer inferred), or with
// Items if it is an ItemHandlerFuncs, never blocks the informer or other handlers, and
// starts with an add for every object already cached. The registration's HasSynced tells
// when it has seen the initial state. As in client-go, isInInitialList is true for the
// adds of the informer's first list and for those of the objects cached when the handler
// is added, not for the adds of a later list (a relist, a resume after a park).
func (i *Informer[T]) AddEventHandler(handler cache.ResourceEventHandler) (*Registration, error) {
	if !i.valid() {
		return nil, ErrUninitialized
	}
	return i.h.addHandler(handler)
}

// Registrations returns the handlers' registrations made through this reference
// (AddEventHandler, WithEventHandler) and not removed, oldest first; none once released.
func (i *Informer[T]) Registrations() []*Registration {
	if !i.valid() {
		return nil
	}
	return i.h.registrations()
}

// RemoveEventHandler removes a handler added through this reference; notifications not yet
// delivered are dropped. It does not wait for the handler: a call of it in progress on its
// goroutine, or just starting, may still run after RemoveEventHandler returns (as with
// client-go's; HandOffEventHandler's channel tells when the last call has returned). It may
// be called from the handler itself, and then nothing follows. Removing it again, or
// a nil registration, does nothing, and so does removing one the reference's Release
// removed already; a registration made through another reference (of this informer or
// another) is an error matching ErrNotRegistered, and is not removed.
func (i *Informer[T]) RemoveEventHandler(r *Registration) error {
	if !i.valid() {
		return ErrUninitialized
	}
	return i.h.removeHandler(r, false, false)
}

// List returns the cached objects matching selector (nil selects everything), in no
// particular order. It fails only if an object cannot be decoded (*DecodeError), the
// reference was released (ErrReleased), its factory stopped (ErrShutdown) or it is called
// from one of the informer's index functions (ErrCalledFromCallback). In the compact mode
// every object returned is decoded now and held by the result: a List of 20,000 Pods
// allocates about 450 MB beside a 101 MB cache (bench/README.md, "Reading the whole
// cache"). To count, use Status().Objects or Count; to read every object, ListItems or
// QueryItems pages, which decode what is asked of them.
func (i *Informer[T]) List(selector labels.Selector) ([]T, error) {
	if !i.valid() {
		return nil, ErrUninitialized
	}
	if err := i.h.enter(); err != nil {
		return nil, err
	}
	out, err := i.list("", true, selector)
	return unlessGone(i.h, out, err)
}

// unlessGone returns gone's error instead of a read's answer if the reference was
// released, or its informer stopped, while the read ran: a stopping informer empties its
// store, and a read that overlapped it may have found nothing, which is not an answer.
func unlessGone[R any](h *handle, r R, err error) (R, error) {
	if gerr := h.gone(); gerr != nil {
		var zero R
		return zero, gerr
	}
	return r, err
}

// enter is gone for a read about to start, which first refuses a call from an index
// function of the informer (reentry.go): the read would wait for the lock its caller holds.
func (h *handle) enter() error {
	if err := h.e.reentered(); err != nil {
		return err
	}
	return h.gone()
}

// gone says why the reference cannot be read: ErrReleased after Release, ErrShutdown once
// its informer stopped with the factory (Shutdown, or the end of Start's context), whose
// cache is then empty; nil while it can, and after the factory stopped with
// Options.ReadAfterShutdown, which keeps the cache.
//
// A stopped informer says why it stopped (entry.halted): a Release of this reference that
// ends between the two checks, the last reference's, stops the informer for the release,
// and the read says ErrReleased, not that the factory stopped (which it has not).
func (h *handle) gone() error {
	if h.released.Load() {
		return ErrReleased
	}
	if h.testGone != nil {
		h.testGone()
	}
	switch h.e.haltCause() {
	case stillRunning:
		return nil
	case haltReleased:
		return ErrReleased
	}
	if h.e.core.opts.ReadAfterShutdown {
		return nil
	}
	return errStoppedWithFactory()
}

// errStoppedWithFactory is why a reference that is not released cannot be used once its
// factory stopped.
func errStoppedWithFactory() error {
	return fmt.Errorf("%w: the informer stopped with its factory", ErrShutdown)
}

// stoppedErr turns entry.addHandler's and entry.addIndex's ErrReleased, for an informer
// stopped or stopping, into why it stopped for this reference (gone): ErrShutdown when the
// factory stopped it. The factory's stop is the only one a reference not released can meet
// before the informer says so (it cancels the informer before stopping it; the release of
// the last reference marks the informer first). Other errors are returned as they are.
func (h *handle) stoppedErr(err error) error {
	if !errors.Is(err, ErrReleased) {
		return err
	}
	if gerr := h.gone(); gerr != nil {
		return gerr
	}
	return errStoppedWithFactory()
}

// Get returns the cached object namespace/name ("" namespace for cluster-scoped resources),
// or an error for which apierrors.IsNotFound is true; ErrReleased after Release,
// ErrShutdown once the factory stopped, *DecodeError as List.
func (i *Informer[T]) Get(namespace, name string) (T, error) {
	var zero T
	if !i.valid() {
		return zero, ErrUninitialized
	}
	key, ok := cacheKey(namespace, name)
	if err := i.h.enter(); err != nil {
		return zero, err
	}
	if !ok {
		return zero, notFound(i.h.e.key.GVR, name)
	}
	item, exists, err := i.h.e.store.GetByKey(key)
	if err := i.h.gone(); err != nil {
		return zero, err // see unlessGone
	}
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, notFound(i.h.e.key.GVR, name)
	}
	return i.object(key, item)
}

// cacheKey is the cache key of namespace/name, or false if either holds a '/', which no
// namespace or name can: Get("", "team-b/db") must not find team-b's db (a caller that
// checked the namespace it was given would read another's), it names nothing.
func cacheKey(namespace, name string) (string, bool) {
	if strings.IndexByte(name, '/') >= 0 || strings.IndexByte(namespace, '/') >= 0 {
		return "", false
	}
	if namespace == "" {
		return name, true
	}
	return namespace + "/" + name, true
}

// Namespace returns a lister of one namespace; its List of "" (metav1.NamespaceAll) lists
// every namespace, as client-go's namespace listers and ListItems("") do.
func (i *Informer[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{i: i, ns: namespace}
}

// NamespaceLister lists and gets the cached objects of one namespace.
type NamespaceLister[T Object] struct {
	i  *Informer[T]
	ns string
}

// List returns the namespace's cached objects matching selector (nil selects everything),
// every namespace's for "" (as Informer.List); errors as Informer.List.
func (n NamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	if !n.i.valid() {
		return nil, ErrUninitialized
	}
	if err := n.i.h.enter(); err != nil {
		return nil, err
	}
	out, err := n.i.list(n.ns, n.ns == metav1.NamespaceAll, selector)
	return unlessGone(n.i.h, out, err)
}

// Get returns the namespace's cached object name; errors as Informer.Get.
func (n NamespaceLister[T]) Get(name string) (T, error) { return n.i.Get(n.ns, name) }

// list returns the objects of namespace ns (every object if all) that selector selects.
func (i *Informer[T]) list(ns string, all bool, selector labels.Selector) ([]T, error) {
	var out []T
	if i.h.c.objectDecodes {
		// The compact mode decodes each object: outside the store's lock.
		var items []any
		if all {
			items = i.h.e.store.List()
		} else {
			items = i.h.e.store.ListNamespace(ns)
		}
		out = make([]T, 0, len(items))
		for _, item := range items {
			obj, err := i.object("", item)
			if err != nil {
				return nil, err
			}
			out = append(out, obj)
		}
	} else {
		// Object is a type assertion: made under the store's read lock, in the one slice
		// returned.
		var derr error
		out = store.ListAs(i.h.e.store, ns, all, i.objects(&derr))
		if derr != nil {
			return nil, derr
		}
	}
	if selector == nil || selector.Empty() {
		return out, nil
	}
	kept := out[:0] // (the selector is the caller's code: never under the store's lock)
	for _, obj := range out {
		if selector.Matches(labels.Set(obj.GetLabels())) {
			kept = append(kept, obj)
		}
	}
	clear(out[len(kept):])
	return kept, nil
}

// objects returns the conv of store.ListAs and store.QueryAs that turns stored items into
// Ts (object), for a mode whose Object does not decode (it runs under the store's lock);
// the first failure is left in *errp.
func (i *Informer[T]) objects(errp *error) func(key string, item any) T {
	return func(key string, item any) T {
		obj, err := i.object(key, item)
		if err != nil && *errp == nil {
			*errp = err
		}
		return obj
	}
}

// object turns a stored item into a T; key names it in the error ("" to compute it).
func (i *Informer[T]) object(key string, item any) (T, error) {
	obj, err := objectAs[T](i.h.c.mode, item)
	if err != nil {
		if key == "" {
			key, _ = store.KeyFunc(item)
		}
		return obj, &DecodeError{Key: key, Err: err}
	}
	return obj, nil
}

// Recheck asks a parked informer to check at once whether it can resume (an access review
// for a 403, discovery for a missing resource), for callers that know the outside world
// changed (a Role granted, a CRD installed). It does nothing to an informer that is not
// parked, and never blocks.
func (i *Informer[T]) Recheck() {
	if i.valid() && !i.h.released.Load() {
		i.h.e.notify()
	}
}
