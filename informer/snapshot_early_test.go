package informer

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/internal/snapshot"
)

// The watch from a snapshot's version starts before the reflector asks for it (while the
// file loads) and is handed to the reflector's first watch from that version: one request.
// A watch asked for from another version gets a request of its own, and the early watch is
// stopped.
func TestEarlyWatchIsTakenOnce(t *testing.T) {
	ctx := t.Context()
	s := newFakeServer()
	s.add(newObj("ns", "a", nil))
	rv := strconv.Itoa(s.rv)
	s.add(newObj("ns", "b", nil)) // changed while the process was down
	inner := &cache.ListWatch{ListWithContextFunc: s.list, WatchFuncWithContext: s.watch}
	newRun := func() (*snapshotLW, *snapRun) {
		sr := &snapRun{meta: snapshot.Meta{ResourceVersion: rv}, current: make(chan struct{}), logger: klog.Background()}
		lw := &snapshotLW{inner: inner, sr: sr, replaced: func() int64 { return 0 }}
		lw.pre = startEarlyWatch(ctx, inner, sr, lw.replaced)
		return lw, sr
	}

	lw, sr := newRun()
	<-lw.pre.done
	require.EqualValues(t, 1, s.watches.Load(), "started before the reflector asked")
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv})
	require.NoError(t, err)
	require.EqualValues(t, 1, s.watches.Load(), "the early watch is the reflector's")
	ev := <-w.ResultChan()
	require.Equal(t, watch.Added, ev.Type)
	require.Equal(t, "b", ev.Object.(obj).Name, "the change made while down")
	<-sr.current // no probe: current once quiet
	w.Stop()
	require.Nil(t, lw.pre, "taken once")

	lw, _ = newRun()
	<-lw.pre.done
	w, err = lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: strconv.Itoa(s.rv)})
	require.NoError(t, err)
	require.EqualValues(t, 3, s.watches.Load(), "another version: a watch of its own")
	defer w.Stop()
	eventually(t, func() bool { return s.watching() == 1 }, "the early watch stopped")
}
