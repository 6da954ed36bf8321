package mailbox

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collector records what a mailbox delivers.
type collector[T any] struct {
	mu  sync.Mutex
	got []T
}

func (c *collector[T]) add(v T) {
	c.mu.Lock()
	c.got = append(c.got, v)
	c.mu.Unlock()
}

func (c *collector[T]) items() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.got...)
}

func (c *collector[T]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestDeliversInPushOrder(t *testing.T) {
	var c collector[int]
	m := New(c.add, Options[int]{})
	for i := range 5000 {
		require.True(t, m.Push(i))
	}
	require.True(t, m.PushAll(5000, 5001, 5002))
	require.NoError(t, m.CloseAndDrain(t.Context()))
	assert.Equal(t, seq(5003), c.items())
	assert.Equal(t, Stats{Delivered: 5003}, m.Stats())
}

// Each producer's items arrive in the order it pushed them; PushAll's items stay together.
func TestConcurrentProducersKeepTheirOrder(t *testing.T) {
	type item struct{ producer, n int }
	var c collector[item]
	m := New(c.add, Options[item]{})
	const producers, each = 8, 2000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for n := 0; n < each; n += 2 {
				if n%4 == 0 {
					m.Push(item{p, n})
					m.Push(item{p, n + 1})
				} else {
					m.PushAll(item{p, n}, item{p, n + 1})
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, m.CloseAndDrain(t.Context()))
	got := c.items()
	require.Len(t, got, producers*each)
	next := make([]int, producers)
	for i, it := range got {
		require.Equal(t, next[it.producer], it.n, "producer %d out of order", it.producer)
		next[it.producer]++
		if it.n%4 == 2 { // the first of a PushAll pair: its second follows at once
			require.Equal(t, item{it.producer, it.n + 1}, got[i+1])
		}
	}
}

func TestPushNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	var c collector[int]
	m := New(func(v int) {
		<-release
		c.add(v)
	}, Options[int]{})
	pushed := make(chan struct{})
	go func() {
		for i := range 100_000 {
			m.Push(i)
		}
		close(pushed)
	}()
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("Push blocked behind a slow deliver")
	}
	assert.Equal(t, 100_000, m.Stats().Pending)
	close(release)
	require.NoError(t, m.CloseAndDrain(t.Context()))
	assert.Equal(t, seq(100_000), c.items())
}

func TestPanicIsRecoveredAndReported(t *testing.T) {
	type report struct {
		item      int
		recovered any
		stack     string
	}
	var c collector[int]
	var reports collector[report]
	m := New(func(v int) {
		if v%3 == 0 {
			panic("bad item")
		}
		c.add(v)
	}, Options[int]{OnPanic: func(item int, r any, stack []byte) {
		reports.add(report{item, r, string(stack)})
		if item == 3 {
			panic("and a bad reporter")
		}
	}})
	for i := range 10 {
		m.Push(i)
	}
	require.NoError(t, m.CloseAndDrain(t.Context()))
	assert.Equal(t, []int{1, 2, 4, 5, 7, 8}, c.items())
	rs := reports.items()
	require.Len(t, rs, 4)
	for k, r := range rs {
		assert.Equal(t, 3*k, r.item)
		assert.Equal(t, "bad item", r.recovered)
		assert.Contains(t, r.stack, "TestPanicIsRecoveredAndReported", "the stack is the panicking goroutine's")
	}
	assert.Equal(t, Stats{Delivered: 10, Panics: 4}, m.Stats())

	// Without OnPanic, a panic is counted only.
	quiet := New(func(int) { panic("x") }, Options[int]{})
	quiet.Push(1)
	require.NoError(t, quiet.CloseAndDrain(t.Context()))
	assert.Equal(t, uint64(1), quiet.Stats().Panics)
}

// blocker is a deliver function that signals each call and waits for a release.
type blocker struct {
	entered chan int
	release chan struct{}
	c       collector[int]
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan int, 1000), release: make(chan struct{})}
}

func (b *blocker) deliver(v int) {
	b.entered <- v
	<-b.release
	b.c.add(v)
}

// returned runs f in a goroutine and returns a channel closed when f has returned.
func returned(f func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		f()
		close(ch)
	}()
	return ch
}

