package informer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/store"
)

// entry is one shared informer: a long-lived store, the handlers, the status, and a
// supervisor goroutine that starts runs, parks them and resumes them (supervisor.go). It
// outlives its runs; it ends when the last reference is released or the factory stops.
type entry struct {
	core *core
	key  Key
	// target is what the entry lists. Its Resource is the resource as discovery last
	// described it at the key's version (kind, scope, short names and categories may change
	// when a CRD is re-created), or at the version it followed the resource to (follow):
	// guarded by resMu; the other fields never change.
	resMu     sync.Mutex
	target    storage.Target
	logger    logr.Logger
	store     *store.Store
	transform cache.TransformFunc
	metrics   *entryMetrics
	// halted is why the entry stopped, set as stop begins (stillRunning until then): reads
	// through any reference fail from then on (the store is about to be emptied), with the
	// cause the stop was given: the release of the last reference, or the factory's stop.
	halted atomic.Uint32
	// The goroutines that run the caller's code while the entry holds locks or while its
	// stop would wait for them (reentry.go): the current run's processing loop (index
	// functions), its reflector (the Transform), and an AddIndex caller while the store
	// indexes what it holds with the caller's function. Each is read once, as it starts.
	loopGID, reflGID, backfillGID atomic.Uint64
	// inIndexFunc counts the calls of the caller's index functions in progress: a read pays
	// for a GoroutineID only while it is not zero (reentered).
	inIndexFunc atomic.Int32

	ctx    context.Context
	cancel context.CancelFunc
	kick   chan struct{} // a discovery event for this resource: re-check a park now
	// pinned: a reference was acquired for the resource at its version, so the entry
	// never follows it to another (follow). Only ever set to true once the entry exists.
	pinned atomic.Bool
	// followed: the entry has followed its resource to another version; its cache may hold
	// objects of the one before until a list replaces them.
	followed atomic.Bool
	// probing: the access park's re-check could not be made (the review itself refused), so
	// the park is ended now and then to try the request itself; its park and resume lines
	// are logged at V(1) until the informer syncs or parks for another reason.
	probing  atomic.Bool
	supDone  chan struct{} // closed when the supervisor (and so every run) has ended
	stopOnce sync.Once

	objects atomic.Int64
	lists   atomic.Int64

	// dispatchMu orders store writes and notifications against handler registration, so
	// that a new handler sees every object exactly once (replayed, or notified later).
	dispatchMu sync.Mutex
	listeners  map[*listener]struct{}
	cur        *run // the current run, if any
	synced     bool // the current run has applied its initial list
	// everSynced: a run has applied its initial list at least once (HasSynced's latch): a
	// handler added later is synced once handed the cached objects, parked or not.
	everSynced bool
	stopped    bool
	holding    bool // handlers are paused while a snapshot loads (holdHandlers)

	status    statusCell
	idx       indexSet
	callbacks callbackErrors
	// lostLogged: a notification skipped for a decode failure was logged (notificationLost).
	lostLogged atomic.Bool
	// outsideLogged: the informer's namespace was logged as outside its namespace shard.
	outsideLogged atomic.Bool
	queryOpts     store.QueryOptions // built once (newQueryOptions)
	snap          *snapState         // nil without Options.SnapshotDir (snapshot.go)

	refs    int           // guarded by the registry's lock
	closing chan struct{} // guarded by the registry's lock; closed once stopped and removed
}

