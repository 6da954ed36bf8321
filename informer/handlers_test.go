package informer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
)

func TestSlowHandlerBlocksNobody(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "first", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	slow := newRecorder()
	slow.block = make(chan struct{})
	fast := newRecorder()
	slowReg, err := inf.AddEventHandler(slow)
	require.NoError(t, err)
	fastReg, err := inf.AddEventHandler(fast)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	const n = 200
	for i := range n {
		srv.add(newObj("ns", fmt.Sprint("o", i), nil))
	}
	eventually(t, func() bool { return len(must(inf.List(nil))) == n+1 }, "the store is not held back")
	eventually(t, func() bool { return fast.addCount() == n+1 }, "the fast handler is not held back")
	assert.True(t, fastReg.HasSynced())
	assert.False(t, slowReg.HasSynced(), "the blocked handler has not seen the initial state")
	assert.Equal(t, 0, slow.addCount())
	assert.GreaterOrEqual(t, slowReg.Backlog(), n)
	close(slow.block)
	eventually(t, func() bool { return slow.addCount() == n+1 }, "the slow handler catches up, in full")
	assert.True(t, slowReg.HasSynced())
}

func TestLateHandlerGetsReplayThenEvents(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.add(newObj("ns", "b", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))

	var initial atomic.Int32
	rec := newRecorder()
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, isInInitialList bool) {
			if isInInitialList {
				initial.Add(1)
			}
			rec.OnAdd(o, isInInitialList)
		},
		UpdateFunc: rec.OnUpdate,
		DeleteFunc: rec.OnDelete,
	})
	require.NoError(t, err)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), reg.HasSynced))
	assert.EqualValues(t, 2, initial.Load(), "cached objects replayed as initial adds")
	select {
	case <-reg.HasSyncedChecker().Done():
	default:
		t.Fatal("checker not done")
	}
	srv.add(newObj("ns", "c", nil))
	srv.update(newObj("ns", "a", map[string]string{"x": "1"}))
	srv.remove(newObj("ns", "b", nil))
	eventually(t, func() bool { return rec.addCount() == 3 && rec.deleted("ns/b") }, "events after the replay")
	assert.EqualValues(t, 2, initial.Load())

	require.NoError(t, inf.RemoveEventHandler(reg))
	srv.add(newObj("ns", "d", nil))
	eventually(t, func() bool { return len(must(inf.List(nil))) == 3 }, "applied")
	// Notifications are queued with the store write, under the lock that registration and
	// removal take: once d is stored, it was queued to every handler it will ever reach.
	assert.Equal(t, 3, rec.addCount(), "a removed handler hears nothing more")
}

// RemoveEventHandler of a registration made through another reference is an error and
// removes nothing, rather than a nil error while the handler keeps being called; removing
// one twice, or nil, does nothing.
func TestRemoveEventHandlerThroughAnotherReference(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	inf1, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf1.Release()
	inf2, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf2.Release()
	gadgetsInf, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer gadgetsInf.Release()
	rec := newRecorder()
	reg, err := inf1.AddEventHandler(rec)
	require.NoError(t, err)

	assert.ErrorIs(t, inf2.RemoveEventHandler(reg), ErrNotRegistered, "another reference of the informer")
	assert.ErrorIs(t, gadgetsInf.RemoveEventHandler(reg), ErrNotRegistered, "another informer")
	_, _, err = inf2.HandOffEventHandler(reg)
	assert.ErrorIs(t, err, ErrNotRegistered)
	srv.add(newObj("ns", "a", nil))
	eventually(t, func() bool { return rec.addCount() == 1 }, "the handler is still registered")

	require.NoError(t, inf1.RemoveEventHandler(reg))
	require.NoError(t, inf1.RemoveEventHandler(reg), "removed already: nothing to do")
	require.NoError(t, inf1.RemoveEventHandler(nil))
	_, _, err = inf1.HandOffEventHandler(reg)
	assert.ErrorIs(t, err, ErrNotRegistered, "removed already")
}

func TestHandlerPanicIsContained(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.add(newObj("ns", "b", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	var calls atomic.Int32
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		if calls.Add(1) == 1 {
			panic("handler bug")
		}
	}})
	require.NoError(t, err)
	eventually(t, func() bool { return calls.Load() == 2 }, "delivery continues after a panic")
	assert.Equal(t, 1, e.logs.count("Event handler panicked"))
}

func TestHandlerMayReleaseFromInside(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	done := make(chan struct{})
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		inf.Release()
		close(done)
	}})
	if err != nil { // the handler may release before AddEventHandler returns
		require.ErrorIs(t, err, ErrReleased)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Release from a handler deadlocked")
	}
	eventually(t, func() bool { return inf.Status().Phase == PhaseStopped }, "stopped")
}

