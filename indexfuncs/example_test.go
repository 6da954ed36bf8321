package indexfuncs_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kindex/kindex/indexfuncs"
)

func ExampleJSONPath() {
	images, err := indexfuncs.JSONPath("{.spec.containers[*].image}")
	if err != nil {
		panic(err)
	}
	pod := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"containers": []any{
			map[string]any{"image": "nginx:1.27"},
			map[string]any{"image": "envoy:1.31"},
		}},
	}}
	values, _ := images(pod)
	fmt.Println(values)

	_, err = indexfuncs.JSONPath("{.spec.containers[*.image}")
	fmt.Println(err != nil)
	// Output:
	// [nginx:1.27 envoy:1.31]
	// true
}

func ExampleBuiltin() {
	controller, _ := indexfuncs.Builtin(indexfuncs.IndexControllerUID)
	isController := true
	pod := &unstructured.Unstructured{}
	pod.SetOwnerReferences([]metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", UID: "cm-1"},
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-1", Controller: &isController},
	})
	values, _ := controller(pod)
	fmt.Println(values)
	// Output: [rs-1]
}
