package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
)

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Resource: "widgets"}
	for _, tc := range []struct {
		err  error
		want Reason
	}{
		{nil, ReasonNone},
		{apierrors.NewNotFound(gr, ""), ReasonNotFound},
		{apierrors.NewForbidden(gr, "", errors.New("x")), ReasonForbidden},
		{apierrors.NewUnauthorized("x"), ReasonUnauthorized},
		{apierrors.NewTooManyRequests("x", 1), ReasonTooManyRequests},
		{apierrors.NewResourceExpired("x"), ReasonExpired},
		{apierrors.NewGone("x"), ReasonExpired},
		{apierrors.NewBadRequest("x"), ReasonInvalid},
		{apierrors.NewMethodNotSupported(gr, "list"), ReasonInvalid},
		{apierrors.NewInternalError(errors.New("x")), ReasonServerError},
		{apierrors.NewServiceUnavailable("x"), ReasonServerError},
		{apierrors.NewTimeoutError("x", 1), ReasonServerError},
		{apierrors.NewGenericServerResponse(502, "get", gr, "", "", 0, false), ReasonServerError},
		{&url.Error{Op: "Get", URL: "https://x", Err: syscall.ECONNREFUSED}, ReasonUnreachable},
		{&net.OpError{Op: "dial", Err: errors.New("x")}, ReasonUnreachable},
		{io.ErrUnexpectedEOF, ReasonUnreachable},
		{fmt.Errorf("wrapped: %w", apierrors.NewForbidden(gr, "", errors.New("x"))), ReasonForbidden},
		{&observedError{err: apierrors.NewNotFound(gr, "")}, ReasonNotFound},
		{errors.New("something else"), ReasonUnknown},
	} {
		assert.Equal(t, tc.want, classify(tc.err), "%v", tc.err)
	}
}

func TestNotFoundConfirmedParksAndDropsThenResumes(t *testing.T) {
	// In a synctest bubble: the quiet period passes on the bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		a, b := newObj("ns", "a", nil), newObj("ns", "b", nil)
		srv.add(a)
		srv.add(b)
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		rec := newRecorder()
		reg, err := inf.AddEventHandler(rec)
		require.NoError(t, err)
		require.NoError(t, inf.WaitForSync(ctx))
		eventually(t, reg.HasSynced, "handler synced")

		// The resource goes away and discovery agrees: park, and the cache is emptied with a
		// tombstone per object (the server deleted them; the watch missed it).
		e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
		srv.setErrors(notFoundErr(), notFoundErr())
		srv.closeWatches()
		srv.remove(a)
		srv.remove(b)
		eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
		st := inf.Status()
		assert.Equal(t, ReasonNotFound, st.Reason)
		assert.True(t, apierrors.IsNotFound(st.LastError))
		assert.Equal(t, 0, st.Objects)
		assert.True(t, inf.HasSynced(), "HasSynced is a latch, as client-go's")
		assert.True(t, reg.HasSynced(), "and means the same for a registration")
		eventually(t, func() bool { return rec.tombstones() == 2 }, "handlers told of the deletions")
		assert.Equal(t, 1, e.logs.count("Informer parked"), "one line for the park:\n%s", e.logs)

		// No requests while parked.
		lists, watches := srv.lists.Load(), srv.watches.Load()
		time.Sleep(time.Minute) // virtual
		assert.Equal(t, lists, srv.lists.Load())
		assert.Equal(t, watches, srv.watches.Load())

		// Served again: discovery's Added event resumes it and it relists.
		srv.setErrors(nil, nil)
		srv.add(newObj("ns", "c", nil))
		e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgets})
		eventually(t, func() bool { return inf.Status().Phase == PhaseSynced }, "resumed: %v", inf.Status())
		assert.Equal(t, []string{"c"}, names(must(inf.List(nil))), "only the new objects; no ghosts")
		assert.Equal(t, 1, e.logs.count("Informer resuming"))
		assert.Equal(t, 1, e.logs.count("Informer parked"))
	})
}

