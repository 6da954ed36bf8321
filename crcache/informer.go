package crcache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kindex/kindex/informer"
)

// Informer is what GetInformer returns: controller-runtime's cache.Informer over one
// resource read one way (typed, unstructured or metadata-only), backed by one kindex informer
// reference per namespace the cache is restricted to (one when it is not).
//
// Handlers receive objects of the kind the informer was asked for (*corev1.Pod for
// GetInformer(&corev1.Pod{})), decoded from the stored bytes. The handlers and index
// functions of one informer may share one decoded object per version (recent.go), as
// controller-runtime's share the object its informer holds: they must not modify what they
// receive (a change never reaches the cache or the reads, but another handler may see it);
// DeepCopy what is to be changed. A handler added after the informer synced first gets an
// add for every cached object, as in client-go.
type Informer struct {
	a *access
}

var _ cache.Informer = (*Informer)(nil)

// AddEventHandler adds a handler; see Informer.
func (i *Informer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod adds a handler. Resyncs happen with the cache's SyncPeriod
// (controller-runtime's cache.Options.SyncPeriod, default 10 hours) whatever the handler
// asks for.
func (i *Informer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

// AddEventHandlerWithOptions adds a handler; options.ResyncPeriod is ignored as in
// AddEventHandlerWithResyncPeriod, and kindex logs with the cache's logger.
func (i *Informer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	if h == nil {
		return nil, errors.New("crcache: nil event handler")
	}
	a := i.a
	r := &Registration{a: a, h: &convertingHandler{a: a, h: h}, synced: make(chan struct{}), removed: make(chan struct{})}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return nil, errAccessStopped
	}
	if a.shards != nil {
		if err := r.attachLocked(a.shards); err != nil {
			return nil, err
		}
	}
	a.regs[r] = struct{}{}
	a.sharers.Add(1)
	return r, nil
}

// RemoveEventHandler removes a handler added through this informer; notifications not yet
// delivered are dropped. It is idempotent.
func (i *Informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*Registration)
	if !ok || r.a != i.a {
		return fmt.Errorf("crcache: registration %T was not made by this informer", handle)
	}
	a := i.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, held := a.regs[r]; !held {
		return nil
	}
	delete(a.regs, r)
	a.sharers.Add(-1)
	r.detachLocked()
	return nil
}

// AddIndexers adds client-go index functions. Each receives objects of the informer's kind
// and runs as kindex's index functions do: an error or a panic is counted, never fatal.
// Field selectors in List use the indexes of IndexField and IndexJSONPath, not these.
func (i *Informer) AddIndexers(indexers toolscache.Indexers) error {
	for name, fn := range indexers {
		if fn == nil {
			return fmt.Errorf("crcache: indexer %q: nil function", name)
		}
		if err := i.a.addIndex(&indexReg{name: name, fn: i.a.indexFunc(fn)}); err != nil {
			return err
		}
	}
	return nil
}

// HasSynced reports whether the informer has applied a complete list from the server at
// least once (in every namespace it covers); once true it stays true.
func (i *Informer) HasSynced() bool { return i.a.hasSynced() }

// HasSyncedChecker is the channel form of HasSynced.
func (i *Informer) HasSyncedChecker() toolscache.DoneChecker {
	a := i.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.checker == nil {
		a.checker = &doneChecker{name: fmt.Sprintf("%s informer of %s", a.key.kind, a.key.gvk), done: make(chan struct{})}
		go a.watchSynced(a.checker)
	}
	return a.checker
}

// IsStopped reports whether the informer was removed (RemoveInformer) or the cache stopped.
func (i *Informer) IsStopped() bool { return i.a.isStopped() }

// Statuses returns the status of each kindex informer behind this one: its phase (Syncing,
// Synced, Parked, Stopped), the reason it is parked or retrying (Forbidden, NotFound, ...),
// its last error and its object count.
func (i *Informer) Statuses() []informer.Status {
	shards, err := i.a.current()
	if err != nil {
		return nil
	}
	out := make([]informer.Status, len(shards))
	for k, s := range shards {
		out[k] = s.status()
	}
	return out
}

// watchSynced closes the checker's channel once every shard has synced.
func (a *access) watchSynced(ch *doneChecker) {
	select {
	case <-a.ready:
	case <-a.stopCh:
		return
	}
	if a.err != nil {
		return
	}
	ctx, cancel := stopContext(a.stopCh)
	defer cancel()
	var last []shard
	for {
		shards, err := a.current()
		if err != nil || (last != nil && len(shards) > 0 && shards[0] == last[0]) {
			return // stopped, or a failure that is not a new plan
		}
		last = shards
		synced := true
		for _, s := range shards {
			if !s.hasSynced() && s.waitForSync(ctx) != nil && !s.hasSynced() {
				synced = false
				break
			}
		}
		if synced {
			ch.close()
			return
		}
		if ctx.Err() != nil {
			return
		}
		// Released by a new plan (replan.go), which swapped its informers in first: wait
		// for those.
	}
}

// doneChecker is a toolscache.DoneChecker.
type doneChecker struct {
	name string
	once sync.Once
	done chan struct{}
}

