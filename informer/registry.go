package informer

import (
	"sync"

	"github.com/kindex/kindex/internal/storage"
)

// registry maps keys to live entries with reference counts. Creation happens under its lock
// (it does no I/O: an entry's requests start on its own goroutine), so concurrent acquires of
// one key always share one entry. A key whose entry is being stopped waits for the stop to
// finish and then gets a fresh entry: at most one live entry per key, and a released
// resource acquired again syncs afresh.
type registry struct {
	mu      sync.Mutex
	entries map[Key]*entry
	closed  bool
}

func newRegistry() *registry { return &registry{entries: map[Key]*entry{}} }

func (r *registry) acquire(c *core, key Key, t storage.Target) (*entry, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrShutdown
		}
		e := r.entries[key]
		if e == nil {
			e = newEntry(c, key, t)
			e.refs = 1
			r.entries[key] = e
			e.start()
			r.mu.Unlock()
			return e, nil
		}
		if e.closing == nil {
			e.refs++
			r.mu.Unlock()
			return e, nil
		}
		closing := e.closing
		r.mu.Unlock()
		<-closing
	}
}

// release drops one reference; the last one stops the entry (waiting for its reflector and
// processing loop, not for handlers) and removes it.
func (r *registry) release(e *entry) {
	r.mu.Lock()
	e.refs--
	if e.refs > 0 || e.closing != nil {
		r.mu.Unlock()
		return
	}
	e.closing = make(chan struct{})
	r.mu.Unlock()
	e.stop()
	r.mu.Lock()
	if r.entries[e.key] == e {
		delete(r.entries, e.key)
	}
	close(e.closing)
	r.mu.Unlock()
}

// list returns the live entries.
func (r *registry) list() []*entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		if e.closing == nil {
			out = append(out, e)
		}
	}
	return out
}

// close refuses new acquires and stops every entry.
func (r *registry) close() {
	r.mu.Lock()
	r.closed = true
	all := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		all = append(all, e)
	}
	r.mu.Unlock()
	for _, e := range all {
		e.stop()
	}
}