func TestNotFoundWhileDiscoveryServesIsRetriedAndKeepsCache(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	rec := newRecorder()
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))

	// A 404 while discovery still serves the resource (an apiserver that has not loaded its
	// CRDs yet): retried with backoff, never parked, never emptied.
	srv.setErrors(notFoundErr(), notFoundErr())
	srv.closeWatches()
	eventually(t, func() bool { return srv.lists.Load() >= 3 }, "retried")
	st := inf.Status()
	assert.Equal(t, PhaseSynced, st.Phase)
	assert.Equal(t, ReasonNotFound, st.Reason)
	assert.Equal(t, 1, st.Objects)
	assert.Equal(t, 0, rec.tombstones())

	assert.GreaterOrEqual(t, e.disc.rechecks.Load(), int32(2), "the 404s asked discovery afresh")

	srv.setErrors(nil, nil)
	eventually(t, func() bool { return inf.Status().Reason == ReasonNone }, "recovered")
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
	assert.Equal(t, 0, e.logs.count("Informer parked"))
}

// A 404 for a resource whose removal discovery's cache missed (no event will come): the
// informer asks discovery afresh, learns the resource is gone, and parks instead of
// retrying until the cache's next resync.
func TestNotFoundBehindStaleDiscoveryParks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(ctx))

		e.disc.miss(widgets)
		srv.setErrors(notFoundErr(), notFoundErr())
		srv.closeWatches()
		eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
		assert.Equal(t, ReasonNotFound, inf.Status().Reason)
		assert.Empty(t, must(inf.List(nil)))
		assert.Equal(t, 1, e.logs.count("Informer parked"))
	})
}

// A resource gone before the first sync (a CRD deleted while a one-shot query syncs):
// WaitForSyncOrPark answers as soon as it parks, with the server's NotFound.
func TestWaitForSyncOrParkAnswersNotFound(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.disc.miss(widgets)
	e.mode.server(widgets.GVR).setErrors(notFoundErr(), notFoundErr())
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonNotFound, apierrors.IsNotFound)
	assert.False(t, inf.HasSynced())
}

// requireParked checks a WaitForSyncOrPark answer: parked for reason, with the server's
// error reachable (is).
func requireParked(t *testing.T, err error, reason Reason, is func(error) bool) {
	t.Helper()
	require.ErrorIs(t, err, ErrParked)
	assert.True(t, is(err), "the server's answer is reachable: %v", err)
	var se *SyncError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, reason, se.Failures[0].Reason)
}

func TestForbiddenParksRechecksAndResumes(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.setErrors(forbidden("widgets"), forbidden("widgets"))
	other, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer other.Release()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()

	// WaitForSyncOrPark answers as soon as the informer parks, without a deadline.
	requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonForbidden, apierrors.IsForbidden)

	// Others sync regardless; a factory-wide wait names the forbidden one.
	require.NoError(t, other.WaitForSync(ctx))
	require.NoError(t, other.WaitForSyncOrPark(ctx), "a synced informer answers nil")
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err = e.f.WaitForSync(wctx)
	var se *SyncError
	require.ErrorAs(t, err, &se)
	require.Len(t, se.Failures, 1)
	assert.Equal(t, widgets.GVR, se.Failures[0].Key.GVR)
	assert.Equal(t, map[string]Reason{"widgets.example.com": ReasonForbidden}, se.Reasons())
	assert.True(t, apierrors.IsForbidden(err), "the API error is reachable: %v", err)
	assert.Regexp(t, `^kindex: 1 informer\(s\) not synced \(context deadline exceeded\): widgets\.example\.com/v1 \(fake\): Parked Forbidden: .*forbidden`, err.Error(),
		"the message says how many, why the wait ended, and each one's phase, reason and error")

	assert.Equal(t, PhaseParked, inf.Status().Phase)
	lists := srv.lists.Load()
	eventually(t, func() bool { return e.access.checks.Load() >= 3 }, "access re-checked with backoff")
	assert.Equal(t, lists, srv.lists.Load(), "re-checks are access reviews, not lists")

	// Granted: the next re-check resumes it without a restart.
	srv.setErrors(nil, nil)
	e.access.allowed.Store(true)
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
	assert.Equal(t, 1, e.logs.count("Informer parked"))
}

