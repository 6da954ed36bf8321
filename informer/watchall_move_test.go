package informer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/query"
)

// keyView is what a watch-all handler was told of one resource, summed over the handlers
// the factory made for each of its versions: keys added or updated and not deleted since.
// It records calls made while another is in progress, and tombstones without an object.
type keyView struct {
	mu         sync.Mutex
	keys       map[string]bool
	inFlight   atomic.Int32
	concurrent atomic.Int32
	nilTombs   atomic.Int32
	tombs      atomic.Int32
	// gates holds, per version, a channel every call of that version's handler waits for;
	// started is closed when such a call first waits. Guarded by gateMu.
	gateMu  sync.Mutex
	gates   map[string]chan struct{}
	started map[string]chan struct{}
	once    map[string]*sync.Once
	// calls counts the calls of each version's handler; guarded by mu.
	calls map[string]int
}

func newKeyView() *keyView {
	return &keyView{keys: map[string]bool{}, gates: map[string]chan struct{}{},
		started: map[string]chan struct{}{}, once: map[string]*sync.Once{}, calls: map[string]int{}}
}

// hold makes the handler of version wait before each call until release(version), and
// returns a channel closed when one waits.
func (v *keyView) hold(version string) <-chan struct{} {
	v.gateMu.Lock()
	defer v.gateMu.Unlock()
	v.gates[version] = make(chan struct{})
	v.started[version] = make(chan struct{})
	v.once[version] = &sync.Once{}
	return v.started[version]
}

func (v *keyView) release(version string) {
	v.gateMu.Lock()
	defer v.gateMu.Unlock()
	close(v.gates[version])
}

// wait waits for the gate of version, if it is held.
func (v *keyView) wait(version string) {
	v.gateMu.Lock()
	gate, started, once := v.gates[version], v.started[version], v.once[version]
	v.gateMu.Unlock()
	if gate != nil {
		once.Do(func() { close(started) })
		<-gate
	}
}

// factory is a WatchAll handler factory: one handler per version, one view.
func (v *keyView) factory(res discovery.Resource) cache.ResourceEventHandler {
	version := res.GVR.Version
	call := func(fn func()) {
		v.wait(version)
		if v.inFlight.Add(1) > 1 {
			v.concurrent.Add(1)
		}
		defer v.inFlight.Add(-1)
		v.mu.Lock()
		defer v.mu.Unlock()
		v.calls[version]++
		fn()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { call(func() { v.keys[objKey(o.(obj))] = true }) },
		UpdateFunc: func(_, o any) { call(func() { v.keys[objKey(o.(obj))] = true }) },
		DeleteFunc: func(o any) {
			call(func() {
				if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
					v.tombs.Add(1)
					if _, ok := t.Obj.(obj); !ok {
						v.nilTombs.Add(1)
					}
					delete(v.keys, t.Key)
					return
				}
				delete(v.keys, objKey(o.(obj)))
			})
		},
	}
}

// callsOf returns how many calls the handler of version has made.
func (v *keyView) callsOf(version string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[version]
}

func (v *keyView) snapshot() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Sorted(maps.Keys(v.keys))
}

func (v *keyView) equals(keys ...string) bool {
	return slices.Equal(v.snapshot(), slices.Sorted(slices.Values(keys)))
}

// serve adds objects ns/<prefix><i> for i in [from, to) to s, and returns their keys.
func serve(s *fakeServer, prefix string, from, to int) []string {
	var keys []string
	for i := from; i < to; i++ {
		o := newObj("ns", fmt.Sprintf("%s%03d", prefix, i), nil)
		s.add(o)
		keys = append(keys, objKey(o))
	}
	return keys
}

// memberRegs returns the registrations the set made on the member of widgets, in any version.
func memberRegs(wa *WatchAll[obj]) []*Registration {
	wa.wa.mu.Lock()
	m := wa.wa.members[widgets.GVR.GroupResource()]
	wa.wa.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.h.registrations()
}

