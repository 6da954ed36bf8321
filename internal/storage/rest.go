package storage

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourcePath returns the path of a resource's collection as REST request segments:
// /api/v1 or /apis/group/version, then namespaces/ns unless ns is "", then the resource.
func ResourcePath(gvr schema.GroupVersionResource, ns string) []string {
	p := []string{"api"}
	if gvr.Group != "" {
		p = []string{"apis", gvr.Group}
	}
	p = append(p, gvr.Version)
	if ns != "" {
		p = append(p, "namespaces", ns)
	}
	return append(p, gvr.Resource)
}

// ParamsVersion and ParameterCodec encode ListOptions into query parameters as client-go's
// dynamic and metadata clients do:
// SpecificallyVersionedParams(&opts, ParameterCodec, ParamsVersion).
var (
	ParamsVersion  = schema.GroupVersion{Version: "v1"}
	ParameterCodec = func() runtime.ParameterCodec {
		s := runtime.NewScheme()
		metav1.AddToGroupVersion(s, ParamsVersion)
		return runtime.NewParameterCodec(s)
	}()
)
