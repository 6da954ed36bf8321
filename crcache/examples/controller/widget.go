package main

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The demo CRD of `make demo` (widgets.demo.kindex.io), as a Go type in the scheme, the way a
// kubebuilder project has its API types: the cache decodes each Widget it reads straight
// from its stored JSON into this struct.

// GroupVersion is the Widget's API group and version.
var GroupVersion = schema.GroupVersion{Group: "demo.kindex.io", Version: "v1"}

// Widget is the custom resource the controller reconciles: it wants spec.size Pods.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what a user asks for.
type WidgetSpec struct {
	// Size is how many Pods the widget runs.
	Size  int32  `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
}

// WidgetStatus is what the controller saw. Phase is the demo seed's; Pods is this
// controller's.
type WidgetStatus struct {
	Phase string `json:"phase,omitempty"`
	Pods  *int32 `json:"pods,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyObject implements runtime.Object (what controller-gen would generate).
func (w *Widget) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopy returns a deep copy.
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Status.Pods != nil {
		n := *w.Status.Pods
		out.Status.Pods = &n
	}
	return &out
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopy()
	}
	return &out
}

// AddToScheme registers Widget and WidgetList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// WidgetCRD is the demo's CRD: namespaced, an integer spec.size, a string spec.color and a
// free-form status (no status subresource: the demo seed writes status.phase directly).
func WidgetCRD() *apiextv1.CustomResourceDefinition {
	preserve := true
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + GroupVersion.Group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: GroupVersion.Group,
			Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList",
				ShortNames: []string{"wdg"}, Categories: []string{"kindex-demo"},
			},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: GroupVersion.Version, Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
							"size":  {Type: "integer"},
							"color": {Type: "string"},
						}},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
}
