package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/query"
)

// reentry is a careless caller: from inside a callback kindex makes, it calls the public
// methods a user would plausibly call there, and records what went wrong. A call that does
// not return within hangAfter is a deadlock: the test binary panics with every goroutine's
// stack, since a hung callback cannot be recovered from.
type reentry struct {
	f   *Factory[obj]
	inf atomic.Pointer[Informer[obj]] // the informer whose callback calls back

	// mayRefuse: the callback is an index function, from which a call that would wait for
	// the informer's locks returns ErrCalledFromCallback; refused records those calls.
	mayRefuse bool

	mu       sync.Mutex
	doing    string
	failures []string
	refused  map[string]bool
	runs     int
}

const hangAfter = 12 * time.Second

// startWidgets starts a factory of opts with widget a and gadget g on its fake servers, and
// the informer of widgets (released as the test ends) with an index "name" and a recorder of
// its events, for r's callbacks to call.
func (r *reentry) startWidgets(t *testing.T, opts Options[obj]) (*fakeServer, *Informer[obj], *recorder) {
	e := newEnv(t, opts)
	r.f = e.f
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	e.mode.server(gadgets.GVR).add(newObj("ns", "g", nil))
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	r.inf.Store(inf)
	rec := newRecorder()
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	return srv, inf, rec
}

// newReentry returns an armed reentry (arm); set f before callbacks run.
func newReentry(t *testing.T) *reentry {
	r := &reentry{}
	r.arm(t)
	return r
}

// step runs one call, recording its unexpected error: any error, but ErrCalledFromCallback
// from an index function (mayRefuse), which is recorded as refused.
func (r *reentry) step(where, name string, fn func() error) {
	r.mu.Lock()
	r.doing = where + ": " + name
	r.mu.Unlock()
	if err := fn(); err != nil {
		r.mu.Lock()
		if r.mayRefuse && errors.Is(err, ErrCalledFromCallback) {
			if r.refused == nil {
				r.refused = map[string]bool{}
			}
			r.refused[name] = true
		} else {
			r.failures = append(r.failures, fmt.Sprintf("%s: %s: %v", where, name, err))
		}
		r.mu.Unlock()
	}
}

// refusedCalls returns the calls refused with ErrCalledFromCallback, sorted.
func (r *reentry) refusedCalls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.refused))
}

// arm fails the binary if the test, its cleanups included, has not ended within hangAfter:
// a callback that deadlocks also hangs the factory's Shutdown. Call it before anything
// registers a cleanup, so that its own cleanup runs last.
func (r *reentry) arm(t *testing.T) {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		select {
		case <-stop:
		case <-time.After(hangAfter):
			buf := make([]byte, 4<<20)
			n := runtime.Stack(buf, true)
			r.mu.Lock()
			doing := r.doing
			r.mu.Unlock()
			panic(fmt.Sprintf("deadlock: %s did not end within %v; last call from a callback: %s\n\n%s", t.Name(), hangAfter, doing, buf[:n]))
		}
	}()
}

func (r *reentry) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Empty(t, r.failures)
}

// shortCtx is a context whose deadline turns a wait that cannot end into an error.
func shortCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 300*time.Millisecond)
}