func TestWatchForbiddenParksAfterListWithoutRelisting(t *testing.T) {
	// In a synctest bubble: the quiet period below passes on the bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		e.access.listOnly.Store(true)
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.add(newObj("ns", "a", nil))
		srv.setErrors(nil, forbidden("widgets"))
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked")
		st := inf.Status()
		assert.Equal(t, ReasonWatchForbidden, st.Reason)
		assert.Equal(t, 1, st.Objects, "the listed snapshot is kept")
		time.Sleep(time.Minute) // virtual: every goroutine of the factory is idle meanwhile
		assert.EqualValues(t, 1, srv.lists.Load(), "no relist loop")
		assert.EqualValues(t, 1, srv.watches.Load())
		assert.Equal(t, 1, e.logs.count("Informer parked"))

		e.access.allowed.Store(true)
		srv.setErrors(nil, nil)
		require.NoError(t, inf.WaitForSync(ctx))
	})
}

// An informer whose watch is refused right after its list, before the processing loop has
// applied that list, keeps the whole list as a WatchForbidden park does, and counts it as
// synced: HasSynced, LastSyncTime and the handlers' registrations, as when the list is
// applied first. Which came first was a race; when the watch won, HasSynced stayed false
// for the informer's life while it served the complete list (2 runs in 3 with 50 objects).
func TestWatchForbiddenRightAfterTheListIsSynced(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	e.access.listOnly.Store(true)
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.add(newObj("ns", "b", nil))
	srv.setErrors(nil, forbidden("widgets"))
	srv.listGate = make(chan struct{}) // the list waits until the index is registered
	rec := newRecorder()
	inf, err := e.f.Informer(ctx, "widgets", WithEventHandler(rec))
	require.NoError(t, err)
	defer inf.Release()
	applying := make(chan struct{})
	require.NoError(t, inf.AddIndexFunc("slow", func(any) ([]string, error) {
		<-applying // holds the processing loop inside the list
		return nil, nil
	}))
	close(srv.listGate)
	// Listed; the watch is refused and, list still allowed, the run parks WatchForbidden
	// while the list is being applied.
	eventually(t, func() bool { return e.access.checks.Load() > 0 }, "the watch refused")
	time.Sleep(50 * time.Millisecond)
	close(applying)
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
	st := inf.Status()
	assert.Equal(t, ReasonWatchForbidden, st.Reason)
	assert.Equal(t, 2, st.Objects, "the list is kept")
	assert.True(t, inf.HasSynced(), "the list was applied")
	assert.False(t, st.LastSyncTime.IsZero())
	assert.True(t, inf.Queryable())
	eventually(t, inf.Registrations()[0].HasSynced, "the handler was handed the list")
	assert.Equal(t, 2, rec.addCount())
	assert.EqualValues(t, 1, srv.lists.Load(), "no relist")
}

// A watch refused after a successful list, when list is refused too (both revoked), is
// Forbidden, not WatchForbidden: the reason does not depend on how the run listed.
func TestBothRevokedAfterAListIsForbidden(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.setErrors(nil, forbidden("widgets"))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked")
	assert.Equal(t, ReasonForbidden, inf.Status().Reason)
}

func TestInvalidParksUntilDiscoveryEvent(t *testing.T) {
	// In a synctest bubble: the quiet period passes on the bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.setErrors(apierrors.NewBadRequest("field label not supported"), nil)
		inf, err := e.f.Informer(ctx, "widgets", WithFieldSelector("spec.x=1"))
		require.NoError(t, err)
		defer inf.Release()
		eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked")
		assert.Equal(t, ReasonInvalid, inf.Status().Reason)
		time.Sleep(time.Minute) // virtual
		assert.EqualValues(t, 1, srv.lists.Load(), "nothing retries an invalid request on a timer")
		srv.setErrors(nil, nil)
		e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgets, Old: &widgets})
		require.NoError(t, inf.WaitForSync(ctx))
	})
}

