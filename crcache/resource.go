package crcache

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/jsondecode"
	"github.com/kindex/kindex/internal/typedjson"
	"github.com/kindex/kindex/metadataonly"
)

// resource is everything the cache keeps for one GVK: its plan and the kindex factories its
// informers come from. Each resource has factories of its own so that their transforms know
// the resource (kindex's transform sees only the object, and metadata-only objects do not
// carry their kind); the factories share the cache's discovery client.
type resource struct {
	c    *Cache
	plan *plan
	// id tells the resource from the others of its cache, those planned again for a GVK
	// included; epoch counts the times every informer of it was removed (RemoveInformer),
	// its kindex informers stopping. Continue tokens are bound to both (tokenSource).
	id    uint64
	epoch atomic.Uint64

	// idxMu serializes index registrations through the resource's reads (registerIndex).
	idxMu sync.Mutex
	// stale: discovery serves the resource with another scope than the plan's, or the
	// resource was replaced by one planned for the new scope (replan.go).
	stale atomic.Bool

	mu      sync.Mutex
	compact *informer.Factory[*unstructured.Unstructured]
	meta    *informer.Factory[*metav1.PartialObjectMetadata]
	down    bool
}

// resourceFor returns the cache's resource for plan p's GVK, creating it.
func (c *Cache) resourceFor(p *plan) *resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.resources[p.gvk]
	if r == nil {
		r = c.newResource(p)
		c.resources[p.gvk] = r
	}
	return r
}

// newResource returns a new resource for plan p.
func (c *Cache) newResource(p *plan) *resource {
	return &resource{c: c, plan: p, id: c.resourceIDs.Add(1)}
}

// tokenSource identifies the informers that hold the resource now, for continue tokens
// (reader.go): the cache instance, the resource's GVK, the resource (a new plan is
// another), and its epoch.
func (r *resource) tokenSource() string {
	return fmt.Sprintf("crcache %s %s %d.%d", r.c.instance, r.plan.gvk, r.id, r.epoch.Load())
}

// hasTransform reports whether any shard of the plan transforms objects.
func (p *plan) hasTransform() bool {
	for _, s := range p.shards {
		if s.transform != nil {
			return true
		}
	}
	return false
}

// transformFor returns the transform of the shard holding namespace ns.
func (p *plan) transformFor(ns string) func(any) (any, error) {
	i := p.shardFor(ns)
	if i < 0 {
		return nil
	}
	return p.shards[i].transform
}

// compactFactory returns the resource's compact factory, creating and starting it.
func (r *resource) compactFactory() (*informer.Factory[*unstructured.Unstructured], error) {
	return startOnce(r, &r.compact, func(opts informer.Options[*unstructured.Unstructured]) (*informer.Factory[*unstructured.Unstructured], error) {
		if r.plan.hasTransform() {
			opts.Transform = r.transformUnstructured
		}
		return dynamicinformer.NewCompactFactory(r.c.cfg, opts, dynamicinformer.CompactOptions{
			Compress: !r.c.kopts.DisableCompression,
		})
	})
}

// metaFactory returns the resource's metadata-only factory, creating and starting it.
func (r *resource) metaFactory() (*informer.Factory[*metav1.PartialObjectMetadata], error) {
	return startOnce(r, &r.meta, func(opts informer.Options[*metav1.PartialObjectMetadata]) (*informer.Factory[*metav1.PartialObjectMetadata], error) {
		if r.plan.hasTransform() {
			opts.Transform = r.transformMetadata
		}
		return metadataonly.NewFactory(r.c.cfg, opts)
	})
}

// startOnce returns *slot, or builds it with the cache's options, starts it in the cache's
// context and keeps it there, under the resource's lock.
func startOnce[T informer.Object](r *resource, slot **informer.Factory[T], build func(informer.Options[T]) (*informer.Factory[T], error)) (*informer.Factory[T], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return nil, informer.ErrShutdown
	}
	if *slot != nil {
		return *slot, nil
	}
	ctx, err := r.c.startedContext()
	if err != nil {
		return nil, err
	}
	f, err := build(informer.Options[T]{
		ResyncPeriod:      r.plan.resync(),
		KeepManagedFields: r.plan.keepManagedFields(),
		Logger:            r.c.kopts.Logger,
		Registerer:        r.c.kopts.Registerer,
		Discovery:         r.c.disc,
		AccessChecks:      r.c.checks,
		ReadAfterShutdown: true, // reads after the cache stopped (Cache.Start)
	})
	if err != nil {
		return nil, err
	}
	if err := f.Start(ctx); err != nil {
		return nil, err
	}
	if h := r.c.opts.DefaultWatchErrorHandler; h != nil {
		if err := reportWatchErrors(ctx, f, h); err != nil {
			f.Shutdown()
			return nil, err
		}
	}
	*slot = f
	return f, nil
}

