package discovery

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

func TestOptionsDefaultsAndValidation(t *testing.T) {
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultNegativeCacheTTL, o.NegativeCacheTTL)
	assert.Equal(t, DefaultRefreshInterval, o.RefreshInterval)
	assert.Equal(t, DefaultResyncInterval, o.ResyncInterval)
	assert.Equal(t, DefaultRequestTimeout, o.RequestTimeout)
	assert.NotNil(t, o.Clock)

	for _, bad := range []Options{
		{NegativeCacheTTL: -1},
		{RefreshInterval: -time.Second},
		{RefreshInterval: time.Millisecond},
		{ResyncInterval: time.Nanosecond},
		{RequestTimeout: -1},
	} {
		_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, bad)
		assert.Error(t, err, "%+v", bad)
	}
	_, err = New(nil, Options{})
	assert.Error(t, err)
}

func TestNegativeCache(t *testing.T) {
	var n negativeCache
	now := time.Now()
	gen := n.generation()
	n.put("a", assert.AnError, now.Add(time.Second), gen)
	err, ok := n.get("a", now)
	assert.True(t, ok)
	assert.Equal(t, assert.AnError, err)
	_, ok = n.get("a", now.Add(time.Second))
	assert.False(t, ok, "expired")

	// A miss computed before a clear is not stored after it.
	n.clear()
	n.put("b", assert.AnError, now.Add(time.Second), gen)
	_, ok = n.get("b", now)
	assert.False(t, ok)

	// Bounded.
	gen = n.generation()
	for i := range maxNegative + 10 {
		n.put(string(rune(i)), assert.AnError, now.Add(time.Hour), gen)
	}
	assert.LessOrEqual(t, n.len(), maxNegative)
}

func TestSubscribeDeliversInOrderAndUnsubscribeWaits(t *testing.T) {
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)

	var mu sync.Mutex
	var got []string
	release := make(chan struct{})
	entered := make(chan struct{}, 100)
	unsubscribe, err := c.Subscribe(func(e Event) {
		entered <- struct{}{}
		<-release
		mu.Lock()
		got = append(got, e.Type.String()+" "+e.Resource.GVR.Resource)
		mu.Unlock()
	})
	require.NoError(t, err)
	ev := func(t EventType, r string) Event {
		return Event{Type: t, Resource: mkRes("", "v1", r, "K")}
	}
	// Publishing never blocks on a slow handler.
	done := make(chan struct{})
	go func() {
		c.subs.publish([]Event{ev(Added, "a"), ev(Added, "b")})
		c.subs.publish([]Event{ev(Changed, "a"), ev(Removed, "b")})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("publish blocked on a handler")
	}

	<-entered // the handler is in flight
	var returned atomic.Bool
	go func() {
		unsubscribe()
		returned.Store(true)
	}()
	time.Sleep(50 * time.Millisecond)
	assert.False(t, returned.Load(), "unsubscribe must wait for the call in flight")
	close(release)
	require.Eventually(t, returned.Load, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	// The call in flight completed; the rest was dropped in order, never reordered.
	assert.Equal(t, []string{"Added a"}, got)
	mu.Unlock()
	unsubscribe() // idempotent
}

func TestSubscribeOrderAndPanicRecovery(t *testing.T) {
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	var got []string
	var mu sync.Mutex
	unsubscribe, err := c.Subscribe(func(e Event) {
		if e.Resource.GVR.Resource == "boom" {
			panic("handler bug")
		}
		mu.Lock()
		got = append(got, e.Resource.GVR.Resource)
		mu.Unlock()
	})
	require.NoError(t, err)
	defer unsubscribe()
	var names []string
	for i := range 200 {
		r := string(rune('a' + i%26))
		if i == 7 {
			r = "boom"
		} else {
			names = append(names, r)
		}
		c.subs.publish([]Event{{Type: Added, Resource: mkRes("", "v1", r, "K")}})
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == len(names)
	}, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	assert.Equal(t, names, got)
	mu.Unlock()
}

