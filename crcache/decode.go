package crcache

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
