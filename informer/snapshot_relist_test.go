package informer

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
)

// A relist that finds none of a snapshot's objects (the snapshot ahead of a server restored
// from a backup, or a collection emptied while the process was down) queues only their
// deletes, with no listed object after them to tell when they are applied. WaitForSync
// returned once the watch after that relist was found current, while the deletes were still
// being applied: a read right after it saw objects the server no longer had.
func TestSnapshotEmptyRelistAppliedBeforeSync(t *testing.T) {
	const n = 20000
	// A watch found current at once: the deletes, not the wait for the watch, decide.
	oldQuiet, oldSettle, oldFirst := snapshotQuiet, snapshotSettleMin, snapshotFirstEvent
	defer func() { snapshotQuiet, snapshotSettleMin, snapshotFirstEvent = oldQuiet, oldSettle, oldFirst }()
	snapshotQuiet, snapshotSettleMin, snapshotFirstEvent = time.Millisecond, time.Millisecond, time.Millisecond
	dir := t.TempDir()
	mode := func(m *fakeMode) *probingSnapMode {
		return &probingSnapMode{jsonSnapMode{snapModeFake: snapModeFake{m}}}
	}
	before := newFakeMode()
	srv := before.server(widgets.GVR)
	srv.rv = 1000
	for i := range n {
		srv.add(newObj("ns", fmt.Sprintf("w-%04d", i), nil))
	}
	f, _ := snapshotFactory(t, mode(before), dir)
	inf, err := f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(t.Context()))
	objs, err := inf.List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, objs, n)
	inf.Release() // writes the snapshot

	restored := newFakeMode()
	restored.server(widgets.GVR).rv = 500 // before any widget: the relist finds none
	f, _ = snapshotFactory(t, mode(restored), dir)
	inf, err = f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(t.Context()))
	objs, err = inf.List(labels.Everything())
	require.NoError(t, err)
	require.Zero(t, len(objs), "synced with objects the server does not have")
}
