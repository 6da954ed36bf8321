package indexfuncs

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Names of the built-in indexes. Their values are read from object metadata directly, without
// JSONPath, for every kind of object the front ends cache.
const (
	// IndexNamespace: the object's namespace ("" objects are not indexed).
	IndexNamespace = "namespace"
	// IndexName: the object's name.
	IndexName = "name"
	// IndexUID: the object's UID.
	IndexUID = "uid"
	// IndexLabel: one value "key=value" per label.
	IndexLabel = "label"
	// IndexLabelKey: one value per label key.
	IndexLabelKey = "label-key"
	// IndexAnnotationKey: one value per annotation key.
	IndexAnnotationKey = "annotation-key"
	// IndexOwnerUID: the UID of every owner reference.
	IndexOwnerUID = "owner-uid"
	// IndexControllerUID: the UID of the controller owner reference, if any.
	IndexControllerUID = "controller-uid"
	// IndexFinalizer: one value per finalizer.
	IndexFinalizer = "finalizer"
)

var builtins = map[string]cache.IndexFunc{
	IndexNamespace: metaFunc(func(m metav1.Object) []string { return nonEmpty(m.GetNamespace()) }),
	IndexName:      metaFunc(func(m metav1.Object) []string { return nonEmpty(m.GetName()) }),
	IndexUID:       metaFunc(func(m metav1.Object) []string { return nonEmpty(string(m.GetUID())) }),
	IndexLabel: metaFunc(func(m metav1.Object) []string {
		l := m.GetLabels()
		out := make([]string, 0, len(l))
		for k, v := range l {
			out = append(out, k+"="+v)
		}
		return out
	}),
	IndexLabelKey:      metaFunc(func(m metav1.Object) []string { return keysOf(m.GetLabels()) }),
	IndexAnnotationKey: metaFunc(func(m metav1.Object) []string { return keysOf(m.GetAnnotations()) }),
	IndexOwnerUID: metaFunc(func(m metav1.Object) []string {
		refs := m.GetOwnerReferences()
		out := make([]string, 0, len(refs))
		for _, r := range refs {
			out = append(out, string(r.UID))
		}
		return out
	}),
	IndexControllerUID: metaFunc(func(m metav1.Object) []string {
		if c := metav1.GetControllerOfNoCopy(m); c != nil {
			return []string{string(c.UID)}
		}
		return nil
	}),
	IndexFinalizer: metaFunc(func(m metav1.Object) []string { return m.GetFinalizers() }),
}

// Builtin returns the built-in index function of that name (see the Index* constants).
func Builtin(name string) (cache.IndexFunc, bool) {
	fn, ok := builtins[name]
	return fn, ok
}

// BuiltinNames returns the names of the built-in indexes, sorted.
func BuiltinNames() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Namespace indexes objects by namespace.
func Namespace(obj any) ([]string, error) { return builtins[IndexNamespace](obj) }

// OwnerUID indexes objects by the UIDs of their owners.
func OwnerUID(obj any) ([]string, error) { return builtins[IndexOwnerUID](obj) }

// ControllerUID indexes objects by the UID of their controller.
func ControllerUID(obj any) ([]string, error) { return builtins[IndexControllerUID](obj) }

// UID indexes objects by their own UID.
func UID(obj any) ([]string, error) { return builtins[IndexUID](obj) }

func metaFunc(f func(metav1.Object) []string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		m, err := meta.Accessor(unwrap(obj))
		if err != nil {
			return nil, fmt.Errorf("%w: %T", ErrUnsupportedObject, obj)
		}
		return f(m), nil
	}
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