func newEntry(c *core, key Key, t storage.Target) *entry {
	ctx, cancel := context.WithCancel(c.ctx)
	e := &entry{
		core:      c,
		key:       key,
		target:    t,
		logger:    c.logger.WithValues("informer", key.String()),
		store:     store.New(store.Options{}),
		ctx:       ctx,
		cancel:    cancel,
		kick:      make(chan struct{}, 1),
		supDone:   make(chan struct{}),
		listeners: map[*listener]struct{}{},
	}
	e.metrics = c.metrics.forEntry(key)
	e.queryOpts = e.newQueryOptions()
	e.snap = newSnapState(e)
	e.transform = c.mode.Transform(forgiving(c.opts.Transform, e.transformFailed))
	if c.ownerIndex.Load() {
		e.ensureOwnerIndex() // the store is empty: nothing to backfill
	}
	for _, ix := range c.indexes {
		// The entry's own reference, never released: validated by NewFactory, and the
		// names are distinct, so this cannot fail on an indexed store.
		if err := e.addIndex(ix.name, ix.spec); err != nil {
			e.logger.Error(err, "Cannot register an index of Options.Indexes", "index", ix.name)
		}
	}
	e.status.init(Status{Key: key, Resource: t.Resource, Phase: PhaseSyncing})
	e.metrics.setPhase(PhaseSyncing)
	return e
}

func (e *entry) start() {
	e.startSnapshots()
	go e.supervise()
}

// haltCause is why an entry stopped (entry.halted).
type haltCause uint32

const (
	stillRunning haltCause = iota
	// haltReleased: its last reference was released (registry.release). Every reference was
	// marked released before: a read that finds this cause was released while it ran.
	haltReleased
	// haltShutdown: its factory stopped (registry.close).
	haltShutdown
)

// haltCause returns why the entry stopped, or stillRunning.
func (e *entry) haltCause() haltCause { return haltCause(e.halted.Load()) }

// stop ends the entry, for cause: its runs, reflector and processing loop (waited for), its
// handlers (their goroutines end after the call in progress), and frees the cache.
// Idempotent: the first cause stays.
func (e *entry) stop(cause haltCause) {
	e.stopOnce.Do(func() {
		e.halted.Store(uint32(cause))
		e.cancel()
		<-e.supDone
		e.finishSnapshots()
		e.dispatchMu.Lock()
		e.stopped = true
		for l := range e.listeners {
			l.close(false)
		}
		e.listeners = nil
		keep := cause == haltShutdown && e.core.opts.ReadAfterShutdown
		if !keep {
			_ = e.store.Replace(nil, "")
		}
		e.dispatchMu.Unlock()
		if !keep {
			e.objects.Store(0)
		}
		e.update(func(st *Status) { st.Phase = PhaseStopped; st.Reason = ReasonNone })
		e.metrics.delete()
	})
}

// notify asks a parked entry to re-check now (a discovery event for its resource).
func (e *entry) notify() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// apply is the FIFO's process function: it runs with the FIFO's lock held, so it only
// touches the store and queues notifications. recorded, if set, is called once the deltas
// are applied, before dispatchMu is released: what it records about them (the snapshot's
// resourceVersion) is never behind the store for a snapshot write, which reads both under
// dispatchMu.
func (e *entry) apply(deltas cache.Deltas, ao applyOptions, recorded func()) error {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	if recorded != nil {
		defer recorded()
	}
	if e.stopped {
		return nil
	}
	var errs []error // one change that fails does not stop the others of a batch
	for _, d := range deltas {
		switch d.Type {
		case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
			old, exists, err := e.store.Get(d.Object)
			if err == nil && exists {
				if ao.initial || d.Type == cache.Replaced {
					// A list's object replacing a cached one: the garbage of a relist
					// (pacer.go). One that fills the cache is not garbage.
					e.core.paceStart(false) // the FIFO's lock is held
				}
				if d.Type == cache.Replaced && old == d.Object {
					continue // a relist answered with the cached object: nothing changed
				}
				if err := e.store.Update(d.Object); err != nil {
					errs = append(errs, err)
					continue
				}
				if d.Type == cache.Replaced && sameResourceVersion(old, d.Object) && (ao.trustRV || sameContent(old, d.Object)) &&
					!e.movedVersion(old, d.Object) {
					// A relist found the object unchanged: not an update (client-go's shared
					// informers do not tell handlers either, unless they asked for resyncs).
					continue
				}
				e.distribute(notification{kind: noteUpdate, old: old, obj: d.Object})
				continue
			}
			if err := e.store.Add(d.Object); err != nil {
				errs = append(errs, err)
				continue
			}
			e.objects.Add(1)
			// An add of the list of a run that resumed an informer synced before is not in
			// the initial list: client-go's informer, which relists until the resource is
			// back, tells handlers the same.
			e.distribute(notification{kind: noteAdd, obj: d.Object, initial: ao.initial, inInitialList: ao.initial && !e.everSynced})
		case cache.Deleted:
			_, exists, _ := e.store.Get(d.Object)
			if err := e.store.Delete(d.Object); err != nil {
				errs = append(errs, err)
				continue
			}
			if exists {
				e.objects.Add(-1)
			}
			e.distribute(notification{kind: noteDelete, obj: d.Object})
		}
	}
	e.metrics.setObjects(e.objects.Load())
	return errors.Join(errs...)
}

