package dynamicinformer_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// SnapshotRetention removes, at Start, the files of identities nothing has written for
// that long (here an informer's earlier label selector), and keeps a recent file, which the
// informer then resumes from without a LIST, and every file that is not a snapshot.
func TestSnapshotRetentionPrunesUnusedIdentities(t *testing.T) {
	ctx := context.Background()
	cms, opts := snapshottedConfigMaps(t, 3)
	current := snapshotFile(t, opts.SnapshotDir)

	// An earlier version of the program watched with another selector.
	old := startCompact(t, opts)
	inf, err := old.f.Informer(ctx, "configmaps", informer.WithLabelSelector("release=old"))
	require.NoError(t, err)
	waitSync(t, inf)
	old.f.Shutdown()
	files, err := filepath.Glob(filepath.Join(opts.SnapshotDir, "*.snap"))
	require.NoError(t, err)
	require.Len(t, files, 2)
	unused := files[0]
	if unused == current {
		unused = files[1]
	}
	notes := filepath.Join(opts.SnapshotDir, "notes.snap")
	require.NoError(t, os.WriteFile(notes, []byte("not a snapshot"), 0o600))
	long := time.Now().Add(-3 * time.Hour)
	for _, p := range []string{unused, notes} {
		require.NoError(t, os.Chtimes(p, long, long))
	}

	opts.SnapshotRetention = 2 * time.Hour
	fx, inf, _ := restart(t, opts, "configmaps")
	_, err = os.Stat(unused)
	require.True(t, os.IsNotExist(err), "the unused identity's file is removed by Start: %v", err)
	require.FileExists(t, current)
	require.FileExists(t, notes)
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + opts.Namespace + "/configmaps")
	require.Zero(t, lists, "the kept snapshot is resumed from")
	require.Equal(t, 1, fx.log.Count("Removed snapshot files not written for SnapshotRetention", filepath.Base(unused)))
}

// A SnapshotDir removed while informers run (a cleaner of temporary directories) is created
// again by the next write, instead of every write failing until the process restarts.
func TestSnapshotDirRemovedWhileRunningIsCreatedAgain(t *testing.T) {
	ctx := context.Background()
	cms, opts := snapshottedConfigMaps(t, 2)
	opts.SnapshotInterval = 100 * time.Millisecond
	fx, inf, _ := restart(t, opts, "configmaps")
	waitSync(t, inf)
	require.NoError(t, os.RemoveAll(opts.SnapshotDir))

	testsupport.Churn(t, ctx, cms, "new", "o0", "o1")
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := os.Stat(opts.SnapshotDir)
		return err == nil
	}, "the directory created again")
	fi, err := os.Stat(opts.SnapshotDir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	testenv.Eventually(t, 10*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(opts.SnapshotDir, "*.snap"))
		return len(m) == 1
	}, "a snapshot written again")
	require.NoError(t, inf.Status().SnapshotError)
	fx.f.Shutdown()

	fx2, inf2, _ := restart(t, dynamicinformer.Options{Namespace: opts.Namespace, SnapshotDir: opts.SnapshotDir}, "configmaps")
	waitSync(t, inf2)
	cacheEquals(t, ctx, inf2, cms)
	lists, _ := fx2.rec.Count("/api/v1/namespaces/" + opts.Namespace + "/configmaps")
	require.Zero(t, lists)
}
