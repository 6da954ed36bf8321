package informer

import "k8s.io/client-go/tools/cache"

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
	return func(obj any) (any, error) {
		out, err := fn(obj)
		if err != nil || out == nil {
			if err != nil {
				onErr(err)
			}
			return obj, nil
		}
		return out, nil
	}
}