func TestTransientErrorsBackOffVisibly(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.setErrors(apierrors.NewTooManyRequests("slow down", 1), nil)
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	eventually(t, func() bool { return inf.Status().Reason == ReasonTooManyRequests }, "429 visible")
	assert.True(t, apierrors.IsTooManyRequests(inf.Status().LastError))
	assert.Equal(t, PhaseSyncing, inf.Status().Phase)
	srv.setErrors(apierrors.NewInternalError(errors.New("boom")), nil)
	eventually(t, func() bool { return inf.Status().Reason == ReasonServerError }, "5xx visible")
	srv.setErrors(nil, nil)
	require.NoError(t, inf.WaitForSync(ctx))
	st := inf.Status()
	assert.Equal(t, ReasonNone, st.Reason)
	assert.NotNil(t, st.LastError, "the last error stays for diagnosis")
	assert.Equal(t, 1, e.logs.count("Informer retrying"), "one line when retrying starts:\n%s", e.logs)
	assert.Equal(t, 1, e.logs.count("Informer recovered"))
	assert.Equal(t, 0, e.logs.count("Failed to watch"), "the reflector's per-retry lines are filtered")
}

func TestRelistAfterDisconnectDeletesVanishedObjects(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	a, b := newObj("ns", "a", nil), newObj("ns", "b", nil)
	srv.add(a)
	srv.add(b)
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	rec := newRecorder()
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	// Disconnected (watches fail with 410) while b is deleted: the relist finds out and
	// tells handlers with a tombstone.
	srv.setErrors(nil, apierrors.NewResourceExpired("too old"))
	srv.closeWatches()
	srv.remove(b)
	eventually(t, func() bool { return rec.deleted("ns/b") }, "b deleted")
	assert.Equal(t, 1, rec.tombstones(), "through a relist")
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
	assert.GreaterOrEqual(t, inf.Status().Lists, 2)
	srv.setErrors(nil, nil)
	require.NoError(t, inf.WaitForSync(ctx))
}

func names(objs []obj) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Name)
	}
	return out
}

var _ = metav1.Now

func TestSlowSyncReportsNotSynced(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	srv := e.mode.server(widgets.GVR)
	gate := make(chan struct{})
	srv.mu.Lock()
	srv.listGate = gate
	srv.mu.Unlock()
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = e.f.WaitForSync(ctx)
	var se *SyncError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, ReasonNotSynced, se.Failures[0].Reason)
	assert.Equal(t, PhaseSyncing, se.Failures[0].Phase)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	close(gate)
	require.NoError(t, inf.WaitForSync(context.Background()))
}

func TestStoppingRunReportsNoFailure(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))

	// A watch cut by the run's own cancellation surfaces from client-go as an internal error
	// ("unable to decode an event from the watch stream: context canceled"): not a failure.
	inf.h.e.dispatchMu.Lock()
	r := inf.h.e.cur
	inf.h.e.dispatchMu.Unlock()
	require.NotNil(t, r)
	r.cancel()
	cut := apierrors.NewInternalError(errors.New("unable to decode an event from the watch stream: context canceled"))
	r.streamFailed(cut)
	assert.False(t, r.failed(ctx, opWatch, cut))
	st := inf.Status()
	assert.Equal(t, ReasonNone, st.Reason)
	assert.Nil(t, st.LastError)
	assert.Equal(t, 0, e.logs.count("Informer retrying"), "no retry line for a stopping run:\n%s", e.logs)
}

