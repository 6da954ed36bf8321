package informer

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/discovery"
)

// Dependent is a cached object and the resource it belongs to.
type Dependent[T Object] struct {
	Resource discovery.Resource
	Object   T
}

// Orphan is a cached object none of whose owners is known to exist.
type Orphan[T Object] struct {
	Resource discovery.Resource
	Object   T
	// Dangling are the owner references whose owner is gone: its resource is cached by a
	// synced informer of the factory that holds every object where the owner would be (its
	// namespace, or cluster-wide), and no object there has the owner's UID.
	Dangling []metav1.OwnerReference
	// Unknown are the owner references that could not be checked; the object is not known
	// to be an orphan while any remain.
	Unknown []UnknownOwner
}

// Orphaned reports whether every owner of the object is known to be gone, as a garbage
// collector would require before deleting it.
func (o Orphan[T]) Orphaned() bool { return len(o.Unknown) == 0 && len(o.Dangling) > 0 }

// UnknownOwner is an owner reference that could not be checked against the cache.
type UnknownOwner struct {
	// Ref is the owner reference.
	Ref metav1.OwnerReference
	// Err says why: ErrOwnerNotCached (errors.Is) when no synced, unfiltered informer of the
	// factory caches the owner's resource where the owner would be; discovery's error when
	// the owner's apiVersion and kind do not resolve (meta.IsNoMatchError), which includes a
	// kind that matches a served one only case-insensitively (the garbage collector does not
	// map it either); or a malformed reference.
	Err error
}

// Dependents returns the cached objects, of every resource the factory's live informers
// (watch-all members included) cache, that have an owner reference to uid, sorted by
// resource, namespace and name. An object cached by several informers (versions, overlapping
// namespaces) is returned once. The first call registers the owner index on every informer
// unless Options.OwnerIndex did already (see there); then each informer costs one map lookup.
// The answer is the caches' current content: an informer that has not synced yet may miss
// objects. A dependent that cannot be decoded fails the call with a *DecodeError naming
// it, as in Query: it is never left out.
func (f *Factory[T]) Dependents(ctx context.Context, uid types.UID) ([]Dependent[T], error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !f.valid() {
		return nil, ErrUninitialized
	}
	if _, err := f.c.context(); err != nil {
		return nil, err
	}
	if err := f.c.inIndexFunc(); err != nil {
		return nil, err
	}
	var out []Dependent[T]
	seen := map[string]bool{}
	for _, e := range f.c.ownerEntries() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for k, item := range e.ownedBy(uid) {
			// Decoding (the compact mode) is most of the time a large answer takes.
			if k%decodeCheckEvery == decodeCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			obj, err := objectAs[T](f.c.mode, item.Obj)
			if err != nil {
				return nil, &DecodeError{Key: item.Key, Err: err}
			}
			if id := identity(e, obj); !seen[id] {
				seen[id] = true
				out = append(out, Dependent[T]{Resource: e.resource(), Object: obj})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return lessObject(out[i].Resource, out[i].Object, out[j].Resource, out[j].Object)
	})
	return out, nil
}

// Orphans returns the cached objects that have owner references and no owner known to
// exist, garbage-collector style, sorted by resource, namespace and name. Each owner
// reference is resolved through discovery (apiVersion and kind to a resource) and checked
// against the factory's informers of that resource (any version) that are synced and have no
// label or field selector and no shard (a shard's informer does not hold the other shards'
// owners): an owner of a namespaced dependent is looked for in the
// dependent's namespace (an informer of that namespace or of all namespaces), a
// cluster-scoped owner anywhere. Found: the object is not an orphan. Not found: the
// reference is Dangling. No such informer, or no such resource: the reference is Unknown,
// never Dangling. Orphaned() tells the objects whose references are all Dangling.
//
// The answer is as fresh as the caches: an owner created a moment ago may not be cached
// yet. A garbage collector should confirm with a GET before deleting, as Kubernetes' does.
// An object with owner references that cannot be decoded fails the call with a
// *DecodeError naming it; the walk over the objects stops when ctx ends (ctx's error).
func (f *Factory[T]) Orphans(ctx context.Context) ([]Orphan[T], error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !f.valid() {
		return nil, ErrUninitialized
	}
	if _, err := f.c.context(); err != nil {
		return nil, err
	}
	if err := f.c.inIndexFunc(); err != nil {
		return nil, err
	}
	entries := f.c.ownerEntries()
	ck := &ownerChecker{c: f.c, complete: map[schema.GroupResource][]*entry{}, resolved: map[schema.GroupVersionKind]resolution{}}
	for _, e := range entries {
		if e.key.LabelSelector == "" && e.key.FieldSelector == "" && e.key.Shard == "" && e.Status().Phase == PhaseSynced {
			gr := e.key.GVR.GroupResource()
			ck.complete[gr] = append(ck.complete[gr], e)
		}
	}
	var out []Orphan[T]
	seen := map[string]bool{}
	for _, e := range entries {
		items, err := e.withOwners(ctx)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			m, err := e.metaOf(item.Obj)
			if err != nil {
				return nil, &DecodeError{Key: item.Key, Err: err}
			}
			dangling, unknown, orphan := ck.check(ctx, m)
			if !orphan {
				continue
			}
			obj, err := objectAs[T](f.c.mode, item.Obj)
			if err != nil {
				return nil, &DecodeError{Key: item.Key, Err: err}
			}
			if id := identity(e, obj); !seen[id] {
				seen[id] = true
				out = append(out, Orphan[T]{Resource: e.resource(), Object: obj, Dangling: dangling, Unknown: unknown})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return lessObject(out[i].Resource, out[i].Object, out[j].Resource, out[j].Object)
	})
	return out, nil
}

