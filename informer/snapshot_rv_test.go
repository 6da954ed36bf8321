package informer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/cache"
)

// A batch that ends a list and goes on with the watch's events leaves the cache consistent
// with the highest of those events, not with the list's lower version: a snapshot run that
// waits for the events' version (waitCurrent) would otherwise stay Syncing on a quiet
// resource, and the next snapshot would save a version behind its objects.
func TestListConsistentRV(t *testing.T) {
	at := func(typ cache.DeltaType, rv string) cache.Delta {
		o := newObj("ns", "o"+rv, nil)
		o.ResourceVersion = rv
		return cache.Delta{Type: typ, Object: o}
	}
	gone := func(rv string) cache.Delta {
		o := newObj("ns", "gone", nil)
		o.ResourceVersion = rv
		return cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: o}}
	}
	end := cache.Delta{Type: cache.Deleted, Object: listEnd}
	for name, tc := range map[string]struct {
		batch []cache.Delta
		want  uint64
	}{
		"the list alone":                                  {[]cache.Delta{at(cache.Replaced, "5"), at(cache.Replaced, "3")}, 10},
		"events after the list's last item":               {[]cache.Delta{at(cache.Replaced, "5"), at(cache.Added, "12"), at(cache.Updated, "14"), at(cache.Updated, "13")}, 14},
		"a tombstone's version is the cache's, not news":  {[]cache.Delta{at(cache.Replaced, "5"), gone("16")}, 10},
		"events before the list's last item do not count": {[]cache.Delta{at(cache.Updated, "20"), at(cache.Replaced, "2")}, 10},
		"an older event after it does not lower it":       {[]cache.Delta{at(cache.Replaced, "5"), at(cache.Updated, "7")}, 10},
		"versions that are not numbers are passed over":   {[]cache.Delta{at(cache.Replaced, "5"), at(cache.Updated, "x")}, 10},
		"an empty list ends at its marker":                {[]cache.Delta{at(cache.Updated, "20"), gone("16"), end}, 10},
		"events after an empty list's marker":             {[]cache.Delta{gone("16"), end, at(cache.Added, "12")}, 12},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, listConsistentRV(10, tc.batch))
		})
	}
}

// List end and bookmark markers are taken out of a batch before the entry applies it:
// list ends counted, the highest bookmarked version kept.
func TestWithoutMarkers(t *testing.T) {
	a := cache.Delta{Type: cache.Added, Object: newObj("ns", "a", nil)}
	end := cache.Delta{Type: cache.Deleted, Object: listEnd}
	bm := func(rv uint64) cache.Delta {
		return cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "/bookmark", Obj: bookmarkMarker{rv: rv}}}
	}
	gone := cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: newObj("ns", "b", nil)}}
	batch := []cache.Delta{gone, end, a, end}
	out, n, b := withoutMarkers(batch)
	assert.Equal(t, int64(2), n)
	assert.Zero(t, b)
	assert.Equal(t, []cache.Delta{gone, a}, out)
	out, n, b = withoutMarkers([]cache.Delta{gone, a})
	assert.Zero(t, n)
	assert.Zero(t, b)
	assert.Equal(t, []cache.Delta{gone, a}, out)
	out, n, b = withoutMarkers([]cache.Delta{bm(7), gone, bm(9), a, bm(8)})
	assert.Zero(t, n)
	assert.Equal(t, uint64(9), b)
	assert.Equal(t, []cache.Delta{gone, a}, out)
	out, n, b = withoutMarkers([]cache.Delta{bm(3), end})
	assert.Equal(t, int64(1), n)
	assert.Equal(t, uint64(3), b)
	assert.Empty(t, out)
}
