// Package store is kindex's object store: a thread-safe map of objects with indexes that can
// be added and removed while it holds objects, and a query planner over those indexes.
//
// Why not client-go's ThreadSafeStore: it cannot remove an index, it panics the process when an
// index function fails, and its indexes are not split by namespace. Here:
//
//   - AddIndex backfills the objects already stored; RemoveIndex drops one reference and frees
//     the index with the last one, so consumers that register the same index share it.
//   - An index function that errors or panics is counted on its index (IndexStats) and the
//     object is still stored: never a panic, never a lost object. Its values may be partial,
//     so it matches positive conditions on them and no NotEqual or NotExists (IndexFunc).
//   - Every index keeps, per value, the keys of each namespace (a value with at most 64 keys
//     keeps one list, filtered by namespace), so a namespaced lookup never reads the whole
//     store; and each object's record keeps the values every index gave it, so any condition
//     is checked on a candidate without another lookup, and an update unindexes the old
//     values without calling the index function again.
//   - Records are kept in (namespace, name) order, and an index a query sorts by keeps its
//     (value, record) pairs in sort order, so that a page is read in order rather than
//     selected from every match when that is cheaper (ordered.go).
//   - Key lists are shaped for the sizes values have: one key inline (UIDs, names), a sorted
//     slice for a few, a B-tree beyond 16; all in (namespace, name) order, so that an
//     equality lookup or a scan returns its results in the order a query promises without
//     sorting them (a sort of the match set was most of an equality query's time).
//
// Store is not a cache.Indexer: kindex's informer core writes it from its own processing
// loop and reads it through its query planner; a RealFIFO uses it as KnownObjects. Objects
// are shared: callers must not modify what they add or read.
package store