// syncedOrDeadline accepts what a WaitForSync may answer from a callback: synced, or the
// context's deadline (a wait that cannot end while the callback runs).
func syncedOrDeadline(err error) error {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// everything makes every non-terminal call on the informer and its factory: reads, index
// and handler registrations made and undone, status subscriptions, rechecks, waits, and an
// informer of another resource started, waited for and released.
func (r *reentry) everything(where string) {
	r.mu.Lock()
	r.runs++
	r.mu.Unlock()
	inf := r.inf.Load()
	ctx := context.Background()
	if inf != nil {
		r.step(where, "Query", func() error {
			_, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "a")}})
			return err
		})
		r.step(where, "QueryItems", func() error { _, err := inf.QueryItems(ctx, query.Query{Scan: true}); return err })
		r.step(where, "Count", func() error { _, err := inf.Count(ctx, query.Query{}); return err })
		r.step(where, "List", func() error { _, err := inf.List(nil); return err })
		r.step(where, "ListItems", func() error { _, err := inf.ListItems(""); return err })
		r.step(where, "CountBy", func() error { _, err := inf.CountBy(ctx, query.Query{}, "name"); return err })
		r.step(where, "Namespace.List", func() error { _, err := inf.Namespace("ns").List(nil); return err })
		r.step(where, "GetItem", func() error {
			if _, err := inf.GetItem("ns", "no-such"); err != nil && !isNotFound(err) {
				return err
			}
			return nil
		})
		r.step(where, "Get", func() error {
			if _, err := inf.Get("ns", "no-such"); errors.Is(err, ErrCalledFromCallback) {
				return err
			} else if !isNotFound(err) {
				return fmt.Errorf("want NotFound, got %v", err)
			}
			return nil
		})
		r.step(where, "Status", func() error { _ = inf.Status(); _ = inf.HasSynced(); return nil })
		r.step(where, "IndexNames", func() error {
			if names := inf.IndexNames(); !slices.Contains(names, "name") {
				return fmt.Errorf("IndexNames without name: %v", names)
			}
			return nil
		})
		r.step(where, "IndexStats", func() error { _, err := inf.IndexStats("name"); return err })
		r.step(where, "AddIndex/RemoveIndex", func() error {
			if err := inf.AddIndex("reentry", "{.metadata.namespace}"); err != nil {
				return err
			}
			return inf.RemoveIndex("reentry")
		})
		r.step(where, "AddEventHandler/RemoveEventHandler", func() error {
			reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
			if err != nil {
				return err
			}
			return inf.RemoveEventHandler(reg)
		})
		r.step(where, "Registrations", func() error { _ = inf.Registrations(); return nil })
		r.step(where, "Recheck", func() error { inf.Recheck(); return nil })
		r.step(where, "WaitForSync", func() error {
			ctx, cancel := shortCtx()
			defer cancel()
			return syncedOrDeadline(inf.WaitForSync(ctx))
		})
		r.step(where, "WaitForSyncOrPark", func() error {
			ctx, cancel := shortCtx()
			defer cancel()
			return syncedOrDeadline(inf.WaitForSyncOrPark(ctx))
		})
	}
	r.step(where, "Statuses", func() error { _ = r.f.Statuses(); return nil })
	r.step(where, "SubscribeStatus/unsubscribe", func() error {
		unsub, err := r.f.SubscribeStatus(func(Status) {})
		if err != nil {
			return err
		}
		unsub()
		return nil
	})
	r.step(where, "Factory.Recheck", func() error { r.f.Recheck(); return nil })
	r.step(where, "Dependents", func() error { _, err := r.f.Dependents(ctx, "no-such-uid"); return err })
	r.step(where, "Factory.WaitForSync", func() error {
		ctx, cancel := shortCtx()
		defer cancel()
		return syncedOrDeadline(r.f.WaitForSync(ctx))
	})
	r.step(where, "ForResource(other)/WaitForSync/Release", func() error {
		other, err := r.f.ForResource(gadgets)
		if err != nil {
			return err
		}
		defer other.Release()
		ctx, cancel := shortCtx()
		defer cancel()
		return syncedOrDeadline(other.WaitForSync(ctx))
	})
}

// churn adds, updates and deletes an object of widgets, so that every kind of event and
// callback happens, and adds another: the informer ends with a and c.
func churn(srv *fakeServer) {
	srv.add(newObj("ns", "b", nil))
	srv.update(newObj("ns", "b", map[string]string{"v": "2"}))
	srv.remove(newObj("ns", "b", nil))
	srv.add(newObj("ns", "c", nil))
}