// A move to a new version whose list lacks objects the old member had (deleted while no
// informer watched them) tells the handler they are deleted, with tombstones carrying the
// old object: the handler's view ends equal to the new member's cache, with no ghost.
func TestWatchAllMoveDeletesWhatTheNewVersionLacks(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	widgetsV2 := resource("example.com", "v2", "widgets")
	gr := widgets.GVR.GroupResource()
	v1 := serve(e.mode.server(widgets.GVR), "o", 0, 30)
	// v2 lists o000-o019 and a new n000: o020-o029 were deleted while the informers changed.
	want := append(serve(e.mode.server(widgetsV2.GVR), "o", 0, 20), serve(e.mode.server(widgetsV2.GVR), "n", 0, 1)...)

	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	view := newKeyView()
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	eventually(t, func() bool { return reg.HasSynced() && view.equals(v1...) }, "v1 handed over: %v", view.snapshot())

	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().GVR.Version == "v2" && reg.MemberSynced(gr) && view.equals(want...)
	}, "view equals v2's cache: %v", view.snapshot())
	assert.EqualValues(t, 10, view.tombs.Load(), "one tombstone per object v2 lacks")
	assert.Zero(t, view.nilTombs.Load(), "tombstones carry the object the old member had")
	assert.Zero(t, view.concurrent.Load(), "handler calls never overlap")
}

// MemberSynced said true once a move's tombstones (the keys the new version lacks) were
// queued, while the handler had not been handed them: a caller that trusted it saw objects
// that were gone. It is true only once they have been delivered.
func TestWatchAllMemberSyncedAfterMoveTombstonesDelivered(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	widgetsV2 := resource("example.com", "v2", "widgets")
	gr := widgets.GVR.GroupResource()
	v1 := serve(e.mode.server(widgets.GVR), "o", 0, 30)
	want := serve(e.mode.server(widgetsV2.GVR), "o", 0, 20)

	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	view := newKeyView()
	// v2's handler takes its adds and then waits in its first delete (a tombstone).
	gate, waiting := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reg, err := wa.AddEventHandler(func(res discovery.Resource) cache.ResourceEventHandler {
		h := view.factory(res)
		if res.GVR.Version != "v2" {
			return h
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: func(o any) { h.OnAdd(o, false) },
			UpdateFunc: h.OnUpdate,
			DeleteFunc: func(o any) {
				once.Do(func() { close(waiting) })
				<-gate
				h.OnDelete(o)
			}}
	})
	require.NoError(t, err)
	eventually(t, func() bool { return reg.HasSynced() && view.equals(v1...) }, "v1 handed over: %v", view.snapshot())

	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
	<-waiting
	eventually(t, func() bool {
		wa.wa.mu.Lock()
		defer wa.wa.mu.Unlock()
		return wa.wa.members[gr].moving[reg.ah] == nil
	}, "the handoff has queued its tombstones and ended")
	assert.Equal(t, 20, view.callsOf("v2"), "v2's initial list delivered")
	assert.False(t, reg.MemberSynced(gr), "9 tombstones still queued, one being delivered")
	assert.False(t, reg.HasSynced())
	close(gate)
	eventually(t, func() bool { return reg.MemberSynced(gr) }, "synced once the tombstones are delivered")
	assert.True(t, view.equals(want...), "the view is v2's cache once synced: %v", view.snapshot())
	assert.EqualValues(t, 10, view.tombs.Load())
}

// v2ThenV1 is a watch-all set of widgets served at v2 by discovery, with n objects at v2
// and the same at v1 on the server, for a move to v1; the set stops with the test.
func v2ThenV1(t *testing.T, n int) (*env, *WatchAll[obj], discovery.Resource, []string) {
	widgetsV2 := resource("example.com", "v2", "widgets")
	e := newEnv(t, Options[obj]{}, widgetsV2)
	keys := serve(e.mode.server(widgetsV2.GVR), "o", 0, n)
	serve(e.mode.server(widgets.GVR), "o", 0, n)
	wa, err := e.f.WatchAll(context.Background(), discovery.Filter{})
	require.NoError(t, err)
	t.Cleanup(wa.Stop)
	return e, wa, widgetsV2, keys
}