// applyOptions say how entry.apply reads a batch of changes.
type applyOptions struct {
	// initial: the changes are of the run's initial list.
	initial bool
	// trustRV: a relisted object at the cached one's resourceVersion is the same object.
	// False after a snapshot of another timeline (snapRun.foreign): it is an update if its
	// content differs.
	trustRV bool
}

// sameContent reports whether a and b hold the same object: equal JSON bytes in the
// compact mode, deeply equal otherwise. Only for objects at the same resourceVersion
// after a snapshot of another timeline: it costs a comparison of each relisted object.
func sameContent(a, b any) bool {
	ra, ok1 := a.(rawJSON)
	rb, ok2 := b.(rawJSON)
	if ok1 && ok2 {
		return bytes.Equal(ra.RawJSON(), rb.RawJSON())
	}
	return reflect.DeepEqual(a, b)
}

// sameResourceVersion reports whether a and b carry the same, non-empty resourceVersion.
func sameResourceVersion(a, b any) bool {
	ra, ok1 := a.(interface{ GetResourceVersion() string })
	rb, ok2 := b.(interface{ GetResourceVersion() string })
	return ok1 && ok2 && ra.GetResourceVersion() != "" && ra.GetResourceVersion() == rb.GetResourceVersion()
}

// distribute queues n for every handler; dispatchMu is held.
func (e *entry) distribute(n notification) {
	for l := range e.listeners {
		l.add(n)
	}
}

// dropAll empties the cache, notifying handlers of each object as deleted with a
// DeletedFinalStateUnknown tombstone: used when discovery confirmed that the resource is no
// longer served, so its objects are gone on the server too.
func (e *entry) dropAll() {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	for _, key := range e.store.ListKeys() {
		obj, exists, err := e.store.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		if err := e.store.Delete(obj); err != nil {
			continue
		}
		e.objects.Add(-1)
		e.distribute(notification{kind: noteDelete, obj: cache.DeletedFinalStateUnknown{Key: key, Obj: obj}})
	}
	e.metrics.setObjects(e.objects.Load())
}

// runSynced is called once r's initial list has been applied. With parked, r parked before
// it was seen applied (run.listedBeforePark): the list counts for HasSynced, LastSyncTime and
// the handlers' registrations, and the phase is left to the park.
func (e *entry) runSynced(r *run, parked bool) {
	e.dispatchMu.Lock()
	if e.stopped || e.cur != r {
		e.dispatchMu.Unlock()
		return
	}
	e.synced, e.everSynced = !parked, true
	e.distribute(notification{kind: noteSynced})
	e.dispatchMu.Unlock()
	now := time.Now()
	e.update(func(st *Status) {
		if !parked {
			st.Phase = PhaseSynced
		}
		st.LastSyncTime = now
		st.ServingFromSnapshot = false
	})
}

