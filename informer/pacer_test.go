package informer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// The pacer reads the heap every pacerEvery ticks and collects only above the floor and
// the slack over the live heap.
func TestPacerCollectsOverSlack(t *testing.T) {
	var reads, collects int
	live, objects := uint64(100<<20), uint64(0)
	p := newPacer(func() (uint64, uint64) { reads++; return live, objects }, func() { collects++; objects = live })
	tickN := func(n int) (collected int) {
		for range n {
			if p.tick(true) {
				collected++
			}
		}
		return collected
	}

	objects = live + live/pacerSlack // at the slack: not over it
	assert.Zero(t, tickN(pacerEvery*3))
	assert.Equal(t, 3, reads, "one read per pacerEvery ticks")

	objects = live + live/pacerSlack + 1
	assert.Zero(t, tickN(pacerEvery-1), "no read between")
	assert.Equal(t, 1, tickN(1))
	assert.Equal(t, 1, collects)
	assert.Zero(t, tickN(pacerEvery), "collected: the heap is back to live")

	live, objects = pacerFloor/4, pacerFloor-1 // four times the live heap, under the floor
	assert.Zero(t, tickN(pacerEvery))
	objects = pacerFloor
	assert.Equal(t, 1, tickN(pacerEvery))
}

// While one collection runs, other ticks neither wait for it nor start another; without
// wait, the tick that starts it does not wait for it either.
func TestPacerOneCollectionAtATime(t *testing.T) {
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			started, release, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var collects atomic.Int32
			p := newPacer(func() (uint64, uint64) { return 0, 1 << 40 }, func() {
				if collects.Add(1) == 1 {
					close(started)
					<-release
					close(ended)
				}
			})
			var wg sync.WaitGroup
			wg.Go(func() {
				for !p.tick(wait) {
				}
			})
			<-started
			if !wait {
				wg.Wait() // the tick returned with the collection still running
			}
			for range pacerEvery * 4 {
				assert.False(t, p.tick(true), "a tick during the collection") // returns: it does not wait
			}
			close(release)
			<-ended
			wg.Wait()
			assert.Equal(t, int32(1), collects.Load())
			for i := 0; collects.Load() < 2; i++ {
				require.Less(t, i, 1<<20, "the next collection once it ended")
				p.tick(true)
			}
		})
	}
}

// Starts are paced where they make garbage: every initial add decoded for a handler of
// objects (not for a handler of Items, which decodes nothing) and every object of a relist
// that replaces a cached one; not the objects of a first list, which fill the cache; never
// in a mode whose Object does not decode, nor with DisableStartGC.
// The collections a factory's informers ran are counted in kindex_start_collections_total.
func TestStartPacing(t *testing.T) {
	const n = 100
	for _, tc := range []struct {
		name      string
		decodes   bool
		disable   bool
		items     bool
		itemsDec  bool // a handler of items that says it decodes them
		wantTicks int64
	}{
		{"decoding mode, handler of objects", true, false, false, false, n},
		{"decoding mode, handler of items", true, false, true, false, 0},
		{"decoding mode, handler of items that decodes them", true, false, true, true, n},
		{"decoding mode, DisableStartGC", true, true, false, false, 0},
		{"mode that does not decode", false, false, false, false, 0},
		{"mode that does not decode, handler of items that decodes them", false, false, true, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var collects atomic.Int64
				p := newPacer(func() (uint64, uint64) { return 0, 1 << 40 }, func() { collects.Add(1) })
				reg := prometheus.NewPedanticRegistry()
				mode := newFakeMode()
				mode.decodes = tc.decodes
				e := newEnvMode(t, mode, Options[obj]{DisableStartGC: tc.disable, Registerer: reg}, hooks{Pacer: p})
				srv := e.mode.server(widgets.GVR)
				for i := range n {
					srv.add(newObj("ns", fmt.Sprint("w", i), nil))
				}
				var h cache.ResourceEventHandler = cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}}
				if tc.items {
					h = ItemHandlerFuncs[obj]{AddFunc: func(Item[obj], bool) {}, Decodes: tc.itemsDec}
				}
				ctx := context.Background()
				inf, err := e.f.Informer(ctx, "widgets", WithEventHandler(h))
				require.NoError(t, err)
				defer inf.Release()
				require.NoError(t, inf.WaitForSync(ctx))
				synctest.Wait()
				objs, err := inf.List(labels.Everything())
				require.NoError(t, err)
				require.Len(t, objs, n)
				assert.Equal(t, tc.wantTicks, p.n.Load(), "ticks")
				assert.Equal(t, tc.wantTicks/pacerEvery, collects.Load(), "collections (the heap always over the slack)")
				assert.Equal(t, float64(collects.Load()), gather(t, reg)[metricStartGC+"{}"])

				// Changes after the start are not paced; a relist's objects are (the garbage
				// of its bodies, a start's again), not its handler notifications.
				srv.add(newObj("ns", "late", nil))
				synctest.Wait()
				assert.Equal(t, tc.wantTicks, p.n.Load(), "ticks after the start")
				srv.setErrors(nil, apierrors.NewResourceExpired("too old"))
				srv.closeWatches()
				for i := 0; inf.Status().Lists < 2; i++ {
					require.Less(t, i, 1000, "relisted")
					time.Sleep(10 * time.Millisecond) // the bubble's clock: the reflector's backoff
				}
				srv.setErrors(nil, nil)
				synctest.Wait()
				relist := int64(0)
				if tc.decodes && !tc.disable {
					relist = n + 1 // each replaces a cached object
				}
				assert.Equal(t, tc.wantTicks+relist, p.n.Load(), "ticks after a relist")
			})
		})
	}
}
