package informer

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/internal/mailbox"
	"github.com/kindex/kindex/internal/store"
)

// parkInfo is why a run stopped itself.
type parkInfo struct {
	reason Reason
	err    error
}

// run is one reflector plus one RealFIFO feeding the entry's long-lived store. A run ends
// when it parks (it cancels itself) or when the entry stops; a resume starts a new run with
// a new FIFO whose KnownObjects is the same store, so its first list emits Deleted for
// objects that vanished while parked or disconnected (no ghosts).
type run struct {
	e       *entry
	ctx     context.Context
	cancel  context.CancelFunc
	fifo    *countingFIFO
	refl    *cache.Reflector
	clock   *runClock
	done    chan struct{} // closed when the reflector and the processing loop have ended
	started time.Time
	snap    *snapRun    // the run starts from a snapshot (snapshot.go)
	slw     *snapshotLW // with snapshots on (snapshot.go)

	// replacedApplied counts the objects of lists (Replaced deltas) the processing loop
	// applied; progress is signalled after each change applied in a snapshot run.
	replacedApplied atomic.Int64
	progress        chan struct{}
	// listsApplied counts the run's lists the processing loop applied whole (relisted).
	listsApplied int64

	// loopDone is closed when the processing loop has ended (the FIFO closed and drained).
	loopDone chan struct{}

	mu     sync.Mutex
	park   *parkInfo
	listOK bool // a LIST succeeded in this run
}

func newRun(e *entry) *run {
	ctx, cancel := context.WithCancel(e.ctx)
	logger := reflectorLogger(e.logger)
	ctx = klog.NewContext(ctx, logger)
	r := &run{e: e, ctx: ctx, cancel: cancel, done: make(chan struct{}), loopDone: make(chan struct{}), started: time.Now(),
		progress: make(chan struct{}, 1)}
	r.clock = newRunClock(ctx)
	r.fifo = &countingFIFO{
		RealFIFO: cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
			Logger:       &logger,
			KeyFunction:  store.KeyFunc,
			KnownObjects: e.store,
			Transformer:  e.transform,
		}),
		onReplace: e.listed,
		bookmarks: e.snap != nil && !e.snap.refused,
	}
	// The snapshot's watch decides when the run is current from the events the informer
	// keeps: outside the shard filter, so that events of other shards (a server that does
	// not filter) are not waited for.
	target := e.targetNow()
	lw := &classifyingLW{inner: e.snapshotLW(r, e.shardLW(e.core.mode.ListerWatcher(target))), hooks: r,
		known: func(key string) (any, bool) {
			obj, ok, err := e.store.GetByKey(key)
			if !ok || err != nil {
				return nil, false
			}
			// Since the entry followed its resource to another version, a cached object
			// of the same resourceVersion may be of the old one: not the item listed.
			if e.followed.Load() && !atVersion(obj, target.Resource.GVR.GroupVersion()) {
				return nil, false
			}
			return obj, true
		}}
	r.refl = cache.NewReflectorWithOptions(lw, e.core.mode.ExampleObject(), r.fifo, cache.ReflectorOptions{
		Logger:          &logger,
		Name:            e.key.String(),
		TypeDescription: e.key.String(),
		ResyncPeriod:    e.core.opts.ResyncPeriod,
		Clock:           r.clock,
		Backoff:         e.core.in.ReflectorBackoff,
	})
	return r
}

func (r *run) start() {
	go func() {
		defer close(r.done)
		// The reflector runs on this goroutine, and calls the Transform on it.
		gid := mailbox.GoroutineID()
		r.e.reflGID.Store(gid)
		defer r.e.reflGID.CompareAndSwap(gid, 0)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); r.processLoop() }()
		go func() { defer wg.Done(); r.watchSynced() }()
		r.refl.RunWithContext(r.ctx)
		if r.slw != nil {
			r.slw.dropEarly()
		}
		r.clock.wait()
		// The reflector has stopped writing: let the processing loop apply what is queued,
		// then end.
		r.fifo.Close()
		wg.Wait()
	}()
}

// stop cancels the run and waits until its goroutines have ended.
func (r *run) stop() {
	r.cancel()
	<-r.done
}

func (r *run) parked() *parkInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.park
}