// relisted records a relist of the synced run r applied whole (after a 410): the cache is
// as current as a sync makes it, and Status.LastSyncTime says when. A run not synced yet
// records its sync with runSynced.
func (e *entry) relisted(r *run) {
	e.dispatchMu.Lock()
	ok := !e.stopped && e.cur == r && e.synced
	e.dispatchMu.Unlock()
	if !ok {
		return
	}
	now := time.Now()
	e.update(func(st *Status) { st.LastSyncTime = now })
}

// holdHandlers pauses every handler, and those added until releaseHandlers, while a
// snapshot loads: their notifications queue up and are delivered once the snapshot is in
// the cache, so that decoding them for the handlers (and the garbage that leaves) does not
// compete with the load for the CPU. The cache is queryable sooner; a handler sees the same
// notifications in the same order, only later.
func (e *entry) holdHandlers() {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	e.holding = true
	for l := range e.listeners {
		l.box.Pause()
	}
}

// releaseHandlers ends holdHandlers; without a hold it does nothing.
func (e *entry) releaseHandlers() {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	if !e.holding {
		return
	}
	e.holding = false
	for l := range e.listeners {
		l.box.Resume()
	}
}

// setRun makes r the current run; the entry is not synced until r is.
func (e *entry) setRun(r *run) {
	e.dispatchMu.Lock()
	e.cur, e.synced = r, false
	e.dispatchMu.Unlock()
}

// addHandler registers h. The objects already cached are queued to it as adds (with
// isInInitialList true); it is marked synced after them if the entry has synced once
// (Informer.HasSynced's latch: parked or resyncing since, the cache is what the handler
// was handed), else when the entry syncs.
func (e *entry) addHandler(h cache.ResourceEventHandler) (*Registration, error) {
	l := newListener(h, e.core.convertFor(h), e.core.paceFor(h), e.logger, e.handlerPanicked)
	l.onLost = e.notificationLost
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	if e.stopped {
		l.close(false)
		return nil, ErrReleased
	}
	if e.holding {
		l.box.Pause()
	}
	for _, item := range e.store.List() {
		l.add(notification{kind: noteAdd, obj: item, initial: true, inInitialList: true})
	}
	if e.everSynced {
		l.add(notification{kind: noteSynced})
	}
	e.listeners[l] = struct{}{}
	e.core.handlers.Add(1)
	e.core.listeners.Store(l, struct{}{})
	go func() {
		defer e.core.handlers.Done()
		<-l.done()
		e.core.listeners.Delete(l)
	}()
	return &Registration{l: l, e: e}, nil
}

// removeHandler unregisters r. With tombstones, the handler is first told that every cached
// object is deleted (a resource leaving a watch-all set); with drain, what is queued is still
// delivered. It does not wait for the handler's goroutine.
func (e *entry) removeHandler(r *Registration, tombstones, drain bool) {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	if _, ok := e.listeners[r.l]; !ok {
		return
	}
	if tombstones {
		for _, key := range e.store.ListKeys() {
			if obj, exists, err := e.store.GetByKey(key); err == nil && exists {
				r.l.add(notification{kind: noteDelete, obj: cache.DeletedFinalStateUnknown{Key: key, Obj: obj}})
			}
		}
	}
	delete(e.listeners, r.l)
	r.l.close(drain)
}

// listed counts a list applied by the reflector.
func (e *entry) listed() {
	e.lists.Add(1)
	e.metrics.listed()
}

func (e *entry) countError(r Reason) { e.metrics.errorSeen(r) }

func (e *entry) transformFailed(err error) {
	e.metrics.errorSeen("TransformError")
	e.callbackFailed("transform", err, "Transform failed; object cached as received")
}

// handlerPanicked records a handler's panic (the notification was skipped).
func (e *entry) handlerPanicked(err error) {
	e.metrics.handlerPanic()
	e.callbackFailed("handler", err, "Event handler panicked; notification skipped")
}

