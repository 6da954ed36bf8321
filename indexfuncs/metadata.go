package indexfuncs

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kindex/kindex/internal/jsondecode"
)

// metadataMap renders an object that exposes only its metadata (a PartialObjectMetadata of the
// metadata-only front end) as the map unstructured would hold, without reflection, so that
// JSONPath reads .metadata, .apiVersion and .kind from it: every field of metadata the
// server's JSON has (managedFields when the mode keeps them), so that a path into metadata
// gives the values it gives in the other modes.
func metadataMap(obj any) (map[string]any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %T", ErrUnsupportedObject, obj)
	}
	md := map[string]any{}
	setString(md, "name", m.GetName())
	setString(md, "generateName", m.GetGenerateName())
	setString(md, "namespace", m.GetNamespace())
	setString(md, "selfLink", m.GetSelfLink())
	setString(md, "uid", string(m.GetUID()))
	setString(md, "resourceVersion", m.GetResourceVersion())
	if g := m.GetGeneration(); g != 0 {
		md["generation"] = g
	}
	if ts := m.GetCreationTimestamp(); !ts.IsZero() {
		md["creationTimestamp"] = ts.UTC().Format(time.RFC3339)
	}
	if ts := m.GetDeletionTimestamp(); ts != nil {
		md["deletionTimestamp"] = ts.UTC().Format(time.RFC3339)
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil {
		md["deletionGracePeriodSeconds"] = *g
	}
	if l := m.GetLabels(); len(l) > 0 {
		md["labels"] = stringMap(l)
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		md["annotations"] = stringMap(a)
	}
	if f := m.GetFinalizers(); len(f) > 0 {
		list := make([]any, len(f))
		for i, s := range f {
			list[i] = s
		}
		md["finalizers"] = list
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		list := make([]any, len(refs))
		for i, r := range refs {
			ref := map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": string(r.UID)}
			if r.Controller != nil {
				ref["controller"] = *r.Controller
			}
			if r.BlockOwnerDeletion != nil {
				ref["blockOwnerDeletion"] = *r.BlockOwnerDeletion
			}
			list[i] = ref
		}
		md["ownerReferences"] = list
	}
	if mf := m.GetManagedFields(); len(mf) > 0 {
		// Kept only on request (KeepManagedFields): rendered as the server writes them.
		b, err := json.Marshal(mf)
		if err != nil {
			return nil, err
		}
		v, err := jsondecode.Value(b)
		if err != nil {
			return nil, err
		}
		md["managedFields"] = v
	}
	out := map[string]any{"metadata": md}
	if o, ok := obj.(runtime.Object); ok {
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.Kind != "" {
			out["apiVersion"], out["kind"] = gvk.GroupVersion().String(), gvk.Kind
		}
	}
	return out, nil
}

func setString(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func stringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
