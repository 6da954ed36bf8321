package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// TestShardSnapshotRestart: sharded informers restarting from their snapshots sync, and
// hold exactly their shard's objects, whether the server filters or kindex does. A server
// that does not filter sends every shard's events: the restart must not wait for events of
// other shards (an empty or quiet shard waited forever).
func TestShardSnapshotRestart(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
		want informer.ShardFilter
	}{{"server", gated, informer.ShardFilterServer}, {"client", plain, informer.ShardFilterClient}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			ns := cp.Namespace(t)
			configMaps(t, cp, ns, "a", 30)
			shards := Split(informer.ShardByUID, 6)
			dir := t.TempDir()
			compact := func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
				return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
			}
			start := func() []*dynamicinformer.Informer {
				opts := dynamicinformer.Options{SnapshotDir: dir, Logger: (&testsupport.Lines{}).Logger(0)}
				f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(), opts, compact)
				ctx := waitCtx(t, 30*time.Second)
				var infs []*dynamicinformer.Informer
				for _, sh := range shards {
					inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(sh))
					require.NoError(t, err)
					infs = append(infs, inf)
				}
				for i, inf := range infs {
					require.NoError(t, inf.WaitForSync(ctx), "shard %d: %s", i, inf.Status())
				}
				t.Cleanup(f.Shutdown)
				return infs
			}
			first := start()
			for _, inf := range first {
				inf.Release() // writes its snapshot
			}
			// A change in one shard while down: every other shard's snapshot is behind it.
			configMaps(t, cp, ns, "b", 1)
			infs := start()
			all := serverUIDs(t, cp, ns)
			for i, inf := range infs {
				assert.False(t, inf.Status().SnapshotTime.IsZero(), "shard %d started from its snapshot", i)
				assert.Equal(t, side.want, inf.Status().ShardFilter, "shard %d says who filters", i)
				objs, err := inf.List(nil)
				require.NoError(t, err)
				assert.Equal(t, within(shards[i], all), uidSet(objs), "shard %d", i)
			}
		})
	}
}
