package informer

import (
	"github.com/kindex/kindex/internal/mailbox"
	"github.com/kindex/kindex/internal/store"
)

// Calls back from the caller's code that runs inside the informer's write path.
//
// An index function of the caller's (AddIndexFunc, AddItemIndexFunc) runs with the store's
// write lock held: on the processing loop, which also holds the FIFO's lock and dispatchMu,
// for every change; on an AddIndex caller's goroutine, which also holds the index set's
// lock and its reference's, for the objects already cached. The Transform runs on the
// reflector's goroutine, which a stop waits for. A call back from there that took one of
// those locks, or waited for the stop, would wait for its own caller.
//
// An event handler runs on its listener's own goroutine, without the informer's locks: it
// may call anything, and only a Shutdown from it must not wait for the handler goroutines,
// its own among them (fromHandler).
//
// Such a call is recognised by its goroutine: the processing loop's, the reflector's and an
// AddIndex caller's ids are read once (GoroutineID costs about a microsecond), and compared
// with the caller's only where it matters. A read compares only while one of the caller's
// index functions runs somewhere (inIndexFunc), that is, while the store's write lock is
// held, when the read would have waited for it anyway: a read pays one atomic load
// otherwise. Release and Shutdown, which are rare, always compare.

// callerIndexFunc wraps the caller's index function so that its calls are counted.
func (e *entry) callerIndexFunc(fn store.IndexFunc) store.IndexFunc {
	return func(obj any) ([]string, error) {
		e.inIndexFunc.Add(1)
		defer e.inIndexFunc.Add(-1)
		return fn(obj)
	}
}

// indexWriter reports whether gid is a goroutine that runs the entry's index functions with
// its locks held: only there can the caller's code call back on it.
func (e *entry) indexWriter(gid uint64) bool {
	return gid != 0 && (gid == e.loopGID.Load() || gid == e.backfillGID.Load())
}

// ownGoroutine reports whether gid runs the caller's code inside the entry's write path:
// an index function, or the Transform. Whatever must lock the store or stop the entry must
// not wait there.
func (e *entry) ownGoroutine(gid uint64) bool {
	return e.indexWriter(gid) || (gid != 0 && gid == e.reflGID.Load())
}

// reentered returns ErrCalledFromCallback if the caller runs one of the entry's index
// functions (which hold its locks), nil otherwise. It costs one atomic load unless an index
// function of the caller's is running.
func (e *entry) reentered() error {
	if e.inIndexFunc.Load() == 0 {
		return nil
	}
	if e.indexWriter(mailbox.GoroutineID()) {
		return ErrCalledFromCallback
	}
	return nil
}

// inIndexFunc returns ErrCalledFromCallback if the caller runs an index function of any of
// the factory's informers: for the factory's methods that read every informer.
func (c *core) inIndexFunc() error {
	var gid uint64
	for _, e := range c.reg.all() {
		if e.inIndexFunc.Load() == 0 {
			continue
		}
		if gid == 0 {
			gid = mailbox.GoroutineID()
		}
		if e.indexWriter(gid) {
			return ErrCalledFromCallback
		}
	}
	return nil
}

// fromOwnGoroutine reports whether the caller runs the caller's code inside any informer's
// write path (ownGoroutine): a Shutdown from there must not wait for the informers to stop.
func (c *core) fromOwnGoroutine() bool {
	gid := mailbox.GoroutineID()
	for _, e := range c.reg.all() {
		if e.ownGoroutine(gid) {
			return true
		}
	}
	return false
}

// fromHandler reports whether the caller runs on an event handler's goroutine (one of
// core.listeners): a Shutdown from there must not wait for the handler goroutines.
func (c *core) fromHandler() bool {
	gid := mailbox.GoroutineID()
	found := false
	c.listeners.Range(func(k, _ any) bool {
		found = k.(*listener).box.DeliversOn(gid)
		return !found
	})
	return found
}
