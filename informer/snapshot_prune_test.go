package informer

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/snapshot"
)

// Every prune of SnapshotRetention keeps the files of the factory's live informers however
// old, and removes them once their informer is gone.
func TestSnapshotPruneKeepsLiveInformersFiles(t *testing.T) {
	fm := newFakeMode()
	fm.server(widgets.GVR).add(newObj("ns", "a", nil))
	dir := t.TempDir()
	f, _ := snapshotFactoryWith(t, &jsonSnapMode{snapModeFake: snapModeFake{fm}}, Options[obj]{SnapshotDir: dir, SnapshotRetention: time.Minute})
	inf, err := f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(t.Context()))
	live := inf.h.e.snap.path
	unused := filepath.Join(dir, "other_v1_things_0123456789abcdef.snap")
	long := time.Now().Add(-time.Hour)
	for _, p := range []string{live, unused} {
		require.NoError(t, snapshot.Write(p, snapshot.Meta{Identity: p, ResourceVersion: "1"}, 0, nil, snapshot.Options{}))
		require.NoError(t, os.Chtimes(p, long, long))
	}

	require.Empty(t, f.c.pruneSnapshots(""))
	require.FileExists(t, live)
	require.NoFileExists(t, unused)

	inf.Release()
	require.NoError(t, os.Chtimes(live, long, long))
	require.Empty(t, f.c.pruneSnapshots(""))
	require.NoFileExists(t, live, "no informer uses it any more")
}
