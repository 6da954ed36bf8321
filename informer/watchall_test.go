package informer

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
)

// perResource records, per resource, what a watch-all handler was told.
type perResource struct {
	mu   sync.Mutex
	recs map[string]*recorder
}

func (p *perResource) handler(res discovery.Resource) cache.ResourceEventHandler {
	p.mu.Lock()
	defer p.mu.Unlock()
	name := res.GVR.String()
	if p.recs[name] == nil {
		p.recs[name] = newRecorder()
	}
	return p.recs[name]
}

func (p *perResource) get(gvr schema.GroupVersionResource) *recorder {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.recs[gvr.String()]; r != nil {
		return r
	}
	return newRecorder()
}

func TestWatchAllFollowsDiscovery(t *testing.T) {
	unwatchable := resource("example.com", "v1", "reviews")
	unwatchable.Verbs = []string{"create"}
	excluded := resource("other.io", "v1", "things")
	e := newEnv(t, Options[obj]{}, widgets, gadgets, unwatchable, excluded)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", nil))
	e.mode.server(gadgets.GVR).add(newObj("ns", "g1", nil))

	wa, err := e.f.WatchAll(ctx, discovery.Filter{ExcludeGroups: []string{"other.io"}})
	require.NoError(t, err)
	defer wa.Stop()
	p := &perResource{recs: map[string]*recorder{}}
	reg, err := wa.AddEventHandler(p.handler)
	require.NoError(t, err)
	require.NoError(t, wa.WaitForSync(ctx))
	eventually(t, reg.HasSynced, "handler synced on every member")
	assert.Len(t, wa.Informers(), 2, "watchable and selected resources only")
	assert.Equal(t, 1, p.get(widgets.GVR).addCount())
	assert.Equal(t, 1, p.get(gadgets.GVR).addCount())

	// Added: a new CRD joins, and the handler applies to it.
	sprockets := resource("example.com", "v1", "sprockets")
	e.mode.server(sprockets.GVR).add(newObj("ns", "s1", nil))
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: sprockets})
	eventually(t, func() bool { return p.get(sprockets.GVR).addCount() == 1 }, "new resource watched")
	_, ok := wa.Informer(sprockets.GVR.GroupResource())
	assert.True(t, ok)

	// Changed to a new preferred version: the member moves.
	widgetsV2 := resource("example.com", "v2", "widgets")
	e.mode.server(widgetsV2.GVR).add(newObj("ns", "w1", nil))
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
	eventually(t, func() bool { return p.get(widgetsV2.GVR).addCount() == 1 }, "moved to v2")
	inf, ok := wa.Informer(widgets.GVR.GroupResource())
	require.True(t, ok)
	assert.Equal(t, "v2", inf.Key().GVR.Version)
	eventually(t, func() bool { return e.mode.server(widgets.GVR).watching() == 0 }, "v1 informer stopped")
	inf.Release() // a member view: does nothing
	assert.NotEqual(t, PhaseStopped, inf.Status().Phase)

	// Removed: handlers see the remaining objects deleted, then the member is gone.
	e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: gadgets})
	eventually(t, func() bool { return p.get(gadgets.GVR).deleted("ns/g1") }, "tombstones on removal")
	_, ok = wa.Informer(gadgets.GVR.GroupResource())
	assert.False(t, ok)

	// Filtered-out and unwatchable resources never join.
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: resource("other.io", "v1", "more")})
	assert.Len(t, wa.Informers(), 2)

	wa.RemoveEventHandler(reg)
	wa.Stop()
	assert.Empty(t, e.f.Statuses(), "stopping the set releases its informers")
}

func TestWatchAllHandlerAddedLaterAndSharedInformers(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", nil))
	mine, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer mine.Release()
	wa, err := e.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"widgets.example.com"}})
	require.NoError(t, err)
	members := wa.Informers()
	require.Len(t, members, 1)
	assert.Same(t, mine.h.e, members[0].h.e, "the set shares informers with other users")
	p := &perResource{recs: map[string]*recorder{}}
	_, err = wa.AddEventHandler(p.handler)
	require.NoError(t, err)
	eventually(t, func() bool { return p.get(widgets.GVR).addCount() == 1 }, "replayed")
	wa.Stop()
	assert.Equal(t, PhaseSynced, mine.Status().Phase, "the user's reference keeps it")
}

func TestStatusSubscriptionAndMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, Options[obj]{Registerer: reg})
	ctx := context.Background()
	var mu sync.Mutex
	var seen []Status
	unsub, err := e.f.SubscribeStatus(func(st Status) {
		mu.Lock()
		seen = append(seen, st)
		mu.Unlock()
	})
	require.NoError(t, err)
	defer unsub()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.add(newObj("ns", "b", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	srv.setErrors(forbidden("widgets"), forbidden("widgets"))
	srv.closeWatches()
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked")

	phases := func() []Phase {
		mu.Lock()
		defer mu.Unlock()
		var out []Phase
		for _, st := range seen {
			if len(out) == 0 || out[len(out)-1] != st.Phase {
				out = append(out, st.Phase)
			}
		}
		return out
	}
	eventually(t, func() bool { return len(phases()) == 2 }, "statuses delivered: %v", phases())
	assert.Equal(t, []Phase{PhaseSynced, PhaseParked}, phases())

	m := gather(t, reg)
	base := `resource="widgets.example.com",version="v1",namespace="",selector="",mode="fake"`
	assert.Equal(t, 2.0, m["kindex_informer_objects{"+base+"}"])
	assert.Equal(t, 1.0, m["kindex_informer_phase{"+base+`,phase="Parked"}`])
	assert.Equal(t, 0.0, m["kindex_informer_phase{"+base+`,phase="Synced"}`])
	assert.Equal(t, 0.0, m["kindex_informer_phase{"+base+`,phase="Syncing"}`])
	assert.Equal(t, 1.0, m["kindex_informer_lists_total{"+base+"}"])
	assert.GreaterOrEqual(t, m["kindex_informer_errors_total{"+base+`,reason="Forbidden"}`], 1.0)

	inf.Release()
	for k := range gather(t, reg) {
		assert.NotContains(t, k, "widgets", "a stopped informer's series are deleted")
	}

	// A second factory on the same registerer shares the collectors.
	_, err = newFactory(restConfig(), Options[obj]{Discovery: e.disc, Registerer: reg}, e.mode.builder(), hooks{Access: e.access})
	require.NoError(t, err)
}

// gather returns every sample as name{label="value",...} -> value, labels in the
// collector's order.
func gather(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			byName := map[string]string{}
			for _, lp := range m.GetLabel() {
				byName[lp.GetName()] = lp.GetValue()
			}
			var parts []string
			for _, name := range append(append([]string{}, entryLabels...), labelPhase, labelReason, "callback") {
				if v, ok := byName[name]; ok {
					parts = append(parts, name+`="`+v+`"`)
				}
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[mf.GetName()+"{"+strings.Join(parts, ",")+"}"] = v
		}
	}
	return out
}

// A member that leaves the set while WaitForSync waits for it (its CRD deleted) is not
// waited for: WaitForSync returns once the remaining members are synced, not with the
// removed member's "released". Stopping the set still ends the wait with an error.
func TestWatchAllWaitForSyncOutlivesARemovedMember(t *testing.T) {
	e, wa, done := waitOnHalfSyncedSet(t)
	ctx := context.Background()
	defer wa.Stop()
	select {
	case err := <-done:
		t.Fatalf("WaitForSync returned %v with gadgets not synced", err)
	default:
	}
	e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: gadgets})
	select {
	case err := <-done:
		require.NoError(t, err, "the removed member is not waited for")
	case <-time.After(30 * time.Second):
		t.Fatal("WaitForSync still waits for a member that left the set")
	}

	// A set stopped while WaitForSync waits ends the wait with an error.
	e.mode.server(gadgets.GVR).setErrors(apierrors.NewInternalError(errors.New("down")), nil)
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: gadgets})
	eventually(t, func() bool { _, ok := wa.Informer(gadgets.GVR.GroupResource()); return ok }, "gadgets back")
	go func() { done <- wa.WaitForSync(ctx) }()
	wa.Stop()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrReleased, "a stopped set is not synced")
		require.NotErrorIs(t, err, ErrShutdown, "the factory runs on")
	case <-time.After(30 * time.Second):
		t.Fatal("WaitForSync still waits on a stopped set")
	}
}