// settled waits until the watcher handler has seen the end state of churn and every
// callback has run at least runs times.
func settled(t *testing.T, r *reentry, inf *Informer[obj], rec *recorder, runs int) {
	t.Helper()
	eventually(t, func() bool {
		r.mu.Lock()
		n := r.runs
		r.mu.Unlock()
		return n >= runs && rec.addCount() >= 3 && rec.deleted("ns/b")
	}, "every callback ran and the witness saw every event")
	_, err := inf.Get("ns", "c")
	require.NoError(t, err, "no event lost")
	_, err = inf.Get("ns", "b")
	require.True(t, isNotFound(err), "no event lost: %v", err)
}

// TestHandlersMayCallBack: event handlers (of objects and of Items) call every public
// method from their Add, Update and Delete.
func TestHandlersMayCallBack(t *testing.T) {
	for name, mk := range map[string]func(r *reentry) cache.ResourceEventHandler{
		"objects": func(r *reentry) cache.ResourceEventHandler {
			return cache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { r.everything("OnAdd") },
				UpdateFunc: func(_, _ any) { r.everything("OnUpdate") },
				DeleteFunc: func(any) { r.everything("OnDelete") },
			}
		},
		"items": func(r *reentry) cache.ResourceEventHandler {
			return ItemHandlerFuncs[obj]{
				AddFunc:    func(Item[obj], bool) { r.everything("item AddFunc") },
				UpdateFunc: func(_, _ Item[obj]) { r.everything("item UpdateFunc") },
				DeleteFunc: func(Item[obj], bool) { r.everything("item DeleteFunc") },
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newReentry(t)
			srv, inf, rec := r.startWidgets(t, Options[obj]{})
			_, err := inf.AddEventHandler(mk(r))
			require.NoError(t, err)
			require.NoError(t, inf.WaitForSync(context.Background()))
			churn(srv)
			settled(t, r, inf, rec, 5)
			r.check(t)
		})
	}
}

// TestStatusSubscribersMayCallBack: a status subscriber calls every public method, and
// unsubscribes itself; the other subscribers keep getting every status.
func TestStatusSubscribersMayCallBack(t *testing.T) {
	r := newReentry(t)
	e := newEnv(t, Options[obj]{})
	r.f = e.f
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	e.mode.server(gadgets.GVR).add(newObj("ns", "g", nil))
	var unsubSelf func()
	var unsubOnce sync.Once
	ready := make(chan struct{})
	left := make(chan struct{}) // the third call has made its calls and unsubscribed
	var calls atomic.Int32
	unsub, err := e.f.SubscribeStatus(func(st Status) {
		<-ready
		// Each run of everything starts and stops an informer of gadgets: statuses keep
		// coming until the subscriber leaves.
		switch n := calls.Add(1); {
		case n < 3:
			r.everything("status subscriber")
		case n == 3:
			r.everything("status subscriber")
			unsubOnce.Do(unsubSelf)
			close(left)
		default:
			r.step("status subscriber", "not called after unsubscribing", func() error { return fmt.Errorf("called with %v", st) })
		}
	})
	require.NoError(t, err)
	unsubSelf = unsub
	var witness atomic.Int32
	_, err = e.f.SubscribeStatus(func(st Status) {
		if st.Key.GVR == widgets.GVR && st.Phase == PhaseStopped {
			witness.Add(1)
		}
	})
	require.NoError(t, err)
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	r.inf.Store(inf)
	close(ready)
	require.NoError(t, inf.WaitForSync(context.Background()))
	// Released once the subscriber's calls are over (the watchdog of arm reports a hang):
	// a release during them would fail them.
	<-left
	inf.Release()
	eventually(t, func() bool { return witness.Load() == 1 }, "the other subscriber saw the informer stop")
	r.check(t)
}

// TestTransformMayCallBack: the factory's Transform, called on the reflector's goroutine
// for each object received, calls every public method.
func TestTransformMayCallBack(t *testing.T) {
	r := newReentry(t)
	var runs atomic.Int32
	srv, inf, rec := r.startWidgets(t, Options[obj]{Transform: func(o obj) (obj, error) {
		if o.Name != "g" && r.f != nil && runs.Add(1) <= 3 {
			r.everything("Transform")
		}
		return o, nil
	}})
	require.NoError(t, inf.WaitForSync(context.Background()))
	churn(srv)
	settled(t, r, inf, rec, 3)
	r.check(t)
}