// TestRedirectToAnotherHostIsRefused proves that the client never sends its bearer token to
// another host, while client-go's own discovery client does (which is why this package
// builds its own HTTP client).
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		http.Error(w, "nope", http.StatusNotFound)
	}))
	defer other.Close()
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer evil.Close()
	cfg := &rest.Config{Host: evil.URL, BearerToken: "secret-token"}

	// client-go as is: the token reaches the other host.
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	_, _ = dc.ServerGroups()
	assert.Equal(t, "Bearer secret-token", leaked.Load(), "client-go follows cross-host redirects (the premise of this test)")

	leaked = atomic.Value{}
	c, err := New(cfg, Options{})
	require.NoError(t, err)
	_, err = c.Resolve(t.Context(), "pods")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refusing redirect")
	assert.Nil(t, leaked.Load(), "the token must not reach another host")

	// The same host may redirect (for example to add a trailing slash).
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			http.Redirect(w, r, "/api/", http.StatusFound)
			return
		}
		http.Error(w, "nope", http.StatusNotFound)
	}))
	defer same.Close()
	hc := sameHostRedirectsOnly(http.DefaultClient)
	resp, err := hc.Get(same.URL + "/api")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "followed to /api/ on the same host")
	assert.Nil(t, http.DefaultClient.CheckRedirect, "the shared default client is never modified")
}

func TestEventTypeString(t *testing.T) {
	assert.Equal(t, "Added", Added.String())
	assert.Equal(t, "Removed", Removed.String())
	assert.Equal(t, "Changed", Changed.String())
	assert.Equal(t, "Unknown", EventType(0).String())
}

// unsubscribe from the handler itself returns at once, and nothing is delivered after the
// call that unsubscribed.
func TestUnsubscribeFromHandler(t *testing.T) {
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	var mu sync.Mutex
	var got []string
	var unsubscribe func()
	subscribed := make(chan struct{})
	returned := make(chan struct{})
	unsubscribe, err = c.Subscribe(func(e Event) {
		<-subscribed
		mu.Lock()
		got = append(got, e.Resource.GVR.Resource)
		mu.Unlock()
		if e.Resource.GVR.Resource == "b" {
			unsubscribe()
			close(returned)
		}
	})
	require.NoError(t, err)
	close(subscribed)
	for _, r := range []string{"a", "b", "c", "d"} {
		c.subs.publish([]Event{{Type: Added, Resource: mkRes("", "v1", r, "K")}})
	}
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("unsubscribe from the handler did not return")
	}
	unsubscribe() // from outside, afterwards: waits for the goroutine to exit
	c.subs.publish([]Event{{Type: Added, Resource: mkRes("", "v1", "e", "K")}})
	mu.Lock()
	assert.Equal(t, []string{"a", "b"}, got)
	mu.Unlock()
}

// A Start whose context has ended makes no request (a request cancelled while its
// connection is dialled leaves the dial running, and its connection would outlive Wait),
// fails with the context's error, and leaves the client startable.
func TestStartWithEndedContextMakesNoRequest(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "nope", http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL}, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = c.Start(ctx)
	require.ErrorIs(t, err, context.Canceled)
	c.Wait()
	assert.Zero(t, requests.Load(), "no request with an ended context")
	// Still startable: the next Start asks the server.
	err = c.Start(t.Context())
	require.Error(t, err, "the server answers 404 to everything")
	assert.NotZero(t, requests.Load())
}

// Wait waits for a first round that Start abandoned when its context ended: no request of
// it is still in flight when Wait returns.
func TestWaitOutlastsAnAbandonedFirstRound(t *testing.T) {
	var started, finished atomic.Int32
	entered := make(chan struct{}, 1)
	waiting := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		defer finished.Add(1)
		select {
		case entered <- struct{}{}:
		default:
		}
		<-waiting // answers once Wait has been called
		http.Error(w, "nope", http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL}, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	<-entered
	cancel()
	require.ErrorIs(t, <-done, context.Canceled, "Start returns when its context ends")
	close(waiting)
	c.Wait()
	assert.Positive(t, started.Load())
	assert.Equal(t, started.Load(), finished.Load(), "a request of the round was still in flight after Wait")
}

