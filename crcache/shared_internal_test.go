package crcache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The shared objects of UnsafeDisableDeepCopy reads follow the cache: one per key and
// resourceVersion, the first kept when two reads race, and those of objects gone or changed
// dropped once the map has doubled, so that it never holds much more than the cache does.
func TestSharedObjects(t *testing.T) {
	var s sharedObjects
	obj := func() runtime.Object { return &metav1.PartialObjectMetadata{} }
	live := map[string]string{}
	isLive := func(key, rv string) bool { return live[key] == rv }

	a := obj()
	assert.Same(t, a, s.keep("ns/a", "1", a, isLive))
	assert.Same(t, a, s.get("ns/a", "1"))
	assert.Nil(t, s.get("ns/a", "2"), "another version is not shared")
	assert.Same(t, a, s.keep("ns/a", "1", obj(), isLive), "the first object kept for a version wins")
	b := obj()
	assert.Same(t, b, s.keep("ns/a", "2", b, isLive), "a new version replaces the old")
	assert.Nil(t, s.get("ns/a", "1"))

	// Fill to the sweep threshold with objects of which only every tenth is still cached:
	// the object that reaches it (the 1,024th) sweeps the others first.
	for i := range minSweep {
		key := fmt.Sprintf("ns/o-%d", i)
		if i%10 == 0 {
			live[key] = "1"
		}
		s.keep(key, "1", obj(), isLive)
	}
	liveBefore := (minSweep - 1 + 9) / 10 // o-0, o-10, ..., o-1020
	assert.Len(t, s.objs, liveBefore+1, "gone objects dropped (ns/a's old version too), the new one kept")
	assert.Equal(t, 2*liveBefore, s.sweepAt, "the next sweep when the map has doubled")
	assert.NotNil(t, s.get("ns/o-10", "1"))
	assert.Nil(t, s.get("ns/o-11", "1"))
	assert.Nil(t, s.get("ns/a", "2"))

	s.reset()
	assert.Nil(t, s.get("ns/o-10", "1"))
	assert.Empty(t, s.objs)
}