func (r *run) processLoop() {
	defer close(r.loopDone)
	// Index functions run on this goroutine (reentry.go).
	gid := mailbox.GoroutineID()
	r.e.loopGID.Store(gid)
	defer r.e.loopGID.CompareAndSwap(gid, 0)
	// PopBatch rather than Pop: a batch of up to 1,000 queued changes is applied under one
	// lock, and RealFIFO's per-pop bookkeeping (a trace with its fields while the queue is
	// deep, the Deltas wrappers) is paid per batch instead of per object, which is most of
	// the garbage of a sync besides the objects themselves.
	apply := func(deltas []cache.Delta, isInInitialList bool) error {
		batch := deltas
		deltas, markers, bookmark := withoutMarkers(deltas)
		// Recorded under the entry's dispatch lock, with the deltas applied: a snapshot
		// written in between would save the objects at their new versions under the
		// version before, and a process resumed from it would be sent those changes again.
		err := r.e.apply(deltas, applyOptions{initial: isInInitialList, trustRV: r.snap.trustsRV()}, func() {
			r.e.snapshotApplied(deltas)
			r.replacedApplied.Add(markers)
			for _, d := range deltas {
				if d.Type == cache.Replaced {
					r.replacedApplied.Add(1)
				}
			}
			if r.e.snap != nil {
				// A list applied whole (a relist after 410 included) makes the cache
				// consistent with its resourceVersion, even when no object changed: the next
				// snapshot saves it, so that a quiet resource does not relist at every restart.
				if rv, ok := r.fifo.listApplied(r.replacedApplied.Load()); ok {
					// Stored, not raised: the version a whole list is consistent with may be
					// lower than one applied before it (a snapshot ahead of the server). The
					// watch's events that follow the list in this batch count, though.
					r.e.snap.appliedRV.Store(listConsistentRV(rv, batch))
					r.e.snap.dirty.Store(true)
				}
				r.e.snap.bookmarked(bookmark)
			}
		})
		r.relisted()
		if r.snap != nil {
			select {
			case r.progress <- struct{}{}:
			default:
			}
		}
		return err
	}
	single := func(obj any, isInInitialList bool) error {
		deltas, ok := obj.(cache.Deltas)
		if !ok {
			return nil
		}
		return apply(deltas, isInInitialList)
	}
	for {
		err := r.fifo.PopBatch(apply, single)
		if errors.Is(err, cache.ErrFIFOClosed) {
			return
		}
		if err != nil {
			r.e.logger.V(2).Info("Cannot apply a change to the cache", "err", err)
		}
	}
}

// watchSynced waits until the FIFO has handed out every object of the first list, then
// marks the entry synced. RealFIFO closes Done after the last initial item was applied,
// still holding its lock; HasSynced takes that lock, so it returns after the item was applied.
func (r *run) watchSynced() {
	defer r.e.releaseHandlers() // if the run ends before its snapshot is served (waitCurrent)
	select {
	case <-r.fifo.Done():
	case <-r.ctx.Done():
		r.listedBeforePark()
		return
	}
	if r.fifo.HasSynced() && r.ctx.Err() == nil && r.waitCurrent() {
		r.e.runSynced(r, false)
		r.e.snapshotSynced()
	} else {
		r.listedBeforePark()
	}
}

// listedBeforePark marks the list of a run that parked WatchForbidden right after it as
// synced (HasSynced, LastSyncTime, the handlers' registrations), as watchSynced does when it
// sees the list applied before the watch is refused: the processing loop applies what the
// FIFO holds as the run ends, and the park keeps that complete list. Which of the two came
// first is a race between the processing loop and the watch request; it decided whether
// HasSynced ever became true. A run that started from a snapshot did not list: the next
// run does (supervise).
func (r *run) listedBeforePark() {
	if r.snap != nil {
		return
	}
	if p := r.parked(); p == nil || p.reason != ReasonWatchForbidden {
		return
	}
	select {
	case <-r.fifo.Done():
	case <-r.loopDone:
	}
	if r.fifo.HasSynced() && r.waitCurrent() {
		r.e.runSynced(r, true)
		r.e.snapshotSynced()
	}
}

