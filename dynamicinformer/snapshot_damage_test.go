package dynamicinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/testenv"
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
	// The cache synced; the handler is delivered its initial list on its own.
	testenv.Eventually(t, 30*time.Second, inf.Registrations()[0].HasSynced, "the handler was not delivered the initial list")
	a, u, d := ev.Get()
	require.Equal(t, []string{"o1", "o2"}, a)
	require.Empty(t, u)
	require.Empty(t, d)
}