// calledFromIndexFunc are the calls an index function gets ErrCalledFromCallback for: each
// would wait for a lock the function's caller holds (the cache's, the processing loop's,
// the index set's). Every other call works.
var calledFromIndexFunc = []string{
	"AddEventHandler/RemoveEventHandler", "AddIndex/RemoveIndex", "Count", "CountBy", "Dependents", "Get", "GetItem",
	"IndexStats", "List", "ListItems", "Namespace.List", "Query", "QueryItems",
}

// TestIndexFuncsMayCallBack: index functions (of objects and of Items), run while an
// object is indexed (on AddIndex for what is cached, then on every change), call every
// public method: those that would wait for the informer's locks return
// ErrCalledFromCallback at once, the others work, and the informer goes on (a second
// handler sees every event, the cache ends as the server's objects).
func TestIndexFuncsMayCallBack(t *testing.T) {
	for name, add := range map[string]func(inf *Informer[obj], r *reentry) error{
		"objects": func(inf *Informer[obj], r *reentry) error {
			return inf.AddIndexFunc("fn", func(any) ([]string, error) { r.everything("IndexFunc"); return []string{"x"}, nil })
		},
		"items": func(inf *Informer[obj], r *reentry) error {
			return inf.AddItemIndexFunc("fn", func(Item[obj]) ([]string, error) {
				r.everything("ItemIndexFunc")
				return []string{"x"}, nil
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newReentry(t)
			r.mayRefuse = true
			srv, inf, rec := r.startWidgets(t, Options[obj]{})
			require.NoError(t, inf.WaitForSync(context.Background()))
			require.NoError(t, add(inf, r))
			assert.Equal(t, calledFromIndexFunc, r.refusedCalls(), "refused from the backfill of AddIndex")
			churn(srv)
			settled(t, r, inf, rec, 4)
			n, err := inf.Count(context.Background(), query.Query{Conditions: []query.Condition{query.Eq("fn", "x")}})
			require.NoError(t, err)
			assert.Equal(t, 2, n, "a and c indexed")
			assert.Equal(t, []string{"ns/a", "ns/c"}, cachedKeys(t, inf), "the cache is the server's objects")
			assert.Equal(t, calledFromIndexFunc, r.refusedCalls())
			st, err := inf.IndexStats("fn")
			require.NoError(t, err)
			assert.Zero(t, st.Errors, "no index function failed")
			r.check(t)
		})
	}
}

// TestIndexFuncMayStopWatchAll: an index function of an informer that is also a member of
// a watch-all set queries the set (refused: the member's cache is locked) and stops it; the
// call returns and the informer goes on.
func TestIndexFuncMayStopWatchAll(t *testing.T) {
	r := newReentry(t)
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	t.Cleanup(ws.Stop)
	eventually(t, func() bool { _, ok := ws.Informer(widgets.GVR.GroupResource()); return ok }, "widgets joined the set")
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	var countErr, countByErr error
	returned := make(chan struct{})
	require.NoError(t, inf.AddIndexFunc("fn", func(o any) ([]string, error) {
		if o.(obj).Name == "trigger" {
			r.step("index function", "WatchAll.Count/Stop", func() error {
				_, countErr = ws.Count(ctx, query.Query{})
				_, countByErr = ws.CountBy(ctx, query.Query{}, "fn")
				ws.Stop()
				return nil
			})
			close(returned)
		}
		return nil, nil
	}))
	srv.add(newObj("ns", "trigger", nil))
	<-returned // the armed watchdog reports a deadlock
	assert.ErrorIs(t, countErr, ErrCalledFromCallback)
	assert.ErrorIs(t, countByErr, ErrCalledFromCallback)
	srv.add(newObj("ns", "after", nil))
	eventually(t, func() bool { _, err := inf.Get("ns", "after"); return err == nil }, "the informer goes on")
	assert.Equal(t, []string{"ns/a", "ns/after", "ns/trigger"}, cachedKeys(t, inf))
	r.check(t)
}

// cachedKeys returns the keys of the informer's objects, sorted.
func cachedKeys(t *testing.T, inf *Informer[obj]) []string {
	t.Helper()
	items, err := inf.ListItems("")
	require.NoError(t, err)
	keys := make([]string, 0, len(items))
	for _, it := range items {
		keys = append(keys, it.Key())
	}
	slices.Sort(keys)
	return keys
}

// terminal is a callback kind that ends its informer or its factory from inside: install
// sets the callback up on inf (or f) so that it calls end once, from inside.
type terminal struct {
	opts func(end func()) Options[obj]
	// early runs before the informer exists (a status subscriber must see it sync: statuses
	// are not replayed), install after.
	early   func(t *testing.T, f *Factory[obj], end func())
	install func(t *testing.T, f *Factory[obj], inf *Informer[obj], end func())
}

func terminals() map[string]terminal {
	once := func(end func()) func() { var o sync.Once; return func() { o.Do(end) } }
	return map[string]terminal{
		"transform": {opts: func(end func()) Options[obj] {
			end = once(end)
			return Options[obj]{Transform: func(o obj) (obj, error) {
				if o.Name == "trigger" {
					end()
				}
				return o, nil
			}}
		}},
		"index function": {install: func(t *testing.T, _ *Factory[obj], inf *Informer[obj], end func()) {
			end = once(end)
			require.NoError(t, inf.AddIndexFunc("fn", func(o any) ([]string, error) {
				if o.(obj).Name == "trigger" {
					end()
				}
				return nil, nil
			}))
		}},
		// The function ends the informer from AddIndex's own indexing of the cache, on the
		// caller's goroutine.
		"index function on AddIndex": {install: func(t *testing.T, _ *Factory[obj], inf *Informer[obj], end func()) {
			end = once(end)
			require.NoError(t, inf.WaitForSync(context.Background()))
			require.NoError(t, inf.AddIndexFunc("fn", func(o any) ([]string, error) {
				if o.(obj).Name == "a" {
					end()
				}
				return nil, nil
			}))
		}},
		"handler": {install: func(t *testing.T, _ *Factory[obj], inf *Informer[obj], end func()) {
			end = once(end)
			_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { end() }})
			if err != nil {
				require.ErrorIs(t, err, ErrReleased) // ended before AddEventHandler returned
			}
		}},
		"item handler": {install: func(t *testing.T, _ *Factory[obj], inf *Informer[obj], end func()) {
			end = once(end)
			_, err := inf.AddEventHandler(ItemHandlerFuncs[obj]{AddFunc: func(Item[obj], bool) { end() }})
			if err != nil {
				require.ErrorIs(t, err, ErrReleased)
			}
		}},
		"status subscriber": {early: func(t *testing.T, f *Factory[obj], end func()) {
			end = once(end)
			_, err := f.SubscribeStatus(func(st Status) {
				if st.Key.GVR == widgets.GVR && st.Phase == PhaseSynced {
					end()
				}
			})
			require.NoError(t, err)
		}},
		// A watch-all set holds its own reference to widgets: its callbacks stop the set
		// from inside before they end the test's reference.
		"WatchAll handler factory": {install: func(t *testing.T, f *Factory[obj], _ *Informer[obj], end func()) {
			ws, err := f.WatchAll(context.Background(), discovery.Filter{})
			require.NoError(t, err)
			t.Cleanup(ws.Stop)
			inner := end
			end = once(func() { ws.Stop(); inner() })
			_, err = ws.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler { end(); return cache.ResourceEventHandlerFuncs{} })
			require.NoError(t, err)
		}},
		"WatchAll handler": {install: func(t *testing.T, f *Factory[obj], _ *Informer[obj], end func()) {
			ws, err := f.WatchAll(context.Background(), discovery.Filter{})
			require.NoError(t, err)
			t.Cleanup(ws.Stop)
			inner := end
			end = once(func() { ws.Stop(); inner() })
			_, err = ws.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler {
				return cache.ResourceEventHandlerFuncs{AddFunc: func(any) { end() }}
			})
			require.NoError(t, err)
		}},
	}
}

