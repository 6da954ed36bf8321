package informer

import (
	"runtime/debug"
	"sync"

	"github.com/kindex/kindex/internal/mailbox"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/cache"
)

type noteKind uint8

const (
	noteAdd noteKind = iota
	noteUpdate
	noteDelete
	noteSynced // marker: every notification before it belongs to the initial state
	noteMark   // marker: closes mark once every notification before it was delivered
)

// notification carries stored items; they are turned into user objects (StorageMode.Object)
// on the listener's goroutine, off the processing loop.
type notification struct {
	kind noteKind
	old  any
	obj  any
	// initial: an add of a run's initial list, or of the cached objects a new handler is
	// handed (paced, pacer.go).
	initial bool
	// inInitialList is what the handler's OnAdd is told: as in client-go, true only for
	// the objects of the informer's first list and those a new handler is handed, not for
	// the adds of the list a run makes after a resume.
	inInitialList bool
	mark          chan struct{} // noteMark's
}

// listener delivers notifications to one handler on its own goroutine, through an unbounded
// mailbox (internal/mailbox): a slow handler delays only itself, never the store, the
// processing loop or other handlers. Memory is the price, visible as the handler's backlog.
type listener struct {
	handler cache.ResourceEventHandler
	convert func(any) (any, error)
	pace    func() // called before each initial add is converted; nil: never
	logger  logr.Logger
	onPanic func(error)
	// onLost is told of a notification skipped because its object could not be turned
	// into what the handler receives (nil: logged each time).
	onLost func(error)
	box    *mailbox.Mailbox[notification]

	syncedOnce sync.Once
	synced     chan struct{}
}

// newListener starts the listener's goroutine; done is called when it has ended.
func newListener(h cache.ResourceEventHandler, convert func(any) (any, error), pace func(), logger logr.Logger, onPanic func(error)) *listener {
	l := &listener{handler: h, convert: convert, pace: pace, logger: logger, onPanic: onPanic, synced: make(chan struct{})}
	l.box = mailbox.New(l.deliver, mailbox.Options[notification]{})
	return l
}

// add queues n; it never blocks on the handler. Adding to a closed listener does nothing.
func (l *listener) add(n notification) { l.box.Push(n) }

// close ends delivery: at once (pending notifications dropped), or after what is queued
// when drain is set. It does not wait for the goroutine (done tells).
func (l *listener) close(drain bool) {
	if drain {
		l.box.Drain()
	} else {
		l.box.Stop()
	}
}

// done is closed when the listener's goroutine has ended.
func (l *listener) done() <-chan struct{} { return l.box.Done() }

func (l *listener) backlog() int { return int(l.box.Stats().Pending) }

func (l *listener) markSynced() { l.syncedOnce.Do(func() { close(l.synced) }) }

func (l *listener) deliver(n notification) {
	switch n.kind {
	case noteSynced:
		l.markSynced()
		return
	case noteMark:
		close(n.mark)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			err := &PanicError{Callback: "handler", Value: r, Stack: string(debug.Stack())}
			if l.onPanic != nil {
				l.onPanic(err)
			} else {
				l.logger.Error(err, "Event handler panicked; notification skipped")
			}
		}
	}()
	switch n.kind {
	case noteAdd:
		if n.initial && l.pace != nil {
			l.pace()
		}
		if obj, ok := l.object(n.obj); ok {
			l.handler.OnAdd(obj, n.inInitialList)
		}
	case noteUpdate:
		old, ok1 := l.object(n.old)
		obj, ok2 := l.object(n.obj)
		if ok1 && ok2 {
			l.handler.OnUpdate(old, obj)
		}
	case noteDelete:
		if t, ok := n.obj.(cache.DeletedFinalStateUnknown); ok {
			if t.Obj != nil {
				obj, ok := l.object(t.Obj)
				if !ok {
					return
				}
				t.Obj = obj
			}
			l.handler.OnDelete(t)
			return
		}
		if obj, ok := l.object(n.obj); ok {
			l.handler.OnDelete(obj)
		}
	}
}

func (l *listener) object(item any) (any, bool) {
	obj, err := l.convert(item)
	if err != nil {
		if l.onLost != nil {
			l.onLost(err)
		} else {
			l.logger.Error(err, "Cannot turn a cached item into an object; notification skipped")
		}
		return nil, false
	}
	return obj, true
}

// Registration is one handler added to one informer. It satisfies
// cache.ResourceEventHandlerRegistration, so cache.WaitForCacheSync(stop, reg.HasSynced)
// works.
type Registration struct {
	l *listener
	e *entry
	// owner is the reference it was added through (set before the caller gets it).
	owner *handle
}

// HasSynced reports whether the informer has synced (Informer.HasSynced) and the handler
// has been delivered every object of that initial state (for a handler added later: every
// object in the cache when it was added). Once true it stays true. False for a zero or nil
// Registration (not made by AddEventHandler), which Backlog counts 0 for and whose
// HasSyncedChecker is never done.
func (r *Registration) HasSynced() bool {
	if r == nil || r.l == nil {
		return false
	}
	select {
	case <-r.l.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker is the channel form of HasSynced.
func (r *Registration) HasSyncedChecker() cache.DoneChecker { return regChecker{r} }

// Backlog is the number of notifications queued for the handler and not yet delivered.
func (r *Registration) Backlog() int {
	if r == nil || r.l == nil {
		return 0
	}
	return r.l.backlog()
}

type regChecker struct{ r *Registration }

func (c regChecker) Name() string {
	if c.r == nil || c.r.e == nil {
		return "kindex handler"
	}
	return "kindex handler of " + c.r.e.key.String()
}

func (c regChecker) Done() <-chan struct{} {
	if c.r == nil || c.r.l == nil {
		return nil // never done, as HasSynced is never true
	}
	return c.r.l.synced
}

var _ cache.ResourceEventHandlerRegistration = (*Registration)(nil)
