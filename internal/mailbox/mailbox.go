package mailbox

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// spareMax is the largest backing array a mailbox keeps for reuse once it is delivered.
const spareMax = 64

// Options configures a Mailbox. The zero value is valid.
type Options[T any] struct {
	// OnPanic, if set, is called on the mailbox's goroutine after deliver panicked on item,
	// with the recovered value and the goroutine's stack at the panic. A panic in OnPanic is
	// recovered and ignored. Default: the panic is only counted (Stats.Panics).
	OnPanic func(item T, recovered any, stack []byte)
}

// Stats counts what a mailbox did.
type Stats struct {
	// Pending is the number of items pushed and neither delivered nor dropped yet.
	Pending int
	// Delivered counts completed calls of deliver, including those that panicked.
	Delivered uint64
	// Dropped counts items discarded by a close (and pushes refused after it).
	Dropped uint64
	// Panics counts calls of deliver that panicked.
	Panics uint64
}

// state of a mailbox; it only moves forward.
const (
	open     int32 = iota
	draining       // closed for pushes; the queue is still delivered
	stopped        // closed; nothing more is delivered
)

// Mailbox is an unbounded FIFO queue whose items one goroutine delivers in order. Create it
// with New. See the package documentation for its semantics.
type Mailbox[T any] struct {
	deliver func(T)
	onPanic func(T, any, []byte)

	mu     sync.Mutex
	cond   *sync.Cond // signalled on push and on close; guarded by mu
	queue  []T        // pushed, not yet taken by the goroutine
	spare  []T        // an empty small array for the next queue
	paused bool       // guarded by mu; see Pause
	state  atomic.Int32

	pending   atomic.Int64
	delivered atomic.Uint64
	dropped   atomic.Uint64
	panics    atomic.Uint64

	gid  atomic.Uint64 // the delivery goroutine's id, to recognise a close from deliver
	done chan struct{}
}

// New returns an open mailbox that calls deliver for each item pushed, and starts its
// goroutine. deliver must not be nil. The goroutine runs until the mailbox is closed.
func New[T any](deliver func(T), opts Options[T]) *Mailbox[T] {
	if deliver == nil {
		panic("mailbox: nil deliver function")
	}
	m := &Mailbox[T]{deliver: deliver, onPanic: opts.OnPanic, done: make(chan struct{})}
	m.cond = sync.NewCond(&m.mu)
	ready := make(chan struct{})
	go m.run(ready)
	<-ready // the goroutine's id is known before any close can ask for it
	return m
}

// Push queues v for delivery and returns true, or drops v and returns false if the mailbox
// is closed. It never blocks on deliver.
func (m *Mailbox[T]) Push(v T) bool {
	m.mu.Lock()
	if m.state.Load() != open {
		m.mu.Unlock()
		m.dropped.Add(1)
		return false
	}
	m.queue = append(m.queue, v)
	m.pending.Add(1)
	m.mu.Unlock()
	m.cond.Signal()
	return true
}

// PushAll queues vs, in order and together (no item another goroutine pushes comes between
// them), and returns true, or drops them and returns false if the mailbox is closed.
func (m *Mailbox[T]) PushAll(vs ...T) bool {
	if len(vs) == 0 {
		return m.state.Load() == open
	}
	m.mu.Lock()
	if m.state.Load() != open {
		m.mu.Unlock()
		m.dropped.Add(uint64(len(vs)))
		return false
	}
	m.queue = append(m.queue, vs...)
	m.pending.Add(int64(len(vs)))
	m.mu.Unlock()
	m.cond.Signal()
	return true
}

// Pause holds delivery: items pushed from now on, and those queued and not yet taken by the
// goroutine, are kept until Resume. A batch the goroutine already took is delivered to its
// end (Stats.Pending tells what is left). A close ends a pause: Close and Stop drop what is
// queued, Drain and CloseAndDrain deliver it. Pausing a paused mailbox does nothing.
func (m *Mailbox[T]) Pause() {
	m.mu.Lock()
	m.paused = true
	m.mu.Unlock()
}

// Resume ends a pause: what was queued meanwhile is delivered, in push order. Resuming a
// mailbox that is not paused does nothing.
func (m *Mailbox[T]) Resume() {
	m.mu.Lock()
	m.paused = false
	m.mu.Unlock()
	m.cond.Signal()
}

// Close stops the mailbox: queued items are dropped and pushes are refused; only the call of
// deliver in flight (or starting) when Close is called completes. Close waits until it has
// returned and the goroutine has exited: after Close returns, deliver is not running and is
// not called again. Called from deliver itself, Close returns at once, and deliver is not
// called again after that call returns. It is idempotent. Close is Stop, then a wait for
// Done.
func (m *Mailbox[T]) Close() {
	m.Stop()
	if m.fromDeliver() {
		return
	}
	<-m.done
}