// TestCallbacksMayReleaseOrShutdown: every callback may release the informer's last
// reference, or shut its factory down, from inside; the call returns, and the informer
// ends stopped.
func TestCallbacksMayReleaseOrShutdown(t *testing.T) {
	for name, tc := range terminals() {
		for _, how := range []string{"Release", "Shutdown"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				r := newReentry(t)
				var inf *Informer[obj]
				var f *Factory[obj]
				ready := make(chan struct{})
				returned := make(chan struct{})
				end := func() {
					<-ready
					r.step(name, how, func() error {
						if how == "Release" {
							inf.Release()
						} else {
							f.Shutdown()
						}
						return nil
					})
					close(returned)
				}
				var opts Options[obj]
				if tc.opts != nil {
					opts = tc.opts(end)
				}
				e := newEnv(t, opts)
				f = e.f
				srv := e.mode.server(widgets.GVR)
				srv.add(newObj("ns", "a", nil))
				if tc.early != nil {
					tc.early(t, e.f, end)
				}
				var err error
				inf, err = e.f.Informer(context.Background(), "widgets")
				require.NoError(t, err)
				close(ready)
				if tc.install != nil {
					tc.install(t, e.f, inf, end)
				}
				srv.add(newObj("ns", "trigger", nil))
				select {
				case <-returned:
				case <-time.After(hangAfter / 2):
					r.mu.Lock()
					r.doing += " (did not return)"
					r.mu.Unlock()
					<-returned // the armed watchdog reports the deadlock
				}
				eventually(t, func() bool { return inf.Status().Phase == PhaseStopped }, "stopped")
				_, err = inf.List(nil)
				if how == "Release" {
					assert.ErrorIs(t, err, ErrReleased)
				} else {
					assert.ErrorIs(t, err, ErrShutdown)
					_, err := e.f.Informer(context.Background(), "gadgets")
					assert.ErrorIs(t, err, ErrShutdown)
				}
				r.check(t)
			})
		}
	}
}