// However long the park, access re-checks never wait longer than AccessRecheckInterval;
// Recheck asks at once.
func TestGrantTakesEffectAfterALongPark(t *testing.T) {
	for name, tc := range map[string]struct {
		interval time.Duration
		recheck  bool
	}{
		"interval caps the backoff": {interval: 150 * time.Millisecond},
		"Recheck asks at once":      {interval: time.Hour, recheck: true},
	} {
		t.Run(name, func(t *testing.T) {
			// The backoff itself would wait minutes: only the cap or Recheck can help.
			e := newEnvWith(t, Options[obj]{AccessRecheckInterval: tc.interval},
				hooks{RecheckInitial: 10 * time.Minute, RecheckMax: time.Hour})
			ctx := context.Background()
			srv := e.mode.server(widgets.GVR)
			srv.add(newObj("ns", "a", nil))
			srv.setErrors(forbidden("widgets"), forbidden("widgets"))
			inf, err := e.f.Informer(ctx, "widgets")
			require.NoError(t, err)
			defer inf.Release()
			require.ErrorIs(t, inf.WaitForSyncOrPark(ctx), ErrParked)

			srv.setErrors(nil, nil)
			e.access.allowed.Store(true)
			if tc.recheck {
				inf.Recheck()
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			require.NoError(t, inf.WaitForSync(wctx), "resumed after the grant")
			assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
		})
	}
}

// A namespaced resource served again cluster-scoped (a CRD deleted and re-created with the
// other scope): the URL an informer of one namespace lists is gone, so its 404 parks it,
// and it does not resume while the scope stays the other one.
func TestNotFoundWithTheOtherScopeParks(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets", WithNamespace("ns"))
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))

	clusterScoped := widgets
	clusterScoped.Namespaced = false
	e.disc.set(clusterScoped)
	srv.setErrors(notFoundErr(), notFoundErr())
	srv.closeWatches()
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
	assert.Equal(t, ReasonNotFound, inf.Status().Reason)
	requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonNotFound, apierrors.IsNotFound)
	lists := srv.lists.Load()
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: clusterScoped})
	assert.Never(t, func() bool { return inf.Status().Phase != PhaseParked }, 300*time.Millisecond, 20*time.Millisecond,
		"a discovery event for the other scope does not resume it")
	assert.Equal(t, lists, srv.lists.Load(), "no list while parked")

	// The scope back: it resumes.
	e.disc.set(widgets)
	srv.setErrors(nil, nil)
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgets})
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
}

// The informers of a factory parked on a 403 share a rate of access re-checks: a
// watch-everything set a user may read little of does not send a review per resource
// every second.
func TestAccessRechecksShareARate(t *testing.T) {
	// In a synctest bubble: the window below passes on the bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		e := newEnvWith(t, Options[obj]{}, hooks{AccessChecksPerSecond: 20})
		ctx := context.Background()
		e.mode.server(widgets.GVR).setErrors(forbidden("widgets"), forbidden("widgets"))
		const n = 30
		for i := range n {
			inf, err := e.f.Informer(ctx, "widgets", WithLabelSelector(fmt.Sprintf("i=%d", i)))
			require.NoError(t, err)
			defer inf.Release()
			requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonForbidden, apierrors.IsForbidden)
		}
		before := e.access.checks.Load()
		window := 10 * time.Second
		time.Sleep(window) // the rate is what is measured: checks made during the window
		checks := e.access.checks.Load() - before
		t.Logf("%d access checks in %v by %d parked informers", checks, window, n)
		// Each waits at least n/20 = 1.5 s between checks: at most 7 each in the window.
		assert.LessOrEqual(t, checks, int32(7*n))
		assert.GreaterOrEqual(t, checks, int32(5*n), "they still re-check, about every 1.5 s")
	})
}

// Factories given one AccessChecks share its rate: a program with a factory per resource
// sends no more access reviews for many parked resources than one factory would. The
// informers of every factory count as parked together, so that each waits at least
// n/rate between its re-checks (the rate itself: TestAccessRechecksShareARate).
func TestAccessRechecksShareARateAcrossFactories(t *testing.T) {
	shared := NewAccessChecks(5)
	const n = 12
	ctx := context.Background()
	for range n {
		e := newEnv(t, Options[obj]{AccessChecks: shared})
		e.mode.server(widgets.GVR).setErrors(forbidden("widgets"), forbidden("widgets"))
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		t.Cleanup(inf.Release)
		requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonForbidden, apierrors.IsForbidden)
	}
	eventually(t, func() bool { return shared.parked.Load() == n }, "parked together: %d", shared.parked.Load())
	assert.Equal(t, time.Duration(n)*time.Second/5, shared.floor(), "each waits at least n/5 s")
	own := NewAccessChecks(5)
	assert.Zero(t, own.floor(), "a rate not given to them counts none of them")
}

