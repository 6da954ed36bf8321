package discovery

import (
	"fmt"
	"sync"

	"github.com/kindex/kindex/internal/mailbox"
)

// Subscribe registers handler for the events of every discovery round applied after it
// returns (a subscription made before Start also sees the first discovery as Added events).
// Each subscription has its own goroutine, owned by the client, that calls handler with one
// event at a time, in the order the changes were applied; no lock of the client is held
// during the call, so handler may call the client (Resolve, Resources, even Refresh). When
// handler is called, the snapshot that Resolve reads already reflects the event. A slow
// handler delays only its own subscription (its queue is unbounded, and an event is released
// as soon as handler has returned for it). A panic in handler is recovered and logged, and
// the next event is delivered. A nil handler is refused with ErrNilHandler.
//
// unsubscribe stops the deliveries: events still queued are dropped. Called from another
// goroutine, it waits until the call of handler in flight, if any, has returned and the
// subscription's goroutine has exited; after it returns, handler is not called again.
// Called from handler itself, it returns at once (it cannot wait for itself), and no event
// is delivered after that call of handler returns. It is idempotent.
func (c *Client) Subscribe(handler func(Event)) (unsubscribe func(), err error) {
	if handler == nil {
		return nil, ErrNilHandler
	}
	if !c.valid() {
		return nil, ErrUninitialized
	}
	log := c.log
	s := mailbox.New(handler, mailbox.Options[Event]{OnPanic: func(e Event, r any, stack []byte) {
		log.Error(fmt.Errorf("panic: %v", r), "discovery event handler panicked",
			"event", e.Type.String(), "resource", e.Resource.GVR.String(), "stack", string(stack))
	}})
	c.subs.add(s)
	return func() {
		c.subs.remove(s)
		s.Close()
	}, nil
}

// subscribers is the set of live subscriptions.
type subscribers struct {
	mu  sync.Mutex
	set map[*mailbox.Mailbox[Event]]struct{}
}

func (ss *subscribers) add(s *mailbox.Mailbox[Event]) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.set == nil {
		ss.set = map[*mailbox.Mailbox[Event]]struct{}{}
	}
	ss.set[s] = struct{}{}
}

func (ss *subscribers) remove(s *mailbox.Mailbox[Event]) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.set, s)
}

// publish queues events to every subscription without blocking. Each subscription gets its
// own copies, which its handler may keep or modify.
func (ss *subscribers) publish(events []Event) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for s := range ss.set {
		batch := make([]Event, len(events))
		for i, e := range events {
			batch[i] = cloneEvent(e)
		}
		s.PushAll(batch...)
	}
}

func cloneEvent(e Event) Event {
	e.Resource = e.Resource.clone()
	if e.Old != nil {
		o := e.Old.clone()
		e.Old = &o
	}
	return e
}
