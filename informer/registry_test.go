package informer

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/query"
)

func TestConcurrentAcquireSharesOneInformer(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	const n = 50
	infs := make([]*Informer[obj], n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inf, err := e.f.Informer(context.Background(), "widgets")
			assert.NoError(t, err)
			infs[i] = inf
		}()
	}
	wg.Wait()
	for _, inf := range infs[1:] {
		require.Same(t, infs[0].h.e, inf.h.e, "every concurrent acquire gets the same informer")
	}
	require.NoError(t, infs[0].WaitForSync(context.Background()))
	assert.EqualValues(t, 1, e.mode.lws.Load(), "one informer, one run")
	assert.Len(t, e.f.Statuses(), 1)
	for _, inf := range infs {
		inf.Release()
	}
	assert.Empty(t, e.f.Statuses())
}

func TestKeysSeparateNamespacesSelectorsAndVersions(t *testing.T) {
	e := newEnv(t, Options[obj]{Namespace: "default"})
	ctx := context.Background()
	get := func(opts ...Option) *Informer[obj] {
		inf, err := e.f.Informer(ctx, "widgets", opts...)
		require.NoError(t, err)
		t.Cleanup(inf.Release)
		return inf
	}
	base := get()
	assert.Equal(t, "default", base.Key().Namespace, "factory namespace is the default")
	same := get(WithNamespace("default"), WithLabelSelector(""))
	assert.Same(t, base.h.e, same.h.e)
	// Selectors are canonicalised: equal selectors written differently share.
	a := get(WithLabelSelector("b=2,a=1"))
	b := get(WithLabelSelector("a=1, b=2"))
	assert.Same(t, a.h.e, b.h.e)
	for _, other := range []*Informer[obj]{
		get(WithNamespace("")),
		get(WithNamespace("other")),
		get(WithFieldSelector("metadata.name=x")),
		a,
	} {
		assert.NotSame(t, base.h.e, other.h.e, "%s", other.Key())
	}
	// Cluster-scoped resources list no namespace; the namespace asked for is kept apart
	// (Key.Restricted: served namespaced later, a restricted one must not list them all).
	nodes := resource("", "v1", "nodes")
	nodes.Namespaced = false
	e.disc.emit(discoveryAdded(nodes))
	c1, err := e.f.Informer(ctx, "nodes")
	require.NoError(t, err)
	defer c1.Release()
	c2, err := e.f.Informer(ctx, "nodes", WithNamespace("other"))
	require.NoError(t, err)
	defer c2.Release()
	c3, err := e.f.Informer(ctx, "nodes", WithNamespace(c1.Key().Restricted))
	require.NoError(t, err)
	defer c3.Release()
	assert.True(t, c1.h.e == c3.h.e, "the same namespace asked for: shared")
	assert.True(t, c1.h.e != c2.h.e, "another namespace asked for: %s and %s", c1.Key(), c2.Key())
	assert.Equal(t, "", c1.Key().Namespace)
	assert.Equal(t, "", c2.Key().Namespace)
	// GVR and GVK requests resolve to the same informer.
	byGVR, err := e.f.InformerForGVR(ctx, schema.GroupVersionResource{Group: "example.com", Resource: "widgets"})
	require.NoError(t, err)
	defer byGVR.Release()
	byGVK, err := e.f.InformerForGVK(ctx, widgets.GVK)
	require.NoError(t, err)
	defer byGVK.Release()
	assert.Same(t, base.h.e, byGVR.h.e)
	assert.Same(t, base.h.e, byGVK.h.e)
}

func TestPerResourceSelectorsAndValidation(t *testing.T) {
	e := newEnv(t, Options[obj]{
		LabelSelector: "tier=web",
		Selectors:     map[schema.GroupResource]Selectors{{Group: "example.com", Resource: "gadgets"}: {Label: "app in (x, y)"}},
	})
	ctx := context.Background()
	w, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer w.Release()
	g, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer g.Release()
	assert.Equal(t, "tier=web", w.Key().LabelSelector)
	assert.Equal(t, "app in (x,y)", g.Key().LabelSelector)

	for name, opts := range map[string]Options[obj]{
		"label":     {LabelSelector: "a=(", Discovery: e.disc},
		"field":     {FieldSelector: "a", Discovery: e.disc},
		"namespace": {Namespace: "Not_Valid", Discovery: e.disc},
		"resync":    {ResyncPeriod: -1, Discovery: e.disc},
		"resource":  {Selectors: map[schema.GroupResource]Selectors{{Resource: "x"}: {Field: "??"}}, Discovery: e.disc},
		"discovery": {},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newFactory(restConfig(), opts, e.mode.builder(), hooks{Access: e.access})
			assert.Error(t, err)
		})
	}
	_, err = e.f.Informer(ctx, "widgets", WithLabelSelector("=="))
	assert.Error(t, err)
}