func TestListGetNamespace(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("a", "x", map[string]string{"app": "web"}))
	srv.add(newObj("a", "y", map[string]string{"app": "db"}))
	srv.add(newObj("b", "x", map[string]string{"app": "web"}))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Len(t, must(inf.List(nil)), 3)
	assert.Len(t, must(inf.List(labels.SelectorFromSet(labels.Set{"app": "web"}))), 2)
	assert.ElementsMatch(t, []string{"x", "y"}, names(must(inf.Namespace("a").List(labels.Everything()))))
	got, err := inf.Namespace("b").Get("x")
	require.NoError(t, err)
	assert.Equal(t, "b", got.Namespace)
	assert.Empty(t, got.ManagedFields, "managedFields stripped by default")
	_, err = inf.Get("b", "y")
	assert.True(t, isNotFound(err), "%v", err)
}

func isNotFound(err error) bool {
	type notFound interface{ Status() metav1.Status }
	var nf notFound
	return errors.As(err, &nf) && nf.Status().Code == 404
}

func TestTransformComposition(t *testing.T) {
	t.Run("strip then caller", func(t *testing.T) {
		var sawManaged atomic.Bool
		e := newEnv(t, Options[obj]{Transform: func(o obj) (obj, error) {
			if o.ManagedFields != nil {
				sawManaged.Store(true)
			}
			o.Annotations = map[string]string{"transformed": "yes"}
			return o, nil
		}})
		e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(context.Background(), "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(context.Background()))
		o, err := inf.Get("ns", "a")
		require.NoError(t, err)
		assert.Equal(t, "yes", o.Annotations["transformed"], "the caller's transform applies")
		assert.Nil(t, o.ManagedFields, "kindex's strip applies too")
		assert.False(t, sawManaged.Load(), "kindex strips before the caller's transform runs")
	})
	t.Run("keep managed fields", func(t *testing.T) {
		e := newEnv(t, Options[obj]{KeepManagedFields: true})
		e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(context.Background(), "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(context.Background()))
		o, err := inf.Get("ns", "a")
		require.NoError(t, err)
		assert.Len(t, o.ManagedFields, 1)
	})
	t.Run("failing transform never drops an object", func(t *testing.T) {
		e := newEnv(t, Options[obj]{Transform: func(o obj) (obj, error) { return nil, errors.New("bad") }})
		e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(context.Background(), "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(context.Background()))
		o, err := inf.Get("ns", "a")
		require.NoError(t, err)
		assert.Nil(t, o.ManagedFields, "still stripped")
	})

}

// A listener delivers in order and drains on close(true); its queue's semantics are
// internal/mailbox's (tested there).
func TestListenerQueue(t *testing.T) {
	var got []int
	done := make(chan struct{})
	l := newListener(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		got = append(got, o.(int))
		if len(got) == 5000 {
			close(done)
		}
	}}, func(a any) (any, error) { return a, nil }, nil, testLogger(), nil)
	for i := range 5000 {
		l.add(notification{kind: noteAdd, obj: i})
	}
	<-done
	for i, v := range got {
		require.Equal(t, i, v, "in order")
	}
	l.add(notification{kind: noteAdd, obj: -1})
	l.close(true)
	<-l.done()
	assert.Equal(t, -1, got[len(got)-1], "drain delivers what was queued")
	assert.False(t, l.box.Push(notification{kind: noteAdd, obj: 2}), "after close: refused")
}

// WithEventHandler registers a handler before a new informer handles anything: the handler
// sees the first list and then each change as it happens, where a handler added once the
// informer has applied a change gets the object as it is then; on an informer that exists
// already it is AddEventHandler; Release removes it; nil and WatchAll are refused.
func TestWithEventHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.add(newObj("ns", "a", map[string]string{"v": "1"}))
		early := newRecorder()
		inf, err := e.f.Informer(ctx, "widgets", WithEventHandler(early))
		require.NoError(t, err)
		regs := inf.Registrations()
		require.Len(t, regs, 1, "registered when the call returns")
		synctest.Wait()
		require.NoError(t, inf.WaitForSync(ctx))
		srv.update(newObj("ns", "a", map[string]string{"v": "2"}))
		synctest.Wait()
		late := newRecorder()
		lateReg, err := inf.AddEventHandler(late)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, map[string]int{"ns/a": 1}, early.adds)
		assert.Equal(t, 1, early.updates, "the early handler saw the change")
		assert.Equal(t, map[string]int{"ns/a": 1}, late.adds)
		assert.Zero(t, late.updates, "the late one gets the object as it is")
		assert.True(t, regs[0].HasSynced())
		assert.Equal(t, []*Registration{regs[0], lateReg}, inf.Registrations(), "oldest first")

		// On the existing informer: added as AddEventHandler, the reference's own.
		second := newRecorder()
		again, err := e.f.Informer(ctx, "widgets", WithEventHandler(second))
		require.NoError(t, err)
		require.Len(t, again.Registrations(), 1)
		synctest.Wait()
		assert.Equal(t, map[string]int{"ns/a": 1}, second.adds)
		again.Release()
		assert.Empty(t, again.Registrations())
		srv.update(newObj("ns", "a", map[string]string{"v": "3"}))
		synctest.Wait()
		assert.Zero(t, second.updates, "removed with its reference")
		assert.Equal(t, 2, early.updates)
		inf.Release()

		_, err = e.f.Informer(ctx, "widgets", WithEventHandler(nil))
		assert.ErrorIs(t, err, ErrNilCallback)
		_, err = e.f.WatchAll(ctx, discovery.Filter{}, WithEventHandler(newRecorder()))
		assert.Error(t, err)
	})
}