// CloseAndDrain refuses further pushes, delivers every item already queued, and waits until
// the goroutine has exited; it returns nil then. If ctx ends first, the items not yet
// delivered are dropped as by Close, and CloseAndDrain returns ctx.Err() without waiting for
// the call of deliver in flight (Done tells when it has returned). Called from deliver
// itself, it returns nil at once: the rest of the queue is delivered after deliver returns.
// CloseAndDrain is Drain, then a wait for Done bounded by ctx.
func (m *Mailbox[T]) CloseAndDrain(ctx context.Context) error {
	m.Drain()
	if m.fromDeliver() {
		return nil
	}
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
		m.Stop()
		return ctx.Err()
	}
}

// Stop is Close without the wait: it drops what is queued, refuses pushes, and returns at
// once; only the call of deliver in flight (or starting) completes, and the goroutine exits
// when it returns (Done). For a caller that must not wait, for example one that holds a lock deliver
// may take.
func (m *Mailbox[T]) Stop() {
	m.mu.Lock()
	if m.state.Load() != stopped {
		m.state.Store(stopped)
		m.dropLocked(m.queue)
		m.queue, m.spare = nil, nil
	}
	m.mu.Unlock()
	m.cond.Signal()
}

// Drain is CloseAndDrain without the wait: it refuses further pushes and returns at once;
// what is queued is still delivered, then the goroutine exits (Done). A later Stop or Close
// drops what is left.
func (m *Mailbox[T]) Drain() {
	m.mu.Lock()
	if m.state.Load() == open {
		m.state.Store(draining)
	}
	m.mu.Unlock()
	m.cond.Signal()
}

// Done returns a channel that is closed when the mailbox's goroutine has exited: after a
// close, once the call of deliver in flight has returned (and, for CloseAndDrain, the queue
// has been delivered).
func (m *Mailbox[T]) Done() <-chan struct{} { return m.done }

// Stats returns the mailbox's counters.
func (m *Mailbox[T]) Stats() Stats {
	return Stats{
		Pending:   int(m.pending.Load()),
		Delivered: m.delivered.Load(),
		Dropped:   m.dropped.Load(),
		Panics:    m.panics.Load(),
	}
}

// dropLocked counts items as dropped and releases them.
func (m *Mailbox[T]) dropLocked(items []T) {
	if len(items) == 0 {
		return
	}
	m.dropped.Add(uint64(len(items)))
	m.pending.Add(-int64(len(items)))
	clear(items)
}

func (m *Mailbox[T]) run(ready chan<- struct{}) {
	defer close(m.done)
	m.gid.Store(goroutineID())
	close(ready)
	for {
		m.mu.Lock()
		for (len(m.queue) == 0 || m.paused) && m.state.Load() == open {
			m.cond.Wait()
		}
		if len(m.queue) == 0 || m.state.Load() == stopped {
			m.mu.Unlock()
			return
		}
		batch := m.queue
		m.queue, m.spare = m.spare, nil
		m.mu.Unlock()

		for i := range batch {
			if m.state.Load() == stopped {
				m.mu.Lock()
				m.dropLocked(batch[i:])
				m.mu.Unlock()
				break
			}
			m.call(batch[i])
			var zero T
			batch[i] = zero // release the item now, not when the batch is done
			m.pending.Add(-1)
		}
		if cap(batch) <= spareMax {
			m.mu.Lock()
			if m.spare == nil && m.state.Load() != stopped {
				m.spare = batch[:0]
			}
			m.mu.Unlock()
		}
	}
}

// call delivers one item, recovering a panic.
func (m *Mailbox[T]) call(v T) {
	defer m.delivered.Add(1)
	defer func() {
		if r := recover(); r != nil {
			m.panics.Add(1)
			if m.onPanic != nil {
				m.report(v, r, debug.Stack())
			}
		}
	}()
	m.deliver(v)
}

func (m *Mailbox[T]) report(v T, r any, stack []byte) {
	defer func() { _ = recover() }()
	m.onPanic(v, r, stack)
}

// fromDeliver reports whether the caller runs on the mailbox's goroutine, that is, in
// deliver (or in OnPanic).
func (m *Mailbox[T]) fromDeliver() bool { return m.DeliversOn(goroutineID()) }

// DeliversOn reports whether gid (a GoroutineID) is the mailbox's delivery goroutine: a
// caller that got gid from GoroutineID runs in deliver (or in OnPanic), and must not wait
// for the mailbox's goroutine to end.
func (m *Mailbox[T]) DeliversOn(gid uint64) bool { return gid != 0 && gid == m.gid.Load() }

// GoroutineID returns the calling goroutine's id (0 if it cannot be read), for DeliversOn
// and for callers that must recognise their own goroutines to avoid waiting for
// themselves. It costs a stack header's formatting, about a microsecond: not for hot paths.
func GoroutineID() uint64 { return goroutineID() }

// goroutineID returns the calling goroutine's id, read from the header of its stack trace
// ("goroutine 123 [running]:"). Go offers no other way to recognise a goroutine; it is only
// used where a goroutine must not wait for itself (a close from deliver, GoroutineID's
// callers). It returns 0 if the header cannot be read.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0
	}
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