// When the old member parks as not found (its version no longer served) and queues
// tombstones for everything it had while its handler is still busy, the move to the new
// version delivers those tombstones before any add of the new member: a live object is
// never left deleted, and the two members never call the handler at the same time.
func TestWatchAllMoveOrdersOldTombstonesBeforeNewAdds(t *testing.T) {
	e, wa, widgetsV2, keys := v2ThenV1(t, 50)
	gr := widgets.GVR.GroupResource()
	view := newKeyView()
	started := view.hold("v2")
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	<-started // the v2 handler is busy: its adds queue up
	old, ok := wa.Informer(gr)
	require.True(t, ok)

	// v2 is no longer served, nor any version (were v1 served, the member would follow
	// it): its informer parks as not found and queues a tombstone per object, behind the
	// adds. Then v1 is served.
	e.disc.miss(widgetsV2)
	e.mode.server(widgetsV2.GVR).setErrors(notFoundErr(), notFoundErr())
	e.mode.server(widgetsV2.GVR).closeWatches()
	eventually(t, func() bool {
		st := old.Status()
		return st.Phase == PhaseParked && st.Reason == ReasonNotFound
	}, "v2 parked as not found: %v", old.Status())

	e.disc.set(widgets)
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgets, Old: &widgetsV2})
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().GVR.Version == "v1" && inf.HasSynced()
	}, "moved to v1")
	// Whatever the set added to v1 already has been handed v1's objects before the old
	// handler goes on.
	for _, r := range memberRegs(wa) {
		eventually(t, r.HasSynced, "v1 registration synced")
	}
	view.release("v2")
	// The v2 handler is handed its queue (an add and a tombstone per object) either way.
	eventually(t, func() bool { return view.callsOf("v2") == 2*len(keys) && reg.MemberSynced(gr) },
		"v2's queue delivered: %d calls", view.callsOf("v2"))
	eventually(t, func() bool { return view.equals(keys...) },
		"every live object in the view: %d of %d", len(view.snapshot()), len(keys))
	assert.Zero(t, view.concurrent.Load(), "the old and the new member's handlers never run at once")
}

// A member whose version is retired while discovery serves the resource at another follows
// it there (entry.follow) until the set moves: its handler is told no delete of an object
// that still exists, before the move or after it.
func TestWatchAllMemberFollowsRetiredVersion(t *testing.T) {
	e, wa, widgetsV2, keys := v2ThenV1(t, 20)
	gr := widgets.GVR.GroupResource()
	view := newKeyView()
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	eventually(t, func() bool { return reg.MemberSynced(gr) && view.equals(keys...) }, "v2 synced")
	old, ok := wa.Informer(gr)
	require.True(t, ok)

	retireV2(t, e, widgetsV2, old) // the v2 member follows to v1
	assert.Equal(t, "v2", old.Key().GVR.Version)
	assert.Zero(t, view.tombs.Load(), "no delete while following")

	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgets, Old: &widgetsV2})
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().GVR.Version == "v1" && inf.HasSynced() && reg.MemberSynced(gr)
	}, "moved to v1")
	eventually(t, func() bool { return view.equals(keys...) }, "every object in the view: %v", view.snapshot())
	assert.Zero(t, view.tombs.Load(), "no delete after the move")
	assert.Zero(t, view.concurrent.Load(), "the old and the new member's handlers never run at once")
}