func (d *doneChecker) Name() string          { return d.name }
func (d *doneChecker) Done() <-chan struct{} { return d.done }
func (d *doneChecker) close()                { d.once.Do(func() { close(d.done) }) }
func closedChecker(name string) *doneChecker {
	d := &doneChecker{name: name, done: make(chan struct{})}
	d.close()
	return d
}
func (d *doneChecker) isDone() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Registration is a handler added to an Informer: one kindex registration per shard.
type Registration struct {
	a       *access
	h       toolscache.ResourceEventHandler
	regs    []*informer.Registration // guarded by a.mu
	synced  chan struct{}
	once    sync.Once
	removed chan struct{}
	gone    bool // guarded by a.mu
	// callMu serializes the calls of h: those of the kindex registrations of this
	// attachment, those of an attachment being replaced, and the deletes a new plan
	// delivers in between (replan.go). gen counts attachments: a call through the kindex
	// registration of an older one (in flight when it was removed) is dropped.
	callMu sync.Mutex
	gen    atomic.Uint64
}

var _ toolscache.ResourceEventHandlerRegistration = (*Registration)(nil)

// attachLocked adds the handler to every shard (a.mu held).
func (r *Registration) attachLocked(shards []shard) error {
	regs := make([]*informer.Registration, 0, len(shards))
	h := &gatedHandler{r: r, gen: r.gen.Load()}
	for _, s := range shards {
		reg, err := s.addHandler(h)
		if err != nil {
			for k, done := range regs {
				_ = shards[k].removeHandler(done)
			}
			return err
		}
		regs = append(regs, reg)
	}
	r.regs = regs
	go r.watch(regs)
	return nil
}

// detachLocked removes the handler from every shard (a.mu held).
func (r *Registration) detachLocked() {
	if r.gone {
		return
	}
	r.gone = true
	r.gen.Add(1)
	close(r.removed)
	for k, reg := range r.regs {
		if k < len(r.a.shards) {
			_ = r.a.shards[k].removeHandler(reg)
		}
	}
}

// suspendLocked removes the handler from shards, the access's informers being replaced
// (replan.go; a.mu held), and returns the generation of its next attachment: calls of this
// one still in flight are dropped.
func (r *Registration) suspendLocked(shards []shard) uint64 {
	for k, reg := range r.regs {
		if k < len(shards) {
			_ = shards[k].removeHandler(reg)
		}
	}
	r.regs = nil
	return r.gen.Add(1)
}

// gatedHandler is one attachment of a Registration's handler: its calls hold the
// registration's callMu and are dropped once the registration has moved on.
type gatedHandler struct {
	r   *Registration
	gen uint64
}

func (g *gatedHandler) call(fn func(toolscache.ResourceEventHandler)) {
	g.r.callMu.Lock()
	defer g.r.callMu.Unlock()
	if g.r.gen.Load() == g.gen {
		fn(g.r.h)
	}
}

func (g *gatedHandler) OnAdd(obj any, initial bool) {
	g.call(func(h toolscache.ResourceEventHandler) { h.OnAdd(obj, initial) })
}

func (g *gatedHandler) OnUpdate(oldObj, newObj any) {
	g.call(func(h toolscache.ResourceEventHandler) { h.OnUpdate(oldObj, newObj) })
}

func (g *gatedHandler) OnDelete(obj any) {
	g.call(func(h toolscache.ResourceEventHandler) { h.OnDelete(obj) })
}

// watch closes synced once every shard registration has synced.
func (r *Registration) watch(regs []*informer.Registration) {
	for _, reg := range regs {
		select {
		case <-reg.HasSyncedChecker().Done():
		case <-r.removed:
			return
		case <-r.a.stopCh:
			return
		}
	}
	r.once.Do(func() { close(r.synced) })
}

// HasSynced reports whether the informer has synced and the handler has been given every
// object of that initial state. Once true it stays true.
func (r *Registration) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker is the channel form of HasSynced.
func (r *Registration) HasSyncedChecker() toolscache.DoneChecker {
	return &doneChecker{name: fmt.Sprintf("handler of the %s informer of %s", r.a.key.kind, r.a.key.gvk), done: r.synced}
}

// convertingHandler hands the user's handler objects of the access's kind.
type convertingHandler struct {
	a *access
	h toolscache.ResourceEventHandler
}

func (c *convertingHandler) convert(obj any) (any, bool) {
	o, err := c.a.eventObject(obj)
	if err != nil {
		c.a.c.logger().Error(err, "Cannot convert an object for an event handler; notification skipped", "gvk", c.a.key.gvk.String())
		return nil, false
	}
	return o, true
}

func (c *convertingHandler) OnAdd(obj any, isInInitialList bool) {
	if o, ok := c.convert(obj); ok {
		c.h.OnAdd(o, isInInitialList)
	}
}

func (c *convertingHandler) OnUpdate(oldObj, newObj any) {
	o, ok1 := c.convert(oldObj)
	n, ok2 := c.convert(newObj)
	if ok1 && ok2 {
		c.h.OnUpdate(o, n)
	}
}

func (c *convertingHandler) OnDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		if t.Obj != nil {
			o, ok := c.convert(t.Obj)
			if !ok {
				return
			}
			t.Obj = o
		}
		c.h.OnDelete(t)
		return
	}
	if o, ok := c.convert(obj); ok {
		c.h.OnDelete(o)
	}
}
