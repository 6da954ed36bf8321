package crcache

import (
	"fmt"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// Reads with UnsafeDisableDeepCopy share objects, as controller-runtime's do: two such reads
// of an unchanged object return the same maps and slices, and a change made through one is
// seen by the next (which controller-runtime's cache specs check, and which its docs warn
// of). The compact store holds bytes, not objects, so an access keeps the object it decoded
// for each object read this way, at the resourceVersion it was decoded from: a read of a
// newer version decodes again. That costs the decoded object's memory beside its bytes,
// for the objects read this way only; reads that copy (the default) keep nothing.

// sharedObjects holds an access's shared objects by key.
type sharedObjects struct {
	mu      sync.Mutex
	objs    map[string]sharedObject
	sweepAt int // len(objs) at which entries no longer cached are dropped
}

type sharedObject struct {
	rv  string
	obj runtime.Object
}

// minSweep is the least number of shared objects kept before a sweep.
const minSweep = 1024

// get returns the shared object of key at resourceVersion rv, or nil.
func (s *sharedObjects) get(key, rv string) runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.objs[key]; ok && e.rv == rv {
		return e.obj
	}
	return nil
}

// keep makes obj the shared object of key at rv and returns it, or returns the one another
// read kept for rv first. When the map has grown to sweepAt, the objects live reports gone
// or changed in the cache are dropped first, so that it holds about what the cache holds.
func (s *sharedObjects) keep(key, rv string, obj runtime.Object, live func(key, rv string) bool) runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.objs[key]; ok && e.rv == rv {
		return e.obj
	}
	if s.objs == nil {
		s.objs = map[string]sharedObject{}
	}
	if len(s.objs) >= max(s.sweepAt, minSweep) {
		for k, e := range s.objs {
			if !live(k, e.rv) {
				delete(s.objs, k)
			}
		}
		s.sweepAt = 2 * len(s.objs)
	}
	s.objs[key] = sharedObject{rv: rv, obj: obj}
	return obj
}

// reset drops every shared object (the access stopped).
func (s *sharedObjects) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs, s.sweepAt = nil, 0
}

// read writes the cached item it into out for Get and List: a copy (decodeInto), or with
// noCopy, from the compact store, a shallow copy of the access's shared object for it.
func (a *access) read(it item, out runtime.Object, noCopy bool) error {
	if !noCopy || !it.compact() {
		return a.decodeInto(it, out, noCopy)
	}
	rv := it.ResourceVersion()
	obj := a.shared.get(it.Key(), rv)
	if obj == nil {
		fresh, err := a.newObject()
		if err != nil {
			return err
		}
		if err := a.decodeInto(it, fresh, false); err != nil {
			return err
		}
		obj = a.shared.keep(it.Key(), rv, fresh, a.cachedAt)
	}
	switch a.key.kind {
	case kindUnstructured:
		uo, ok := out.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("crcache: cannot read unstructured %s into a %T", a.key.gvk, out)
		}
		// The shared map has its kind already: setting it would write to a map other
		// readers read.
		uo.SetUnstructuredContent(obj.(*unstructured.Unstructured).Object)
		return nil
	case kindMetadata:
		pom, ok := out.(*metav1.PartialObjectMetadata)
		if !ok {
			return fmt.Errorf("crcache: cannot read metadata of %s into a %T", a.key.gvk, out)
		}
		*pom = *obj.(*metav1.PartialObjectMetadata)
		return nil
	}
	dst, src := reflect.ValueOf(out), reflect.ValueOf(obj)
	if dst.Kind() != reflect.Pointer || dst.IsNil() || dst.Type() != src.Type() {
		return fmt.Errorf("crcache: cache holds %s as %T, cannot read it into a %T", a.key.gvk, obj, out)
	}
	dst.Elem().Set(src.Elem())
	return nil
}

// cachedAt reports whether the access's informers still hold key at resourceVersion rv.
func (a *access) cachedAt(key, rv string) bool {
	res, shards, err := a.view()
	if err != nil {
		return false
	}
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false
	}
	i := res.plan.shardFor(ns)
	if i < 0 || i >= len(shards) {
		return false
	}
	it, err := shards[i].getItem(ns, name)
	return err == nil && it.ResourceVersion() == rv
}
