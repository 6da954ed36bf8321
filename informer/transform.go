package informer

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/meta"
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
// is kept as kindex's own transform left it and onErr reports the failure.
func forgiving(fn cache.TransformFunc, onErr func(error)) cache.TransformFunc {
	if fn == nil {
		return nil
	}
	return func(obj any) (out any, err error) {
		defer func() {
			if r := recover(); r != nil {
				onErr(&PanicError{Callback: "transform", Value: r, Stack: string(debug.Stack())})
				out, err = obj, nil
			}
		}()
		out, err = fn(obj)
		switch {
		case err != nil:
			onErr(err)
			return obj, nil
		case isNil(out):
			onErr(errors.New("kindex: transform returned nil and no error"))
			return obj, nil
		}
		if err := sameKey(obj, out); err != nil {
			onErr(err)
			return obj, nil
		}
		return out, nil
	}
}

// sameKey refuses a transform's result that is another object than the one it was given:
// another namespace or name (a result built afresh without the metadata has neither) would
// be cached under another key, where it replaces whatever has that key, and the object
// itself would be missing from the cache.
func sameKey(in, out any) error {
	a, err := meta.Accessor(in)
	if err != nil {
		return nil // a tombstone, or a type without metadata: nothing to compare
	}
	b, err := meta.Accessor(out)
	if err != nil {
		return fmt.Errorf("kindex: transform returned a %T, which has no object metadata: %w", out, err)
	}
	if a.GetNamespace() != b.GetNamespace() || a.GetName() != b.GetName() {
		return fmt.Errorf("kindex: transform changed the object's namespace or name from %s to %s",
			quote(a.GetNamespace()+"/"+a.GetName()), quote(b.GetNamespace()+"/"+b.GetName()))
	}
	return nil
}

// isNil reports whether v is nil or a typed nil pointer (a transform returning a nil T).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
