package jsondecode_test

import (
	"fmt"

	"github.com/kindex/kindex/internal/jsondecode"
)

func ExampleObject() {
	m, err := jsondecode.Object([]byte(`{"kind":"Widget","spec":{"replicas":3,"ratio":0.5,"big":9223372036854775808,"tags":["a","b"],"owner":null}}`))
	if err != nil {
		panic(err)
	}
	spec := m["spec"].(map[string]any)
	for _, k := range []string{"replicas", "ratio", "big", "tags", "owner"} {
		fmt.Printf("%s: %T %v\n", k, spec[k], spec[k])
	}
	// Output:
	// replicas: int64 3
	// ratio: float64 0.5
	// big: float64 9.223372036854776e+18
	// tags: []interface {} [a b]
	// owner: <nil> <nil>
}

func ExampleDecoder() {
	// One Decoder per stream (say, the items of a list and the watch events that
	// follow) shares the strings the objects repeat. It is not safe for concurrent use.
	var d jsondecode.Decoder
	for _, item := range []string{
		`{"metadata":{"name":"a","labels":{"app":"checkout"}}}`,
		`{"metadata":{"name":"b","labels":{"app":"checkout"}}}`,
	} {
		m, err := d.Object([]byte(item))
		if err != nil {
			panic(err)
		}
		md := m["metadata"].(map[string]any)
		fmt.Println(md["name"], md["labels"])
	}
	_, err := d.Object([]byte(`{"metadata":{}`))
	fmt.Println(err)
	// Output:
	// a map[app:checkout]
	// b map[app:checkout]
	// unexpected end of JSON input at offset 14
}
