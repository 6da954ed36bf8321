package informer

import (
	"context"
	"runtime/debug"
	"sync"

	"github.com/kindex/kindex/internal/mailbox"
)

// statusCell holds an entry's Status and wakes waiters when it changes.
type statusCell struct {
	mu      sync.Mutex
	st      Status
	changed chan struct{} // closed and replaced on every significant change
}

func (c *statusCell) init(st Status) {
	c.st = st
	c.changed = make(chan struct{})
}

func (c *statusCell) get() (Status, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st, c.changed
}

// Status returns the entry's current status.
func (e *entry) Status() Status {
	st, _ := e.status.get()
	st.Objects = int(e.objects.Load())
	st.Lists = int(e.lists.Load())
	st.CallbackErrors = e.callbacks.count.Load()
	if p := e.callbacks.last.Load(); p != nil {
		st.LastCallbackError = *p
	}
	return st
}

// update applies mut to the status; on a change of phase, reason, error or sync time it
// updates the phase metric, logs the transition (one line per transition, never one per
// retry), then wakes waiters and publishes the status to subscribers.
func (e *entry) update(mut func(st *Status)) {
	c := &e.status
	c.mu.Lock()
	prev := c.st
	mut(&c.st)
	cur := c.st
	significant := cur.Phase != prev.Phase || cur.Reason != prev.Reason ||
		!cur.LastErrorTime.Equal(prev.LastErrorTime) || !cur.LastSyncTime.Equal(prev.LastSyncTime) ||
		cur.ServingFromSnapshot != prev.ServingFromSnapshot || errString(cur.SnapshotError) != errString(prev.SnapshotError)
	var wake chan struct{}
	if significant {
		wake = c.changed
		c.changed = make(chan struct{})
	}
	c.mu.Unlock()
	if !significant {
		return
	}
	cur.Objects = int(e.objects.Load())
	cur.Lists = int(e.lists.Load())
	if cur.Phase != prev.Phase {
		e.metrics.setPhase(cur.Phase)
	}
	// The line is written before anyone is told, so that a waiter or subscriber that saw
	// the transition also finds it in the log.
	e.logTransition(prev, cur)
	close(wake)
	e.core.hub.publish(cur)
	if cur.Phase == PhaseSynced {
		e.probing.Store(false) // the request answered: later parks are logged again
	}
}

func (e *entry) logTransition(prev, cur Status) {
	l := e.logger
	switch {
	case cur.Phase == prev.Phase && cur.Reason == prev.Reason:
		// a new error of the same kind, or a relist: no line
	case e.probing.Load() && (cur.Phase == PhaseParked || prev.Phase == PhaseParked && cur.Phase == PhaseSyncing):
		// The request tried again while its access review cannot be made: logged once.
		l.V(1).Info("Informer "+string(cur.Phase), "reason", cur.Reason, "err", errString(cur.LastError))
	case cur.Phase == PhaseParked:
		l.Info("Informer parked: no requests until the resource or the permissions change",
			"reason", cur.Reason, "err", errString(cur.LastError))
	case prev.Phase == PhaseParked && cur.Phase == PhaseSyncing:
		l.Info("Informer resuming", "parkedFor", prev.Reason)
	case cur.Phase == PhaseStopped:
		l.V(1).Info("Informer stopped")
	case cur.Phase != prev.Phase:
		l.V(1).Info("Informer "+string(cur.Phase), "objects", cur.Objects)
	case prev.Reason == ReasonNone:
		l.Info("Informer retrying with backoff", "reason", cur.Reason, "err", errString(cur.LastError))
	case cur.Reason == ReasonNone:
		l.Info("Informer recovered", "after", prev.Reason)
	default:
		l.V(1).Info("Informer still retrying", "reason", cur.Reason, "err", errString(cur.LastError))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// waitSynced waits until the entry is Synced or ctx ends; it returns the failure otherwise.
// With untilPark, a parked entry fails at once (its reason says why).
func (e *entry) waitSynced(ctx context.Context, untilPark bool) *SyncFailure {
	for {
		st, changed := e.status.get()
		if st.Phase == PhaseSynced {
			return nil
		}
		if st.Phase == PhaseStopped {
			return &SyncFailure{Key: e.key, Phase: st.Phase, Reason: st.Reason, Err: e.stoppedErr()}
		}
		if untilPark && st.Phase == PhaseParked {
			return &SyncFailure{Key: e.key, Phase: st.Phase, Reason: st.Reason, Err: st.LastError}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			st, _ = e.status.get()
			if st.Phase == PhaseSynced {
				return nil
			}
			reason := st.Reason
			if reason == ReasonNone {
				reason = ReasonNotSynced
			}
			return &SyncFailure{Key: e.key, Phase: st.Phase, Reason: reason, Err: st.LastError}
		}
	}
}

// hub delivers statuses to subscribers on its own goroutine, in order, through an
// unbounded mailbox (internal/mailbox): informers never wait for a subscriber.
type hub struct {
	box     *mailbox.Mailbox[Status]
	mu      sync.Mutex
	subs    map[int]*statusSub
	nextID  int
	calling *statusSub  // the subscriber being called, if any (under mu)
	called  *sync.Cond  // signalled (with mu) when a call returns
	onPanic func(error) // a subscriber's panic; the subscriber keeps its subscription
}

// statusSub is one subscription; removed is set, under the hub's mu, by its unsubscribe.
type statusSub struct {
	fn      func(Status)
	removed bool
}

func newHub(onPanic func(error)) *hub {
	h := &hub{subs: map[int]*statusSub{}, onPanic: onPanic}
	h.called = sync.NewCond(&h.mu)
	h.box = mailbox.New(h.fanOut, mailbox.Options[Status]{})
	return h
}

// subscribe adds fn and returns its unsubscribe: once that has returned, fn is not called
// again. Called from another goroutine it waits for fn's call in flight, if any; called
// from a subscriber (fn itself or another), which that call would be, it returns at once,
// and no call of fn starts after it.
func (h *hub) subscribe(fn func(Status)) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.nextID
	h.nextID++
	sub := &statusSub{fn: fn}
	h.subs[id] = sub
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, id)
		sub.removed = true
		if h.calling != sub || h.box.DeliversOn(mailbox.GoroutineID()) {
			return
		}
		for h.calling == sub {
			h.called.Wait() // releases mu: no lock is held across the call
		}
	}
}

// publish queues st for the subscribers; nothing is queued without one.
func (h *hub) publish(st Status) {
	h.mu.Lock()
	n := len(h.subs)
	h.mu.Unlock()
	if n > 0 {
		h.box.Push(st)
	}
}

// close drops what is queued and waits for the call in flight.
func (h *hub) close() { h.box.Close() }

func (h *hub) fanOut(st Status) {
	h.mu.Lock()
	subs := make([]*statusSub, 0, len(h.subs))
	for _, sub := range h.subs {
		subs = append(subs, sub)
	}
	h.mu.Unlock()
	for _, sub := range subs {
		h.mu.Lock()
		if sub.removed { // unsubscribed since the copy
			h.mu.Unlock()
			continue
		}
		h.calling = sub
		h.mu.Unlock()
		h.call(sub.fn, st)
		h.mu.Lock()
		h.calling = nil
		h.called.Broadcast()
		h.mu.Unlock()
	}
}

// call delivers st to one subscriber, recovering its panic.
func (h *hub) call(fn func(Status), st Status) {
	defer func() {
		if r := recover(); r != nil {
			h.onPanic(&PanicError{Callback: "status", Value: r, Stack: string(debug.Stack())})
		}
	}()
	fn(st)
}
