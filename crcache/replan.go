package crcache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
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
//     indexes registered through it, swaps them in, and moves its handlers
//     (Registration.move): each is handed off its old informers (kindex's
//     HandOffEventHandler), which deliver what they had queued for it (the deletes of the
//     objects deleted with the old CRD among them) and say what it then holds; it is told
//     that those objects are deleted (DeletedFinalStateUnknown), then is added to the new
//     informers, which give it their objects as adds. A handler moved again before it was
//     added (two changes in quick succession) is told of what it holds of every informer it
//     was handed off, once all have delivered their queues, and is added to the last ones.
//     Informers handed out before stay valid, with their handlers and indexes;
//   - the old informers are released and the old resource's factories shut down, whether
//     or not every access could acquire the new informers.
//
// An access that cannot acquire the informers of the new plan leaves the old ones all the
// same (they list a resource that is not there, or the same URL with the other scope): its
// handlers are told their objects are deleted, its reads, GetInformer and WaitForCacheSync
// fail with ErrScopeChanged and the cause, and its Statuses show each informer it lacks as
// Stopped with that error. Each read tries the move again, and so does the cache, after 1 s,
// then twice as long each time up to a minute, until it succeeds (retryLater).
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
			nr := c.newResource(c.planForScope(gvk, cur.plan.gvr, live.Namespaced))
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
	if old != nil {
		// Every access has left the old informers, for the new ones or, failing that, for
		// none: the old factories stop now.
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
	if failed != nil {
		c.retryLater(gvk)
		return fmt.Errorf("%w: %s, now %s: %w", ErrScopeChanged, gvk, scopeName(cur.plan.namespaced), failed)
	}
	c.retried(gvk)
	return nil
}

// Retries of a plan whose informers could not be acquired: the first after
// minReplanRetry, then twice as long each time, up to maxReplanRetry.
const (
	minReplanRetry = time.Second
	maxReplanRetry = time.Minute
)

// replanRetry is gvk's pending retry.
type replanRetry struct {
	timer *time.Timer // nil while the retry runs
	delay time.Duration
}

// retryLater plans gvk again later: its accesses could not move to the informers of its
// plan, and reads of it, which try again, may be rare.
func (c *Cache) retryLater(gvk schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return
	}
	if c.retries == nil {
		c.retries = map[schema.GroupVersionKind]*replanRetry{}
	}
	r := c.retries[gvk]
	if r == nil {
		r = &replanRetry{delay: minReplanRetry}
		c.retries[gvk] = r
	} else if r.timer != nil {
		return // pending
	} else {
		r.delay = min(2*r.delay, maxReplanRetry)
	}
	r.timer = time.AfterFunc(r.delay, func() {
		c.mu.Lock()
		r.timer = nil
		c.mu.Unlock()
		if err := c.replan(gvk); err != nil && !errors.Is(err, errAccessStopped) {
			c.logger().Error(err, "Cannot move the informers of a resource to its new plan; retrying", "gvk", gvk.String())
		}
	})
}

// retried forgets gvk's retries: its accesses are on the informers of its plan.
func (c *Cache) retried(gvk schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.retries[gvk]; r != nil && r.timer == nil {
		delete(c.retries, gvk)
	}
}

// stopRetriesLocked stops the pending retries (the cache stops; c.mu held).
func (c *Cache) stopRetriesLocked() {
	for gvk, r := range c.retries {
		if r.timer != nil {
			r.timer.Stop()
		}
		delete(c.retries, gvk)
	}
}

// switchTo moves the access to the informers of resource nr's plan (nil: the plan it
// follows) in the storage it wants (a.want; metadata-only reads move to the compact
// informers once the resource is read whole, access.go): new kindex informers with the
// indexes registered through the access, then its handlers (see the top of this file). When
// the new informers cannot be had, the access leaves the old ones anyway (they are of
// another plan or are replaced) and fails its reads with the error until a plan again
// (a read, or the retry) moves it.
func (a *access) switchTo(ctx context.Context, nr *resource) error {
	a.swapMu.Lock()
	defer a.swapMu.Unlock()
	a.mu.Lock()
	if nr == nil {
		nr = a.res
	}
	be := a.want
	if a.stopped || (a.res == nr && a.backend == be && a.moveErr == nil) {
		a.mu.Unlock()
		return nil
	}
	if a.shards == nil && a.moveErr == nil {
		// Not materialized: materialize acquires with the new plan (and acquires again if
		// it is acquiring with the old one).
		a.res, a.backend = nr, be
		a.mu.Unlock()
		return nil
	}
	indexes := slices.Clone(a.indexes)
	a.mu.Unlock()

	shards, err := a.acquire(ctx, nr, be)
	if err == nil {
		for _, idx := range indexes {
			<-idx.done // an index materialize is registering
			if idx.err != nil {
				continue
			}
			if err := applyIndex(shards, idx); err != nil {
				a.c.logger().Error(err, "Cannot register index on the informers of the new plan", "gvk", a.key.gvk.String(), "index", idx.name)
			}
		}
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
	// The objects of the old informers are gone for the handlers when they are another
	// plan's; the same plan's in another storage serves them still.
	gone := a.res != nr || a.moveErr != nil
	a.shards, a.res, a.backend, a.moveErr = shards, nr, be, nil
	if err != nil {
		err = fmt.Errorf("crcache: informers of %s (%s) for its %s plan: %w", a.key.gvk, a.key.kind, scopeName(nr.plan.namespaced), err)
		a.moveErr, a.moveErrTime = err, time.Now()
		gone = true
	}
	for r := range a.regs {
		if !r.gone {
			r.handOffLocked(old, gone)
			r.moveLocked(ctx)
		}
	}
	a.mu.Unlock()
	a.shared.reset()
	a.recent.reset()
	for _, s := range old {
		s.release()
	}
	return err
}