func TestReleaseRefcountAndReacquire(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	one, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	two, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, one.WaitForSync(ctx))
	entry := one.h.e

	one.Release()
	one.Release() // harmless
	assert.Equal(t, PhaseSynced, two.Status().Phase, "another reference keeps it running")
	assert.Len(t, must(two.List(nil)), 1)
	_, err = one.List(nil)
	assert.ErrorIs(t, err, ErrReleased, "a released reference sees nothing")
	_, err = one.AddEventHandler(newRecorder())
	assert.ErrorIs(t, err, ErrReleased)
	assert.ErrorIs(t, one.WaitForSync(ctx), ErrReleased)

	two.Release()
	assert.Equal(t, PhaseStopped, entry.Status().Phase)
	assert.Equal(t, 0, entry.Status().Objects, "the cache is freed")
	assert.Empty(t, entry.store.ListKeys())
	eventually(t, func() bool { return srv.watching() == 0 }, "the watch is closed")

	again, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer again.Release()
	assert.NotSame(t, entry, again.h.e, "a released resource gets a fresh informer")
	require.NoError(t, again.WaitForSync(ctx))
	assert.Len(t, must(again.List(nil)), 1)
	assert.EqualValues(t, 2, srv.lists.Load(), "it synced afresh")
}

func TestReleaseLeavesNoGoroutines(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	ignore := goleak.IgnoreCurrent()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	for range 3 {
		_, err := inf.AddEventHandler(newRecorder())
		require.NoError(t, err)
	}
	require.NoError(t, inf.WaitForSync(ctx))
	srv.add(newObj("ns", "b", nil))
	eventually(t, func() bool { return len(must(inf.List(nil))) == 2 }, "watch event applied")
	inf.Release()
	goleak.VerifyNone(t, ignore)
}

func TestForbiddenParkReleaseLeavesNoGoroutines(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	e.mode.server(widgets.GVR).setErrors(forbidden("widgets"), nil)
	ignore := goleak.IgnoreCurrent()
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked")
	inf.Release()
	goleak.VerifyNone(t, ignore)
}

func TestShutdownStopsEverything(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	mode, disc := newFakeMode(), newFakeDiscovery(widgets, gadgets)
	f, err := newFactory(restConfig(), Options[obj]{Discovery: disc}, mode.builder(), hooks{Access: &fakeAccess{}})
	require.NoError(t, err)
	_, err = f.Informer(context.Background(), "widgets")
	require.ErrorIs(t, err, ErrNotStarted)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, f.Start(ctx))
	inf, err := f.Informer(ctx, "widgets")
	require.NoError(t, err)
	_, err = inf.AddEventHandler(newRecorder())
	require.NoError(t, err)
	wa, err := f.WatchAll(ctx, discoveryFilterAll())
	require.NoError(t, err)
	_ = wa
	require.NoError(t, f.WaitForSync(ctx))
	cancel() // the factory's lifetime is its context's
	eventually(t, func() bool { return inf.Status().Phase == PhaseStopped }, "stopped with its context")
	f.Shutdown()
	_, err = f.Informer(context.Background(), "widgets")
	require.ErrorIs(t, err, ErrShutdown)
	goleak.VerifyNone(t, ignore)
}

func TestNotWatchable(t *testing.T) {
	r := resource("example.com", "v1", "reviews")
	r.Verbs = []string{"create"}
	e := newEnv(t, Options[obj]{}, r)
	_, err := e.f.Informer(context.Background(), "reviews")
	require.ErrorIs(t, err, ErrNotWatchable)
	_, err = e.f.Informer(context.Background(), "nothing")
	require.Error(t, err)
}

func TestWaitForSyncHonoursDeadline(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	e.mode.server(widgets.GVR).setErrors(forbidden("widgets"), nil)
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = inf.WaitForSync(ctx)
	require.Less(t, time.Since(start), 2*time.Second)
	var se *SyncError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, se.Failures, 1)
	assert.Equal(t, ReasonForbidden, se.Failures[0].Reason)
	assert.Equal(t, PhaseParked, se.Failures[0].Phase)
}