// A rate that is not a positive number (NaN, as 0/0 makes) is the default, and a rate so
// small that the wait overflows a Duration waits the longest Duration: neither lifts the
// limit, which a wait converted from NaN or wrapped to a negative Duration did.
func TestAccessCheckRatesOutOfRange(t *testing.T) {
	nan := NewAccessChecks(math.NaN())
	nan.parked.Store(4)
	assert.Equal(t, time.Second, nan.floor(), "the default rate, 4 a second")
	tiny := NewAccessChecks(1e-20)
	tiny.parked.Store(1)
	assert.Equal(t, time.Duration(math.MaxInt64), tiny.floor())
}

// A cluster-scoped resource of a factory restricted to one namespace, served again
// namespaced (a CRD re-created with the other scope): the informer, made for it
// cluster-scoped, listed every namespace of it, since its URL stays valid. It parks
// NotFound, empties its cache, and resumes only when the scope is cluster again.
func TestRestrictedInformerParksWhenItsResourceBecomesNamespaced(t *testing.T) {
	e := newEnv(t, Options[obj]{Namespace: "ns"})
	ctx := context.Background()
	clusterScoped := widgets
	clusterScoped.Namespaced = false
	e.disc.set(clusterScoped)
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("", "a", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, "", inf.Status().Key.Namespace)
	assert.Equal(t, "ns", inf.Status().Key.Restricted)
	// One asked for every namespace is another informer, not shared with the restricted one.
	all, err := e.f.Informer(ctx, "widgets", WithNamespace(""))
	require.NoError(t, err)
	defer all.Release()
	require.NoError(t, all.WaitForSync(ctx))
	assert.NotEqual(t, inf.Status().Key, all.Status().Key)

	e.disc.set(widgets) // namespaced now; its list URL answers still
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgets, Old: &clusterScoped})
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
	assert.Equal(t, ReasonNotFound, inf.Status().Reason)
	assert.ErrorContains(t, inf.Status().LastError, `restricted to namespace "ns"`)
	lists := srv.lists.Load()
	e.f.Recheck()
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgets})
	assert.Never(t, func() bool { return inf.Status().Phase != PhaseParked }, 300*time.Millisecond, 20*time.Millisecond,
		"it does not resume while the resource is namespaced")
	assert.Equal(t, PhaseSynced, all.Status().Phase, "the unrestricted one serves every namespace")
	assert.Equal(t, lists, srv.lists.Load(), "no list while parked")
	objs, _ := inf.List(nil)
	assert.Empty(t, objs, "parked NotFound: the cache is emptied")

	e.disc.set(clusterScoped)
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: clusterScoped, Old: &widgets})
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))
}

// An informer parked on access with a listed snapshot (a user who may list but not watch)
// kept its objects after its CRD was deleted, served by List with no error and never
// handed to handlers as deleted: access re-checks ignored discovery. A discovery event
// whose fresh answer is "not served" turns the park into NotFound, emptying the cache with
// tombstones; the CRD back, the informer runs again (and parks on access again).
func TestAccessParkedInformerDropsItsObjectsWhenTheResourceGoes(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	e.access.listOnly.Store(true)
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.add(newObj("ns", "b", nil))
	srv.setErrors(nil, forbidden("widgets"))
	var deleted atomic.Int32
	inf, err := e.f.Informer(ctx, "widgets", WithEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(any) { deleted.Add(1) },
	}))
	require.NoError(t, err)
	defer inf.Release()
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked")
	require.Equal(t, ReasonWatchForbidden, inf.Status().Reason)
	require.Equal(t, 2, inf.Status().Objects)

	e.disc.miss(widgets) // the CRD is deleted
	e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
	eventually(t, func() bool { return inf.Status().Reason == ReasonNotFound }, "parked NotFound: %v", inf.Status())
	eventually(t, func() bool { return deleted.Load() == 2 }, "tombstones: %d", deleted.Load())
	assert.Zero(t, inf.Status().Objects)
	assert.Empty(t, must(inf.List(nil)))

	e.disc.set(widgets) // back, and still not watchable by the user
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgets})
	eventually(t, func() bool {
		st := inf.Status()
		return st.Phase == PhaseParked && st.Reason == ReasonWatchForbidden && st.Objects == 2
	}, "listed again, parked on access: %v", inf.Status())
}

