package informer

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// When a watch resumed from a snapshot counts as current ("Warm restart" in the package
// documentation). The watch was accepted once its response arrived without an error
// event: the apiserver answers a watch from a compacted resourceVersion with a 410 error
// event at once. The events since the snapshot's version follow at once too, but a plain
// watch sends no marker after them; so the run asks the server for its current
// resourceVersion P without a LIST (storage.ResourceVersionProber) after the watch was
// accepted, and the watch is current once it delivered an event at or beyond P, or, when
// nothing that recent changed, once it stayed quiet for settle after the answer: the
// events from before P were on their way before the probe was even sent.
var (
	// snapshotQuiet is how long a watch must stay open without an error before it counts
	// as current when there is no probe or the probe failed; also the longest settle.
	snapshotQuiet = 250 * time.Millisecond
	// snapshotSettleMin is the shortest settle after the probe's answer; the settle is
	// otherwise the probe's round trip (a loaded server or machine delays both alike).
	snapshotSettleMin = 20 * time.Millisecond
	// snapshotFirstEvent is how long after the watch was accepted a watch that delivered
	// nothing yet must wait before counting as current. A watch served from the
	// apiserver's watch cache has its events since the snapshot queued before it is
	// accepted; one served from etcd (a resource without a watch cache) gets them from
	// etcd's catch-up of new watchers, which runs every 100 ms. On a loaded machine the
	// wait grows with the probe's round trip (four of them).
	snapshotFirstEvent = 120 * time.Millisecond
)

// probeResult is the answer of a snapRun's probe.
type probeResult struct {
	rv  uint64
	err error
	rtt time.Duration
}

// snapshotWatch forwards a watch of a snapshot run and decides when the run is current
// (see snapshotQuiet): it then records what the cache must have applied (snapRun's
// targets) and closes the run's current channel.
type snapshotWatch struct {
	inner   watch.Interface
	out     chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

// filteredWatcher is a ListerWatcher that drops some of the events it receives: shardLW,
// those of other shards where the server does not filter.
type filteredWatcher interface {
	watchFiltered(ctx context.Context, opts metav1.ListOptions, dropped *droppedProgress) (watch.Interface, error)
}

// droppedProgress is the highest resourceVersion of the events a filter below a snapshot
// watch dropped, and a signal of each new one. Those events never reach the cache, but they
// show how far the watch has come: without them, a watch whose events are mostly other
// shards' (the server sends every shard's) would look quiet, and count as current, while
// the events of its own shard made before the probe were still behind them.
type droppedProgress struct {
	rv     atomic.Uint64
	signal chan struct{} // buffered: one pending signal is enough
}

// dropped records obj's resourceVersion. The filter calls it in the order of the events, on
// the goroutine that hands the kept ones over unbuffered: when the snapshot watch reads rv,
// it has received every kept event before the dropped one. A nil p does nothing.
func (p *droppedProgress) dropped(obj runtime.Object) {
	if p == nil {
		return
	}
	a, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rv, err := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	if err != nil || rv <= p.rv.Load() {
		return
	}
	p.rv.Store(rv)
	select {
	case p.signal <- struct{}{}:
	default:
	}
}

// signals is the channel that signals each new dropped event; nil (never ready) for a nil p.
func (p *droppedProgress) signals() <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.signal
}

// last is the highest resourceVersion dropped so far; 0 for a nil p.
func (p *droppedProgress) last() uint64 {
	if p == nil {
		return 0
	}
	return p.rv.Load()
}

// watchWithProgress starts inner's watch, with the progress of what a filter in it drops if
// it has one (nil otherwise).
func watchWithProgress(ctx context.Context, inner cache.ListerWatcherWithContext, opts metav1.ListOptions) (watch.Interface, *droppedProgress, error) {
	if f, ok := inner.(filteredWatcher); ok {
		p := &droppedProgress{signal: make(chan struct{}, 1)}
		w, err := f.watchFiltered(ctx, opts, p)
		return w, p, err
	}
	w, err := inner.WatchWithContext(ctx, opts)
	return w, nil, err
}