// TestConcurrentUseWhileObjectsChange: several goroutines query, add and remove indexes
// and handlers, and take and release references while the objects change; run with -race.
// Every handler that stays registered ends with the informer's final state.
func TestConcurrentUseWhileObjectsChange(t *testing.T) {
	r := newReentry(t)
	e := newEnv(t, Options[obj]{})
	r.f = e.f
	srv := e.mode.server(widgets.GVR)
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	witness := newRecorder()
	_, err = inf.AddEventHandler(witness)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))

	const objects, workers, rounds = 50, 4, 40
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				where := fmt.Sprint("worker ", w)
				r.step(where, "Query", func() error {
					_, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Has("name")}})
					return err
				})
				name := fmt.Sprint("w", w)
				r.step(where, "AddIndex/RemoveIndex", func() error {
					if err := inf.AddIndex(name, "{.metadata.labels.v}"); err != nil {
						return err
					}
					_, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Has(name)}})
					return errors.Join(err, inf.RemoveIndex(name))
				})
				r.step(where, "AddEventHandler/RemoveEventHandler", func() error {
					reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
					if err != nil {
						return err
					}
					return inf.RemoveEventHandler(reg)
				})
				r.step(where, "Informer/Release", func() error {
					other, err := e.f.Informer(ctx, "widgets")
					if err != nil {
						return err
					}
					_, err = other.AddEventHandler(cache.ResourceEventHandlerFuncs{})
					other.Release()
					return err
				})
			}
		})
	}
	for round := range rounds {
		for i := range objects {
			o := newObj("ns", fmt.Sprint("o", i), map[string]string{"v": fmt.Sprint(round)})
			if round == 0 {
				srv.add(o)
			} else {
				srv.update(o)
			}
		}
	}
	for i := range objects / 2 {
		srv.remove(newObj("ns", fmt.Sprint("o", i), nil))
	}
	eventually(t, func() bool { return len(must(inf.List(nil))) == objects/2 && witness.deleted("ns/o0") }, "every change applied")
	close(stop)
	wg.Wait()
	n, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Has("name")}})
	require.NoError(t, err)
	assert.Equal(t, objects/2, n)
	assert.Equal(t, []string{"name"}, inf.IndexNames(), "every worker's index removed")
	assert.Len(t, inf.Registrations(), 1, "every worker's handler removed")
	eventually(t, func() bool { return witness.addCount() == objects }, "the witness saw every add")
	r.check(t)
}