// A move while the handler still works through a move before it (v1 to v2 to v3), and a
// removal while it does, leave the handler's view equal to the last member's cache, and
// empty.
func TestWatchAllMoveWhileHandingOver(t *testing.T) {
	widgetsV2 := resource("example.com", "v2", "widgets")
	widgetsV3 := resource("example.com", "v3", "widgets")
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	gr := widgets.GVR.GroupResource()
	serve(e.mode.server(widgets.GVR), "o", 0, 30)
	serve(e.mode.server(widgetsV2.GVR), "o", 10, 40)
	want := serve(e.mode.server(widgetsV3.GVR), "o", 20, 25)

	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	view := newKeyView()
	started := view.hold("v1")
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	<-started
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV3, Old: &widgetsV2})
	assert.False(t, reg.MemberSynced(gr), "not synced while the handler is handed over")
	view.release("v1")
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().GVR.Version == "v3" && reg.MemberSynced(gr) && view.equals(want...)
	}, "view equals v3's cache: %v", view.snapshot())

	// v3 to v4 while the handler is busy, then the resource goes: everything is deleted.
	widgetsV4 := resource("example.com", "v4", "widgets")
	serve(e.mode.server(widgetsV4.GVR), "o", 0, 5)
	started = view.hold("v3")
	e.mode.server(widgetsV3.GVR).update(newObj("ns", "o020", map[string]string{"a": "b"}))
	<-started
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV4, Old: &widgetsV3})
	e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgetsV4})
	view.release("v3")
	eventually(t, func() bool { return view.equals() }, "every object deleted: %v", view.snapshot())
	assert.Zero(t, view.concurrent.Load(), "handler calls never overlap")
	assert.Zero(t, view.nilTombs.Load())
}

// Stop, the factory's Shutdown and the end of the set's context end handler deliveries at
// once: the call in progress completes and no other starts, however long the backlog.
func TestWatchAllStopDropsTheBacklog(t *testing.T) {
	for _, how := range []string{"Stop", "Shutdown", "context"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, Options[obj]{}, widgets)
			serve(e.mode.server(widgets.GVR), "o", 0, 200)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wa, err := e.f.WatchAll(ctx, discovery.Filter{})
			require.NoError(t, err)
			defer wa.Stop()
			var calls atomic.Int32
			started, gate := make(chan struct{}), make(chan struct{})
			var once sync.Once
			_, err = wa.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler {
				return cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
					calls.Add(1)
					once.Do(func() { close(started) })
					<-gate
				}}
			})
			require.NoError(t, err)
			<-started
			inf, ok := wa.Informer(widgets.GVR.GroupResource())
			require.True(t, ok)
			shutdown := make(chan struct{})
			switch how {
			case "Stop":
				wa.Stop()
			case "Shutdown":
				go func() { e.f.Shutdown(); close(shutdown) }()
			case "context":
				cancel()
			}
			eventually(t, func() bool { return inf.Status().Phase == PhaseStopped }, "member stopped")
			before := calls.Load()
			close(gate)
			e.f.Shutdown() // waits for every handler goroutine
			if how == "Shutdown" {
				<-shutdown
			}
			assert.Equal(t, before, calls.Load(), "no handler call after the set stopped (%d queued)", 200-before)
		})
	}
}

// A nil context is an error of WatchAll and of the set's queries, not a crash later.
func TestWatchAllNilContext(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	//nolint:staticcheck // a nil context on purpose
	_, err := e.f.WatchAll(nil, discovery.Filter{})
	require.ErrorIs(t, err, ErrNilContext)
	assert.Empty(t, e.f.Statuses(), "nothing started")
	wa, err := e.f.WatchAll(context.Background(), discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	//nolint:staticcheck // a nil context on purpose
	_, err = wa.QueryItems(nil, query.Query{})
	assert.ErrorIs(t, err, ErrNilContext)
	//nolint:staticcheck // a nil context on purpose
	_, err = wa.Count(nil, query.Query{})
	assert.ErrorIs(t, err, ErrNilContext)
}

// A member whose resource changes scope at the same version (a CRD re-created with the other
// scope within one discovery round) was kept: in a factory restricted to a namespace, the
// member made for the cluster-scoped resource parks (it must not list every namespace) and
// the set never synced again. It is replaced by one of the new scope.
func TestWatchAllReplacesAMemberWhoseScopeChanges(t *testing.T) {
	clusterScoped := widgets
	clusterScoped.Namespaced = false
	e := newEnv(t, Options[obj]{Namespace: "ns"}, clusterScoped)
	ctx := context.Background()
	gr := widgets.GVR.GroupResource()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("", "a", nil))

	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	view := newKeyView()
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	eventually(t, func() bool { return reg.HasSynced() && view.equals("a") }, "synced: %v", view.snapshot())

	e.disc.set(widgets) // namespaced now, same version
	srv.remove(newObj("", "a", nil))
	srv.add(newObj("ns", "b", nil))
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgets, Old: &clusterScoped})
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().Namespace == "ns" && reg.MemberSynced(gr) && view.equals("ns/b")
	}, "a member of namespace ns: %v", view.snapshot())
	require.NoError(t, wa.WaitForSync(ctx))
}

