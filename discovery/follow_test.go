package discovery

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"
)

var fakeGVR = schema.GroupVersionResource{Group: fakeGroup, Version: "v1", Resource: "widgets"}

// runFollower discovers srv with a client on clk and runs its follower, without watches,
// until the test ends.
func runFollower(t *testing.T, srv *fakeServer, clk *testingclock.FakeClock) (*Client, *follower) {
	t.Helper()
	c, err := New(srv.config(), Options{Clock: clk})
	require.NoError(t, err)
	require.NoError(t, c.Refresh(t.Context()))
	f := newFollower(c)
	c.setFollower(f)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f.run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c, f
}

// stepWhenWaiting advances clk by d once the follower waits on it.
func stepWhenWaiting(t *testing.T, clk *testingclock.FakeClock, d time.Duration) {
	t.Helper()
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond, "the follower never waited")
	clk.Step(d)
}

// pastGiveUp steps clk through the fast retries, with backoff, past giveUpAfter.
func pastGiveUp(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	start := clk.Now()
	for clk.Since(start) <= giveUpAfter+retryMax {
		stepWhenWaiting(t, clk, retryMax)
	}
}

// pendingState reports whether group is pending, and whether it is retried slowly.
func (f *follower) pendingState(group string) (pending, slow bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pending[group]
	return p != nil, p != nil && p.slow
}

// A group whose watched change discovery does not show within giveUpAfter is still
// re-discovered, every RefreshInterval, so that the resource appears within one interval of
// the server serving it; it used to be dropped until the next change or the resync, minutes
// later.
func TestUnmetExpectationKeepsReDiscoveringTheGroup(t *testing.T) {
	srv := newFakeServer(t)
	clk := testingclock.NewFakeClock(time.Now())
	c, f := runFollower(t, srv, clk)
	group, expect := crdExpectation(fakeCRD(), false)
	f.mark(group, "crd/"+fakeCRD().Name, expect)

	pastGiveUp(t, clk)
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	_, err := c.CachedGVR(fakeGVR)
	require.Error(t, err, "not served yet")

	// The server serves it now; within one RefreshInterval, discovery shows it.
	srv.setServed(true)
	before := srv.groupRequests()
	stepWhenWaiting(t, clk, DefaultRefreshInterval)
	require.Eventually(t, func() bool {
		_, err := c.CachedGVR(fakeGVR)
		return err == nil
	}, 5*time.Second, time.Millisecond, "the group was given up: not re-discovered within RefreshInterval")
	require.Equal(t, before+1, srv.groupRequests(), "one per-group round")
	require.Eventually(t, func() bool {
		pending, _ := f.pendingState(group)
		return !pending
	}, 5*time.Second, time.Millisecond, "settled once the expectation holds")
}

// The slow re-discovery of a group costs one per-group round per RefreshInterval, and a new
// watch event for the group starts fast retries again.
func TestSlowReDiscoveryCostAndReset(t *testing.T) {
	srv := newFakeServer(t)
	clk := testingclock.NewFakeClock(time.Now())
	_, f := runFollower(t, srv, clk)
	group, expect := crdExpectation(fakeCRD(), false)
	f.mark(group, "crd/"+fakeCRD().Name, expect)
	pastGiveUp(t, clk)
	require.Eventually(t, func() bool {
		_, slow := f.pendingState(group)
		return slow && clk.HasWaiters()
	}, 5*time.Second, time.Millisecond)
	before := srv.groupRequests()
	for range 3 {
		stepWhenWaiting(t, clk, retryMax) // not due yet
	}
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	require.Equal(t, before, srv.groupRequests(), "no round before RefreshInterval")
	stepWhenWaiting(t, clk, DefaultRefreshInterval)
	require.Eventually(t, func() bool { return srv.groupRequests() == before+1 }, 5*time.Second, time.Millisecond)

	f.mark(group, "crd/"+fakeCRD().Name, expect)
	require.Eventually(t, func() bool {
		pending, slow := f.pendingState(group)
		return pending && !slow
	}, 5*time.Second, time.Millisecond, "a new event restarts fast retries")
}
