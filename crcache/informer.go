package crcache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
// delivered are dropped. It is idempotent. A registration of another informer (another
// read of the resource, or an informer since removed) is left as it is and is no error, as
// client-go's informers answer a handle they do not hold; a handle crcache did not make is
// an error.
func (i *Informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*Registration)
	if !ok {
		return fmt.Errorf("crcache: registration %T was not made by this cache", handle)
	}
	if r.a != i.a {
		return nil
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
// As client-go's, it adds all of them or, when one is nil or its name is taken
// (informer.ErrIndexConflict), none: every name is checked before any is registered.
func (i *Informer) AddIndexers(indexers toolscache.Indexers) error {
	names := slices.Sorted(maps.Keys(indexers))
	for _, name := range names {
		if indexers[name] == nil {
			return fmt.Errorf("crcache: indexer %q: nil function", name)
		}
		if err := i.a.checkIndexName(name); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := i.a.addIndex(&indexReg{name: name, fn: i.a.indexFunc(indexers[name])}); err != nil {
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
// its last error and its object count. When the informer could not move to the kindex
// informers of its resource's new plan (a CRD re-created with the other scope), it has
// none: each of those it lacks is shown Stopped, with the error.
func (i *Informer) Statuses() []informer.Status {
	if st := i.a.failedStatuses(); st != nil {
		return st
	}
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

// Registration is a handler added to an Informer: one kindex registration per kindex
// informer behind it (one per namespace the cache is restricted to, one when it is not).
type Registration struct {
	a       *access
	h       toolscache.ResourceEventHandler
	regs    []*informer.Registration // guarded by a.mu; nil while not attached
	synced  chan struct{}
	once    sync.Once
	removed chan struct{}
	gone    bool // guarded by a.mu
	// attached is the generation of the attachment to the access's informers (regs), 0
	// while there is none; detached is closed when that attachment ends. Guarded by a.mu.
	attached uint64
	detached chan struct{}
	// handoffs are the handler's kindex registrations on informers it was moved off
	// (replan.go), delivering what was queued for them; moving says a goroutine moves the
	// handler (move), which attaches it to the access's informers once they have. Guarded
	// by a.mu.
	handoffs []handoff
	moving   bool
	// callMu serializes the calls of h: those of the kindex registrations of this
	// attachment, those of the registrations being handed off, and the deletes a move
	// delivers (replan.go). gen counts attachments and removals: a call through the kindex
	// registration of an older attachment (in flight when it was removed) is dropped.
	callMu sync.Mutex
	gen    atomic.Uint64
	// held (guarded by callMu) is what the handler holds from informers it was moved off
	// and the informers it is attached to now have not told it of yet: an object they
	// hand it again is an update (or nothing, at the same resourceVersion), and what is
	// left once they have handed it their objects is deleted (settle).
	held map[string]item
}

// handoff is one kindex registration of a handler being moved off an informer: seen is
// what the handler holds of that informer once done is closed (its queue delivered), and
// gone says that those objects are gone (the resource was planned again), rather than
// served by the informers the handler moves to (the same resource, read from another
// store).
type handoff struct {
	seen map[string]item
	done <-chan struct{}
	gone bool
}

var _ toolscache.ResourceEventHandlerRegistration = (*Registration)(nil)

// attachLocked adds the handler to every shard (a.mu held).
func (r *Registration) attachLocked(shards []shard) error {
	regs := make([]*informer.Registration, 0, len(shards))
	gen := r.gen.Add(1)
	h := &gatedHandler{r: r, gen: gen, stop: r.a.c.ctx.Done()}
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
	r.regs, r.attached, r.detached = regs, gen, make(chan struct{})
	go r.watch(regs, gen, r.detached)
	return nil
}

// endAttachmentLocked forgets the current attachment (a.mu held).
func (r *Registration) endAttachmentLocked() {
	r.regs, r.attached = nil, 0
	if r.detached != nil {
		close(r.detached)
		r.detached = nil
	}
}

// detachLocked removes the handler from every shard (a.mu held): what is queued for it is
// dropped, handoffs included.
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
	r.endAttachmentLocked()
	r.handoffs = nil
}

// handOffLocked moves the handler off shards, the access's informers being replaced
// (replan.go; a.mu held): each kindex registration delivers what is queued for it, and
// the move (moveLocked) goes on from what the handler then holds. gone: those objects are
// gone, not served by the new informers.
func (r *Registration) handOffLocked(shards []shard, gone bool) {
	for k, reg := range r.regs {
		if k >= len(shards) {
			continue
		}
		seen, done, err := shards[k].handOff(reg)
		if err != nil {
			r.a.c.logger().Error(err, "Cannot hand an event handler off its informer", "gvk", r.a.key.gvk.String())
			continue
		}
		r.handoffs = append(r.handoffs, handoff{seen: seen, done: done, gone: gone})
	}
	r.endAttachmentLocked()
}

// moveLocked starts the goroutine that moves the handler to the access's informers, unless
// one runs (a.mu held; the caller counts in c.bg, as the goroutine does until it ends).
func (r *Registration) moveLocked(ctx context.Context) {
	if r.moving || r.gone || r.attached != 0 {
		return
	}
	r.moving = true
	r.a.c.bg.Add(1)
	go r.move(ctx)
}

// move waits until the handler's kindex registrations being handed off have delivered
// their queues, tells it (with DeletedFinalStateUnknown deletes) that what they handed it
// is gone when it is, and then adds it to the access's informers, which hand it their
// objects: as adds, or as updates (nothing at the same resourceVersion) of what it still
// holds of the same resource (held). It gives up when the handler is removed, the access
// stopped or the cache stops (ctx).
func (r *Registration) move(ctx context.Context) {
	a := r.a
	defer a.c.bg.Done()
	for {
		a.mu.Lock()
		if r.gone || a.stopped || ctx.Err() != nil {
			r.moving, r.handoffs = false, nil
			a.mu.Unlock()
			return
		}
		hs := r.handoffs
		r.handoffs = nil
		if len(hs) == 0 {
			r.moving = false
			if a.shards != nil {
				if err := r.attachLocked(a.shards); err != nil {
					a.c.logger().Error(err, "Cannot add event handler to the informers of the resource", "gvk", a.key.gvk.String())
				}
			}
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		for _, h := range hs {
			select {
			case <-h.done:
			case <-r.removed:
			case <-a.stopCh:
			case <-ctx.Done():
			}
		}
		r.callMu.Lock()
		if r.isGone() {
			r.callMu.Unlock()
			continue // given up above
		}
		held := r.held
		if held == nil {
			held = map[string]item{}
		}
		gone := false
		for _, h := range hs {
			maps.Copy(held, h.seen)
			gone = gone || h.gone
		}
		r.held = held
		if gone {
			r.deleteHeldLocked()
		}
		r.callMu.Unlock()
	}
}

// isGone reports whether the handler was removed or its access stopped.
func (r *Registration) isGone() bool {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	return r.gone || r.a.stopped
}

// deleteHeldLocked tells the handler that what it holds in held is deleted (callMu held).
func (r *Registration) deleteHeldLocked() {
	for _, key := range slices.Sorted(maps.Keys(r.held)) {
		r.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: r.held[key]})
	}
	r.held = nil
}

// settle tells the handler, once attachment gen has handed it its informers' objects,
// that what it still holds of the informers it was moved off is deleted.
func (r *Registration) settle(gen uint64) {
	r.callMu.Lock()
	defer r.callMu.Unlock()
	if len(r.held) == 0 {
		return
	}
	r.a.mu.Lock()
	current := !r.gone && !r.a.stopped && r.attached == gen
	r.a.mu.Unlock()
	if current {
		r.deleteHeldLocked()
	}
}

// takeHeldLocked returns what the handler holds of key from informers it was moved off and
// forgets it: the informers it is attached to have told it of key (callMu held).
func (r *Registration) takeHeldLocked(obj any) (item, bool) {
	if len(r.held) == 0 {
		return nil, false
	}
	var key string
	switch o := obj.(type) {
	case item:
		key = o.Key()
	case toolscache.DeletedFinalStateUnknown:
		key = o.Key
	default:
		return nil, false
	}
	prev, ok := r.held[key]
	if ok {
		delete(r.held, key)
	}
	return prev, ok
}

// gatedHandler is one attachment of a Registration's handler: its calls hold the
// registration's callMu and are dropped once the registration has moved on, was removed,
// its access stopped or the cache is stopping (stop: Start's context is done).
type gatedHandler struct {
	r    *Registration
	gen  uint64
	stop <-chan struct{}
}

func (g *gatedHandler) call(fn func(r *Registration)) {
	r := g.r
	r.callMu.Lock()
	defer r.callMu.Unlock()
	select {
	case <-r.a.stopCh:
		return
	case <-g.stop:
		return
	default:
	}
	if r.gen.Load() == g.gen {
		fn(r)
	}
}

func (g *gatedHandler) OnAdd(obj any, initial bool) {
	g.call(func(r *Registration) {
		if prev, ok := r.takeHeldLocked(obj); ok {
			it, _ := obj.(item)
			if prev.ResourceVersion() != it.ResourceVersion() {
				r.h.OnUpdate(prev, obj)
			}
			return
		}
		r.h.OnAdd(obj, initial)
	})
}

func (g *gatedHandler) OnUpdate(oldObj, newObj any) {
	g.call(func(r *Registration) {
		r.takeHeldLocked(newObj)
		r.h.OnUpdate(oldObj, newObj)
	})
}

func (g *gatedHandler) OnDelete(obj any) {
	g.call(func(r *Registration) {
		r.takeHeldLocked(obj)
		r.h.OnDelete(obj)
	})
}

// watch closes synced once every kindex registration of attachment gen has synced, and
// then settles what the handler holds of informers it was moved off. It ends with the
// attachment (detached).
func (r *Registration) watch(regs []*informer.Registration, gen uint64, detached <-chan struct{}) {
	for _, reg := range regs {
		select {
		case <-reg.HasSyncedChecker().Done():
		case <-detached:
			return
		case <-r.removed:
			return
		case <-r.a.stopCh:
			return
		}
	}
	r.once.Do(func() { close(r.synced) })
	r.settle(gen)
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
