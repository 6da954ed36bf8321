package informer

import (
	"errors"
	"reflect"
	"runtime/debug"

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
		return out, nil
	}
}

// isNil reports whether v is nil or a typed nil pointer (a transform returning a nil T).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
