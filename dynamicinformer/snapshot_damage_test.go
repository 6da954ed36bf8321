package dynamicinformer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/internal/snapshot"
)

// A snapshot that records resourceVersion "0" is ignored with one log line: a watch from
// "0" means "from any version", which starts with the server's objects as adds and never
// reports the snapshot's objects deleted since, so they were served for good.
func TestSnapshotAtVersionZeroIsIgnored(t *testing.T) {
	ctx := context.Background()
	cms, opts := snapshottedConfigMaps(t, 3)
	require.NoError(t, cms.Delete(ctx, "o0", metav1.DeleteOptions{})) // while down
	require.NoError(t, snapshot.SetResourceVersion(snapshotFile(t, opts.SnapshotDir), "0"))

	fx, inf, ev := restart(t, opts, "configmaps")
	waitSync(t, inf)
	require.Equal(t, serverState(t, ctx, cms), nameRVs(must(inf.List(nil))), "objects deleted while down are served")
	require.Equal(t, 1, fx.log.Count("Snapshot ignored"), "%s", fx.log)
	a, u, d := ev.Get()
	require.Equal(t, []string{"o1", "o2"}, a)
	require.Empty(t, u)
	require.Empty(t, d)
}
