package informer

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A handler handed off delivers what was queued for it, gets nothing after, and the items
// returned are what it holds once its queue is delivered.
func TestHandOffEventHandler(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.add(newObj("ns", "b", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	rec := newRecorder()
	rec.block = make(chan struct{})
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	srv.add(newObj("ns", "c", nil))
	srv.remove(newObj("ns", "a", nil))
	keys := func() []string {
		var out []string
		for _, o := range must(inf.List(nil)) {
			out = append(out, objKey(o))
		}
		slices.Sort(out)
		return out
	}
	eventually(t, func() bool { return slices.Equal(keys(), []string{"ns/b", "ns/c"}) }, "applied")

	seen, done, err := inf.HandOffEventHandler(reg)
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/b", "ns/c"}, slices.Sorted(maps.Keys(seen)))
	for key, it := range seen {
		assert.Equal(t, key, it.Key())
		o, err := it.Object()
		require.NoError(t, err)
		assert.Equal(t, key, objKey(o))
	}
	srv.add(newObj("ns", "d", nil))
	eventually(t, func() bool { return slices.Contains(keys(), "ns/d") }, "applied")
	select {
	case <-done:
		t.Fatal("done before the queue was delivered")
	default:
	}
	close(rec.block)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the queue was not delivered")
	}
	assert.Equal(t, 3, rec.addCount(), "the adds of a, b and c")
	assert.True(t, rec.deleted("ns/a"), "the delete queued before the handoff")
	assert.False(t, rec.deleted("ns/b"))
	rec.mu.Lock()
	assert.Zero(t, rec.adds["ns/d"], "nothing after the handoff")
	rec.mu.Unlock()

	_, _, err = inf.HandOffEventHandler(reg)
	assert.Error(t, err, "handed off already")
	inf.Release()
	_, _, err = inf.HandOffEventHandler(reg)
	assert.ErrorIs(t, err, ErrReleased)
}
