package crcache

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/query"
)

// A resource's plan (config.go) depends on its scope: a namespaced resource of a cache
// restricted to namespaces has one kindex informer per namespace, a cluster-scoped one has
// one informer, and reads route by namespace only when the resource is namespaced. A CRD
// deleted and re-created with the other scope keeps its GVR, and kindex's informers follow
// it (an informer of all namespaces lists the same URL either way; one of a namespace parks
// NotFound), so the plan would answer with the old scope: a List of one namespace returning
// every namespace's objects, a Get of a namespaced object looking it up without its
// namespace.
//
// So the cache plans such a resource again. It notices the change through discovery's
// events (a subscription of the cache's discovery client, which follows CRDs) and through
// what kindex's informers say of their resource (Informer.Resource, checked by every read
// after it has read, so that a read racing the change does not return an answer of the old
// plan). Then:
//
//   - the resource's stale bit is set: a read of it plans it again before it reads, and a read
//     that had started over the old plan starts again (errReplanned, Cache.again);
//   - replan builds a new resource, with its own factories, planned for the scope discovery
//     shows now (CachedGVR, no request), and puts it in c.resources;
//   - every access of the GVK acquires informers of the new plan, registers on them the
//     indexes registered through it, swaps them in, and moves its handlers: each is told
//     that the objects of the old informers are deleted (DeletedFinalStateUnknown), then is
//     added to the new informers, which give it their objects as adds; Informers handed out
//     before stay valid, with their handlers and indexes;
//   - the old informers are released and the old resource's factories shut down.
//
// A resource that is not served when it is planned again (deleted again meanwhile, or its
// version no longer served) keeps its stale bit, and its reads fail with ErrScopeChanged
// until discovery serves it again, when it is planned again by itself.

// onDiscovery is the cache's discovery subscription: a resource the cache holds that
// discovery serves with another scope than its plan's is planned again.
func (c *Cache) onDiscovery(ev discovery.Event) {
	if ev.Type == discovery.Removed {
		return
	}
	gr := ev.Resource.GVR.GroupResource()
	var kick []schema.GroupVersionKind
	c.mu.Lock()
	for gvk, r := range c.resources {
		if r.plan.gvr.GroupResource() == gr && r.plan.namespaced != ev.Resource.Namespaced {
			r.stale.Store(true)
			kick = append(kick, gvk)
		}
	}
	c.mu.Unlock()
	for _, gvk := range kick {
		c.goReplan(gvk)
	}
}

// checkScope reports whether res's plan is outdated: marked so, or with another scope than
// kindex's informer (shards[0]) says its resource has now; the first to notice the latter
// marks res and plans it again in the background.
func (c *Cache) checkScope(res *resource, shards []shard) bool {
	if res.stale.Load() {
		return true
	}
	if len(shards) == 0 {
		return false
	}
	live := shards[0].resource()
	if live.GVR.Resource == "" || live.Namespaced == res.plan.namespaced {
		return false
	}
	if res.stale.CompareAndSwap(false, true) {
		c.goReplan(res.plan.gvk)
	}
	return true
}

// replanned plans gvk again for a read, which then starts again (errReplanned).
func (c *Cache) replanned(gvk schema.GroupVersionKind) error {
	if err := c.replan(gvk); err != nil {
		return err
	}
	return errReplanned
}

// replan plans gvk's resource again if its scope changed, and moves every access of gvk to
// the current plan. It returns errAccessStopped once the cache stops, and an
// ErrScopeChanged when the resource cannot be planned again now.
func (c *Cache) replan(gvk schema.GroupVersionKind) error {
	ctx, ok := c.track()
	if !ok {
		return errAccessStopped
	}
	defer c.bg.Done()
	return c.replanTracked(ctx, gvk)
}

// goReplan is replan in the background.
func (c *Cache) goReplan(gvk schema.GroupVersionKind) {
	ctx, ok := c.track()
	if !ok {
		return
	}
	go func() {
		defer c.bg.Done()
		if err := c.replanTracked(ctx, gvk); err != nil && !errors.Is(err, errAccessStopped) {
			c.logger().Error(err, "Cannot plan the informers of a resource again for its new scope", "gvk", gvk.String())
		}
	}()
}

// track counts work in c.bg, which Start waits for before it stops the informers, and
// returns Start's context; false before Start and once the cache stops.
func (c *Cache) track() (context.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.stopping {
		return nil, false
	}
	c.bg.Add(1)
	return c.ctx, true
}

func scopeName(namespaced bool) string {
	if namespaced {
		return "namespaced"
	}
	return "cluster-scoped"
}