// from is the resourceVersion the watch starts from: the snapshot's, or a relist's. With a
// filter below the watch (dropped not nil), the events it dropped count as events of the
// watch for the decision, not as events the cache must have applied.
func newSnapshotWatch(ctx context.Context, inner watch.Interface, sr *snapRun, from string, replaced func() int64, dropped *droppedProgress) *snapshotWatch {
	w := &snapshotWatch{inner: inner, out: make(chan watch.Event), stopped: make(chan struct{})}
	pctx, cancel := context.WithCancel(ctx)
	probed := make(chan probeResult, 1)
	start := time.Now()
	quiet, settleMin, firstEvent := snapshotQuiet, snapshotSettleMin, snapshotFirstEvent
	if sr.probe != nil {
		go func() {
			s, err := sr.probe(pctx)
			res := probeResult{err: err, rtt: time.Since(start)}
			if err == nil {
				res.rv, res.err = strconv.ParseUint(s, 10, 64)
			}
			probed <- res
		}()
	}
	go func() {
		defer close(w.out)
		defer cancel()
		d := decider{sr: sr, replaced: replaced, cancel: cancel}
		var timer *time.Timer
		var timerC <-chan time.Time
		arm := func(after time.Duration) {
			if timer == nil {
				timer = time.NewTimer(after)
				timerC = timer.C
				return
			}
			timer.Reset(after)
		}
		defer func() {
			if timer != nil {
				timer.Stop()
			}
		}()
		settle := quiet
		if sr.probe == nil {
			arm(settle)
		}
		in := inner.ResultChan()
		progress, droppedRV := dropped.signals(), dropped.last
		for {
			select {
			case ev, ok := <-in:
				if !ok {
					return
				}
				rv := d.seen(ev)
				select {
				case w.out <- ev:
				case <-w.stopped:
					return
				}
				if d.done {
					continue
				}
				if d.probeRV > 0 && rv >= d.probeRV {
					d.current()
					continue
				}
				if timerC != nil {
					arm(settle) // quiet means no event for settle
				}
			case <-progress:
				d.any = true
				if d.done {
					continue
				}
				if d.probeRV > 0 && droppedRV() >= d.probeRV {
					d.current()
					continue
				}
				if timerC != nil {
					arm(settle) // a dropped event is an event: the watch is not quiet
				}
			case res := <-probed:
				if d.done {
					continue
				}
				if res.err != nil {
					sr.logger.V(2).Info("Cannot learn the server's resourceVersion without a LIST; waiting for a quiet watch", "err", res.err.Error())
					arm(max(0, quiet-time.Since(start)))
					continue
				}
				if behind(from, res.rv) {
					// The server has not reached the version the watch starts from (the
					// snapshot's): the snapshot is another cluster's, or etcd was restored
					// without a revision bump, and the watch from it would wait for changes
					// that never come. An expired watch makes the reflector relist, which
					// replaces the snapshot's objects by the differences; the watch after
					// that relist starts from the list's version, which the server has.
					sr.logger.Info("The snapshot is ahead of the server; relisting",
						"snapshotResourceVersion", sr.meta.ResourceVersion, "serverResourceVersion", res.rv)
					d.done = true
					d.cancel()
					sr.foreign()
					if sr.unusable != nil {
						sr.unusable()
					}
					select {
					case w.out <- watch.Event{Type: watch.Error, Object: aheadStatus(sr.meta.ResourceVersion, res.rv)}:
					case <-w.stopped:
					}
					return
				}
				d.probeRV = res.rv
				if d.maxRV >= d.probeRV || droppedRV() >= d.probeRV {
					d.current()
					continue
				}
				settle = min(max(res.rtt, settleMin), quiet)
				wait := settle
				if !d.any && droppedRV() == 0 {
					wait = max(settle, firstEvent-time.Since(start), 4*res.rtt)
				}
				arm(wait)
			case <-timerC:
				if !d.done {
					d.current()
				}
			case <-w.stopped:
				return
			}
		}
	}()
	return w
}

// behind reports whether the server's resourceVersion is lower than from, the version a
// watch starts from.
func behind(from string, server uint64) bool {
	n, err := strconv.ParseUint(from, 10, 64)
	return err == nil && server < n
}

// aheadStatus is the error a snapshot ahead of the server ends its watch with: 410 Expired,
// which makes the reflector relist.
func aheadStatus(snapshotRV string, server uint64) *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: fmt.Sprintf("the snapshot's resourceVersion %s is ahead of the server's %d", snapshotRV, server)}
}

// decider is the state of one snapshotWatch's decision.
type decider struct {
	sr       *snapRun
	replaced func() int64
	cancel   context.CancelFunc
	done     bool   // decided: current, or not (an error event)
	maxRV    uint64 // the highest resourceVersion of an object forwarded
	any      bool   // an event was forwarded
	probeRV  uint64 // the probe's answer (0: none yet)
}

