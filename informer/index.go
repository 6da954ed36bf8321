package informer

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/kindex/kindex/internal/mailbox"
	"github.com/kindex/kindex/internal/store"
)

// Index registration. An informer's index names are the entry's: every reference sees the
// names registered through any of them (queries and IndexStats by name), and a name means one
// definition. Each name is backed by one store index keyed by its definition (storeKey), so
// names with the same definition, and the owner index, share one store index; the store
// counts one reference per registration and frees the index with the last.

// indexSpec is what a name stands for.
type indexSpec struct {
	// key is the store index: "jsonpath:" + the canonical expression, "builtin:<name>" or
	// "func:<name>" (a function cannot be compared, so it is keyed by its name).
	key string
	// def describes the definition in errors and stats: the canonical expression,
	// "builtin:<name>" or "func:<name>".
	def string
	fn  store.IndexFunc
	// exclusive: the caller's function (AddIndexFunc, AddItemIndexFunc); its name cannot be
	// registered a second time while held. It may call the informer back (reentry.go).
	exclusive bool
}

// namedIndex is an index of Options.Indexes.
type namedIndex struct {
	name string
	spec indexSpec
}

// indexName is one name registered on an entry and how many references hold it.
type indexName struct {
	spec indexSpec
	refs int
}

// indexSet is an entry's index names. Its lock is taken before the store's (registration
// backfills under the store's lock) and never across anything else.
type indexSet struct {
	mu    sync.RWMutex
	names map[string]*indexName
	owner bool // the owner-uid and uid indexes of Dependents and Orphans are registered
	// sorted is the names, sorted, published under mu on every change: IndexNames reads it
	// without the lock, which AddIndex holds while the caller's index function runs.
	sorted atomic.Pointer[[]string]
}

// publish records the names for IndexNames; mu is held.
func (s *indexSet) publish() {
	out := make([]string, 0, len(s.names))
	for name := range s.names {
		out = append(out, name)
	}
	sort.Strings(out)
	s.sorted.Store(&out)
}

// addIndex registers one reference to name. The store backfills the objects it holds.
func (e *entry) addIndex(name string, spec indexSpec) error {
	st := e.store
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	if e.ctx.Err() != nil {
		return ErrReleased
	}
	if n := e.idx.names[name]; n != nil {
		if n.spec.key != spec.key || spec.exclusive {
			return &IndexConflictError{Name: name, Existing: n.spec.def, Requested: spec.def}
		}
		if err := st.AddIndex(n.spec.key, n.spec.fn); err != nil {
			return err
		}
		n.refs++
		return nil
	}
	fn := spec.fn
	if spec.exclusive {
		// The caller's function: a call back from it must be recognised (reentry.go), on
		// this goroutine while the store indexes what it holds, then on the processing
		// loop's.
		fn = e.callerIndexFunc(fn)
		e.backfillGID.Store(mailbox.GoroutineID())
		defer e.backfillGID.Store(0)
	}
	if err := st.AddIndex(spec.key, fn); err != nil {
		return err
	}
	if e.idx.names == nil {
		e.idx.names = map[string]*indexName{}
	}
	e.idx.names[name] = &indexName{spec: spec, refs: 1}
	e.idx.publish()
	return nil
}

// removeIndex drops one reference to name; the store frees its index with the last
// reference to the definition.
func (e *entry) removeIndex(name string) error {
	st := e.store
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	n := e.idx.names[name]
	if n == nil {
		return &store.IndexNotFoundError{Name: name}
	}
	if n.refs--; n.refs == 0 {
		delete(e.idx.names, name)
		e.idx.publish()
	}
	_, err := st.RemoveIndex(n.spec.key)
	return err
}

// indexSpecOf returns the definition of a registered name.
func (e *entry) indexSpecOf(name string) (indexSpec, bool) {
	e.idx.mu.RLock()
	defer e.idx.mu.RUnlock()
	n := e.idx.names[name]
	if n == nil {
		return indexSpec{}, false
	}
	return n.spec, true
}

// indexNames returns the registered names, sorted, without taking the set's lock.
func (e *entry) indexNames() []string {
	p := e.idx.sorted.Load()
	if p == nil {
		return []string{}
	}
	return slices.Clone(*p)
}

func (e *entry) indexStats(name string) (IndexStats, error) {
	if err := e.reentered(); err != nil {
		return IndexStats{}, err
	}
	st := e.store
	e.idx.mu.RLock()
	n := e.idx.names[name]
	var spec indexSpec
	var refs int
	if n != nil {
		spec, refs = n.spec, n.refs
	}
	e.idx.mu.RUnlock()
	if n == nil {
		return IndexStats{}, &store.IndexNotFoundError{Name: name}
	}
	s, err := st.IndexStats(spec.key)
	if err != nil {
		return IndexStats{}, fmt.Errorf("kindex: index %s: %w", quote(name), err)
	}
	return IndexStats{Name: name, Definition: spec.def, Values: s.Values, Entries: s.Entries,
		Errors: s.Errors, LastError: s.LastError, References: refs, Shared: s.Refs}, nil
}

// addIndex registers name through this reference: the index is removed when the reference
// is released. Registering a name the reference already holds with the same JSONPath or
// built-in is a no-op.
func (h *handle) addIndex(name string, spec indexSpec) error {
	if err := validIndexName(name); err != nil {
		return err
	}
	if err := h.e.reentered(); err != nil {
		return err
	}
	h.idxMu.Lock()
	defer h.idxMu.Unlock()
	if h.released.Load() {
		return ErrReleased
	}
	if _, held := h.indexes[name]; held {
		cur, ok := h.e.indexSpecOf(name)
		if ok && cur.key == spec.key && !spec.exclusive {
			return nil
		}
		return &IndexConflictError{Name: name, Existing: cur.def, Requested: spec.def}
	}
	if err := h.e.addIndex(name, spec); err != nil {
		return h.stoppedErr(err)
	}
	if h.indexes == nil {
		h.indexes = map[string]struct{}{}
	}
	h.indexes[name] = struct{}{}
	return nil
}

func (h *handle) removeIndex(name string) error {
	if err := h.e.reentered(); err != nil {
		return err
	}
	h.idxMu.Lock()
	_, held := h.indexes[name]
	delete(h.indexes, name)
	h.idxMu.Unlock()
	if !held {
		if h.released.Load() {
			return ErrReleased
		}
		return &store.IndexNotFoundError{Name: name}
	}
	return h.e.removeIndex(name)
}

// validIndexName refuses a name no query could use: the empty name (a condition without an
// index name is a JSONPath one).
func validIndexName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidIndex)
	}
	return nil
}
