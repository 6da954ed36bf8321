package informer

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// typedTransform adapts a transform on the user-facing type to a cache.TransformFunc; other
// values (tombstones) pass through.
func typedTransform[T Object](fn func(T) (T, error)) cache.TransformFunc {
	if fn == nil {
		return nil
	}
	return func(obj any) (any, error) {
		t, ok := obj.(T)
		if !ok {
			return obj, nil
		}
		return fn(t)
	}
}

// forgiving wraps a caller's transform so that its error never drops an object: the object
// is kept as kindex's own transform left it (with the namespace and name it had) and onErr
// reports the failure.
func forgiving(fn cache.TransformFunc, onErr func(error)) cache.TransformFunc {
	if fn == nil {
		return nil
	}
	return func(obj any) (out any, err error) {
		key := keyOf(obj)
		defer func() {
			if r := recover(); r != nil {
				onErr(&PanicError{Callback: "transform", Value: r, Stack: string(debug.Stack())})
				out, err = key.restore(obj), nil
			}
		}()
		out, err = fn(obj)
		switch {
		case err != nil:
			onErr(err)
			return key.restore(obj), nil
		case isNil(out):
			onErr(errors.New("kindex: transform returned nil and no error"))
			return key.restore(obj), nil
		}
		if err := key.check(out); err != nil {
			onErr(err)
			return key.restore(obj), nil
		}
		return out, nil
	}
}

// objectKey is the namespace and name of an object given to a transform, as received. A
// result of another namespace or name (one built afresh without the metadata has neither,
// one renamed in place has the new name) would be cached under another key, where it
// replaces whatever has that key, and the object itself would be missing from the cache.
type objectKey struct {
	m        metav1.Object // nil: a tombstone, or a type without metadata
	ns, name string
}

func keyOf(obj any) objectKey {
	m, err := meta.Accessor(obj)
	if err != nil {
		return objectKey{}
	}
	return objectKey{m: m, ns: m.GetNamespace(), name: m.GetName()}
}

// check refuses a transform's result of another namespace or name.
func (k objectKey) check(out any) error {
	if k.m == nil {
		return nil
	}
	b, err := meta.Accessor(out)
	if err != nil {
		return fmt.Errorf("kindex: transform returned a %T, which has no object metadata: %w", out, err)
	}
	if b.GetNamespace() != k.ns || b.GetName() != k.name {
		return fmt.Errorf("kindex: transform changed the object's namespace or name from %s to %s",
			quote(k.ns+"/"+k.name), quote(b.GetNamespace()+"/"+b.GetName()))
	}
	return nil
}

// restore gives obj back the namespace and name it was received with, should a failed
// transform have changed them in place, and returns it.
func (k objectKey) restore(obj any) any {
	if k.m != nil && (k.m.GetNamespace() != k.ns || k.m.GetName() != k.name) {
		k.m.SetNamespace(k.ns)
		k.m.SetName(k.name)
	}
	return obj
}

// isNil reports whether v is nil or a typed nil pointer (a transform returning a nil T).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
