package crcache

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
)

// newObject returns a new, empty object of the access's kind.
func (a *access) newObject() (runtime.Object, error) {
	switch a.key.kind {
	case kindUnstructured:
		return &unstructured.Unstructured{}, nil
	case kindMetadata:
		return &metav1.PartialObjectMetadata{}, nil
	}
	return a.c.scheme.New(a.key.gvk) // the access's Go type
}

// decodeInto writes the cached item it into out, an object of the access's kind:
//   - typed: the stored JSON bytes are decoded straight into out, never through a map, by
//     kindex's typed decoder (informer.Item.DecodeInto), which has the semantics of
//     apimachinery's JSON decoder (sigs.k8s.io/json: case-sensitive keys, integers kept as
//     int64) at about a quarter of its cost; where the store keeps the bytes uncompressed
//     (Options.DisableCompression), out's strings are views of them: an object kept after
//     the cache dropped it keeps those bytes alive (about the size of its JSON);
//   - unstructured: kindex decodes the bytes into a new map;
//   - metadata: from the compact store, only metadata is decoded from the bytes; from a
//     metadata-only informer, the cached object is deep-copied (shared instead when
//     UnsafeDisableDeepCopy is set).
//
// Objects decoded from the compact store are the caller's own (noCopy matters only for
// metadata-only informers); reads with UnsafeDisableDeepCopy share the objects of
// access.read instead.
func (a *access) decodeInto(it item, out runtime.Object, noCopy bool) error {
	gvk := a.key.gvk
	switch a.key.kind {
	case kindTyped:
		if err := decodeTyped(it, out); err != nil {
			return err
		}
		if a.c.readsAsProtobuf(gvk) {
			clearNestedTypeMeta(reflect.ValueOf(out), true)
		}
	case kindUnstructured:
		obj, err := it.object()
		if err != nil {
			return err
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("crcache: cached %s is a %T, not unstructured", it.Key(), obj)
		}
		uo, ok := out.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("crcache: cannot read unstructured %s into a %T", gvk, out)
		}
		uo.SetUnstructuredContent(u.Object)
	case kindMetadata:
		pom, ok := out.(*metav1.PartialObjectMetadata)
		if !ok {
			return fmt.Errorf("crcache: cannot read metadata of %s into a %T", gvk, out)
		}
		if it.compact() {
			*pom = metav1.PartialObjectMetadata{}
			if err := it.DecodeInto(pom); err != nil {
				return fmt.Errorf("crcache: decoding metadata: %w", err)
			}
			break
		}
		obj, err := it.object()
		if err != nil {
			return err
		}
		cached, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return fmt.Errorf("crcache: cached %s is a %T, not metadata", it.Key(), obj)
		}
		if !noCopy {
			cached = cached.DeepCopy()
		}
		*pom = *cached
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// decodeTyped decodes a compact item's bytes into out, a pointer to a typed struct, after
// zeroing it (a JSON decode into a used struct would keep fields the object lacks).
func decodeTyped(it item, out runtime.Object) error {
	if !it.compact() {
		obj, err := it.object()
		if err != nil {
			return err
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("crcache: cached %s is a %T, cannot be read as %T", it.Key(), obj, out)
		}
		return fromUnstructured(u, out)
	}
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("crcache: cannot decode into %T: not a pointer", out)
	}
	e := v.Elem()
	e.Set(reflect.Zero(e.Type()))
	if err := it.DecodeInto(out); err != nil {
		return fmt.Errorf("crcache: decoding into %T: %w", out, err)
	}
	return nil
}

// readsAsProtobuf reports whether controller-runtime's cache would read gvk's typed objects
// as protobuf (apiutil's rule: a rest.Config without a ContentType and a type of client-go's
// scheme, or a protobuf ContentType). Protobuf has no TypeMeta below the top level: a
// StatefulSet's volumeClaimTemplates come without the kind and apiVersion their JSON has.
func (c *Cache) readsAsProtobuf(gvk schema.GroupVersionKind) bool {
	switch c.cfg.ContentType {
	case "":
		return clientgoscheme.Scheme.Recognizes(gvk)
	case runtime.ContentTypeProtobuf:
		return true
	}
	return false
}

var typeMetaType = reflect.TypeFor[metav1.TypeMeta]()

// holdsTypeMetaTypes caches holdsTypeMeta by type (reflect.Type -> bool).
var holdsTypeMetaTypes sync.Map

// holdsTypeMeta reports whether a value of type t may hold a metav1.TypeMeta that
// clearNestedTypeMeta can reach (through struct fields, pointers, slices, arrays and maps).
func holdsTypeMeta(t reflect.Type) bool {
	if v, ok := holdsTypeMetaTypes.Load(t); ok {
		return v.(bool)
	}
	return holdsTypeMetaIn(t, map[reflect.Type]bool{})
}

func holdsTypeMetaIn(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if v, ok := holdsTypeMetaTypes.Load(t); ok {
		return v.(bool)
	}
	if visiting[t] {
		return true // a cycle: walking it is correct, only slower
	}
	visiting[t] = true
	defer delete(visiting, t)
	holds := false
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		holds = holdsTypeMetaIn(t.Elem(), visiting)
	case reflect.Struct:
		if t == typeMetaType {
			holds = true
			break
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsTypeMetaIn(f.Type, visiting) {
				holds = true
				break
			}
		}
	}
	holdsTypeMetaTypes.Store(t, holds)
	return holds
}

