package storage

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// StripManagedFields removes metadata.managedFields in place: about half of a typical
// object's memory, and of no use to a cache reader. It is idempotent and never fails.
func StripManagedFields(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if md, ok := o.Object["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
	case *metav1.PartialObjectMetadata:
		o.ManagedFields = nil
	case metav1.Object:
		if o.GetManagedFields() != nil {
			o.SetManagedFields(nil)
		}
	}
	return obj, nil
}

// ComposeTransforms applies fns in order, skipping nil ones; nil when all are nil.
func ComposeTransforms(fns ...cache.TransformFunc) cache.TransformFunc {
	var chain []cache.TransformFunc
	for _, fn := range fns {
		if fn != nil {
			chain = append(chain, fn)
		}
	}
	switch len(chain) {
	case 0:
		return nil
	case 1:
		return chain[0]
	}
	return func(obj any) (any, error) {
		var err error
		for _, fn := range chain {
			if obj, err = fn(obj); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
}