// A watch that fails once the client is stopping logs nothing: the failure is the request
// cut by the client's own end. Before, it logs as a failure.
func TestWatchFailedWhileStoppingLogsNothing(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	w := &watcher{log: log}
	cut := fmt.Errorf("failed to list *v1.CustomResourceDefinition: %w", context.Canceled)
	ctx, cancel := context.WithCancel(context.Background())
	w.watchFailed(ctx, cancel, nil, cut)
	require.Len(t, logged, 1, "a failure while running is logged")
	cancel()
	w.watchFailed(ctx, cancel, nil, cut)
	assert.Len(t, logged, 1, "nothing more once stopping: %v", logged)
}

// A nil handler is an error, not a panic on the first event.
func TestSubscribeNilHandler(t *testing.T) {
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	unsubscribe, err := c.Subscribe(nil)
	require.ErrorIs(t, err, ErrNilHandler)
	assert.Nil(t, unsubscribe)
	assert.NotPanics(t, func() { c.subs.publish([]Event{{Type: Added, Resource: mkRes("", "v1", "a", "K")}}) })
}

// Every method that takes a context refuses a nil one with ErrNilContext, before and after
// the first discovery, and sends nothing: a miss used to run its re-discovery with the nil
// context and panic on the round's goroutine, which ended the process.
func TestNilContext(t *testing.T) {
	s := newFakeServer(t)
	c, err := New(s.config(), Options{})
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Group: fakeGroup, Version: "v1", Resource: "widgets"}
	calls := map[string]func(context.Context) error{
		"Start":   func(ctx context.Context) error { return c.Start(ctx) },
		"Refresh": func(ctx context.Context) error { return c.Refresh(ctx) },
		"Resolve": func(ctx context.Context) error { _, err := c.Resolve(ctx, "widgets"); return err },
		"ResolveGVK": func(ctx context.Context) error {
			_, err := c.ResolveGVK(ctx, schema.GroupVersionKind{Group: fakeGroup, Kind: "Widget"})
			return err
		},
		"ResolveGVR":      func(ctx context.Context) error { _, err := c.ResolveGVR(ctx, gvr); return err },
		"RecheckGVR":      func(ctx context.Context) error { _, err := c.RecheckGVR(ctx, gvr); return err },
		"ResolveCategory": func(ctx context.Context) error { _, err := c.ResolveCategory(ctx, "widgets"); return err },
		"Resources":       func(ctx context.Context) error { _, err := c.Resources(ctx, Filter{}); return err },
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(nil), ErrNilContext, "%s before the first discovery", name) //nolint:staticcheck // nil on purpose
	}
	require.NoError(t, c.Refresh(t.Context()))
	for name, call := range calls {
		assert.ErrorIs(t, call(nil), ErrNilContext, "%s after the first discovery", name) //nolint:staticcheck // nil on purpose
	}
}

// RecheckGVR asks the server only about a group that can exist: a group that is no DNS
// subdomain ("x/../example.com") is a miss without any request. Its path used to be
// cleaned into another group's (GET /apis/example.com), whose resources the client then
// kept under the name given, so that "widgets" became ambiguous with a group no server
// serves.
func TestRecheckOfAnImpossibleGroup(t *testing.T) {
	s := newFakeServer(t)
	s.setServed(true)
	c, err := New(s.config(), Options{})
	require.NoError(t, err)
	require.NoError(t, c.Refresh(t.Context()))
	before := s.groupRequests()
	for _, group := range []string{"x/../" + fakeGroup, "../apis/" + fakeGroup, fakeGroup + "/", "Example.com", fakeGroup + "?x=1", " " + fakeGroup} {
		_, err := c.RecheckGVR(t.Context(), schema.GroupVersionResource{Group: group, Resource: "widgets"})
		assert.True(t, meta.IsNoMatchError(err), "%q: %v", group, err)
	}
	assert.Equal(t, before, s.groupRequests(), "no request for a group that cannot exist")
	r, err := c.Resolve(t.Context(), "widgets")
	require.NoError(t, err)
	assert.Equal(t, fakeGroup, r.GVR.Group)
	// A group that can exist is still asked about.
	_, err = c.RecheckGVR(t.Context(), schema.GroupVersionResource{Group: fakeGroup, Resource: "widgets"})
	require.NoError(t, err)
	assert.Equal(t, before+1, s.groupRequests())
}

