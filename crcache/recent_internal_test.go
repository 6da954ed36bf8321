package crcache

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecentObjects(t *testing.T) {
	var r recentObjects
	a, b := new(int), new(int)
	assert.Nil(t, r.get("ns/a", "1"))
	assert.Same(t, a, r.keep("ns/a", "1", a, 1))
	assert.Same(t, a, r.keep("ns/a", "1", b, 1), "the first object stored for a version is everyone's")
	assert.Same(t, a, r.get("ns/a", "1"))
	assert.Nil(t, r.get("ns/a", "2"), "another version is not that object")
	assert.Same(t, b, r.keep("ns/a", "2", b, 1), "a new version is kept beside the old")
	assert.Same(t, a, r.get("ns/a", "1"))

	// At most recentCap objects, the oldest stored forgotten first; a key stored again is
	// kept as recent.
	r.reset()
	for i := range recentCap {
		r.keep(fmt.Sprint(i), "1", i, 1)
	}
	require.Len(t, r.objs, recentCap)
	r.keep("0", "2", "again", 1) // key 0 is now the most recent, with both its versions
	r.keep("x", "1", "x", 1)     // forgets key 1, the oldest not stored since
	assert.Len(t, r.objs, recentCap)
	assert.Equal(t, "again", r.get("0", "2"))
	assert.Equal(t, 0, r.get("0", "1"))
	assert.Nil(t, r.get("1", "1"))
	assert.Equal(t, 2, r.get("2", "1"))
	for i := range 3 * recentCap {
		r.keep(fmt.Sprint("y", i), "1", i, 1)
		require.LessOrEqual(t, len(r.objs), recentCap)
	}
	assert.Nil(t, r.get("0", "2"))
	r.reset()
	assert.Nil(t, r.get(fmt.Sprint("y", 3*recentCap-1), "1"))
}

// An update hands each handler the old version and the new: both are kept, and a handler
// that converts them after another shares both, in either order; a version older than both
// is not kept.
func TestRecentObjectsVersions(t *testing.T) {
	var r recentObjects
	v1, v2, v3, old := "v1", "v2", "v3", "old"
	r.keep("k", "10", v1, 1)
	r.keep("k", "11", v2, 1) // the first handler's update: old 10 (kept), new 11
	assert.Equal(t, v1, r.get("k", "10"))
	assert.Equal(t, v2, r.get("k", "11"))
	assert.Equal(t, v2, r.keep("k", "11", "other", 1), "the second handler's new version is the first's")
	r.keep("k", "12", v3, 1) // replaces 10, the older
	assert.Nil(t, r.get("k", "10"))
	assert.Equal(t, v2, r.get("k", "11"))
	assert.Equal(t, v3, r.get("k", "12"))
	assert.Equal(t, old, r.keep("k", "9", old, 1), "an older version is handed back")
	assert.Nil(t, r.get("k", "9"), "and not kept")
	assert.Equal(t, v2, r.get("k", "11"))

	// Versions that do not compare: the one stored last stays.
	r.reset()
	r.keep("k", "a", v1, 1)
	r.keep("k", "b", v2, 1)
	r.keep("k", "c", v3, 1)
	assert.Nil(t, r.get("k", "a"))
	assert.Equal(t, v2, r.get("k", "b"))
	r.keep("k", "d", old, 1)
	assert.Nil(t, r.get("k", "b"))
	assert.Equal(t, v3, r.get("k", "c"))
	assert.Equal(t, old, r.get("k", "d"))
}

// What is kept is dropped recentIdle after the last store, not before.
func TestRecentObjectsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r recentObjects
		r.keep("a", "1", "a1", 1)
		time.Sleep(recentIdle / 2)
		r.keep("b", "1", "b1", 1) // pushes the expiry back
		time.Sleep(recentIdle / 2)
		synctest.Wait()
		assert.Equal(t, "a1", r.get("a", "1"), "half an idle period after the last store")
		time.Sleep(recentIdle / 2)
		synctest.Wait()
		assert.Nil(t, r.get("a", "1"), "an idle period after the last store")
		assert.Nil(t, r.get("b", "1"))
		r.keep("c", "1", "c1", 1) // keeps again after an expiry
		assert.Equal(t, "c1", r.get("c", "1"))
		r.reset() // and a reset stops the timer: the bubble ends with no timer left
	})
}

// Large objects are kept fewer: at most recentBytes of JSON, but always the last one.
func TestRecentObjectsBytes(t *testing.T) {
	var r recentObjects
	defer r.reset()
	for i := range 5 {
		r.keep(fmt.Sprint(i), "1", i, recentBytes/4)
	}
	assert.Nil(t, r.get("0", "1"), "the oldest went beyond the bytes")
	for i := 1; i < 5; i++ {
		assert.Equal(t, i, r.get(fmt.Sprint(i), "1"))
	}
	assert.Equal(t, recentBytes, r.bytes)
	r.keep("1", "2", "1v2", recentBytes/4) // a second version counts too
	assert.Nil(t, r.get("2", "1"))
	assert.Equal(t, "1v2", r.get("1", "2"))
	assert.Equal(t, recentBytes, r.bytes)
	r.keep("huge", "1", "huge", 2*recentBytes)
	assert.Equal(t, "huge", r.get("huge", "1"), "the last is kept, however large")
	assert.Len(t, r.objs, 1)
	assert.Equal(t, 2*recentBytes, r.bytes)
}
