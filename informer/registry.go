package informer

import (
	"sync"

	"github.com/kindex/kindex/internal/mailbox"
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

// acquire returns the live entry of key with one more reference, creating and starting it
// if there is none. When it creates the entry, it adds co's handlers to it before starting
// it, so that they see everything the entry handles, and returns their registrations (none
// otherwise).
// A caller that named the resource's version (not co.versionFree) pins it: the entry never
// follows it to another (entry.follow), whoever else holds it. Unless co.ownKey, an entry
// that followed its resource to key's version from another serves key too (followedTo).
func (r *registry) acquire(c *core, key Key, t storage.Target, co callOptions) (*entry, []*Registration, error) {
	handlers, pinned := co.handlers, !co.versionFree
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, nil, ErrShutdown
		}
		e := r.entries[key]
		if e == nil && !co.ownKey {
			e = r.followedTo(key)
		}
		if e == nil {
			e = newEntry(c, key, t)
			e.pinned.Store(pinned)
			e.refs = 1
			r.entries[key] = e
			regs := make([]*Registration, 0, len(handlers))
			for _, h := range handlers {
				// A new entry: no I/O, no wait, and no error unless it was stopped.
				reg, err := e.addHandler(h)
				if err != nil {
					delete(r.entries, key)
					r.mu.Unlock()
					return nil, nil, err
				}
				regs = append(regs, reg)
			}
			e.start()
			r.mu.Unlock()
			return e, regs, nil
		}
		if e.closing == nil {
			if pinned {
				e.pinned.Store(true)
			}
			e.refs++
			r.mu.Unlock()
			return e, nil, nil
		}
		closing := e.closing
		r.mu.Unlock()
		if e.ownGoroutine(mailbox.GoroutineID()) {
			// The entry's own Transform or index function released it: its stop waits
			// for the caller's return.
			return nil, nil, ErrCalledFromCallback
		}
		<-closing
	}
}

// followedTo returns the live entry that was made for key at another version and has
// followed its resource to key's version (entry.follow), or nil: an informer asked for
// after a version was retired shares the one that moved there instead of listing the
// resource a second time. The caller holds r.mu.
func (r *registry) followedTo(key Key) *entry {
	for k, e := range r.entries {
		if e.closing != nil || !e.followed.Load() || k.GVR.GroupResource() != key.GVR.GroupResource() {
			continue
		}
		k.GVR.Version = key.GVR.Version
		if k == key && e.gvr() == key.GVR {
			return e
		}
	}
	return nil
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
	e.stop(haltReleased)
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

// all returns every entry, stopping ones included.
func (r *registry) all() []*entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
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
		e.stop(haltShutdown)
	}
}
