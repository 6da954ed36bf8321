package informer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kindex/kindex/internal/storage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// Wrapping never turns client-go's watch-list off for real clients (nor on for fakes).
func TestClassifyingLWKeepsWatchListSupport(t *testing.T) {
	dyn, err := dynamic.NewForConfig(restConfig())
	require.NoError(t, err)
	md, err := metadata.NewForConfig(restConfig())
	require.NoError(t, err)
	target := storage.Target{Resource: widgets, Namespace: "ns"}
	for name, mode := range map[string]storage.Mode{"dynamic": storage.NewDynamicMode(dyn, storage.Config{}), "metadata": storage.NewMetadataMode(storage.MetadataClientFrom(md), storage.Config{})} {
		lw := &classifyingLW{inner: mode.ListerWatcher(target)}
		assert.False(t, watchlist.DoesClientNotSupportWatchListSemantics(lw), name)
	}
	fake := &classifyingLW{inner: newFakeMode().ListerWatcher(target)}
	assert.True(t, watchlist.DoesClientNotSupportWatchListSemantics(fake))
}

// A stopped run's clock fires at once, so a reflector waiting out a backoff ends promptly.
func TestRunClockEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := newRunClock(ctx)
	ch := c.After(time.Hour)
	cancel()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("After did not fire on cancel")
	}
	c.wait()
	select {
	case <-c.After(time.Hour):
	default:
		t.Fatal("After on a cancelled clock must fire at once")
	}
	fired := newRunClock(context.Background()).After(time.Millisecond)
	<-fired
}

func TestReflectorLoggerDropsClassifiedErrorsOnly(t *testing.T) {
	sink := &testSink{}
	l := reflectorLogger(sinkLogger(sink))
	l.Error(&observedError{err: errors.New("404")}, "Failed to watch")
	l.Error(errors.New("decode"), "Failed to watch")
	l.WithName("x").WithValues("k", "v").Error(&observedError{err: errors.New("403")}, "Failed to watch")
	l.Info("Caches populated")
	assert.EqualValues(t, 1, sink.errors.Load())
	assert.EqualValues(t, 1, sink.infos.Load())
}

func TestResyncRedeliversAsUpdates(t *testing.T) {
	e := newEnv(t, Options[obj]{ResyncPeriod: 50 * time.Millisecond})
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	var updates atomic.Int32
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { updates.Add(1) }})
	require.NoError(t, err)
	eventually(t, func() bool { return updates.Load() >= 2 }, "resyncs delivered")
}

// A change that cannot be applied (an item without a key) does not stop the rest of its
// batch: the FIFO hands out up to 1,000 changes at once.
func TestApplyKeepsGoingPastABadChange(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	good := newObj("ns", "good", nil)
	err = inf.h.e.apply(cache.Deltas{
		{Type: cache.Added, Object: "not an object"},
		{Type: cache.Added, Object: good},
		{Type: cache.Deleted, Object: 42},
	}, applyOptions{trustRV: true}, nil)
	require.Error(t, err)
	got, err := inf.Get("ns", "good")
	require.NoError(t, err, "the change after the bad one was applied")
	assert.Equal(t, "good", got.GetName())
}
