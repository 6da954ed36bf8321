package informer

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"
)

// countingSnapMode is jsonSnapMode counting the records it writes.
type countingSnapMode struct {
	jsonSnapMode
	records atomic.Int64
}

func (m *countingSnapMode) AppendSnapshot(dst []byte, item any) ([]byte, bool) {
	m.records.Add(1)
	return m.jsonSnapMode.AppendSnapshot(dst, item)
}

// A resync (Options.ResyncPeriod) hands every cached object to the handlers again and
// changes nothing in the cache: it does not make the next interval write the whole
// snapshot again. Every resync rewrote it, a quiet resource's file included.
func TestSnapshotNotRewrittenForResyncs(t *testing.T) {
	fm := newFakeMode()
	srv := fm.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	mode := &countingSnapMode{jsonSnapMode: jsonSnapMode{snapModeFake: snapModeFake{fm}}}
	f, _ := snapshotFactoryWith(t, mode, Options[obj]{SnapshotDir: t.TempDir(), SnapshotInterval: 5 * time.Millisecond,
		ResyncPeriod: 10 * time.Millisecond})
	var resyncs atomic.Int64
	inf, err := f.InformerForGVR(t.Context(), widgets.GVR, WithEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) { resyncs.Add(1) },
	}))
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.WaitForSync(t.Context()))
	eventually(t, func() bool { return mode.records.Load() == 1 }, "the first snapshot written")

	from := resyncs.Load()
	eventually(t, func() bool { return resyncs.Load() >= from+30 }, "thirty resyncs")
	require.EqualValues(t, 1, mode.records.Load(), "snapshots written again for resyncs")
}
