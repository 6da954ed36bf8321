package informer

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/query"
)

// Every callback kindex calls is recovered, counted and logged once; nil callbacks are
// refused where they are passed.
func TestCallbacksCannotCrash(t *testing.T) {
	ctx := context.Background()

	t.Run("nil callbacks are refused at the call", func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		_, err := e.f.SubscribeStatus(nil)
		assert.ErrorIs(t, err, ErrNilCallback)
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		_, err = inf.AddEventHandler(nil)
		assert.ErrorIs(t, err, ErrNilCallback)
		var typedNil *cache.ResourceEventHandlerFuncs
		_, err = inf.AddEventHandler(typedNil)
		assert.ErrorIs(t, err, ErrNilCallback)
		ws, err := e.f.WatchAll(ctx, discovery.Filter{})
		require.NoError(t, err)
		defer ws.Stop()
		_, err = ws.AddEventHandler(nil)
		assert.ErrorIs(t, err, ErrNilCallback)
	})

	t.Run("nil options and registrations are no-ops", func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		var unset Option // a caller's option set only in some cases
		inf, err := e.f.Informer(ctx, "widgets", unset, WithNamespace("a"), nil)
		require.NoError(t, err)
		defer inf.Release()
		assert.Equal(t, "a", inf.Key().Namespace)
		ws, err := e.f.WatchAll(ctx, discovery.Filter{}, nil)
		require.NoError(t, err)
		defer ws.Stop()
		ws.RemoveEventHandler(nil)
		other, err := e.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"widgets"}})
		require.NoError(t, err)
		defer other.Stop()
		var calls atomic.Int32
		reg, err := ws.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler {
			calls.Add(1)
			return cache.ResourceEventHandlerFuncs{}
		})
		require.NoError(t, err)
		other.RemoveEventHandler(reg) // another set's registration: nothing happens
		require.NoError(t, ws.WaitForSync(ctx))
		eventually(t, reg.HasSynced, "the registration is still in place")
	})

	t.Run("a panicking status subscriber", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		e := newEnv(t, Options[obj]{Registerer: reg})
		_, err := e.f.SubscribeStatus(func(Status) { panic("subscriber bug") })
		require.NoError(t, err)
		var seen atomic.Int32
		_, err = e.f.SubscribeStatus(func(Status) { seen.Add(1) })
		require.NoError(t, err)
		for _, r := range []string{"widgets", "gadgets"} {
			inf, err := e.f.Informer(ctx, r)
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
		}
		eventually(t, func() bool { return seen.Load() >= 2 }, "the other subscriber still gets every status")
		eventually(t, func() bool { return gather(t, reg)[`kindex_callback_failures_total{callback="status"}`] >= 2 }, "counted")
		assert.Equal(t, 1, e.logs.count("Status subscriber panicked"), "logged once:\n%s", e.logs)
	})

	t.Run("transforms that fail, panic or return nil keep the object as received", func(t *testing.T) {
		for name, fn := range map[string]func(obj) (obj, error){
			"nil":   func(obj) (obj, error) { return nil, nil },
			"panic": func(obj) (obj, error) { panic("transform bug") },
			// A result built afresh without the metadata, or renamed: it would be cached
			// under another key, replacing whatever is there, and the object would be
			// missing.
			"no metadata": func(obj) (obj, error) { return &metav1.PartialObjectMetadata{}, nil },
			"renamed": func(o obj) (obj, error) {
				n := o.DeepCopy()
				n.Name += "-x"
				return n, nil
			},
			"renamed in place": func(o obj) (obj, error) {
				o.Name += "-x"
				return o, nil
			},
			"moved in place, then failed": func(o obj) (obj, error) {
				o.Namespace = "elsewhere"
				return nil, errors.New("transform bug")
			},
		} {
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, Options[obj]{Transform: fn})
				srv := e.mode.server(widgets.GVR)
				srv.add(newObj("ns", "a", map[string]string{"k": "v"}))
				srv.add(newObj("ns", "b", nil))
				inf, err := e.f.Informer(ctx, "widgets")
				require.NoError(t, err)
				defer inf.Release()
				require.NoError(t, inf.WaitForSync(ctx))
				o, err := inf.Get("ns", "a")
				require.NoError(t, err)
				assert.Equal(t, map[string]string{"k": "v"}, o.Labels)
				n, err := inf.Count(ctx, query.Query{})
				require.NoError(t, err)
				assert.Equal(t, 2, n, "both objects cached under their own keys")
				assert.Nil(t, o.ManagedFields, "kindex's own strip still ran")
				st := inf.Status()
				assert.GreaterOrEqual(t, st.CallbackErrors, int64(2))
				require.Error(t, st.LastCallbackError)
				assert.Equal(t, 1, e.logs.count("Transform failed"), "logged once:\n%s", e.logs)
			})
		}
	})

	t.Run("a panicking handler", func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		srv := e.mode.server(widgets.GVR)
		for _, n := range []string{"a", "b", "c"} {
			srv.add(newObj("ns", n, nil))
		}
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		rec := newRecorder()
		_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("handler bug") }})
		require.NoError(t, err)
		_, err = inf.AddEventHandler(rec)
		require.NoError(t, err)
		require.NoError(t, inf.WaitForSync(ctx))
		eventually(t, func() bool { return inf.Status().CallbackErrors == 3 }, "each panic counted: %v", inf.Status().CallbackErrors)
		var pe *PanicError
		require.ErrorAs(t, inf.Status().LastCallbackError, &pe)
		assert.Equal(t, "handler bug", pe.Value)
		assert.Equal(t, 1, e.logs.count("Event handler panicked"), "logged once:\n%s", e.logs)
		eventually(t, func() bool { return rec.addCount() == 3 }, "the other handler got everything")
	})

	t.Run("a panicking WatchAll handler factory", func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
		e.mode.server(gadgets.GVR).add(newObj("ns", "b", nil))
		ws, err := e.f.WatchAll(ctx, discovery.Filter{})
		require.NoError(t, err)
		defer ws.Stop()
		rec := newRecorder()
		_, err = ws.AddEventHandler(func(r discovery.Resource) cache.ResourceEventHandler {
			if r.GVR == widgets.GVR {
				panic("factory bug")
			}
			return rec
		})
		require.NoError(t, err)
		require.NoError(t, ws.WaitForSync(ctx))
		eventually(t, func() bool { return rec.addCount() == 1 }, "the other member got its handler")
		inf, ok := ws.Informer(widgets.GVR.GroupResource())
		require.True(t, ok)
		eventually(t, func() bool { return inf.Status().CallbackErrors == 1 }, "counted on the member: %v", inf.Status().CallbackErrors)
		var pe *PanicError
		require.ErrorAs(t, inf.Status().LastCallbackError, &pe)
		assert.Equal(t, "factory bug", pe.Value)
		assert.Equal(t, 1, e.logs.count("WatchAll handler factory panicked"), "logged once:\n%s", e.logs)
	})

	t.Run("what a callback panicked with is visible to errors.Is and errors.As", func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(ctx))
		_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
			var m map[string]int
			m["x"] = 1 // a runtime error
		}})
		require.NoError(t, err)
		eventually(t, func() bool { return inf.Status().CallbackErrors == 1 }, "counted")
		var re runtime.Error
		assert.ErrorAs(t, inf.Status().LastCallbackError, &re, "a handler's runtime error")

		errBug := errors.New("index bug")
		require.NoError(t, inf.AddIndexFunc("boom", func(any) ([]string, error) { panic(errBug) }))
		st, err := inf.IndexStats("boom")
		require.NoError(t, err)
		assert.Equal(t, int64(1), st.Errors)
		assert.ErrorIs(t, st.LastError, errBug, "an index function's panic with an error")
	})
}