// Informers parked on a deleted resource re-check on their backoff against discovery's
// cache, and afresh (ResolveGVR, which re-discovers everything on a miss) only on a
// discovery event or Recheck: with 87 informers parked, a real client made 113 full
// re-discoveries every 30 s.
func TestNotFoundRechecksUseTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		const n = 20
		infs := make([]*Informer[obj], n)
		for i := range infs {
			inf, err := e.f.Informer(ctx, "widgets", WithLabelSelector(fmt.Sprintf("i=%d", i)))
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
			infs[i] = inf
		}
		e.disc.miss(widgets) // the CRD is deleted
		srv.setErrors(notFoundErr(), notFoundErr())
		srv.closeWatches()
		for _, inf := range infs {
			eventually(t, func() bool { return inf.Status().Reason == ReasonNotFound }, "parked: %v", inf.Status())
		}
		synctest.Wait()
		before := e.disc.resolves.Load()
		time.Sleep(10 * time.Minute) // virtual: many backoff periods
		assert.Equal(t, before, e.disc.resolves.Load(), "timer re-checks read the cache")

		e.f.Recheck()
		synctest.Wait()
		assert.Equal(t, before+n, e.disc.resolves.Load(), "a Recheck asks afresh, once each")

		e.disc.set(widgets) // back: the event resumes them
		srv.setErrors(nil, nil)
		e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgets})
		for _, inf := range infs {
			require.NoError(t, inf.WaitForSync(ctx))
		}
	})
}

// Resource and Status kept the description discovery gave when the informer was created:
// after a CRD was re-created with another kind and short names they still showed the old.
func TestResourceFollowsDiscovery(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	renamed := widgets
	renamed.GVK.Kind, renamed.ShortNames, renamed.Categories = "Gadget", []string{"gd"}, []string{"all"}
	e.disc.set(renamed)
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: renamed, Old: &widgets})
	eventually(t, func() bool { return inf.Resource().GVK.Kind == "Gadget" }, "kind: %s", inf.Resource().GVK.Kind)
	assert.Equal(t, []string{"gd"}, inf.Resource().ShortNames)
	assert.Equal(t, "Gadget", inf.Status().Resource.GVK.Kind)
	// Another version's description is not this informer's.
	v2 := resource("example.com", "v2", "widgets")
	v2.GVK.Kind = "WidgetV2"
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: v2, Old: &renamed})
	assert.Never(t, func() bool { return inf.Resource().GVK.Kind != "Gadget" }, 200*time.Millisecond, 20*time.Millisecond)
}