// notificationLost records a notification skipped because its object could not be decoded
// into what the handler receives (a stored object that does not decode, which kindex's own
// modes never store): counted as kindex_informer_errors_total{reason="DecodeError"}, and
// logged the first time for the informer.
func (e *entry) notificationLost(err error) {
	e.metrics.errorSeen("DecodeError")
	if e.lostLogged.CompareAndSwap(false, true) {
		e.logger.Error(err, "Cannot decode a cached object for a handler; notification skipped (further ones are counted in kindex_informer_errors_total with reason DecodeError, not logged)")
	}
}

// callbackFailed counts a failed call of the caller's code, keeps it for Status and logs the
// first failure of each kind.
func (e *entry) callbackFailed(kind string, err error, msg string) {
	e.core.metrics.callbackFailed(kind)
	if e.callbacks.record(kind, err) {
		e.logger.Error(err, msg+" (further failures of this kind are counted in Status.CallbackErrors, not logged)", "callback", kind)
	}
}

// callbackErrors counts the failures of the caller's code for one informer.
type callbackErrors struct {
	count  atomic.Int64
	last   atomic.Pointer[error]
	mu     sync.Mutex
	logged map[string]bool
}

// record counts err and reports whether it is the first of its kind.
func (c *callbackErrors) record(kind string, err error) (first bool) {
	c.last.Store(&err) // first: a Status that counts the failure has one to show
	c.count.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logged[kind] {
		return false
	}
	if c.logged == nil {
		c.logged = map[string]bool{}
	}
	c.logged[kind] = true
	return true
}

// transient records an error the reflector retries.
func (e *entry) transient(reason Reason, err error) {
	now := time.Now()
	e.update(func(st *Status) {
		st.Reason, st.LastError, st.LastErrorTime = reason, err, now
	})
}

// healthy clears a transient reason after a successful list or watch start.
func (e *entry) healthy() {
	e.update(func(st *Status) {
		if st.Phase != PhaseParked {
			st.Reason = ReasonNone
		}
	})
}

// confirmGone asks discovery, afresh, whether the resource is still served: only a definite
// miss confirms it is gone; an unavailable group or any other error does not. A cached
// answer would not do: discovery that missed the deletion (a round that read the
// aggregated document just before it was rebuilt, a client that is not started) would
// show the resource until its next resync, and the informer would retry until then.
// An informer of one namespace whose resource is served again cluster-scoped (a CRD
// re-created with the other scope) is gone too: the URL it lists, under the namespace, does
// not exist. (An informer of all namespaces lists the same URL either way.)
func (e *entry) confirmGone(ctx context.Context) bool {
	res, err := e.core.disc.RecheckGVR(ctx, e.gvr())
	if err != nil {
		return isNoMatch(err)
	}
	return !e.servable(res)
}

// stoppedErr is why a stopped entry cannot be waited for: its factory stopped
// (ErrShutdown), or its last reference was released (ErrReleased). It is the cause the
// entry stopped for, not whether the factory is stopping now: an entry stopped by its last
// release, then its factory shut down before a waiter looked, was released.
func (e *entry) stoppedErr() error {
	if e.haltCause() == haltShutdown {
		return ErrShutdown
	}
	return ErrReleased
}

// resource returns the resource as discovery last described it.
func (e *entry) resource() discovery.Resource {
	e.resMu.Lock()
	defer e.resMu.Unlock()
	return e.target.Resource
}

// movedVersion reports whether old and obj are the object at two versions of the resource,
// which only an entry that followed its resource to another version (follow) can hold: the
// same resourceVersion is then an update, the object read at the new version.
func (e *entry) movedVersion(old, obj any) bool {
	if !e.followed.Load() {
		return false
	}
	ro, ok := obj.(runtime.Object)
	return ok && !atVersion(old, ro.GetObjectKind().GroupVersionKind().GroupVersion())
}

// atVersion reports whether obj is of gv (true for what does not say).
func atVersion(obj any, gv schema.GroupVersion) bool {
	ro, ok := obj.(runtime.Object)
	return !ok || ro.GetObjectKind().GroupVersionKind().GroupVersion() == gv
}