// Shutdown right after the factory's context ended: the goroutine that follows the
// context stops everything, and Shutdown waited for that work but not for the goroutine's
// end, so something of kindex still ran once Shutdown returned (examples/plugin's leak test
// saw it under load). The goroutine's end is watcherDone's close.
func TestShutdownAfterTheContextWaitsForItsWatcher(t *testing.T) {
	for i := range 200 {
		mode, disc := newFakeMode(), newFakeDiscovery(widgets)
		f, err := newFactory(restConfig(), Options[obj]{Discovery: disc}, mode.builder(), hooks{Access: &fakeAccess{}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, f.Start(ctx))
		cancel()
		for !f.c.stopping.Load() {
			runtime.Gosched() // the watcher is the first to stop
		}
		f.Shutdown()
		select {
		case <-f.c.watcherDone:
		default:
			t.Fatalf("round %d: Shutdown returned before the goroutine that follows the context ended", i)
		}
	}
}

// A nil context is an error, not a panic, and it leaves the factory usable.
func TestNilContexts(t *testing.T) {
	mode, disc := newFakeMode(), newFakeDiscovery(widgets, gadgets)
	f, err := newFactory(restConfig(), Options[obj]{Discovery: disc}, mode.builder(), hooks{Access: &fakeAccess{}})
	require.NoError(t, err)
	//nolint:staticcheck // a nil context on purpose
	assert.ErrorIs(t, f.Start(nil), ErrNilContext)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, f.Start(ctx), "the factory can still start")
	defer f.Shutdown()
	inf, err := f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	//nolint:staticcheck // a nil context on purpose
	for name, wait := range map[string]func() error{
		"Informer.WaitForSync":       func() error { return inf.WaitForSync(nil) },
		"Informer.WaitForSyncOrPark": func() error { return inf.WaitForSyncOrPark(nil) },
		"Factory.WaitForSync":        func() error { return f.WaitForSync(nil) },
	} {
		assert.ErrorIs(t, wait(), ErrNilContext, name)
	}
	wa, err := f.WatchAll(ctx, discoveryFilterAll())
	require.NoError(t, err)
	assert.ErrorIs(t, wa.WaitForSync(nil), ErrNilContext) //nolint:staticcheck // on purpose
}

// Once its factory stopped, a reference still held answers reads with ErrShutdown, never
// with the emptied cache's nothing.
func TestReadsAfterShutdownFail(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	require.NoError(t, inf.WaitForSync(ctx))
	e.f.Shutdown()
	_, err = inf.List(nil)
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.Namespace("ns").List(nil)
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.Get("ns", "a")
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.GetItem("ns", "a")
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.ListItems("")
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.Query(ctx, query.Query{Scan: true})
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.QueryItems(ctx, query.Query{Scan: true})
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.Count(ctx, query.Query{})
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = inf.CountBy(ctx, query.Query{}, "name")
	assert.ErrorIs(t, err, ErrShutdown)
	assert.ErrorIs(t, inf.WaitForSync(ctx), ErrShutdown, "waits say so too")
	inf.Release()
	_, err = inf.List(nil)
	assert.ErrorIs(t, err, ErrReleased, "released says released")
}

