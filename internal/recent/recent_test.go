package recent

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObjects(t *testing.T) {
	var r Objects
	a, b := new(int), new(int)
	assert.Nil(t, r.Get("ns/a", "1"))
	assert.Same(t, a, r.Keep("ns/a", "1", a, 1))
	assert.Same(t, a, r.Keep("ns/a", "1", b, 1), "the first object stored for a version is everyone's")
	assert.Same(t, a, r.Get("ns/a", "1"))
	assert.Nil(t, r.Get("ns/a", "2"), "another version is not that object")
	assert.Same(t, b, r.Keep("ns/a", "2", b, 1), "a new version is kept beside the old")
	assert.Same(t, a, r.Get("ns/a", "1"))

	// At most Cap objects, the oldest stored forgotten first; a key stored again is
	// kept as recent.
	r.Reset()
	for i := range Cap {
		r.Keep(fmt.Sprint(i), "1", i, 1)
	}
	require.Len(t, r.objs, Cap)
	r.Keep("0", "2", "again", 1) // key 0 is now the most recent, with both its versions
	r.Keep("x", "1", "x", 1)     // forgets key 1, the oldest not stored since
	assert.Len(t, r.objs, Cap)
	assert.Equal(t, "again", r.Get("0", "2"))
	assert.Equal(t, 0, r.Get("0", "1"))
	assert.Nil(t, r.Get("1", "1"))
	assert.Equal(t, 2, r.Get("2", "1"))
	for i := range 3 * Cap {
		r.Keep(fmt.Sprint("y", i), "1", i, 1)
		require.LessOrEqual(t, len(r.objs), Cap)
	}
	assert.Nil(t, r.Get("0", "2"))
	r.Reset()
	assert.Nil(t, r.Get(fmt.Sprint("y", 3*Cap-1), "1"))
}

// An update hands each handler the old version and the new: both are kept, and a handler
// that converts them after another shares both, in either order; a version older than both
// is not kept.
func TestObjectsVersions(t *testing.T) {
	var r Objects
	v1, v2, v3, old := "v1", "v2", "v3", "old"
	r.Keep("k", "10", v1, 1)
	r.Keep("k", "11", v2, 1) // the first handler's update: old 10 (kept), new 11
	assert.Equal(t, v1, r.Get("k", "10"))
	assert.Equal(t, v2, r.Get("k", "11"))
	assert.Equal(t, v2, r.Keep("k", "11", "other", 1), "the second handler's new version is the first's")
	r.Keep("k", "12", v3, 1) // replaces 10, the older
	assert.Nil(t, r.Get("k", "10"))
	assert.Equal(t, v2, r.Get("k", "11"))
	assert.Equal(t, v3, r.Get("k", "12"))
	assert.Equal(t, old, r.Keep("k", "9", old, 1), "an older version is handed back")
	assert.Nil(t, r.Get("k", "9"), "and not kept")
	assert.Equal(t, v2, r.Get("k", "11"))

	// Versions that do not compare: the one stored last stays.
	r.Reset()
	r.Keep("k", "a", v1, 1)
	r.Keep("k", "b", v2, 1)
	r.Keep("k", "c", v3, 1)
	assert.Nil(t, r.Get("k", "a"))
	assert.Equal(t, v2, r.Get("k", "b"))
	r.Keep("k", "d", old, 1)
	assert.Nil(t, r.Get("k", "b"))
	assert.Equal(t, v3, r.Get("k", "c"))
	assert.Equal(t, old, r.Get("k", "d"))
}

// What is kept is dropped Idle after the last store, not before.
func TestObjectsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Objects
		r.Keep("a", "1", "a1", 1)
		time.Sleep(Idle / 2)
		r.Keep("b", "1", "b1", 1) // pushes the expiry back
		time.Sleep(Idle / 2)
		synctest.Wait()
		assert.Equal(t, "a1", r.Get("a", "1"), "half an idle period after the last store")
		time.Sleep(Idle / 2)
		synctest.Wait()
		assert.Nil(t, r.Get("a", "1"), "an idle period after the last store")
		assert.Nil(t, r.Get("b", "1"))
		r.Keep("c", "1", "c1", 1) // keeps again after an expiry
		assert.Equal(t, "c1", r.Get("c", "1"))
		r.Reset() // and a reset stops the timer: the bubble ends with no timer left
	})
}

// Large objects are kept fewer: at most Bytes of JSON, but always the last one.
func TestObjectsBytes(t *testing.T) {
	var r Objects
	defer r.Reset()
	for i := range 5 {
		r.Keep(fmt.Sprint(i), "1", i, Bytes/4)
	}
	assert.Nil(t, r.Get("0", "1"), "the oldest went beyond the bytes")
	for i := 1; i < 5; i++ {
		assert.Equal(t, i, r.Get(fmt.Sprint(i), "1"))
	}
	assert.Equal(t, Bytes, r.bytes)
	r.Keep("1", "2", "1v2", Bytes/4) // a second version counts too
	assert.Nil(t, r.Get("2", "1"))
	assert.Equal(t, "1v2", r.Get("1", "2"))
	assert.Equal(t, Bytes, r.bytes)
	r.Keep("huge", "1", "huge", 2*Bytes)
	assert.Equal(t, "huge", r.Get("huge", "1"), "the last is kept, however large")
	assert.Len(t, r.objs, 1)
	assert.Equal(t, 2*Bytes, r.bytes)
}
