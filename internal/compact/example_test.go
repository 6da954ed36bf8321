package compact_test

import (
	"fmt"

	"github.com/kindex/kindex/internal/compact"
)

func ExampleDecoder_DecodeList() {
	body := []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"abc"},
	"items":[{"metadata":{"name":"web-1","namespace":"shop","labels":{"app":"web"},
	"managedFields":[{"manager":"kubectl","operation":"Update"}]},"spec":{"nodeName":"n1"}}]}`)
	d, err := compact.NewDecoder(compact.Options{})
	if err != nil {
		panic(err)
	}
	list, err := d.DecodeList(body)
	if err != nil {
		panic(err)
	}
	fmt.Println(list.ResourceVersion, list.Continue, len(list.Items))
	pod := list.Items[0]
	fmt.Println(pod.GetNamespace(), pod.GetName(), pod.GetLabels()["app"])
	fmt.Println(string(pod.RawJSON()))
	u, err := pod.Unstructured() // decodes the bytes on each call
	if err != nil {
		panic(err)
	}
	fmt.Println(u.GetKind(), u.Object["spec"])
	// Output:
	// 42 abc 1
	// shop web-1 web
	// {"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"shop","labels":{"app":"web"}},"spec":{"nodeName":"n1"}}
	// Pod map[nodeName:n1]
}

func ExampleOptions_projection() {
	d, err := compact.NewDecoder(compact.Options{Projection: []string{"{.spec.containers[*].image}"}})
	if err != nil {
		panic(err)
	}
	pod, err := d.DecodeObject([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},
	"spec":{"nodeName":"n1","containers":[{"name":"c","image":"nginx"}]},"status":{"phase":"Running"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(pod.RawJSON()))
	// Output:
	// {"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}
}