func TestCloseDropsQueuedAndWaitsForTheCallInFlight(t *testing.T) {
	b := newBlocker()
	m := New(b.deliver, Options[int]{})
	for i := range 5 {
		m.Push(i)
	}
	require.Equal(t, 0, <-b.entered)
	closed := returned(m.Close)
	select {
	case <-closed:
		t.Fatal("Close returned while deliver was running")
	case <-time.After(50 * time.Millisecond):
	}
	require.Eventually(t, func() bool { return m.state.Load() == stopped }, 5*time.Second, time.Millisecond)
	assert.False(t, m.Push(99), "a closed mailbox refuses pushes")
	close(b.release)
	<-closed
	assert.Equal(t, []int{0}, b.c.items(), "the call in flight completes; nothing else starts")
	assert.Equal(t, Stats{Delivered: 1, Dropped: 5}, m.Stats())
	select {
	case <-m.Done():
	default:
		t.Fatal("Done is not closed after Close returned")
	}
	m.Close() // idempotent
	require.NoError(t, m.CloseAndDrain(t.Context()), "nothing left to drain")
	assert.False(t, m.PushAll(1, 2))
	assert.Equal(t, uint64(7), m.Stats().Dropped)
}

func TestCloseOfAnIdleMailbox(t *testing.T) {
	m := New(func(int) {}, Options[int]{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(m.Close) // concurrent closes all return
	}
	wg.Wait()
	<-m.Done()
}

func TestCloseAndDrainDeliversEverything(t *testing.T) {
	b := newBlocker()
	m := New(b.deliver, Options[int]{})
	for i := range 5 {
		m.Push(i)
	}
	<-b.entered
	errc := make(chan error, 1)
	go func() { errc <- m.CloseAndDrain(context.Background()) }()
	require.Eventually(t, func() bool { return m.state.Load() == draining }, 5*time.Second, time.Millisecond)
	assert.False(t, m.Push(99), "pushes are refused while draining")
	close(b.release)
	require.NoError(t, <-errc)
	assert.Equal(t, seq(5), b.c.items())
	assert.Equal(t, 0, m.Stats().Pending)
}

func TestCloseAndDrainGivesUpWhenTheContextEnds(t *testing.T) {
	b := newBlocker()
	m := New(b.deliver, Options[int]{})
	for i := range 5 {
		m.Push(i)
	}
	<-b.entered
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := m.CloseAndDrain(ctx) // returns although deliver is still blocked
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-m.Done():
		t.Fatal("Done closed while deliver was running")
	default:
	}
	close(b.release)
	<-m.Done()
	assert.Equal(t, []int{0}, b.c.items(), "the rest was dropped")
	assert.Equal(t, Stats{Delivered: 1, Dropped: 4}, m.Stats())
}

// Close while CloseAndDrain is draining stops at once.
func TestCloseDuringDrainStops(t *testing.T) {
	b := newBlocker()
	m := New(b.deliver, Options[int]{})
	for i := range 5 {
		m.Push(i)
	}
	<-b.entered
	drained := make(chan error, 1)
	go func() { drained <- m.CloseAndDrain(context.Background()) }()
	require.Eventually(t, func() bool { return m.state.Load() == draining }, 5*time.Second, time.Millisecond)
	closed := returned(m.Close)
	require.Eventually(t, func() bool { return m.state.Load() == stopped }, 5*time.Second, time.Millisecond)
	close(b.release)
	<-closed
	require.NoError(t, <-drained)
	assert.Equal(t, []int{0}, b.c.items())
}

func TestCloseFromDeliverDoesNotDeadlock(t *testing.T) {
	var c collector[int]
	var m *Mailbox[int]
	closeReturned := make(chan struct{})
	m = New(func(v int) {
		c.add(v)
		if v == 2 {
			m.Close() // returns at once; nothing is delivered after this call
			close(closeReturned)
			m.Push(100) // refused, not a deadlock either
		}
	}, Options[int]{})
	for i := range 10 {
		m.Push(i)
	}
	select {
	case <-closeReturned:
	case <-time.After(5 * time.Second):
		t.Fatal("Close from deliver deadlocked")
	}
	<-m.Done()
	assert.Equal(t, []int{0, 1, 2}, c.items())
	m.Close() // from outside, after: returns at once
}