// seen notes an event about to be forwarded and returns its resourceVersion (0 if none):
// an error before the decision means the watch was not accepted (410 Gone: the reflector
// relists, and the next watch decides).
func (d *decider) seen(ev watch.Event) uint64 {
	d.any = true
	if ev.Type == watch.Error {
		if !d.done {
			d.done = true
			d.cancel()
		}
		return 0
	}
	a, err := meta.Accessor(ev.Object)
	if err != nil {
		return 0
	}
	rv, err := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0
	}
	if ev.Type != watch.Bookmark && rv > d.maxRV {
		d.maxRV = rv
	}
	return rv
}

func (d *decider) current() {
	d.done = true
	d.cancel()
	d.sr.markCurrent(d.maxRV, d.replaced())
}

func (w *snapshotWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *snapshotWatch) Stop() {
	w.once.Do(func() {
		close(w.stopped)
		w.inner.Stop()
	})
}

// waitCurrent is called once r's initial list (the snapshot) was applied: the informer
// serves from the snapshot until the watch is current and what it delivered until then
// has been applied. It returns false if the run ended first.
func (r *run) waitCurrent() bool {
	if r.snap == nil {
		if r.slw != nil {
			if rv, err := strconv.ParseUint(r.slw.firstListRV(), 10, 64); err == nil {
				r.e.snap.raise(rv)
				r.e.snap.dirty.Store(true) // even with no object: the version is news
			}
		}
		return true
	}
	// The run's first list was the snapshot, whose version was recorded as it loaded and
	// is dropped if the snapshot is found ahead of the server: not raised again here.
	r.e.update(func(st *Status) { st.ServingFromSnapshot = true })
	r.e.releaseHandlers() // the snapshot is in the cache: handlers may start (holdHandlers)
	select {
	case <-r.snap.current:
	case <-r.ctx.Done():
		return false
	}
	for r.e.snap.appliedRV.Load() < r.snap.targetRV || r.replacedApplied.Load() < r.snap.targetReplaced {
		select {
		case <-r.progress:
		case <-r.ctx.Done():
			return false
		}
	}
	return true
}

// earlyWatch is the watch of a snapshot run from the snapshot's resourceVersion, started
// as soon as the file's header is read, while its objects load: the wait that decides when
// the watch is current (snapshotFirstEvent, the probe) then overlaps the load and the
// cache's filling instead of following them. The reflector's first Watch, which asks for
// the same version once the snapshot is served as its first List, takes it (get).
type earlyWatch struct {
	rv     string
	cancel context.CancelFunc
	done   chan struct{} // closed once w and err are set
	w      watch.Interface
	err    error
}

// startEarlyWatch starts the watch of sr from its snapshot's version with the options the
// reflector would use (bookmarks allowed, the reflector's shortest timeout), on ctx, the
// run's context.
func startEarlyWatch(ctx context.Context, inner cache.ListerWatcherWithContext, sr *snapRun, replaced func() int64) *earlyWatch {
	ctx, cancel := context.WithCancel(ctx)
	ew := &earlyWatch{rv: sr.meta.ResourceVersion, cancel: cancel, done: make(chan struct{})}
	timeout := int64(earlyWatchTimeout.Seconds())
	opts := metav1.ListOptions{ResourceVersion: ew.rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout}
	go func() {
		defer close(ew.done)
		w, dropped, err := watchWithProgress(ctx, inner, opts)
		if err != nil {
			ew.err = err
			return
		}
		ew.w = newSnapshotWatch(ctx, w, sr, ew.rv, replaced, dropped)
	}()
	return ew
}

// earlyWatchTimeout is the server-side timeout of an early watch: the reflector's minimum
// (it picks between 5 and 10 minutes); the reflector watches again when it ends.
const earlyWatchTimeout = 5 * time.Minute

// get waits until the watch is established and returns it (or why it could not be).
func (ew *earlyWatch) get(ctx context.Context) (watch.Interface, error) {
	select {
	case <-ew.done:
		return ew.w, ew.err
	case <-ctx.Done():
		ew.stop()
		return nil, ctx.Err()
	}
}

// stop ends a watch nobody takes.
func (ew *earlyWatch) stop() {
	if ew == nil {
		return
	}
	ew.cancel()
	go func() {
		<-ew.done
		if ew.w != nil {
			ew.w.Stop()
		}
	}()
}