// With Options.ReadAfterShutdown, a reference still held once its factory stopped reads
// what the informer held (a program serving requests while it shuts down); nothing else
// works on it, and its Release ends the reads.
func TestReadsAfterShutdownKept(t *testing.T) {
	e := newEnv(t, Options[obj]{ReadAfterShutdown: true})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", map[string]string{"app": "x"}))
	srv.add(newObj("ns", "b", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	require.NoError(t, inf.WaitForSync(ctx))
	e.f.Shutdown()
	assert.Equal(t, PhaseStopped, inf.Status().Phase)
	srv.add(newObj("ns", "c", nil)) // after the stop: never seen
	objs, err := inf.List(nil)
	require.NoError(t, err)
	assert.Len(t, objs, 2)
	objs, err = inf.Namespace("ns").List(labels.SelectorFromSet(labels.Set{"app": "x"}))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, "a", objs[0].Name)
	got, err := inf.Get("ns", "b")
	require.NoError(t, err)
	assert.Equal(t, "b", got.Name)
	_, err = inf.Get("ns", "c")
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	_, err = inf.GetItem("ns", "a")
	require.NoError(t, err)
	items, err := inf.ListItems("")
	require.NoError(t, err)
	assert.Len(t, items, 2)
	res, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "b")}})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	ires, err := inf.QueryItems(ctx, query.Query{Scan: true})
	require.NoError(t, err)
	assert.Len(t, ires.Items, 2)
	n, err := inf.Count(ctx, query.Query{})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	by, err := inf.CountBy(ctx, query.Query{}, "name")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, by)
	assert.True(t, inf.Queryable(), "its reads answer")
	stats, err := inf.IndexStats("name")
	require.NoError(t, err)
	assert.Equal(t, 2, stats.Values)

	assert.ErrorIs(t, inf.WaitForSync(ctx), ErrShutdown, "nothing is syncing")
	assert.Error(t, inf.AddIndex("other", "{.metadata.uid}"), "no new index on a stopped informer")
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	assert.Error(t, err, "no new handler on a stopped informer")
	_, err = e.f.Informer(ctx, "widgets")
	assert.ErrorIs(t, err, ErrShutdown, "no new reference")

	inf.Release()
	_, err = inf.List(nil)
	assert.ErrorIs(t, err, ErrReleased, "released says released")
	assert.False(t, inf.Queryable())
}

// A read through a reference that is released while the read runs fails with ErrReleased,
// never with ErrShutdown while the factory runs on. The read checked the reference (not
// released), then the informer (stopped): a Release ending between the two checks, the
// last reference's, had stopped the informer, and the read said the factory had stopped
// (seen in crcache, a read racing RemoveInformer, about 1 run in 3,000 of a read racing
// Release here). testGone releases the reference at that point, every time.
func TestReadRacingReleaseSaysReleased(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	reads := map[string]func(inf *Informer[obj]) error{
		"Get":       func(inf *Informer[obj]) error { _, err := inf.Get("ns", "a"); return err },
		"GetItem":   func(inf *Informer[obj]) error { _, err := inf.GetItem("ns", "a"); return err },
		"List":      func(inf *Informer[obj]) error { _, err := inf.List(nil); return err },
		"Namespace": func(inf *Informer[obj]) error { _, err := inf.Namespace("ns").List(nil); return err },
		"ListItems": func(inf *Informer[obj]) error { _, err := inf.ListItems(""); return err },
		"QueryItems": func(inf *Informer[obj]) error {
			_, err := inf.QueryItems(ctx, query.Query{Scan: true})
			return err
		},
		"Count": func(inf *Informer[obj]) error { _, err := inf.Count(ctx, query.Query{}); return err },
	}
	for name, read := range reads {
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		require.NoError(t, inf.WaitForSync(ctx))
		var once sync.Once
		inf.h.testGone = func() { once.Do(inf.Release) }
		err = read(inf)
		assert.ErrorIs(t, err, ErrReleased, name)
		assert.NotErrorIs(t, err, ErrShutdown, name)
	}
}

// An informer stopped by the release of its last reference is released for a wait that
// looks at it only after its factory began to stop too (crcache shuts a replaced plan's
// factories down right after releasing their informers): the cause is the release, not
// the factory's stop.
func TestWaitOnReleasedInformerAfterShutdownSaysReleased(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	en := inf.h.e
	inf.Release()
	e.f.Shutdown()
	err = waitEntries(ctx, []*entry{en}, true)
	assert.ErrorIs(t, err, ErrReleased)
	assert.NotErrorIs(t, err, ErrShutdown)
}

// WaitForSyncOrPark on an informer that stops while it waits (its factory shut down, its
// last reference released) says why it stopped: the SyncError's Cause is ErrShutdown or
// ErrReleased, not ErrParked. The informer is Stopped, not parked, and will not resume:
// a caller that tells a park (report and exit) from a stop by errors.Is(err, ErrParked)
// took the stop for a park.
func TestWaitForSyncOrParkOnAStoppedInformerIsNoPark(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stop  func(e *env, inf *Informer[obj])
		cause error
	}{
		{"Shutdown", func(e *env, _ *Informer[obj]) { e.f.Shutdown() }, ErrShutdown},
		{"Release", func(_ *env, inf *Informer[obj]) { inf.Release() }, ErrReleased},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options[obj]{})
			ctx := context.Background()
			srv := e.mode.server(widgets.GVR)
			srv.listGate = make(chan struct{}) // never synced
			inf, err := e.f.Informer(ctx, "widgets")
			require.NoError(t, err)
			defer inf.Release()
			eventually(t, func() bool { return srv.lists.Load() > 0 }, "listing")
			done := make(chan error, 1)
			go func() { done <- inf.WaitForSyncOrPark(ctx) }()
			time.Sleep(20 * time.Millisecond) // let the wait start
			tc.stop(e, inf)
			err = <-done
			var se *SyncError
			require.ErrorAs(t, err, &se)
			assert.ErrorIs(t, se.Cause, tc.cause, "%v", err)
			assert.NotErrorIs(t, err, ErrParked, "%v", err)
			assert.Equal(t, PhaseStopped, se.Failures[0].Phase)
		})
	}
}