// A RecheckGVR that joins another caller's round for the group stops waiting when its own
// context ends: it used to wait for the round, up to Options.RequestTimeout.
func TestRecheckJoiningARoundHonoursItsContext(t *testing.T) {
	s := &fakeServer{groups: map[string]int{}}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis/"+fakeGroup {
			once.Do(func() { close(held) })
			<-release
		}
		s.serve(w, r)
	}))
	defer s.Close()
	defer close(release)
	s.setServed(true)
	c, err := New(s.config(), Options{})
	require.NoError(t, err)
	require.NoError(t, c.Refresh(t.Context()))
	gvr := schema.GroupVersionResource{Group: fakeGroup, Resource: "widgets"}
	first := make(chan error, 1)
	go func() {
		_, err := c.RecheckGVR(t.Context(), gvr)
		first <- err
	}()
	<-held // the first caller's round is in flight
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	second := make(chan error, 1)
	go func() {
		_, err := c.RecheckGVR(ctx, gvr)
		second <- err
	}()
	select {
	case err := <-second:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("RecheckGVR waited for another caller's round after its context ended")
	}
	release <- struct{}{}
	require.NoError(t, <-first)
}

// A RecheckGVR that joins a round another caller started gets the round's answer when that
// caller's context ends meanwhile: the round used to run under the first caller's context,
// so its cancellation failed the round, and every caller sharing it got context.Canceled
// although its own context was live (an informer then took a deleted CRD for one still
// served).
func TestRecheckSurvivesTheEndOfTheFirstCallersContext(t *testing.T) {
	s := &fakeServer{groups: map[string]int{}}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis/"+fakeGroup {
			once.Do(func() {
				close(held)
				<-release
			})
		}
		s.serve(w, r)
	}))
	defer s.Close()
	var released sync.Once
	defer released.Do(func() { close(release) })
	s.setServed(true)
	c, err := New(s.config(), Options{})
	require.NoError(t, err)
	require.NoError(t, c.Refresh(t.Context()))
	gvr := schema.GroupVersionResource{Group: fakeGroup, Resource: "widgets"}

	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := c.RecheckGVR(ctx, gvr)
		first <- err
	}()
	<-held // the first caller's round is in flight
	type result struct {
		res Resource
		err error
	}
	second := make(chan result, 1)
	var waiting atomic.Int32
	go func() {
		r, err := c.RecheckGVR(countingDone{Context: t.Context(), n: &waiting}, gvr)
		second <- result{r, err}
	}()
	require.Eventually(t, func() bool { return waiting.Load() > 0 }, 10*time.Second, time.Millisecond,
		"the second caller joins the round")
	cancel()
	require.ErrorIs(t, <-first, context.Canceled, "the first caller stops waiting")
	released.Do(func() { close(release) })
	r := <-second
	require.NoError(t, r.err, "the second caller's context is live")
	assert.Equal(t, "widgets", r.res.GVR.Resource)
}

// countingDone counts the calls to Done: RecheckGVR asks for it once it waits for a round.
type countingDone struct {
	context.Context
	n *atomic.Int32
}

func (c countingDone) Done() <-chan struct{} {
	c.n.Add(1)
	return c.Context.Done()
}
