package informer

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestShardSelectorForm(t *testing.T) {
	tests := []struct {
		name  string
		shard Shard
		want  string
	}{
		{"zero", Shard{}, ""},
		{"whole space", Shard{Ranges: []ShardRange{FullRange}},
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"},
		{"first half", Shard{Ranges: []ShardRange{{0, 1<<63 - 1}}},
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"},
		{"merged and sorted", Shard{Field: ShardByNamespace, Ranges: []ShardRange{{1 << 63, math.MaxUint64}, {10, 20}, {21, 30}}},
			"shardRange(object.metadata.namespace, '0x000000000000000a', '0x000000000000001f') || " +
				"shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.shard.selector()
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := Shard{Field: "object.metadata.name", Ranges: []ShardRange{FullRange}}.selector()
	assert.Error(t, err)
	_, err = Shard{Ranges: []ShardRange{{5, 4}}}.selector()
	assert.Error(t, err)
	_, err = Shard{Field: "metadata.uid"}.selector()
	assert.Error(t, err, "an unknown field without ranges is refused, not taken for no shard")
	_, err = Shard{Field: ShardByNamespace}.selector()
	assert.NoError(t, err, "a known field without ranges is no shard")

	// kube-apiserver (gate on) parses a selector of at most 100,000 characters: 1,200 ranges
	// of UIDs are 94,796, 1,300 are 102,696 and refused with a list error that is retried
	// forever. kindex refuses such a shard when it is given.
	ranges := func(n int) []ShardRange {
		var rs []ShardRange
		for i := range n {
			rs = append(rs, ShardRange{Start: uint64(i) * 4, Last: uint64(i)*4 + 1})
		}
		return rs
	}
	_, err = Shard{Ranges: ranges(1200)}.selector()
	assert.NoError(t, err)
	_, err = Shard{Ranges: ranges(1300)}.selector()
	assert.ErrorContains(t, err, "1300 ranges")
	_, err = Shard{Ranges: append(ranges(1300), FullRange)}.selector()
	assert.NoError(t, err, "ranges merged into one")
}

func TestShardMatchesTheServersHash(t *testing.T) {
	half := Shard{Ranges: []ShardRange{{0, 1<<63 - 1}}}
	other := Shard{Ranges: []ShardRange{{1 << 63, math.MaxUint64}}}
	sel := sharding.NewSelector(half.requirements()...)
	m := newShardMatcher(half)
	for i := range 200 {
		uid := types.UID("uid-" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		u := &unstructured.Unstructured{}
		u.SetUID(uid)
		want, err := sel.Matches(u)
		require.NoError(t, err)
		assert.Equal(t, want, half.Matches(string(uid)), uid)
		assert.Equal(t, want, m.match(u), uid)
		assert.Equal(t, want, m.match(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: uid}}), uid)
		assert.NotEqual(t, half.Matches(string(uid)), other.Matches(string(uid)), "exactly one of two halves")
	}
}

func TestShardCoversAndUnion(t *testing.T) {
	a := Shard{Ranges: []ShardRange{{0, 99}}}
	b := Shard{Ranges: []ShardRange{{100, 199}}}
	u := a.Union(b)
	assert.Equal(t, []ShardRange{{0, 199}}, u.Ranges)
	assert.True(t, u.Covers(a))
	assert.True(t, u.Covers(Shard{Ranges: []ShardRange{{50, 150}}}))
	assert.False(t, a.Covers(b))
	assert.False(t, a.Covers(Shard{Ranges: []ShardRange{{50, 150}}}))
	assert.True(t, Shard{Ranges: []ShardRange{{0, math.MaxUint64}}}.Equal(Shard{Field: ShardByUID, Ranges: []ShardRange{{0, 10}, {11, math.MaxUint64}}}))
}

// fakeWatchLW's watch is a FakeWatcher the test drives.
type fakeWatchLW struct{ w *watch.FakeWatcher }

func (f fakeWatchLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return &unstructured.UnstructuredList{}, nil
}

func (f fakeWatchLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return f.w, nil
}

// A shard's watch filter ends with its Stop even when an event kept by the shard is waiting
// to be read by a reader that has gone (the reflector stops reading, then stops the watch):
// apimachinery's watch.Filter would block on that send for ever, a goroutine per handoff.
func TestShardWatchStopsWithAnEventPending(t *testing.T) {
	fw := watch.NewFake()
	lw := &shardLW{inner: fakeWatchLW{fw}, e: &entry{core: &core{}}, m: newShardMatcher(Shard{Ranges: []ShardRange{FullRange}})}
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)

	obj := &unstructured.Unstructured{}
	obj.SetUID("u1")
	sent := make(chan struct{})
	go func() { fw.Add(obj); close(sent) }() // the filter takes it and waits to hand it on
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the filter did not take the event")
	}

	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return")
	}
	select {
	case ev, ok := <-w.ResultChan():
		assert.False(t, ok, "after Stop the result channel is closed, not holding %v", ev.Type)
	case <-time.After(10 * time.Second):
		t.Fatal("the filter's goroutine is still running after Stop")
	}
}