func TestCloseAndDrainFromDeliverDeliversTheRest(t *testing.T) {
	var c collector[int]
	var m *Mailbox[int]
	m = New(func(v int) {
		c.add(v)
		if v == 2 {
			if err := m.CloseAndDrain(context.Background()); err != nil {
				panic(err)
			}
			if m.Push(100) {
				panic("pushed while draining")
			}
		}
	}, Options[int]{})
	m.PushAll(seq(10)...)
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("CloseAndDrain from deliver deadlocked")
	}
	assert.Equal(t, seq(10), c.items())
	assert.Zero(t, m.Stats().Panics)
}

func TestDeliverMayPushToItsOwnMailbox(t *testing.T) {
	var c collector[int]
	var m *Mailbox[int]
	m = New(func(v int) {
		c.add(v)
		if v < 100 {
			m.Push(v + 1)
		}
	}, Options[int]{})
	m.Push(0)
	require.Eventually(t, func() bool { return c.len() == 101 }, 5*time.Second, time.Millisecond)
	m.Close()
	assert.Equal(t, seq(101), c.items())
}

// Whatever the interleaving of pushes and a close, every push is accounted for: delivered,
// or dropped (queued then discarded, or refused).
func TestPushRacingCloseIsAccountedFor(t *testing.T) {
	for round := range 20 {
		var delivered atomic.Int64
		m := New(func(int) { delivered.Add(1) }, Options[int]{})
		var accepted atomic.Int64
		var wg sync.WaitGroup
		const producers, each = 4, 500
		for range producers {
			wg.Go(func() {
				for i := range each {
					if m.Push(i) {
						accepted.Add(1)
					}
				}
			})
		}
		time.Sleep(time.Duration(round%4) * 100 * time.Microsecond) // close early, midway or late
		m.Close()
		wg.Wait()
		s := m.Stats()
		assert.Zero(t, s.Pending)
		assert.Equal(t, uint64(delivered.Load()), s.Delivered)
		assert.Equal(t, uint64(producers*each), s.Delivered+s.Dropped)
		assert.LessOrEqual(t, delivered.Load(), accepted.Load())
	}
}

// Delivered items are released one by one, while the rest of their batch waits, and the
// array of a burst is not kept once delivered.
func TestMemoryIsReleasedAsItDrains(t *testing.T) {
	type payload struct{ buf [1 << 10]byte }
	b := newBlocker()
	m := New(func(p *payload) { b.deliver(int(p.buf[0])) }, Options[*payload]{})
	defer m.Close()
	var refs []weak.Pointer[payload]
	items := make([]*payload, 200)
	for i := range items {
		items[i] = &payload{}
		items[i].buf[0] = byte(i % 2)
		refs = append(refs, weak.Make(items[i]))
	}
	m.PushAll(items...) // one batch
	items = nil
	// Deliver the first 100 and hold the 101st.
	for range 100 {
		<-b.entered
		b.release <- struct{}{}
	}
	<-b.entered
	runtime.GC()
	for i, r := range refs {
		switch {
		case i < 100:
			assert.Nil(t, r.Value(), "item %d was delivered: the mailbox must not keep it", i)
		default:
			assert.NotNil(t, r.Value(), "item %d is queued", i)
		}
	}
	close(b.release)
	require.Eventually(t, func() bool { return m.Stats().Pending == 0 }, 5*time.Second, time.Millisecond)

	// A burst much larger than the spare array leaves no large array behind.
	m2 := New(func(int) {}, Options[int]{})
	defer m2.Close()
	m2.PushAll(seq(100_000)...)
	require.Eventually(t, func() bool {
		if m2.Stats().Pending != 0 {
			return false
		}
		m2.mu.Lock()
		defer m2.mu.Unlock()
		return cap(m2.queue) <= spareMax && cap(m2.spare) <= spareMax
	}, 5*time.Second, time.Millisecond)
}

// Closing leaves no goroutine behind, whichever way the mailbox is closed.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	gate := make(chan struct{})
	started := make(chan struct{}, 30)
	var ms []*Mailbox[int]
	for range 30 {
		m := New(func(v int) {
			if v == 0 {
				started <- struct{}{}
				<-gate
			}
			if v == 3 {
				panic("x")
			}
		}, Options[int]{})
		m.PushAll(seq(10)...)
		ms = append(ms, m)
	}
	// Each mailbox delivers on a goroutine of its own: all 30 are in their handler at once.
	// (Counting runtime.NumGoroutine against a count taken before was flaky: goroutines of
	// earlier tests may end in between.)
	for range 30 {
		<-started
	}
	close(gate)
	for i, m := range ms {
		switch i % 3 {
		case 0:
			m.Close()
		case 1:
			require.NoError(t, m.CloseAndDrain(t.Context()))
		case 2:
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if err := m.CloseAndDrain(ctx); err != nil {
				require.True(t, errors.Is(err, context.Canceled))
			}
			<-m.Done()
		}
	}
	goleak.VerifyNone(t, ignore)
}