// Every method that takes a context refuses a nil one: Informer passed it on to discovery,
// and the queries to the store's scans, which call ctx.Err().
func TestNilContextIsRefusedEverywhere(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	var nilCtx context.Context
	_, err := e.f.Informer(nilCtx, "widgets")
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = e.f.InformerForGVR(nilCtx, widgets.GVR)
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = e.f.InformerForGVK(nilCtx, widgets.GVK)
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = e.f.Dependents(nilCtx, "u")
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = e.f.Orphans(nilCtx)
	assert.ErrorIs(t, err, ErrNilContext)
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	_, err = inf.Query(nilCtx, query.Query{})
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = inf.QueryItems(nilCtx, query.Query{})
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = inf.Count(nilCtx, query.Query{})
	assert.ErrorIs(t, err, ErrNilContext)
	_, err = inf.CountBy(nilCtx, query.Query{}, "x")
	assert.ErrorIs(t, err, ErrNilContext)
}

// An invalid query on a watch-all set was reported as the first member's error
// ("kindex: apiservices.apiregistration.k8s.io: invalid query: ..."): it is the query's.
func TestWatchAllInvalidQueryIsTheQuerys(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	require.NoError(t, wa.WaitForSync(ctx))
	require.NotEmpty(t, wa.Informers())
	_, err = wa.QueryItems(ctx, query.Query{Limit: -1})
	var inv *query.InvalidError
	require.ErrorAs(t, err, &inv)
	assert.NotContains(t, err.Error(), "widgets")
	_, err = wa.Count(ctx, query.Query{Conditions: []query.Condition{{Index: "", Op: query.Equal}}})
	require.ErrorAs(t, err, &inv)
	assert.NotContains(t, err.Error(), "widgets")
}

// Discovery events delivered between the list a set starts from and the set's applying it
// are newer than the list: a resource they moved or removed stays as they left it, never
// as the older list had it.
func TestWatchAllStartListOlderThanEvents(t *testing.T) {
	widgetsV2 := resource("example.com", "v2", "widgets")
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	serve(e.mode.server(widgets.GVR), "o", 0, 3)
	serve(e.mode.server(widgetsV2.GVR), "o", 0, 3)
	e.disc.mu.Lock()
	e.disc.afterResources = func() {
		e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
		e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: gadgets})
	}
	e.disc.mu.Unlock()

	wa, err := e.f.WatchAll(context.Background(), discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	inf, ok := wa.Informer(widgets.GVR.GroupResource())
	require.True(t, ok, "widgets is a member")
	assert.Equal(t, "v2", inf.Key().GVR.Version, "the move the event reported holds")
	_, ok = wa.Informer(gadgets.GVR.GroupResource())
	assert.False(t, ok, "gadgets, removed after the list was taken, is not a member")
	require.NoError(t, wa.WaitForSync(context.Background()), "no member waits for a resource that is gone")
}