type resolution struct {
	res discovery.Resource
	err error
}

// ownerChecker checks owner references for one Orphans call.
type ownerChecker struct {
	c        *core
	complete map[schema.GroupResource][]*entry // synced, unfiltered entries
	resolved map[schema.GroupVersionKind]resolution
}

// check classifies m's owner references; orphan is false when an owner exists or m has none.
func (ck *ownerChecker) check(ctx context.Context, m metav1.Object) (dangling []metav1.OwnerReference, unknown []UnknownOwner, orphan bool) {
	for _, ref := range m.GetOwnerReferences() {
		present, err := ck.exists(ctx, ref, m.GetNamespace())
		switch {
		case err != nil:
			unknown = append(unknown, UnknownOwner{Ref: ref, Err: err})
		case present:
			return nil, nil, false
		default:
			dangling = append(dangling, ref)
		}
	}
	return dangling, unknown, len(dangling)+len(unknown) > 0
}

// exists looks for the owner of ref; an error means it cannot tell.
func (ck *ownerChecker) exists(ctx context.Context, ref metav1.OwnerReference, ns string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, fmt.Errorf("kindex: owner reference apiVersion %q: %w", ref.APIVersion, err)
	}
	gvk := gv.WithKind(ref.Kind)
	r, ok := ck.resolved[gvk]
	if !ok {
		r.res, r.err = ck.c.disc.ResolveGVK(ctx, gvk)
		if r.err == nil && r.res.GVK.Kind != gvk.Kind {
			// Discovery also matches a kind case-insensitively; the garbage collector's REST
			// mapper does not, and never deletes a dependent whose owner kind it cannot map.
			r.err = &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
		}
		ck.resolved[gvk] = r
	}
	if r.err != nil {
		return false, r.err
	}
	gr := r.res.GVR.GroupResource()
	ownerNS, all := "", true
	if r.res.Namespaced {
		if ns == "" {
			return false, fmt.Errorf("kindex: a cluster-scoped object cannot be owned by namespaced %s", resourceName(gr))
		}
		ownerNS, all = ns, false
	}
	covered := false
	for _, e := range ck.complete[gr] {
		if e.key.Namespace != "" && e.key.Namespace != ownerNS {
			continue
		}
		covered = true
		if e.hasUID(ref.UID, ownerNS, all) {
			return true, nil
		}
	}
	if !covered {
		where := "cluster-wide"
		if r.res.Namespaced {
			where = "in namespace " + ownerNS
		}
		return false, fmt.Errorf("%w: no synced informer of %s %s without selectors", ErrOwnerNotCached, resourceName(gr), where)
	}
	return false, nil
}

// identity identifies an object across the informers of a factory: its UID, or its
// resource and key when it has none.
func identity(e *entry, obj Object) string {
	if uid := obj.GetUID(); uid != "" {
		return string(uid)
	}
	return resourceName(e.key.GVR.GroupResource()) + "\x00" + obj.GetNamespace() + "/" + obj.GetName()
}

func lessObject(ra discovery.Resource, a Object, rb discovery.Resource, b Object) bool {
	na, nb := resourceName(ra.GVR.GroupResource()), resourceName(rb.GVR.GroupResource())
	if na != nb {
		return na < nb
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}