// TestShutdownWaitsForReleaseFromCallback: a Release made from the informer's own
// Transform or index function finishes on a goroutine of its own once the callback has
// returned (its removals need locks the callback holds). Shutdown waits for that goroutine:
// once Shutdown returns, the release is done (the informer removed from the registry) and
// nothing of it runs on. The goroutine is held at its start (hooks.CallbackRelease) until
// every other goroutine of the test is blocked: Shutdown must be one of them, not done.
func TestShutdownWaitsForReleaseFromCallback(t *testing.T) {
	type setup struct {
		opts func(release func()) Options[obj]
		// install sets the callback up on inf; the test then adds widget "trigger", or
		// before the informer with cachedFirst.
		install     func(t *testing.T, inf *Informer[obj], release func())
		cachedFirst bool
	}
	onTrigger := func(release func()) func(o any) ([]string, error) {
		return func(o any) ([]string, error) {
			if o.(obj).Name == "trigger" {
				release()
			}
			return nil, nil
		}
	}
	for name, tc := range map[string]setup{
		"transform": {opts: func(release func()) Options[obj] {
			return Options[obj]{Transform: func(o obj) (obj, error) {
				if o.Name == "trigger" {
					release()
				}
				return o, nil
			}}
		}},
		"index function": {install: func(t *testing.T, inf *Informer[obj], release func()) {
			require.NoError(t, inf.AddIndexFunc("fn", onTrigger(release)))
		}},
		// The function releases from AddIndex's own indexing of the cache, which holds the
		// trigger already, on the caller's goroutine.
		"index function on AddIndex": {cachedFirst: true, install: func(t *testing.T, inf *Informer[obj], release func()) {
			require.NoError(t, inf.WaitForSync(context.Background()))
			_ = inf.AddIndexFunc("fn", onTrigger(release)) // released from inside: may say so
		}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started, gate := make(chan struct{}), make(chan struct{})
				var inf atomic.Pointer[Informer[obj]]
				var once sync.Once
				release := func() { once.Do(func() { inf.Load().Release() }) }
				var opts Options[obj]
				if tc.opts != nil {
					opts = tc.opts(release)
				}
				e := newEnvWith(t, opts, hooks{CallbackRelease: func() { close(started); <-gate }})
				srv := e.mode.server(widgets.GVR)
				srv.add(newObj("ns", "a", nil))
				if tc.cachedFirst {
					srv.add(newObj("ns", "trigger", nil))
				}
				i, err := e.f.Informer(context.Background(), "widgets")
				require.NoError(t, err)
				inf.Store(i)
				if tc.install != nil {
					tc.install(t, i, release)
				}
				if !tc.cachedFirst {
					srv.add(newObj("ns", "trigger", nil))
				}
				<-started
				shutdown := make(chan struct{})
				go func() {
					e.f.Shutdown()
					close(shutdown)
				}()
				synctest.Wait()
				select {
				case <-shutdown:
					t.Error("Shutdown returned before the Release made from the callback was done")
				default:
				}
				close(gate)
				<-shutdown
				assert.Empty(t, e.f.c.reg.all(), "the release was done when Shutdown returned")
			})
		})
	}
}