// gvr is the resource the entry lists: the key's, or the one it followed (follow).
func (e *entry) gvr() schema.GroupVersionResource { return e.resource().GVR }

// targetNow is what a run lists: the entry's target, the resource as described now.
func (e *entry) targetNow() storage.Target {
	e.resMu.Lock()
	defer e.resMu.Unlock()
	return e.target
}

// described records what discovery says of the entry's resource at its version now (a CRD
// re-created with another kind, short names, categories or scope): Resource and Status show
// it, and the next run lists it so.
func (e *entry) described(res discovery.Resource) {
	e.resMu.Lock()
	if res.GVR != e.target.Resource.GVR {
		e.resMu.Unlock()
		return
	}
	e.target.Resource = res
	e.resMu.Unlock()
	e.update(func(st *Status) { st.Resource = res })
}

// follow moves an entry whose version is no longer served (its run found it gone) to the
// version discovery now prefers for the resource, when no reference pinned the version:
// the next run lists that version on the same store, so the objects that still exist are
// updates for the handlers (their apiVersion changes) and only those gone are deletes. It
// reports whether it moved; false leaves the park to drop the cache, as for a deleted CRD.
// A resource served nowhere else, or served in a way the entry cannot serve (servable),
// is not followed.
func (e *entry) follow() bool {
	if e.pinned.Load() {
		return false
	}
	cur := e.resource()
	// Discovery's cache, which the park's confirmation (confirmGone, or the discovery event
	// that turned an access park into NotFound) has just brought up to date: no request.
	res, err := e.core.disc.CachedGVR(schema.GroupVersionResource{Group: cur.GVR.Group, Resource: cur.GVR.Resource})
	if err != nil || res.GVR.Version == cur.GVR.Version || !res.Watchable() || !e.servable(res) {
		return false
	}
	e.resMu.Lock()
	e.target.Resource = res
	e.resMu.Unlock()
	e.followed.Store(true)
	// Syncing in the same update: Status never names the new version while the phase is
	// the old version's Synced and the cache still holds that version's objects.
	e.update(func(st *Status) { st.Resource, st.Phase, st.Reason = res, PhaseSyncing, ReasonNone })
	e.logger.Info("Version no longer served: following the resource to the version it is served at; its objects are read again there",
		"from", cur.GVR.Version, "to", res.GVR.Version)
	return true
}

// servable reports whether the entry can serve res as discovery serves it: its list URL
// exists (an informer of one namespace needs a namespaced resource), and an informer made
// for a cluster-scoped resource in a factory or call restricted to a namespace does not list
// every namespace of it now namespaced.
func (e *entry) servable(res discovery.Resource) bool {
	if res.Namespaced {
		return e.target.Namespace != "" || e.target.Restricted == ""
	}
	return e.target.Namespace == ""
}

// parkUnservable parks the running informer as NotFound when discovery now serves its
// resource in a way it cannot serve (see servable): a CRD deleted and re-created with the
// other scope between two of the informer's requests leaves its list URL valid, so no
// request would fail.
func (e *entry) parkUnservable(res discovery.Resource) {
	if e.servable(res) {
		return
	}
	e.dispatchMu.Lock()
	r := e.cur
	e.dispatchMu.Unlock()
	if r == nil {
		return
	}
	err := fmt.Errorf("kindex: %s is now served cluster-scoped; this informer lists namespace %q", resourceName(res.GVR.GroupResource()), e.target.Namespace)
	if res.Namespaced {
		err = fmt.Errorf("kindex: %s is now served namespaced; this informer was made for it cluster-scoped, restricted to namespace %q",
			resourceName(res.GVR.GroupResource()), e.target.Restricted)
	}
	r.mu.Lock()
	if r.park == nil {
		r.park = &parkInfo{reason: ReasonNotFound, err: err}
	}
	r.mu.Unlock()
	r.cancel()
}
