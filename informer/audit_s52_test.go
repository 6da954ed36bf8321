package informer

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// auditS52WatchLW answers every watch with w.
type auditS52WatchLW struct{ w *watch.FakeWatcher }

func (f auditS52WatchLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return &metav1.PartialObjectMetadataList{}, nil
}

func (f auditS52WatchLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return f.w, nil
}

// TestSnapshotWatchOfAShardCountsDroppedEvents: the watch of a sharded snapshot run on a
// server that does not filter receives every shard's events, and kindex drops the others'.
// Those still show the watch is busy and how far it has come: the run is current once a
// dropped event reaches the probe's version (the cache has only the kept ones to apply),
// and a stream of other shards' events is not a quiet watch. The run counted as current
// after one settle without a kept event, while the shard's own changes, queued behind the
// others', were still coming.
func TestSnapshotWatchOfAShardCountsDroppedEvents(t *testing.T) {
	oldQuiet, oldSettle, oldFirst := snapshotQuiet, snapshotSettleMin, snapshotFirstEvent
	defer func() { snapshotQuiet, snapshotSettleMin, snapshotFirstEvent = oldQuiet, oldSettle, oldFirst }()
	const mine = types.UID("the-shard's-own")
	sh := Shard{Ranges: []ShardRange{{Start: Hash(string(mine)), Last: Hash(string(mine))}}}
	obj := func(uid types.UID, rv int) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: string(uid), UID: uid, ResourceVersion: strconv.Itoa(rv)}}
	}
	other := func(i int) types.UID {
		u := types.UID("other-" + strconv.Itoa(i))
		require.False(t, sh.Matches(string(u)))
		return u
	}
	start := func(t *testing.T, probeRV string) (*watch.FakeWatcher, *snapRun, *snapshotWatch) {
		fw := watch.NewFake()
		lw := &shardLW{inner: auditS52WatchLW{fw}, e: &entry{core: &core{}}, m: newShardMatcher(sh)}
		sr := &snapRun{current: make(chan struct{}),
			probe: func(context.Context) (string, error) { return probeRV, nil }}
		w, dropped, err := watchWithProgress(context.Background(), lw, metav1.ListOptions{})
		require.NoError(t, err)
		require.NotNil(t, dropped, "the shard's filter reports what it drops")
		sw := newSnapshotWatch(context.Background(), w, sr, "1", func() int64 { return 0 }, dropped)
		t.Cleanup(sw.Stop)
		return fw, sr, sw
	}
	isCurrent := func(sr *snapRun) bool {
		select {
		case <-sr.current:
			return true
		default:
			return false
		}
	}

	t.Run("a dropped event at the probe's version", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin, snapshotFirstEvent = time.Hour, time.Hour, time.Hour // only events decide
		fw, sr, sw := start(t, "100")
		go fw.Modify(obj(mine, 50))
		ev := <-sw.ResultChan()
		assert.Equal(t, mine, ev.Object.(*metav1.PartialObjectMetadata).UID)
		for i := 51; i <= 100; i++ {
			fw.Modify(obj(other(i), i))
		}
		select {
		case <-sr.current:
		case <-time.After(10 * time.Second):
			t.Fatal("not current once the watch passed the probe's version")
		}
		assert.Equal(t, uint64(50), sr.targetRV, "the cache waits for the kept event only")
	})

	t.Run("other shards' events are not quiet", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin, snapshotFirstEvent = time.Hour, 200*time.Millisecond, 200*time.Millisecond
		fw, sr, sw := start(t, "100")
		// 600 ms of other shards' events, 20 ms apart, then the shard's own change.
		early := false
		for i := 2; i < 32; i++ {
			fw.Modify(obj(other(i), i))
			early = early || isCurrent(sr)
			time.Sleep(20 * time.Millisecond)
		}
		assert.False(t, early, "current while other shards' events were still coming")
		go fw.Modify(obj(mine, 99))
		<-sw.ResultChan()
		select {
		case <-sr.current:
		case <-time.After(10 * time.Second):
			t.Fatal("not current")
		}
		assert.Equal(t, uint64(99), sr.targetRV)
	})
}
