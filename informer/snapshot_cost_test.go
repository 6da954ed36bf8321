package informer

import (
	"context"
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

// A snapshot is a whole file, written again each SnapshotInterval while the informer
// changes: with an interval shorter than a write takes, the informer wrote back to back
// for as long as it changed, a core and a disk busy for nothing. Whatever the interval,
// background writes take a bounded share of the time.
func TestSnapshotWritesTakeABoundedShareOfTime(t *testing.T) {
	mode := &slowSnapMode{snapModeFake: snapModeFake{newFakeMode()}, delay: 20 * time.Millisecond}
	builder := func(_ *rest.Config, sc storage.Config) (storage.Mode, error) { return mode, nil }
	disc := newFakeDiscovery(widgets)
	in := hooks{Access: &fakeAccess{}, ReflectorBackoff: &wait.Backoff{Duration: 10 * time.Millisecond, Cap: 50 * time.Millisecond, Steps: 100, Factor: 2},
		RecheckInitial: 20 * time.Millisecond, RecheckMax: 100 * time.Millisecond}
	logs := &logLines{}
	f, err := newFactory(&rest.Config{Host: "https://fake.invalid"}, Options[obj]{Discovery: disc, Logger: logs.logger(),
		SnapshotDir: t.TempDir(), SnapshotInterval: time.Millisecond}, builder, in)
	require.NoError(t, err)
	f.c.opts.snapshot.cluster = nil // no server to identify
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, f.Start(ctx))
	defer f.Shutdown()
	srv := mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	inf, err := f.InformerForGVR(ctx, widgets.GVR)
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))

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
