package crcache

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nested holds TypeMeta at every place the walkers reach: the top level's, a pointer's, a
// slice's, an array's and a map's elements, and an unexported field the walkers leave alone.
type nested struct {
	metav1.TypeMeta
	Ptr    *nested
	Slice  []nested
	Array  [1]leaf
	Map    map[string]nested
	hidden metav1.TypeMeta
}

// leaf is an array's element (an array of nested would hold itself).
type leaf struct{ metav1.TypeMeta }

func tm(kind string) metav1.TypeMeta { return metav1.TypeMeta{Kind: kind, APIVersion: "v1"} }

func sample() *nested {
	return &nested{
		TypeMeta: tm("Top"),
		Ptr:      &nested{TypeMeta: tm("Ptr")},
		Slice:    []nested{{TypeMeta: tm("S0")}, {TypeMeta: tm("S1"), Map: map[string]nested{"deep": {TypeMeta: tm("Deep")}}}},
		Array:    [1]leaf{{TypeMeta: tm("A0")}},
		Map:      map[string]nested{"k": {TypeMeta: tm("M")}},
		hidden:   tm("Hidden"),
	}
}

func TestNestedTypeMetaWalkers(t *testing.T) {
	v := sample()
	require.True(t, hasNestedTypeMeta(reflect.ValueOf(v), true))

	clearNestedTypeMeta(reflect.ValueOf(v), true)
	require.Equal(t, tm("Top"), v.TypeMeta, "the top level's is kept")
	require.Equal(t, tm("Hidden"), v.hidden, "unexported fields are left alone")
	require.Zero(t, v.Ptr.TypeMeta)
	require.Zero(t, v.Slice[0].TypeMeta)
	require.Zero(t, v.Slice[1].TypeMeta)
	require.Zero(t, v.Slice[1].Map["deep"].TypeMeta)
	require.Zero(t, v.Array[0].TypeMeta)
	require.Zero(t, v.Map["k"].TypeMeta)
	require.False(t, hasNestedTypeMeta(reflect.ValueOf(v), true))

	// Only one nested TypeMeta left: has must find it, wherever it is.
	v.Slice[1].Map["deep"] = nested{TypeMeta: tm("Deep")}
	require.True(t, hasNestedTypeMeta(reflect.ValueOf(v), true))
	require.False(t, hasNestedTypeMeta(reflect.ValueOf(&nested{TypeMeta: tm("Top")}), true))

	// Restore puts back what was cleared, keeps what a transform set, and skips places the
	// source does not have (a map key or slice element it lacks, a nil pointer).
	src := sample()
	clearNestedTypeMeta(reflect.ValueOf(v), true)
	v.Map["k"] = nested{TypeMeta: tm("SetByTransform")}
	v.Map["new"] = nested{}
	v.Slice = append(v.Slice, nested{})
	restoreNestedTypeMeta(reflect.ValueOf(v), reflect.ValueOf(src), true)
	require.Equal(t, tm("Ptr"), v.Ptr.TypeMeta)
	require.Equal(t, tm("S0"), v.Slice[0].TypeMeta)
	require.Equal(t, tm("S1"), v.Slice[1].TypeMeta)
	require.Equal(t, tm("Deep"), v.Slice[1].Map["deep"].TypeMeta)
	require.Zero(t, v.Slice[2].TypeMeta)
	require.Equal(t, tm("A0"), v.Array[0].TypeMeta)
	require.Equal(t, tm("SetByTransform"), v.Map["k"].TypeMeta)
	require.Zero(t, v.Map["new"].TypeMeta)

	src.Ptr = nil
	v.Ptr.TypeMeta = metav1.TypeMeta{}
	restoreNestedTypeMeta(reflect.ValueOf(v), reflect.ValueOf(src), true)
	require.Zero(t, v.Ptr.TypeMeta, "nothing to restore from a nil pointer")

	// A value of another type is no source.
	restoreNestedTypeMeta(reflect.ValueOf(v), reflect.ValueOf(&struct{}{}), true)
}
