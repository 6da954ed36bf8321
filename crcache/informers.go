package crcache

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/jsonpath"
)

// GetInformer returns the informer of obj's resource read as obj's kind (typed,
// unstructured or metadata-only), starting it if needed. Once the cache has started it waits
// until the informer has synced, unless cache.BlockUntilSynced(false): apierrors.IsTimeout
// when ctx ends first, and the server's refusal at once when the informer is parked before
// its first sync (a 403, a resource no longer served), instead of waiting for ever.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	gvk, kind, err := c.gvkOf(obj, false)
	if err != nil {
		return nil, err
	}
	return c.informerFor(ctx, gvk, kind, opts)
}

// GetInformerForKind is GetInformer for a GVK: typed when the scheme knows it, else
// unstructured.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	kind := kindUnstructured
	if c.scheme.Recognizes(gvk) {
		kind = kindTyped
	}
	return c.informerFor(ctx, gvk, kind, opts)
}

func (c *Cache) informerFor(ctx context.Context, gvk schema.GroupVersionKind, kind accessKind, opts []cache.InformerGetOption) (cache.Informer, error) {
	var o cache.InformerGetOptions
	for _, opt := range opts {
		opt(&o)
	}
	// Like a read, a GetInformer that races RemoveInformer of the informer it waits for
	// starts a new one (again), as a GetInformer after RemoveInformer does.
	var inf cache.Informer
	err := c.again(func() error {
		a, err := c.accessFor(gvk, kind, false)
		if err != nil {
			return err
		}
		if err := c.awaitInformer(ctx, gvk, a, o); err != nil {
			return err
		}
		inf = a.inf
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inf, nil
}

// awaitInformer waits for a's informers to sync, unless the cache has not started or o says
// not to block.
func (c *Cache) awaitInformer(ctx context.Context, gvk schema.GroupVersionKind, a *access, o cache.InformerGetOptions) error {
	if !c.isStarted() || (o.BlockUntilSynced != nil && !*o.BlockUntilSynced) {
		return nil
	}
	for attempt := 1; ; attempt++ {
		// A resource whose scope changed is planned again before the wait, and when
		// the wait fails because of the change (replan.go).
		if res := a.resource(); res.stale.Load() || a.broken() {
			if err := c.replan(gvk); err != nil {
				return err
			}
		}
		err := a.waitSynced(ctx, true)
		if err == nil {
			return nil
		}
		if attempt < maxReadAttempts {
			if res, shards, verr := a.view(); verr == nil && c.checkScope(res, shards) {
				continue
			}
		}
		return err
	}
}

// RemoveInformer stops obj's informer (its resource read as obj's kind): its handlers and
// indexes are removed and its kindex informer references released. The kindex informer
// itself stops, and its cache is freed, when no other informer of this cache shares it
// (typed and unstructured reads of a resource share one). Informers handed out before report
// IsStopped; the next GetInformer, Get or List starts a new one.
func (c *Cache) RemoveInformer(_ context.Context, obj client.Object) error {
	gvk, kind, err := c.gvkOf(obj, false)
	if err != nil {
		return err
	}
	c.mu.Lock()
	a := c.accesses[accessKey{gvk: gvk, kind: kind}]
	if a != nil {
		delete(c.accesses, a.key)
	}
	var last *resource // the resource, if no informer of it is left
	if a != nil && !slices.ContainsFunc(slices.Collect(maps.Keys(c.accesses)), func(k accessKey) bool { return k.gvk == gvk }) {
		last = c.resources[gvk]
	}
	c.mu.Unlock()
	if a != nil {
		a.stop()
	}
	if last != nil {
		// Its kindex informers stop: continue tokens of their lists expire.
		last.epoch.Add(1)
	}
	return nil
}

// IndexField indexes obj's resource by the values extractValue returns, for field selectors
// in List (client.MatchingFields{field: value}), as controller-runtime does; and beyond
// equality with ParseFields' operators (!=, in, exists, numeric ranges). extractValue
// receives objects of obj's kind. It runs under the informer's lock for every object added
// or changed: it must be fast and must not modify the object. A panic in it is counted in
// the index's statistics, not fatal. Values are kept per namespace by kindex, so no
// namespace prefix is needed. As in controller-runtime, index names are per informer: typed,
// unstructured and metadata-only reads of a type may each register a field under one name
// with their own function (though they share a kindex informer), and registering a field
// twice for one kind of read fails (informer.ErrIndexConflict).
func (c *Cache) IndexField(_ context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	if extractValue == nil {
		return fmt.Errorf("crcache: IndexField %q: nil function", field)
	}
	gvk, kind, err := c.gvkOf(obj, false)
	if err != nil {
		return err
	}
	a, err := c.accessFor(gvk, kind, false)
	if err != nil {
		return err
	}
	fn := func(o any) ([]string, error) {
		co, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("crcache: %T is not a client.Object", o)
		}
		return slices.Clone(extractValue(co)), nil
	}
	return a.addIndex(&indexReg{name: fieldIndexName(field), fn: a.indexFunc(fn)})
}

// IndexJSONPath indexes obj's resource by a JSONPath expression under a name that field
// selectors can use, as an IndexField name. The expression is evaluated on the stored JSON
// without decoding, which makes it much cheaper than an IndexField function for
// typed objects; every value of a multi-valued path is indexed and numbers compare as
// numbers in ranges:
//
//	c.IndexJSONPath(ctx, &corev1.Pod{}, "restarts", "{.status.containerStatuses[*].restartCount}")
//	cl.List(ctx, &pods, client.MatchingFieldsSelector{Selector: crcache.MustParseFields("restarts>3")})
func (c *Cache) IndexJSONPath(_ context.Context, obj client.Object, name, expr string) error {
	p, err := jsonpath.Compile(expr)
	if err != nil {
		return err
	}
	gvk, kind, err := c.gvkOf(obj, false)
	if err != nil {
		return err
	}
	a, err := c.accessFor(gvk, kind, false)
	if err != nil {
		return err
	}
	return a.addIndex(&indexReg{name: fieldIndexName(name), path: p})
}