// Once a status subscription's unsubscribe has returned, its function is not called again:
// a subscriber that unsubscribes and then frees what its function uses (closes its
// channel) must not be called once more with a status already being delivered to others.
func TestUnsubscribedStatusSubscriberIsNotCalledAgain(t *testing.T) {
	t.Run("removed while another subscriber is called", func(t *testing.T) {
		// Subscribers are called in no particular order: repeated, the one being removed is
		// behind the blocked one about half the time.
		for range 20 {
			h := newHub(func(error) {})
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			h.subscribe(func(Status) {
				once.Do(func() { close(entered) })
				<-release
			})
			var unsubscribed, late atomic.Bool
			unsub := h.subscribe(func(Status) {
				if unsubscribed.Load() {
					late.Store(true)
				}
			})
			h.publish(Status{})
			<-entered
			unsub()
			unsubscribed.Store(true)
			close(release)
			h.close()
			require.False(t, late.Load(), "called after its unsubscribe returned")
		}
	})

	t.Run("removed during its own call, from another goroutine", func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		var finished atomic.Bool
		unsub, err := e.f.SubscribeStatus(func(Status) {
			once.Do(func() {
				close(entered)
				<-release
				finished.Store(true)
			})
		})
		require.NoError(t, err)
		var releaseOnce sync.Once
		defer releaseOnce.Do(func() { close(release) }) // a failure must not leave the call blocked
		inf, err := e.f.Informer(context.Background(), "widgets")
		require.NoError(t, err)
		defer inf.Release()
		<-entered
		returned := make(chan bool, 1)
		go func() {
			unsub()
			returned <- finished.Load()
		}()
		select {
		case done := <-returned:
			t.Fatalf("unsubscribe returned during the call (call finished: %v)", done)
		case <-time.After(100 * time.Millisecond): // it waits for the call, as it should
		}
		releaseOnce.Do(func() { close(release) })
		assert.True(t, <-returned, "unsubscribe returned once the call had")
		unsub() // idempotent
	})
}