// A handler added to an informer that synced once and then parked (its access revoked, its
// resource deleted) or is resyncing after a resume is synced once handed the cached objects,
// as Registration.HasSynced says (Informer.HasSynced's latch) and as client-go's handlers
// added late are: cache.WaitForCacheSync(stop, reg.HasSynced) hung until the informer
// resumed, for good while a CRD stays deleted, while the informer's own HasSynced said true.
func TestHandlerAddedWhileParkedAfterSyncIsSynced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		park    func(e *env, srv *fakeServer)
		objects int
	}{
		{"Forbidden", func(e *env, srv *fakeServer) {
			srv.setErrors(forbidden("widgets"), forbidden("widgets"))
		}, 1},
		{"NotFound", func(e *env, srv *fakeServer) {
			e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
			srv.setErrors(notFoundErr(), notFoundErr())
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options[obj]{})
			ctx := context.Background()
			srv := e.mode.server(widgets.GVR)
			srv.add(newObj("ns", "a", nil))
			inf, err := e.f.Informer(ctx, "widgets")
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
			tc.park(e, srv)
			srv.closeWatches()
			eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
			require.True(t, inf.HasSynced(), "a latch")

			rec := newRecorder()
			reg, err := inf.AddEventHandler(rec)
			require.NoError(t, err)
			stop := make(chan struct{})
			time.AfterFunc(5*time.Second, func() { close(stop) })
			require.True(t, cache.WaitForCacheSync(stop, reg.HasSynced), "the late handler's registration syncs while the informer is parked")
			assert.Equal(t, tc.objects, rec.addCount(), "handed the cached objects first")
			assert.Equal(t, PhaseParked, inf.Status().Phase)
		})
	}
}

// A registration made with WithEventHandler, when the call created the informer, belongs
// to the returned reference as one made with AddEventHandler does: removing it again does
// nothing, as RemoveEventHandler says, instead of failing with ErrNotRegistered ("made
// through another reference"); through another reference it is still ErrNotRegistered.
func TestRemoveEarlyHandlerAgainDoesNothing(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets", WithEventHandler(newRecorder()))
	require.NoError(t, err)
	defer inf.Release()
	other, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer other.Release()
	require.Len(t, inf.Registrations(), 1)
	r := inf.Registrations()[0]
	assert.ErrorIs(t, other.RemoveEventHandler(r), ErrNotRegistered, "not the other reference's")
	require.NoError(t, inf.RemoveEventHandler(r))
	assert.NoError(t, inf.RemoveEventHandler(r), "removing it again does nothing")
	assert.Empty(t, inf.Registrations())
}

// After Release, removing a handler the Release removed, or a nil one, does nothing: a
// deferred RemoveEventHandler that runs after a deferred Release is no error.
func TestRemoveHandlerAfterReleaseDoesNothing(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	r, err := inf.AddEventHandler(newRecorder())
	require.NoError(t, err)
	other, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer other.Release()
	theirs, err := other.AddEventHandler(newRecorder())
	require.NoError(t, err)
	inf.Release()
	assert.NoError(t, inf.RemoveEventHandler(r))
	assert.NoError(t, inf.RemoveEventHandler(nil))
	assert.Error(t, inf.RemoveEventHandler(theirs), "not this reference's")
	assert.Len(t, other.Registrations(), 1, "the other reference's handler stays")
}