// A park's re-checks back off, and a run that lasted Options' HealthyRun starts the next
// park's re-checks from RecheckInitial again: a resource that comes back after a short
// second park is seen in about RecheckInitial, not after the first park's grown backoff.
func TestHealthyRunResetsRecheckBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnvWith(t, Options[obj]{}, hooks{RecheckInitial: time.Second, RecheckMax: time.Hour, HealthyRun: time.Minute})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(ctx))

		// park takes the resource away (discovery agrees, so the 404 parks) and waits until
		// the parked entry is blocked on its re-check timer; back serves it again without
		// a discovery event, so that only a timed re-check can see it, and returns how long
		// the informer took to sync again.
		park := func() {
			e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
			srv.setErrors(notFoundErr(), notFoundErr())
			srv.closeWatches()
			eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
			synctest.Wait()
		}
		back := func() time.Duration {
			e.disc.set(widgets)
			srv.setErrors(nil, nil)
			start := time.Now()
			for inf.Status().Phase != PhaseSynced {
				require.Less(t, time.Since(start), 2*time.Hour, "resumed: %v", inf.Status())
				time.Sleep(100 * time.Millisecond) // virtual
			}
			return time.Since(start)
		}

		// A long park: the re-checks back off to at least ten minutes (each waits between
		// half and all of a step that doubles; twenty minutes of waits reach a step of ten).
		park()
		time.Sleep(20 * time.Minute) // virtual
		back()

		// A short run does not reset the backoff: the next park waits at least half of a
		// step of twenty minutes before its first re-check.
		time.Sleep(10 * time.Second)
		park()
		short := back()
		assert.Greater(t, short, time.Minute, "after a short run the backoff goes on")

		// A run of HealthyRun does: the first re-check comes within RecheckInitial.
		time.Sleep(2 * time.Minute)
		park()
		assert.LessOrEqual(t, back(), 2*time.Second, "after a healthy run the re-checks start from RecheckInitial (after a short one: %v)", short)
	})
}

// Status.LastSyncTime is when an initial list was last applied completely, the relist
// after a 410 included (as Status's doc says, and as status subscribers are told): it
// stayed at the run's first list, so that a cache relisted a minute ago looked as old as
// its first sync.
func TestRelistAfterExpiredUpdatesLastSyncTime(t *testing.T) {
	for _, empty := range []bool{false, true} {
		t.Run(fmt.Sprint("empty=", empty), func(t *testing.T) {
			e := newEnv(t, Options[obj]{})
			ctx := context.Background()
			srv := e.mode.server(widgets.GVR)
			a := newObj("ns", "a", nil)
			srv.add(a)
			inf, err := e.f.Informer(ctx, "widgets")
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
			first := inf.Status().LastSyncTime
			lists := srv.lists.Load()
			time.Sleep(10 * time.Millisecond)

			// The watch is cut and the server refuses to resume it: 410, and the reflector
			// relists.
			if empty {
				srv.remove(a)
			} else {
				srv.add(newObj("ns", "b", nil))
			}
			srv.setErrors(nil, apierrors.NewResourceExpired("too old resource version"))
			srv.closeWatches()
			eventually(t, func() bool { return srv.lists.Load() > lists }, "relisted")
			srv.setErrors(nil, nil)
			want := 2
			if empty {
				want = 0
			}
			eventually(t, func() bool { return len(must(inf.List(nil))) == want }, "the relist applied")
			eventually(t, func() bool { return inf.Status().LastSyncTime.After(first) },
				"LastSyncTime follows the relist: %v, first sync %v", inf.Status().LastSyncTime, first)
			assert.Equal(t, PhaseSynced, inf.Status().Phase)
		})
	}
}

// The zero AccessChecks (&informer.AccessChecks{} given as Options.AccessChecks) is the
// default rate: its informers parked on a 403 re-check and resume when granted. Its rate of
// 0 made each wait n/0 seconds, the longest Duration: a parked informer never re-checked.
func TestZeroAccessChecksIsTheDefaultRate(t *testing.T) {
	var zero AccessChecks
	zero.parked.Store(4)
	assert.Equal(t, time.Second, zero.floor(), "the default rate, 4 a second")

	e := newEnv(t, Options[obj]{AccessChecks: &AccessChecks{}, AccessRecheckInterval: 100 * time.Millisecond})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	srv.setErrors(forbidden("widgets"), forbidden("widgets"))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	requireParked(t, inf.WaitForSyncOrPark(ctx), ReasonForbidden, apierrors.IsForbidden)
	srv.setErrors(nil, nil)
	e.access.allowed.Store(true)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, inf.WaitForSync(wctx), "granted: a re-check resumes it")
}