// Once its factory stopped, a reference still held refuses new handlers and indexes with
// ErrShutdown, as its reads do, not with ErrReleased: the caller released nothing.
func TestRegistrationsAfterShutdownSayShutdown(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	e.f.Shutdown()
	_, err = inf.AddEventHandler(newRecorder())
	assert.ErrorIs(t, err, ErrShutdown, "AddEventHandler")
	assert.NotErrorIs(t, err, ErrReleased, "AddEventHandler")
	for name, add := range map[string]func() error{
		"AddIndex":        func() error { return inf.AddIndex("name", "{.metadata.name}") },
		"AddBuiltinIndex": func() error { return inf.AddBuiltinIndex("label") },
		"AddIndexFunc": func() error {
			return inf.AddIndexFunc("fn", func(any) ([]string, error) { return nil, nil })
		},
	} {
		err := add()
		assert.ErrorIs(t, err, ErrShutdown, name)
		assert.NotErrorIs(t, err, ErrReleased, name)
	}
	inf.Release()
	_, err = inf.AddEventHandler(newRecorder())
	assert.ErrorIs(t, err, ErrReleased, "released says released")
	assert.ErrorIs(t, inf.AddIndex("name", "{.metadata.name}"), ErrReleased)
}

// Once reads fail (the factory stopped, the reference released), Queryable says no, and
// IndexStats fails as the reads do instead of describing the stopped informer's emptied
// index (no value, no entry).
func TestQueryableAndIndexStatsAfterStop(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	require.NoError(t, inf.WaitForSync(ctx))
	assert.True(t, inf.Queryable())
	st, err := inf.IndexStats("name")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Entries)

	e.f.Shutdown()
	_, err = inf.List(nil)
	require.ErrorIs(t, err, ErrShutdown)
	assert.False(t, inf.Queryable(), "reads fail")
	_, err = inf.IndexStats("name")
	assert.ErrorIs(t, err, ErrShutdown)
	inf.Release()
	assert.False(t, inf.Queryable())
	_, err = inf.IndexStats("name")
	assert.ErrorIs(t, err, ErrReleased)

	// Released while the informer runs on through another reference.
	e2 := newEnv(t, Options[obj]{})
	a, err := e2.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer a.Release()
	b, err := e2.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, b.WaitForSync(ctx))
	b.Release()
	assert.False(t, b.Queryable(), "this reference reads nothing")
	assert.True(t, a.Queryable())
}

// Factory.WaitForSync waits for the informers currently held: one whose last reference is
// released while it waits is no longer held and is not waited for, as a member leaving a
// watch-all set is not. The wait failed at once with ErrReleased, for a caller that released
// nothing, without waiting for the informers it does hold.
func TestFactoryWaitForSyncSkipsAnInformerReleasedMeanwhile(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).listGate = make(chan struct{}) // never synced
	slow := e.mode.server(gadgets.GVR)
	slow.listGate = make(chan struct{})
	w, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	g, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer g.Release()
	done := make(chan error, 1)
	go func() { done <- e.f.WaitForSync(ctx) }()
	time.Sleep(50 * time.Millisecond) // the wait holds both
	w.Release()
	select {
	case err := <-done:
		t.Fatalf("the wait ended before gadgets synced: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(slow.listGate)
	require.NoError(t, <-done)
	assert.True(t, g.HasSynced())

	// The factory's stop still ends a wait, with ErrShutdown.
	e2 := newEnv(t, Options[obj]{})
	e2.mode.server(widgets.GVR).listGate = make(chan struct{})
	_, err = e2.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	go func() { done <- e2.f.WaitForSync(ctx) }()
	time.Sleep(50 * time.Millisecond)
	e2.f.Shutdown()
	assert.ErrorIs(t, <-done, ErrShutdown)
}
