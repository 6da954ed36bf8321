package store

import (
	"sort"

	"k8s.io/client-go/tools/cache"
)

// This file makes Store a cache.Indexer, so that code written for client-go's indexers
// (listers, cache.ListAllByNamespace) works on it unchanged.

// Index returns the objects that share a value of the named index with obj.
func (s *Store) Index(indexName string, obj any) ([]any, error) {
	s.mu.RLock()
	ix, ok := s.indexes[indexName]
	s.mu.RUnlock()
	if !ok {
		return nil, &IndexNotFoundError{Name: indexName}
	}
	values := ix.compute(obj)
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[*record]bool{}
	var out []any
	for _, v := range values {
		ix.byValue[v].each("", true, func(rec *record) {
			if !seen[rec] {
				seen[rec] = true
				out = append(out, rec.obj)
			}
		})
	}
	return out, nil
}

// IndexKeys returns the keys indexed under value, in every namespace.
func (s *Store) IndexKeys(indexName, value string) ([]string, error) {
	return s.IndexKeysIn(indexName, value, "", true)
}

// IndexKeysIn returns the keys indexed under value in namespace ns, or in every namespace
// when allNamespaces is set. The lookup reads only that namespace's entries.
func (s *Store) IndexKeysIn(indexName, value, ns string, allNamespaces bool) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, ok := s.indexes[indexName]
	if !ok {
		return nil, &IndexNotFoundError{Name: indexName}
	}
	e := ix.byValue[value]
	out := make([]string, 0, e.count(ns, allNamespaces))
	e.each(ns, allNamespaces, func(rec *record) { out = append(out, rec.key) })
	return out, nil
}

// ListIndexFuncValues returns the distinct values of the named index, sorted.
func (s *Store) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, ok := s.indexes[indexName]
	if !ok {
		return nil
	}
	out := make([]string, 0, len(ix.byValue))
	for v := range ix.byValue {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// ByIndex returns the objects indexed under value.
func (s *Store) ByIndex(indexName, value string) ([]any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, ok := s.indexes[indexName]
	if !ok {
		return nil, &IndexNotFoundError{Name: indexName}
	}
	e := ix.byValue[value]
	out := make([]any, 0, e.count("", true))
	e.each("", true, func(rec *record) { out = append(out, rec.obj) })
	return out, nil
}

// GetIndexers returns the registered index functions.
func (s *Store) GetIndexers() cache.Indexers {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(cache.Indexers, len(s.indexes))
	for name, ix := range s.indexes {
		out[name] = cache.IndexFunc(ix.fn)
	}
	return out
}

// AddIndexers registers each index function (see AddIndex), backfilling existing objects.
func (s *Store) AddIndexers(newIndexers cache.Indexers) error {
	for name, fn := range newIndexers {
		if err := s.AddIndex(name, IndexFunc(fn)); err != nil {
			return err
		}
	}
	return nil
}
