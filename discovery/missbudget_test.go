package discovery

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	testingclock "k8s.io/utils/clock/testing"
)

// Unknown names sent one after another cost a bounded number of re-discoveries: a burst,
// then one a second, whatever the names. Each distinct name used to re-discover everything
// (here 3 requests, one per group version on a server without aggregated discovery), so a
// caller sending names in a row kept the client re-discovering back to back.
func TestDistinctMissesShareABudgetOfReDiscoveries(t *testing.T) {
	var rounds atomic.Int32 // GET /api starts every full round
	s := &fakeServer{groups: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			rounds.Add(1)
		}
		s.serve(w, r)
	}))
	defer s.Close()
	clk := testingclock.NewFakeClock(time.Now())
	c, err := New(s.config(), Options{Clock: clk})
	require.NoError(t, err)
	ctx := t.Context()
	_, err = c.Resolve(ctx, "pods")
	require.NoError(t, err)
	rounds.Store(0)

	for i := range 100 {
		_, err := c.Resolve(ctx, fmt.Sprintf("junk%d", i))
		require.True(t, meta.IsNoMatchError(err), "%v", err)
	}
	assert.EqualValues(t, missRoundBurst, rounds.Load(), "100 unknown names in a row")

	// A miss beyond the budget was not confirmed, so it is not remembered: once the budget
	// refills, the same name is asked about again and found.
	s.setServed(true)
	_, err = c.Resolve(ctx, "widgets")
	require.True(t, meta.IsNoMatchError(err), "beyond the budget, answered from the snapshot: %v", err)
	assert.EqualValues(t, missRoundBurst, rounds.Load())
	clk.Step(missRoundEvery)
	r, err := c.Resolve(ctx, "widgets")
	require.NoError(t, err)
	assert.Equal(t, fakeGroup, r.GVR.Group)
	assert.EqualValues(t, missRoundBurst+1, rounds.Load(), "one more after a second")
}

// A miss while a full round is in flight joins it, budget or not: the round may show the
// name (here, a CRD served by the time the round reads the group list).
func TestMissBeyondTheBudgetJoinsTheRoundInFlight(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	var hold atomic.Bool
	s := &fakeServer{groups: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis" && hold.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		s.serve(w, r)
	}))
	defer s.Close()
	var released sync.Once
	defer released.Do(func() { close(release) })
	clk := testingclock.NewFakeClock(time.Now())
	c, err := New(s.config(), Options{Clock: clk})
	require.NoError(t, err)
	ctx := t.Context()
	for i := range missRoundBurst + 1 {
		_, err := c.Resolve(ctx, fmt.Sprintf("junk%d", i))
		require.True(t, meta.IsNoMatchError(err), "%v", err)
	}

	hold.Store(true)
	refreshed := make(chan error, 1)
	go func() { refreshed <- c.Refresh(ctx) }()
	<-held
	s.setServed(true)
	resolved := make(chan error, 1)
	var waiting atomic.Int32
	go func() {
		_, err := c.Resolve(countingDone{Context: ctx, n: &waiting}, "widgets")
		resolved <- err
	}()
	require.Eventually(t, func() bool { return waiting.Load() > 0 }, 10*time.Second, time.Millisecond,
		"Resolve waits for its answer")
	released.Do(func() { close(release) })
	require.NoError(t, <-refreshed)
	require.NoError(t, <-resolved, "the miss joined the round in flight")
}