// shutdown stops the resource's factories and waits for their goroutines.
func (r *resource) shutdown() {
	r.mu.Lock()
	r.down = true
	compact, meta := r.compact, r.meta
	r.mu.Unlock()
	if compact != nil {
		compact.Shutdown()
	}
	if meta != nil {
		meta.Shutdown()
	}
}

func (r *resource) statuses() []informer.Status {
	r.mu.Lock()
	compact, meta := r.compact, r.meta
	r.mu.Unlock()
	var out []informer.Status
	if compact != nil {
		out = append(out, compact.Statuses()...)
	}
	if meta != nil {
		out = append(out, meta.Statuses()...)
	}
	return out
}

// transformUnstructured applies the transform of the object's shard to an object of the
// compact factory. A transform sees the typed object when the scheme knows the kind (as it
// would in controller-runtime's typed informer), else the unstructured one; kindex encodes
// the result again.
func (r *resource) transformUnstructured(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	fn := r.plan.transformFor(u.GetNamespace())
	if fn == nil {
		return u, nil
	}
	var in any = u
	var nested runtime.Object // the typed object before its nested TypeMeta were cleared
	if typed, err := r.c.scheme.New(r.plan.gvk); err == nil {
		if _, isU := typed.(runtime.Unstructured); !isU {
			// Decoded from JSON as controller-runtime's typed informer decodes it: the
			// unstructured converter refuses some fields (a json.Number from a number, a
			// fixed array), which left the transform unapplied, and does not call the
			// UnmarshalText methods of map keys.
			data, err := json.Marshal(u.Object)
			if err != nil {
				return nil, fmt.Errorf("crcache: encoding %s for its transform: %w", r.plan.gvk, err)
			}
			if err := typedjson.Unmarshal(data, typed); err != nil {
				return nil, fmt.Errorf("crcache: decoding %s for its transform: %w", r.plan.gvk, err)
			}
			// Its kind empty, as controller-runtime's typed informers (their decoder) leave
			// it, though a custom resource's JSON names it.
			typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			if r.c.readsAsProtobuf(r.plan.gvk) && hasNestedTypeMeta(reflect.ValueOf(typed), true) {
				// Without the TypeMeta of nested objects (a StatefulSet's
				// volumeClaimTemplates), as controller-runtime's typed informer reads
				// client-go's types over protobuf; they are put back in the result where the
				// transform left them empty, so that the stored JSON keeps the server's.
				nested = typed.DeepCopyObject()
				clearNestedTypeMeta(reflect.ValueOf(typed), true)
			}
			in = typed
		}
	}
	out, err := fn(in)
	if err != nil {
		return nil, err
	}
	switch o := out.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case runtime.Object:
		if reflect.TypeOf(o) != reflect.TypeOf(in) {
			return nil, fmt.Errorf("crcache: transform of %s returned a %T for a %T", r.plan.gvk, out, in)
		}
		if nested != nil {
			restoreNestedTypeMeta(reflect.ValueOf(o), reflect.ValueOf(nested), true)
		}
		// Encoded as encoding/json encodes it: the unstructured converter refuses some
		// fields (fixed arrays), which left the transform unapplied.
		data, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("crcache: encoding the result of %s's transform: %w", r.plan.gvk, err)
		}
		m, err := jsondecode.Object(data)
		if err != nil {
			return nil, fmt.Errorf("crcache: decoding the result of %s's transform: %w", r.plan.gvk, err)
		}
		res := &unstructured.Unstructured{Object: m}
		res.SetGroupVersionKind(r.plan.gvk)
		return res, nil
	}
	return nil, fmt.Errorf("crcache: transform of %s returned a %T, not an object", r.plan.gvk, out)
}

// transformMetadata applies the transform of the object's shard to a metadata-only object.
func (r *resource) transformMetadata(p *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	fn := r.plan.transformFor(p.Namespace)
	if fn == nil {
		return p, nil
	}
	p.SetGroupVersionKind(r.plan.gvk)
	out, err := fn(p)
	if err != nil {
		return nil, err
	}
	res, ok := out.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("crcache: transform of %s returned a %T, not a *PartialObjectMetadata", r.plan.gvk, out)
	}
	return res, nil
}

// startedContext returns Start's context, or an error before Start.
func (c *Cache) startedContext() (context.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return nil, errCacheNotStarted
	}
	return c.ctx, nil
}
