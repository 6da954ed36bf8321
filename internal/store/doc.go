// Package store is kindex's object store: a thread-safe map of objects with indexes that can
// be added and removed while it holds objects, and a query planner over those indexes.
//
// Why not client-go's ThreadSafeStore: it cannot remove an index, it panics the process when an
// index function fails, and its indexes are not split by namespace. Here:
//
//   - AddIndex backfills the objects already stored; RemoveIndex drops one reference and frees
//     the index with the last one, so consumers that register the same index share it.
//   - An index function that errors or panics is counted on its index (IndexStats) and the
//     object is still stored: never a panic, never a lost object.
//   - Every index keeps, per value, the keys of each namespace, so a namespaced lookup reads
//     only that namespace's entries; and per key, its values, so any condition can be checked
//     on a candidate with one map lookup.
//
// Store implements cache.Store and cache.Indexer, so client-go's Reflector, DeltaFIFO and
// listers work with it. Objects are shared: callers must not modify what they add or read.
package store