// clearNestedTypeMeta zeroes every metav1.TypeMeta within v but the top level's, as a
// protobuf decode leaves them.
func clearNestedTypeMeta(v reflect.Value, top bool) {
	walkNestedTypeMeta(v, reflect.Value{}, top, func(tm, _ reflect.Value) bool {
		tm.SetZero()
		return true
	})
}

// hasNestedTypeMeta reports whether v holds a metav1.TypeMeta that is not empty, the top
// level's aside.
func hasNestedTypeMeta(v reflect.Value, top bool) bool {
	return !walkNestedTypeMeta(v, reflect.Value{}, top, func(tm, _ reflect.Value) bool {
		return tm.IsZero()
	})
}

// restoreNestedTypeMeta sets each nested metav1.TypeMeta of v that is empty to the one at
// the same place in src (a value of v's type), where src has one: what
// clearNestedTypeMeta took from src, put back where a transform left it.
func restoreNestedTypeMeta(v, src reflect.Value, top bool) {
	if v.Type() != src.Type() {
		return
	}
	walkNestedTypeMeta(v, src, top, func(tm, from reflect.Value) bool {
		if from.IsValid() && tm.IsZero() {
			tm.Set(from)
		}
		return true
	})
}

// walkNestedTypeMeta calls visit with every settable metav1.TypeMeta within v (through
// pointers, slices, arrays, maps and exported struct fields), the top level's aside when top
// is set, and with the TypeMeta at the same place in src, a value of v's type, or the zero
// Value where src is not valid or has nothing there. A map's elements are walked in a copy
// set back after the visit. It stops as soon as visit returns false, and reports whether it
// went through.
func walkNestedTypeMeta(v, src reflect.Value, top bool, visit func(tm, from reflect.Value) bool) bool {
	if !holdsTypeMeta(v.Type()) {
		return true
	}
	at := func(ok bool, f func() reflect.Value) reflect.Value {
		if !src.IsValid() || !ok {
			return reflect.Value{}
		}
		return f()
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		return walkNestedTypeMeta(v.Elem(), at(src.IsValid() && !src.IsNil(), src.Elem), top, visit)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			s := at(src.IsValid() && i < src.Len(), func() reflect.Value { return src.Index(i) })
			if !walkNestedTypeMeta(v.Index(i), s, false, visit) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			s := at(true, func() reflect.Value { return src.MapIndex(it.Key()) })
			done := walkNestedTypeMeta(e, s, false, visit)
			v.SetMapIndex(it.Key(), e)
			if !done {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() || !f.CanSet() {
				continue
			}
			s := at(true, func() reflect.Value { return src.Field(i) })
			if f.Type() == typeMetaType {
				if !top && !visit(f, s) {
					return false
				}
				continue
			}
			if !walkNestedTypeMeta(f, s, false, visit) {
				return false
			}
		}
	}
	return true
}

func fromUnstructured(u *unstructured.Unstructured, out runtime.Object) error {
	v := reflect.ValueOf(out)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().Set(reflect.Zero(v.Elem().Type()))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return fmt.Errorf("crcache: converting %s/%s into %T: %w", u.GetNamespace(), u.GetName(), out, err)
	}
	return nil
}

// eventObject turns an item kindex hands a handler or an index function (kshard.addHandler,
// kshard.addIndexFunc) into an object of the access's kind, the same object for every
// handler and index function of the access that asks for that version soon enough
// (recent.go), decoded as decodeInto decodes a read: a typed object straight from the
// stored bytes, with no map in between, and its TypeMeta empty as in controller-runtime's
// typed informers (and as a typed client returns objects). A metadata-only informer's cached object is handed out as a shallow copy with
// its kind set.
func (a *access) eventObject(obj any) (any, error) {
	it, ok := obj.(item)
	if !ok {
		return nil, fmt.Errorf("crcache: unexpected %T from the %s informer", obj, a.key.gvk)
	}
	if !it.compact() || a.sharers.Load() < 2 {
		return a.decodeEvent(it)
	}
	key, rv := it.Key(), it.ResourceVersion()
	if o := a.recent.get(key, rv); o != nil {
		return o, nil
	}
	o, err := a.decodeEvent(it)
	if err != nil {
		return nil, err
	}
	// The JSON's size bounds what is kept; a compressed object's JSON was just decompressed
	// for the decode, and comes from its dictionary's last few.
	return a.recent.keep(key, rv, o, len(it.Raw())), nil
}

// decodeEvent decodes it for eventObject: a new object.
func (a *access) decodeEvent(it item) (any, error) {
	out, err := a.newObject()
	if err != nil {
		return nil, err
	}
	if err := a.decodeInto(it, out, true); err != nil {
		return nil, err
	}
	if a.key.kind == kindTyped {
		out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return out, nil
}

// indexFunc adapts a client-go index function to kindex's: it receives objects of the
// access's kind.
func (a *access) indexFunc(fn toolscache.IndexFunc) toolscache.IndexFunc {
	return func(obj any) ([]string, error) {
		o, err := a.eventObject(obj)
		if err != nil {
			return nil, err
		}
		return fn(o)
	}
}

// stopContext returns a context that ends when stop is closed.
func stopContext(stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
