package discovery

import (
	"fmt"
	"sync"

	"github.com/go-logr/logr"
)

// Subscribe registers handler for the events of every discovery round applied after it
// returns (a subscription made before Start also sees the first discovery as Added events).
// Each subscription has its own goroutine, owned by the client, that calls handler with one
// event at a time, in the order the changes were applied; no lock of the client is held
// during the call, so handler may call the client (Resolve, Resources, even Refresh). When
// handler is called, the snapshot that Resolve reads already reflects the event. A slow
// handler delays only its own subscription (its queue is unbounded). A panic in handler is
// recovered and logged.
//
// unsubscribe stops the deliveries and waits until no call of handler is in flight; events
// still queued are dropped. It is idempotent. It must not be called from handler itself (it
// would wait for itself): call it from another goroutine.
func (c *Client) Subscribe(handler func(Event)) (unsubscribe func()) {
	s := &subscription{handler: handler, log: c.log, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	c.subs.add(s)
	go s.run()
	return func() {
		c.subs.remove(s)
		s.once.Do(func() { close(s.stop) })
		<-s.done
	}
}

// subscribers is the set of live subscriptions.
type subscribers struct {
	log logr.Logger
	mu  sync.Mutex
	set map[*subscription]struct{}
}

func (ss *subscribers) add(s *subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.set == nil {
		ss.set = map[*subscription]struct{}{}
	}
	ss.set[s] = struct{}{}
}

func (ss *subscribers) remove(s *subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.set, s)
}

// publish queues events to every subscription without blocking.
func (ss *subscribers) publish(events []Event) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for s := range ss.set {
		s.push(events)
	}
}

type subscription struct {
	handler func(Event)
	log     logr.Logger
	mu      sync.Mutex
	queue   []Event
	wake    chan struct{} // capacity 1: "the queue is not empty"
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func (s *subscription) push(events []Event) {
	s.mu.Lock()
	for _, e := range events {
		s.queue = append(s.queue, cloneEvent(e))
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscription) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, e := range batch {
			select {
			case <-s.stop:
				return
			default:
			}
			s.call(e)
		}
	}
}

func (s *subscription) call(e Event) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error(fmt.Errorf("panic: %v", r), "discovery event handler panicked", "event", e.Type.String(), "resource", e.Resource.GVR.String())
		}
	}()
	s.handler(e)
}

func cloneEvent(e Event) Event {
	e.Resource = e.Resource.clone()
	if e.Old != nil {
		o := e.Old.clone()
		e.Old = &o
	}
	return e
}
