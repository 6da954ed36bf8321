package typedjson

import (
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestEverySchemeKind decodes objects filled at random of every kind client-go's scheme
// knows (every built-in group and version, lists and options included), compared with
// sigs.k8s.io/json: the types a typed read can ask for.
func TestEverySchemeKind(t *testing.T) {
	n := 4
	if testing.Short() {
		n = 1
	}
	kinds := scheme.Scheme.AllKnownTypes()
	gvks := make([]schema.GroupVersionKind, 0, len(kinds))
	for gvk := range kinds {
		if gvk.Version == "__internal" {
			continue
		}
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	if len(gvks) < 300 {
		t.Fatalf("only %d kinds in the scheme", len(gvks))
	}
	for i, gvk := range gvks {
		typ := kinds[gvk]
		newV := func() any { return reflect.New(typ).Interface() }
		t.Run(gvk.GroupVersion().String()+"/"+gvk.Kind, func(t *testing.T) {
			for _, b := range randomObjects(t, newV, int64(i), n) {
				requireSame(t, b, newV)
			}
		})
	}
}