// failed implements lwHooks: it decides between parking and letting the reflector retry.
func (r *run) failed(ctx context.Context, o op, err error) bool {
	if r.ctx.Err() != nil {
		return false // the run is stopping: a request cut by its cancellation is no failure
	}
	reason := classify(err)
	r.e.countError(reason)
	switch reason {
	case ReasonExpired:
		return false // the reflector relists
	case ReasonNotFound, ReasonForbidden, ReasonInvalid:
		if o == opWatchList {
			return false // the reflector falls back to a LIST, whose answer decides
		}
	default:
		r.e.transient(reason, err)
		return false
	}
	if reason == ReasonNotFound && !r.e.confirmGone(ctx) {
		// Discovery still serves the resource (an apiserver still loading CRDs, discovery
		// lagging): retry with the reflector's backoff, never drop the cache on a maybe.
		r.e.transient(reason, err)
		return false
	}
	if reason == ReasonForbidden && o == opWatch {
		r.mu.Lock()
		listOK := r.listOK
		r.mu.Unlock()
		// A list that worked earlier in the run does not mean it still would: ask, so that
		// both revoked reads park as Forbidden in every mode (the compact mode lists where
		// the others stream a watch-list).
		if listOK && r.e.listAllowed(ctx) {
			reason = ReasonWatchForbidden
		}
	}
	r.mu.Lock()
	if r.park == nil {
		r.park = &parkInfo{reason: reason, err: err}
	}
	r.mu.Unlock()
	r.cancel()
	return true
}

// succeeded implements lwHooks.
func (r *run) succeeded(o op) {
	if o == opList {
		r.mu.Lock()
		r.listOK = true
		r.mu.Unlock()
	}
	r.e.healthy()
}

// streamFailed implements lwHooks.
func (r *run) streamFailed(err error) {
	if r.ctx.Err() != nil {
		return // the run is stopping (release, park, shutdown): the cut stream is expected
	}
	reason := classify(err)
	r.e.countError(reason)
	if reason != ReasonExpired {
		r.e.transient(reason, err)
	}
}

// relisted tells the entry of a list applied whole after the run's first (a relist after
// 410), for Status.LastSyncTime; the first is the run's sync (watchSynced). It runs on the
// processing loop after each batch.
func (r *run) relisted() {
	n := r.fifo.lists.Load()
	if n == r.listsApplied || r.replacedApplied.Load() < r.fifo.lastTarget.Load() {
		return
	}
	first := r.listsApplied == 0
	r.listsApplied = n
	if !first {
		r.e.relisted(r)
	}
}

// countingFIFO counts the lists the reflector applies (Replace calls) and the objects
// they queue.
type countingFIFO struct {
	*cache.RealFIFO
	onReplace func()
	replaced  atomic.Int64

	// The last list not known to be applied: its resourceVersion, and the number of
	// Replaced deltas queued up to its last one (RealFIFO queues a list's deletes first).
	mu         sync.Mutex
	listRV     uint64
	listTarget int64

	// fromSnapshot: the run's first list is its snapshot, whose version was recorded as it
	// loaded, and dropped if the snapshot is found ahead of the server (which may be found
	// before that list is applied): Replace does not record it. Set before the run starts;
	// read and cleared by the reflector's goroutine.
	fromSnapshot bool
	// lists counts the lists queued and lastTarget is replaced up to the end of the last
	// one: it is applied once the processing loop has applied that many (run.relisted).
	// Recorded before the list's items are queued, as listRV.
	lists, lastTarget atomic.Int64
	// bookmarks: the informer writes snapshots, and the watch's bookmarks are queued
	// (Bookmark). Set before the run starts.
	bookmarks bool
}