// replanTracked is replan, counted in c.bg.
func (c *Cache) replanTracked(ctx context.Context, gvk schema.GroupVersionKind) error {
	c.replanMu.Lock()
	defer c.replanMu.Unlock()
	c.mu.Lock()
	cur := c.resources[gvk]
	c.mu.Unlock()
	if cur == nil {
		return nil
	}
	var old *resource
	if cur.stale.Load() {
		live, err := c.disc.CachedGVR(cur.plan.gvr)
		if err != nil {
			return fmt.Errorf("%w: %s, cached as %s, is served with another scope or not at all; it is not served now, and its informers cannot be planned again until it is: %w",
				ErrScopeChanged, gvk, scopeName(cur.plan.namespaced), err)
		}
		if live.Namespaced == cur.plan.namespaced {
			cur.stale.Store(false) // changed back
		} else {
			nr := &resource{c: c, plan: c.planForScope(gvk, cur.plan.gvr, live.Namespaced)}
			c.mu.Lock()
			if c.stopping {
				c.mu.Unlock()
				return errAccessStopped
			}
			c.resources[gvk] = nr
			c.retired = append(c.retired, cur)
			c.mu.Unlock()
			c.logger().Info("Resource served with another scope: planning its informers again",
				"gvk", gvk.String(), "was", scopeName(cur.plan.namespaced), "now", scopeName(live.Namespaced))
			old, cur = cur, nr
		}
	}
	var failed error
	for _, a := range c.accessesOf(gvk, nil) {
		if err := a.switchTo(ctx, cur); err != nil {
			failed = errors.Join(failed, err)
		}
	}
	if failed != nil {
		// The old factories stay up for the accesses that could not move; Start shuts
		// them down.
		return fmt.Errorf("%w: %s, now %s: %w", ErrScopeChanged, gvk, scopeName(cur.plan.namespaced), failed)
	}
	if old != nil {
		c.mu.Lock()
		c.retired = slices.DeleteFunc(c.retired, func(r *resource) bool { return r == old })
		c.mu.Unlock()
		// Not under replanMu: the factories wait for their handler goroutines, and a
		// handler may be reading the resource (and planning it).
		c.bg.Add(1)
		go func() {
			defer c.bg.Done()
			old.shutdown()
		}()
	}
	return nil
}

// switchTo moves the access to resource nr's plan: new kindex informers with the indexes
// registered through the access, then its handlers (see the top of this file).
func (a *access) switchTo(ctx context.Context, nr *resource) error {
	a.swapMu.Lock()
	defer a.swapMu.Unlock()
	a.mu.Lock()
	if a.stopped || a.res == nr {
		a.mu.Unlock()
		return nil
	}
	if a.shards == nil {
		// Not materialized: materialize acquires with the new plan (and acquires again if
		// it is acquiring with the old one).
		a.res = nr
		a.mu.Unlock()
		return nil
	}
	indexes := slices.Clone(a.indexes)
	a.mu.Unlock()

	shards, err := a.acquire(ctx, nr)
	if err != nil {
		return fmt.Errorf("crcache: informers of %s (%s) for its new scope: %w", a.key.gvk, a.key.kind, err)
	}
	for _, idx := range indexes {
		<-idx.done // an index materialize is registering
		if idx.err != nil {
			continue
		}
		if err := applyIndex(shards, idx); err != nil {
			a.c.logger().Error(err, "Cannot register index on the informers of the new scope", "gvk", a.key.gvk.String(), "index", idx.name)
		}
	}

	type move struct {
		r   *Registration
		gen uint64
	}
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		for _, s := range shards {
			s.release()
		}
		return nil
	}
	old := a.shards
	a.shards, a.res = shards, nr
	var moves []move
	for r := range a.regs {
		if !r.gone {
			moves = append(moves, move{r: r, gen: r.suspendLocked(old)})
		}
	}
	a.mu.Unlock()
	a.shared.reset()
	a.recent.reset()

	// What the handlers were told of is in the old informers: they are told it is gone,
	// decoded now, before the informers are released.
	var gone []any
	if len(moves) > 0 {
		for _, s := range old {
			items, err := s.queryItems(context.WithoutCancel(ctx), query.Query{Scan: true})
			if err != nil {
				a.c.logger().Error(err, "Cannot list the objects of the old scope's informer; their deletes are not delivered", "gvk", a.key.gvk.String())
				continue
			}
			for _, it := range items {
				obj, err := a.eventObject(it)
				if err != nil {
					a.c.logger().Error(err, "Cannot convert an object for an event handler; notification skipped", "gvk", a.key.gvk.String())
					continue
				}
				gone = append(gone, toolscache.DeletedFinalStateUnknown{Key: it.Key(), Obj: obj})
			}
		}
	}
	for _, s := range old {
		s.release()
	}
	for _, m := range moves {
		// In the background: a handler may be reading the resource, which waits for this
		// plan; the caller of switchTo counts in c.bg, so Start waits for these.
		a.c.bg.Add(1)
		go func() {
			defer a.c.bg.Done()
			m.r.move(m.gen, gone)
		}()
	}
	return nil
}

// move delivers the deletes of the old scope's objects to the handler, then adds it to the
// access's new informers (which give it their objects as adds), unless it was removed or
// moved again meanwhile.
func (r *Registration) move(gen uint64, gone []any) {
	inner := r.h
	if ch, ok := r.h.(*convertingHandler); ok {
		inner = ch.h // gone holds objects decoded already
	}
	a := r.a
	a.mu.Lock()
	removed := r.gone || a.stopped
	a.mu.Unlock()
	if removed {
		return // RemoveInformer or RemoveEventHandler meanwhile: its handlers get nothing more
	}
	r.callMu.Lock()
	if r.gen.Load() == gen {
		for _, obj := range gone {
			inner.OnDelete(obj)
		}
	}
	r.callMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.gone || a.stopped || r.gen.Load() != gen {
		return
	}
	if err := r.attachLocked(a.shards); err != nil {
		a.c.logger().Error(err, "Cannot add event handler to the informers of the new scope", "gvk", a.key.gvk.String())
	}
}
