package informer

import (
	"fmt"
	"sort"
	"sync"

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
	// exclusive: a function; its name cannot be registered a second time while held.
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
	if err := st.AddIndex(spec.key, spec.fn); err != nil {
		return err
	}
	if e.idx.names == nil {
		e.idx.names = map[string]*indexName{}
	}
	e.idx.names[name] = &indexName{spec: spec, refs: 1}
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

func (e *entry) indexNames() []string {
	e.idx.mu.RLock()
	defer e.idx.mu.RUnlock()
	out := make([]string, 0, len(e.idx.names))
	for name := range e.idx.names {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func (e *entry) indexStats(name string) (IndexStats, error) {
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
		return IndexStats{}, fmt.Errorf("kindex: index %q: %w", name, err)
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
	h.mu.Lock()
	defer h.mu.Unlock()
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
		return err
	}
	if h.indexes == nil {
		h.indexes = map[string]struct{}{}
	}
	h.indexes[name] = struct{}{}
	return nil
}

func (h *handle) removeIndex(name string) error {
	h.mu.Lock()
	_, held := h.indexes[name]
	delete(h.indexes, name)
	h.mu.Unlock()
	if !held {
		if h.released.Load() {
			return ErrReleased
		}
		return &store.IndexNotFoundError{Name: name}
	}
	return h.e.removeIndex(name)
}

// validIndexName refuses a name no query could use: empty, or not printable text.
func validIndexName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidIndex)
	}
	return nil
}