// A set stopped by the factory's Shutdown says so (ErrShutdown, not ErrReleased) to a
// WaitForSync waiting as it stops and to every call after; and Shutdown returns only once the
// goroutine that would stop the set with its context has ended.
func TestWatchAllStoppedByShutdown(t *testing.T) {
	e, wa, done := waitOnHalfSyncedSet(t)
	ctx := context.Background()
	require.Equal(t, 1, watchAllWaiters(), "the set's context waiter runs")
	e.f.Shutdown()
	assert.Zero(t, watchAllWaiters(), "Shutdown waited for the set's goroutine")
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrShutdown)
		require.NotErrorIs(t, err, ErrReleased)
	case <-time.After(30 * time.Second):
		t.Fatal("WaitForSync still waits after Shutdown")
	}
	require.ErrorIs(t, wa.WaitForSync(ctx), ErrShutdown)
	_, err := wa.AddEventHandler((&perResource{recs: map[string]*recorder{}}).handler)
	require.ErrorIs(t, err, ErrShutdown)
	require.ErrorIs(t, wa.AddIndex("node", "{.spec.nodeName}"), ErrShutdown)
	wa.Stop() // after Shutdown: nothing to do
	require.ErrorIs(t, wa.WaitForSync(ctx), ErrShutdown, "the first cause stays")
}

// A set whose context has ended already would stop at once: WatchAll returns the
// context's error without starting an informer (and its list) per resource.
func TestWatchAllWithAnEndedContext(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, e.f.Statuses(), "no informer started")
	assert.Zero(t, e.mode.lws.Load(), "no list made")
}

// waitOnHalfSyncedSet starts a watch-all set of widgets (synced) and gadgets (whose list
// fails) and a WaitForSync of it, which sends its answer to done.
func waitOnHalfSyncedSet(t *testing.T) (*env, *WatchAll[obj], chan error) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", nil))
	e.mode.server(gadgets.GVR).setErrors(apierrors.NewInternalError(errors.New("down")), nil)
	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- wa.WaitForSync(ctx) }()
	eventually(t, func() bool {
		inf, ok := wa.Informer(widgets.GVR.GroupResource())
		return ok && inf.HasSynced()
	}, "widgets synced; gadgets cannot list")
	return e, wa, done
}

// watchAllWaiters counts the goroutines that stop a watch-all set with its context.
func watchAllWaiters() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), ").newWatchAll.func")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// WaitForSyncOrPark answers for a set with a member the user may not list: the others are
// synced and queryable, and the error names the parked member and why, where WaitForSync
// waits until its context ends.
func TestWatchAllWaitForSyncOrPark(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	e.mode.server(gadgets.GVR).setErrors(forbidden("gadgets"), forbidden("gadgets"))
	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()

	err = wa.WaitForSyncOrPark(ctx)
	var se *SyncError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, ErrParked)
	require.Len(t, se.Failures, 1)
	assert.Equal(t, gadgets.GVR, se.Failures[0].Key.GVR)
	assert.Equal(t, ReasonForbidden, se.Failures[0].Reason)
	w, ok := wa.Informer(widgets.GVR.GroupResource())
	require.True(t, ok)
	assert.True(t, w.HasSynced(), "the other member is synced")

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, wa.WaitForSync(short), context.DeadlineExceeded, "WaitForSync waits for the parked member")

	// Once the grant arrives, both answer nil.
	e.mode.server(gadgets.GVR).setErrors(nil, nil)
	e.access.allowed.Store(true)
	g, ok := wa.Informer(gadgets.GVR.GroupResource())
	require.True(t, ok)
	g.Recheck()
	bounded, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	require.NoError(t, wa.WaitForSync(bounded))
	require.NoError(t, wa.WaitForSyncOrPark(bounded))
}

// A filter that includes a resource by a name no served resource has ("widgets" for
// widgets.example.com, as "deployments" for deployments.apps) says so in one log line per
// name, rather than select nothing silently; a name that is served logs nothing.
func TestWatchAllLogsUnservedIncludes(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	for _, c := range []struct {
		include string
		logged  int
	}{{"widgets", 1}, {"widgets.example.com", 0}} {
		before := e.logs.count("does not serve")
		wa, err := e.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{c.include}})
		require.NoError(t, err)
		assert.Equal(t, c.logged, e.logs.count("does not serve")-before, "%s:\n%s", c.include, e.logs)
		assert.Equal(t, c.logged == 0, len(wa.Informers()) == 1, c.include)
		wa.Stop()
	}
}
