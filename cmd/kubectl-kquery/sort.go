package main

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kindex/kindex/jsonpath"
)

// compileSortBy compiles --sort-by as kubectl reads it: "{.a.b}", ".a.b" or "a.b".
func compileSortBy(expr string) (*jsonpath.Path, error) {
	p, err := jsonpath.Compile(relaxedTemplate(expr))
	if err != nil {
		return nil, usagef("--sort-by %q: %v", expr, err)
	}
	return p, nil
}

// sortObjects sorts items by the first value of the --sort-by path, as kubectl does:
// objects without a value first, numbers by value, strings that are both quantities
// ("100Mi", "2") by quantity, other strings by bytes; the sort is stable, so equal keys keep
// (namespace, name) order. A path that no object has is an error.
func sortObjects(items []*unstructured.Unstructured, expr string) ([]*unstructured.Unstructured, error) {
	p, err := compileSortBy(expr)
	if err != nil {
		return nil, err
	}
	type keyed struct {
		obj *unstructured.Unstructured
		key any
		has bool
	}
	ks := make([]keyed, len(items))
	found := false
	for i, it := range items {
		ks[i].obj = it
		_ = p.Each(it.Object, func(v jsonpath.Value) bool {
			ks[i].key, ks[i].has = v.Interface(), true
			return false
		})
		found = found || ks[i].has
	}
	if !found && len(items) > 0 {
		return nil, fmt.Errorf("couldn't find any field with path %q in the list of objects", relaxedTemplate(expr))
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		switch {
		case !a.has || !b.has:
			return cmpBool(b.has, a.has)
		}
		return compareValues(a.key, b.key)
	})
	out := make([]*unstructured.Unstructured, len(ks))
	for i, k := range ks {
		out[i] = k.obj
	}
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

func compareValues(a, b any) int {
	af, aNum := number(a)
	bf, bNum := number(b)
	if aNum && bNum {
		return cmp.Compare(af, bf)
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr && bStr {
		qa, errA := resource.ParseQuantity(as)
		qb, errB := resource.ParseQuantity(bs)
		if errA == nil && errB == nil {
			return qa.Cmp(qb)
		}
		return cmp.Compare(as, bs)
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