// A resource that leaves the set and comes back (a CRD deleted and created again) hands a
// handler the new member's objects only after the deletes of the member that left: a
// handler still busy with those never sees them after the re-adds, so live objects are not
// left deleted in its view.
func TestWatchAllRejoinAfterTheLeavingDeletes(t *testing.T) {
	widgetsV2 := resource("example.com", "v2", "widgets")
	e := newEnv(t, Options[obj]{}, widgets)
	gr := widgets.GVR.GroupResource()
	serve(e.mode.server(widgets.GVR), "o", 0, 40)
	keys := serve(e.mode.server(widgetsV2.GVR), "o", 0, 40)

	wa, err := e.f.WatchAll(context.Background(), discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	view := newKeyView()
	started := view.hold("v1")
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	<-started // v1's handler is busy: its adds, then the tombstones of the removal, queue up

	e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgetsV2})
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().GVR.Version == "v2" && inf.HasSynced()
	}, "widgets rejoined at v2")
	assert.Zero(t, view.callsOf("v2"), "the new member hands nothing before the old deletes")
	view.release("v1")
	eventually(t, func() bool { return reg.MemberSynced(gr) && view.callsOf("v2") == len(keys) && view.equals(keys...) },
		"the view ends with every live object: %d of %d (%d v2 calls)", len(view.snapshot()), len(keys), view.callsOf("v2"))
	assert.Zero(t, view.concurrent.Load(), "the two members' handlers never run at once")
}

// A resource that stops being listable and watchable leaves the set as a removed one does:
// its handlers are told its objects are deleted, since nothing follows them any more.
func TestWatchAllResourceNoLongerWatchableLeaves(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	gr := widgets.GVR.GroupResource()
	keys := serve(e.mode.server(widgets.GVR), "o", 0, 5)
	wa, err := e.f.WatchAll(context.Background(), discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	view := newKeyView()
	reg, err := wa.AddEventHandler(view.factory)
	require.NoError(t, err)
	eventually(t, func() bool { return reg.HasSynced() && view.equals(keys...) }, "synced")

	getOnly := widgets
	getOnly.Verbs = []string{"get"}
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: getOnly, Old: &widgets})
	eventually(t, func() bool { return view.equals() }, "every object deleted: %v", view.snapshot())
	_, ok := wa.Informer(gr)
	assert.False(t, ok, "no longer a member")
	assert.EqualValues(t, len(keys), view.tombs.Load(), "one tombstone per object")
}

// A set's continue token stays valid when a resource moves to another version between
// pages: the member's part of it was bound to the old version's informer, and the next page
// failed with ErrInvalidContinue once the set had moved.
func TestWatchAllContinueAcrossAMove(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	widgetsV2 := resource("example.com", "v2", "widgets")
	gr := widgets.GVR.GroupResource()
	want := serve(e.mode.server(widgets.GVR), "o", 0, 5)
	serve(e.mode.server(widgetsV2.GVR), "o", 0, 5)
	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	require.NoError(t, wa.WaitForSync(ctx))
	require.NoError(t, wa.AddIndex("name", "{.metadata.name}"))

	q := query.Query{Conditions: []query.Condition{query.Has("name")}, SortBy: "name", Descending: true, Limit: 2}
	var got []string
	res, err := wa.QueryItems(ctx, q)
	require.NoError(t, err)
	for _, it := range res.Items {
		got = append(got, it.Key())
	}
	require.NotEmpty(t, res.Continue)

	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
	eventually(t, func() bool {
		inf, ok := wa.Informer(gr)
		return ok && inf.Key().GVR.Version == "v2" && slices.Contains(inf.IndexNames(), "name")
	}, "moved to v2")
	require.NoError(t, wa.WaitForSync(ctx))
	for q.Continue = res.Continue; q.Continue != ""; q.Continue = res.Continue {
		res, err = wa.QueryItems(ctx, q)
		require.NoError(t, err, "a page after the move")
		for _, it := range res.Items {
			got = append(got, it.Key())
		}
	}
	slices.Reverse(want)
	assert.Equal(t, want, got)
}
