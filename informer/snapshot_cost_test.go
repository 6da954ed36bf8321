package informer

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/storage"
)

// slowSnapMode is the fake mode with snapshots whose records each take delay to encode.
type slowSnapMode struct {
	snapModeFake
	delay   time.Duration
	records atomic.Int64
}

func (*slowSnapMode) SnapshotIdentity() string { return "slow" }
func (m *slowSnapMode) AppendSnapshot(dst []byte, _ any) ([]byte, bool) {
	time.Sleep(m.delay)
	m.records.Add(1)
	return append(dst, '{', '}'), true
}

// startSnapshotting starts an informer of widgets on mode (one of the fake modes with
// snapshots) with SnapshotDir dir and SnapshotInterval interval, and waits until it synced.
func startSnapshotting(t *testing.T, mode storage.Mode, dir string, interval time.Duration) *Informer[obj] {
	t.Helper()
	builder := func(_ *rest.Config, sc storage.Config) (storage.Mode, error) { return mode, nil }
	in := hooks{Access: &fakeAccess{}, ReflectorBackoff: &wait.Backoff{Duration: 10 * time.Millisecond, Cap: 50 * time.Millisecond, Steps: 100, Factor: 2},
		RecheckInitial: 20 * time.Millisecond, RecheckMax: 100 * time.Millisecond}
	logs := &logLines{}
	f, err := newFactory(&rest.Config{Host: "https://fake.invalid"}, Options[obj]{Discovery: newFakeDiscovery(widgets), Logger: logs.logger(),
		SnapshotDir: dir, SnapshotInterval: interval}, builder, in)
	require.NoError(t, err)
	f.c.opts.snapshot.cluster = nil // no server to identify
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, f.Start(ctx))
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	inf, err := f.InformerForGVR(ctx, widgets.GVR)
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.WaitForSync(ctx))
	return inf
}

// A snapshot is a whole file, written again each SnapshotInterval while the informer
// changes: with an interval shorter than a write takes, the informer wrote back to back
// for as long as it changed, a core and a disk busy for nothing. Whatever the interval,
// background writes take a bounded share of the time.
func TestSnapshotWritesTakeABoundedShareOfTime(t *testing.T) {
	mode := &slowSnapMode{snapModeFake: snapModeFake{newFakeMode()}, delay: 20 * time.Millisecond}
	srv := mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	startSnapshotting(t, mode, t.TempDir(), time.Millisecond)

	// Changes every few milliseconds for a second: every tick finds something to write.
	start := time.Now()
	before := mode.records.Load()
	for i := 0; time.Since(start) < time.Second; i++ {
		srv.update(newObj("ns", "a", map[string]string{"i": string(rune('a' + i%26))}))
		time.Sleep(2 * time.Millisecond)
	}
	busy := time.Duration(mode.records.Load()-before) * mode.delay
	t.Logf("writing for %v of %v", busy, time.Since(start))
	require.Less(t, busy, time.Since(start)/5, "background writes took most of the time")
}

// failingSnapMode is the fake mode with snapshots whose records fail once fail is set, as
// an item of another type than the mode's does.
type failingSnapMode struct {
	snapModeFake
	fail atomic.Bool
}

func (*failingSnapMode) SnapshotIdentity() string { return "failing" }
func (m *failingSnapMode) AppendSnapshot(dst []byte, _ any) ([]byte, bool) {
	if m.fail.Load() {
		return dst, false
	}
	return append(dst, '{', '}'), true
}

// A write that cannot encode an item leaves the previous snapshot in place. It wrote the
// file without the item, renamed it into place (where another process starting then
// would resume without the item, for good), and then removed it, the previous one with it.
func TestSnapshotWriteOfAnUnwritableItemKeepsThePrevious(t *testing.T) {
	mode := &failingSnapMode{snapModeFake: snapModeFake{newFakeMode()}}
	srv := mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	dir := t.TempDir()
	inf := startSnapshotting(t, mode, dir, 20*time.Millisecond)
	var path string
	eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
		if len(files) == 1 {
			path = files[0]
		}
		return path != ""
	}, "first snapshot written")
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	mode.fail.Store(true)
	srv.add(newObj("ns", "b", nil))
	eventually(t, func() bool { return inf.Status().SnapshotError != nil }, "the write failed")
	require.ErrorContains(t, inf.Status().SnapshotError, "another type")
	after, err := os.ReadFile(path)
	require.NoError(t, err, "the previous snapshot is gone")
	require.Equal(t, before, after)
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 1, "no temporary file left")
}