func TestNewRefusesNilDeliver(t *testing.T) {
	assert.Panics(t, func() { New[int](nil, Options[int]{}) })
}

func TestGoroutineID(t *testing.T) {
	id := goroutineID()
	require.NotZero(t, id)
	assert.Equal(t, id, goroutineID(), "stable within a goroutine")
	other := make(chan uint64)
	go func() { other <- goroutineID() }()
	o := <-other
	assert.NotZero(t, o)
	assert.NotEqual(t, id, o)
}

// Stop and Drain return at once, while deliver is still running.
func TestStopAndDrainDoNotWait(t *testing.T) {
	for _, tt := range []struct {
		name string
		stop func(*Mailbox[int])
		want []int
	}{
		{"Stop", (*Mailbox[int]).Stop, []int{0}},
		{"Drain", (*Mailbox[int]).Drain, seq(5)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newBlocker()
			m := New(b.deliver, Options[int]{})
			m.PushAll(seq(5)...)
			<-b.entered
			select {
			case <-returned(func() { tt.stop(m) }):
			case <-time.After(5 * time.Second):
				t.Fatal("it waited for deliver")
			}
			assert.False(t, m.Push(99))
			select {
			case <-m.Done():
				t.Fatal("Done closed while deliver was running")
			default:
			}
			close(b.release)
			<-m.Done()
			assert.Equal(t, tt.want, b.c.items())
			assert.Zero(t, m.Stats().Pending)
		})
	}
}

// A paused mailbox queues and delivers nothing until Resume, then everything in push order;
// a batch already taken is finished; Drain ends a pause by delivering, Close by dropping.
func TestPauseHoldsDeliveryUntilResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector[int]
		m := New(c.add, Options[int]{})
		m.Push(0)
		synctest.Wait()
		require.Equal(t, []int{0}, c.items())

		m.Pause()
		m.Pause() // idempotent
		for i := 1; i <= 100; i++ {
			m.Push(i)
		}
		m.PushAll(101, 102)
		synctest.Wait() // the goroutine is durably blocked: nothing more is delivered
		assert.Equal(t, []int{0}, c.items())
		assert.Equal(t, 102, m.Stats().Pending)

		m.Resume()
		synctest.Wait()
		assert.Equal(t, seq(103), c.items())
		m.Resume() // not paused: nothing happens
		m.Push(103)
		synctest.Wait()
		assert.Equal(t, seq(104), c.items())

		m.Pause()
		m.Push(104)
		require.NoError(t, m.CloseAndDrain(t.Context()), "Drain delivers what a pause held")
		assert.Equal(t, seq(105), c.items())
	})
	synctest.Test(t, func(t *testing.T) {
		var c collector[int]
		m := New(c.add, Options[int]{})
		m.Pause()
		m.PushAll(seq(10)...)
		m.Close()
		assert.Empty(t, c.items(), "Close drops what a pause held")
		assert.Equal(t, Stats{Dropped: 10}, m.Stats())
	})
}

// Pause during a batch: the items the goroutine already took are delivered, the rest wait.
func TestPauseFinishesTheBatchInFlight(t *testing.T) {
	b := newBlocker()
	m := New(b.deliver, Options[int]{})
	m.PushAll(0, 1, 2) // one batch
	require.Equal(t, 0, <-b.entered)
	m.Pause()
	m.Push(3) // queued behind the pause
	close(b.release)
	require.Equal(t, 1, <-b.entered)
	require.Equal(t, 2, <-b.entered)
	require.Eventually(t, func() bool { return m.Stats().Pending == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []int{0, 1, 2}, b.c.items())
	m.Resume()
	require.Equal(t, 3, <-b.entered)
	m.Close()
	assert.Equal(t, seq(4), b.c.items())
}
