package jsonpath_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kindex/kindex/jsonpath"
)

// pod is a small decoded Pod, as unstructured.Unstructured holds it.
var pod = map[string]any{
	"metadata": map[string]any{
		"name":      "web-0",
		"namespace": "shop",
		"labels":    map[string]any{"app.kubernetes.io/name": "web"},
	},
	"spec": map[string]any{
		"nodeName": "worker-1",
		"containers": []any{
			map[string]any{"name": "web", "image": "nginx:1.27", "ports": []any{map[string]any{"containerPort": int64(80)}}},
			map[string]any{"name": "sidecar", "image": "envoy:1.31"},
		},
	},
	"status": map[string]any{
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "PodScheduled", "status": "True"},
		},
	},
}

func ExampleCompile() {
	p, err := jsonpath.Compile(`{.status.conditions[?(@.type=="Ready")].status}`)
	if err != nil {
		panic(err)
	}
	values, err := p.Eval(pod)
	if err != nil {
		panic(err)
	}
	for _, v := range values {
		fmt.Println(v.Kind(), v)
	}
	// Output: string True
}

func ExampleCompile_barePath() {
	// Index expressions may omit the braces.
	p := jsonpath.MustCompile(`.metadata.labels['app.kubernetes.io/name']`)
	fmt.Println(p)
	fmt.Println(p.SingleValued())
	values, _ := p.Eval(pod)
	fmt.Println(values)
	// Output:
	// {.metadata.labels['app.kubernetes.io/name']}
	// true
	// [web]
}

func ExamplePath_Each() {
	// Each calls back for every value without allocating; index
	// functions build their keys from it.
	p := jsonpath.MustCompile(`{.spec.containers[*].image}`)
	var keys []string
	err := p.Each(pod, func(v jsonpath.Value) bool {
		if v.IsScalar() {
			keys = append(keys, v.String())
		}
		return true // false stops the evaluation
	})
	fmt.Println(keys, err)
	// Output: [nginx:1.27 envoy:1.31] <nil>
}

func ExamplePath_ExecuteString() {
	// Templates mix text and paths, as kubectl -o jsonpath does.
	p := jsonpath.MustCompile(`{.metadata.namespace}/{.metadata.name}`)
	key, _ := p.ExecuteString(pod)
	fmt.Println(key)

	p = jsonpath.MustCompile(`{range .spec.containers[*]}{.name}={.image} {end}`)
	text, _ := p.ExecuteString(pod)
	fmt.Println(text)
	// Output:
	// shop/web-0
	// web=nginx:1.27 sidecar=envoy:1.31
}

func ExampleJSON() {
	// Raw JSON is evaluated without decoding it; integers keep their
	// precision.
	data := []byte(`{"spec": {"size": 9007199254740993, "ratio": 1.5, "tags": ["a", "b"]}}`)
	p := jsonpath.MustCompile(`{.spec.size,.spec.ratio,.spec.tags}`)
	values, _ := p.Eval(jsonpath.JSON(data))
	for _, v := range values {
		fmt.Printf("%s %s %T\n", v.Kind(), v, v.Interface())
	}
	// Output:
	// int 9007199254740993 int64
	// float 1.5 float64
	// list ["a","b"] []interface {}
}

func ExamplePath_Fields() {
	p := jsonpath.MustCompile(`{.metadata.namespace}/{.metadata.name} {.spec.containers[?(@.name=="web")].image}`)
	fmt.Println(p.Fields())
	// Output: [[metadata name] [metadata namespace] [spec containers]]
}

func ExampleSyntaxError() {
	_, err := jsonpath.Compile(`{.spec.containers[?(@.name=="web"]}`)
	var se *jsonpath.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Offset, se.Msg)
	}
	fmt.Println(err)
	// Output:
	// 33 unexpected ']', expected a comparison operator or ')'
	// jsonpath: syntax error at offset 33: unexpected ']', expected a comparison operator or ')' in "{.spec.containers[?(@.name==\"web\"]}"
	// 	{.spec.containers[?(@.name=="web"]}
	// 	                                 ^
}

func ExampleOptions() {
	// Evaluation is bounded: a hostile expression on a deep object stops
	// with ErrBudgetExceeded instead of running for minutes.
	var deep any = "leaf"
	for i := 0; i < 1000; i++ {
		deep = map[string]any{"x": deep}
	}
	p := jsonpath.MustCompile(`{..x..x..x}`)
	_, err := p.Eval(deep)
	fmt.Println(errors.Is(err, jsonpath.ErrBudgetExceeded))

	// Limits are configurable.
	_, err = jsonpath.CompileWithOptions(strings.Repeat(".a", 100), jsonpath.Options{MaxLength: 64})
	fmt.Println(errors.Is(err, jsonpath.ErrTooComplex))
	// Output:
	// true
	// true
}
