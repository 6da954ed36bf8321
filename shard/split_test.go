package shard

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kindex/kindex/informer"
)

func TestShardSplit(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7} {
		parts := Split(informer.ShardByUID, n)
		assert.Len(t, parts, n)
		var all informer.Shard
		next := uint64(0)
		for i, p := range parts {
			assert.Len(t, p.Ranges, 1)
			assert.Equal(t, next, p.Ranges[0].Start, "n=%d part %d contiguous", n, i)
			next = p.Ranges[0].Last + 1
			all = all.Union(p)
		}
		assert.Equal(t, uint64(math.MaxUint64), parts[n-1].Ranges[0].Last)
		assert.True(t, all.Equal(informer.Shard{Ranges: []informer.ShardRange{informer.FullRange}}))
	}
	assert.Equal(t, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
		Split(informer.ShardByUID, 2)[0].String())
}

func TestShardHeldAnnotation(t *testing.T) {
	s := Split(informer.ShardByUID, 3)[1].Union(Split(informer.ShardByUID, 5)[4])
	got, err := parseHeld(informer.ShardByUID, formatHeld(s))
	assert.NoError(t, err)
	assert.True(t, s.Equal(got))
	empty, err := parseHeld(informer.ShardByUID, "")
	assert.NoError(t, err)
	assert.True(t, empty.IsZero())
	for _, bad := range []string{"zz", "10-5", "1-2,", "-", "1-2-3", "10000000000000000-1"} {
		_, err = parseHeld(informer.ShardByUID, bad)
		assert.Error(t, err, "%q", bad)
	}
}

// TestShardPublishedIsTheIntersection: a replica publishes a range as held only when each
// of its Informers holds it synced; one that holds nothing yet makes it publish nothing.
func TestShardPublishedIsTheIntersection(t *testing.T) {
	m := &Member{held: map[any]informer.Shard{}, kick: make(chan struct{}, 1)}
	halves := Split(informer.ShardByUID, 2)
	whole := halves[0].Union(halves[1])
	a, b := new(int), new(int)
	m.setHeld(a, whole)
	assert.True(t, m.published().Equal(whole))
	m.setHeld(b, informer.Shard{})
	assert.Empty(t, m.published().Ranges, "b holds nothing synced yet")
	m.setHeld(b, halves[1])
	assert.True(t, m.published().Equal(halves[1]))
	m.forget(b)
	assert.True(t, m.published().Equal(whole))
}
