package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// TestShardInformerListDuringHandoff: a handoff that releases the informer List is about to
// read (the new range synced, the old one dropped) does not make List fail: it reads what
// the replica holds then.
func TestShardInformerListDuringHandoff(t *testing.T) {
	ns := plain.Namespace(t)
	all := configMaps(t, plain, ns, "c", 12)
	f := startFactory(t, plain, metadataonly.Options{}, metadataonly.NewFactory)
	m, err := New(Options{Client: plain.Clientset(t), Namespace: ns, Group: "g", Identity: "a"})
	require.NoError(t, err)
	s, err := NewInformer(m, f, "configmaps", InformerOptions{})
	require.NoError(t, err)
	ctx := waitCtx(t, 30*time.Second)
	acquire := func(sh informer.Shard) *piece[metadataonly.Object] {
		inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(sh))
		require.NoError(t, err)
		require.NoError(t, inf.WaitForSync(ctx))
		return &piece[metadataonly.Object]{shard: sh, inf: inf, synced: true}
	}
	old, cur := acquire(Split(informer.ShardByUID, 2)[0]), acquire(Split(informer.ShardByUID, 1)[0])
	defer cur.inf.Release()
	s.pieces = []*piece[metadataonly.Object]{old}
	handedOff := false
	s.beforeList = func() {
		if handedOff {
			return
		}
		handedOff = true
		// What reconcile does once the new range has synced: the old piece leaves the list,
		// then its informer is released.
		s.mu.Lock()
		s.pieces = []*piece[metadataonly.Object]{cur}
		s.mu.Unlock()
		old.inf.Release()
	}
	objs, err := s.List()
	require.NoError(t, err)
	want := map[string]bool{}
	for _, u := range all {
		want[string(u)] = true
	}
	got := map[string]bool{}
	for _, o := range objs {
		got[string(o.GetUID())] = true
	}
	assert.Equal(t, want, got)
	assert.Len(t, objs, len(all), "each object once")
}