// Bookmark queues the resourceVersion of a watch bookmark (cache.ReflectorBookmarkStore)
// for an informer that writes snapshots: applied in order with the watch's events, it says
// the cache is consistent with that version, which a filtered or quiet informer's own
// objects may not reach for hours while the server's watch window moves on (a namespace
// of Pods nobody changes on a cluster whose Pods change every second: the saved version
// would be out of the window at every restart, and every restart a LIST). Bookmarks come
// about once a minute; a version that is not a number is ignored.
func (f *countingFIFO) Bookmark(rv string) error {
	if !f.bookmarks {
		return nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n == 0 {
		return nil
	}
	return f.RealFIFO.Delete(cache.DeletedFinalStateUnknown{Key: "/bookmark", Obj: bookmarkMarker{rv: n}})
}

func (f *countingFIFO) Replace(items []any, rv string) error {
	f.onReplace()
	// An empty list queues only the deletes of what the cache holds, with no listed object
	// after them to tell when they are applied (run.relisted, snapshots): a list end marker
	// follows them (listEnd), counted as one listed object.
	mark := len(items) == 0
	n := int64(max(len(items), 1))
	// Counted before they are queued, so that the count of queued objects is never behind
	// the count applied: a list is being applied while it is ahead (run.listing).
	target := f.replaced.Add(n)
	// The list is recorded before its items are queued: the processing loop may apply them
	// all before RealFIFO.Replace returns, and a list recorded after that was found applied
	// only at the next batch, the watch's events, whose higher resourceVersion the list's
	// then replaced; a snapshot run waiting for the events' version (waitCurrent) stayed
	// Syncing until the next change, for good on a quiet resource.
	recorded := false
	var prevRV uint64
	var prevTarget int64
	fromSnapshot := f.fromSnapshot
	f.fromSnapshot = false
	f.lastTarget.Store(target)
	f.lists.Add(1)
	if v, perr := strconv.ParseUint(rv, 10, 64); perr == nil && n > 0 && !fromSnapshot {
		f.mu.Lock()
		prevRV, prevTarget = f.listRV, f.listTarget
		f.listRV, f.listTarget = v, target
		f.mu.Unlock()
		recorded = true
	}
	err := f.RealFIFO.Replace(items, rv)
	if err == nil && mark {
		err = f.RealFIFO.Delete(listEnd)
	}
	if err != nil {
		f.replaced.Add(-n)
		f.lists.Add(-1)
		if recorded {
			f.mu.Lock()
			if f.listTarget == target {
				f.listRV, f.listTarget = prevRV, prevTarget
			}
			f.mu.Unlock()
		}
	}
	return err
}

// listEnd is the marker queued after the deletes of an empty list: a tombstone under a key
// no object has (the store's keys are "name" or "namespace/name", names without a slash),
// which the processing loop takes out of each batch (withoutListEnds) before the entry
// applies it.
var listEnd = cache.DeletedFinalStateUnknown{Key: "/list end", Obj: listEndMarker{}}

type listEndMarker struct{}

// isListEnd reports whether d is the list end marker.
func isListEnd(d cache.Delta) bool {
	t, ok := d.Object.(cache.DeletedFinalStateUnknown)
	if !ok {
		return false
	}
	_, ok = t.Obj.(listEndMarker)
	return ok
}

// bookmarkMarker is the object of the tombstone Bookmark queues, under a key no object has
// (as listEnd's); the processing loop takes it out of each batch (withoutMarkers).
type bookmarkMarker struct{ rv uint64 }

// withoutMarkers returns deltas without list end and bookmark markers (deltas itself when
// there is none), how many list ends there were and the highest bookmarked version (0 for
// none).
func withoutMarkers(deltas []cache.Delta) (out []cache.Delta, listEnds int64, bookmark uint64) {
	marker := func(d cache.Delta) bool {
		t, ok := d.Object.(cache.DeletedFinalStateUnknown)
		if !ok {
			return false
		}
		switch m := t.Obj.(type) {
		case listEndMarker:
			listEnds++
			return true
		case bookmarkMarker:
			bookmark = max(bookmark, m.rv)
			return true
		}
		return false
	}
	for i, d := range deltas {
		if !marker(d) {
			if out != nil {
				out = append(out, d)
			}
			continue
		}
		if out == nil {
			out = make([]cache.Delta, i, len(deltas)-1)
			copy(out, deltas[:i])
		}
	}
	if out == nil {
		return deltas, 0, 0
	}
	return out, listEnds, bookmark
}

// listApplied returns the resourceVersion of the last list once applied, the number of
// Replaced deltas applied so far, covers it, once.
func (f *countingFIFO) listApplied(applied int64) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listRV == 0 || applied < f.listTarget {
		return 0, false
	}
	rv := f.listRV
	f.listRV = 0
	return rv, true
}

// replacedQueued returns how many objects the lists have queued (Replaced deltas, and the
// list end marker of each empty list).
func (f *countingFIFO) replacedQueued() int64 { return f.replaced.Load() }

// listing reports whether a list (a relist after 410 included) is being applied: the cache
// then holds some objects as listed and others as they were before, and the highest
// resourceVersion applied is no version it is consistent with. Counted for snapshot
// informers only.
func (r *run) listing() bool { return r.fifo.replacedQueued() > r.replacedApplied.Load() }

// isNoMatch reports a discovery miss: the resource is not served.
func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }
