// Package informer is kindex's informer core, shared by both front ends (dynamicinformer for
// *unstructured.Unstructured, metadataonly for *metav1.PartialObjectMetadata): a registry of
// shared informers created on demand, reference-counted acquire and release, one error
// policy, status, metrics and watch-everything sets. The front ends only pick a StorageMode
// and an object type; every line of behaviour lives here, once.
//
// # Why not SharedIndexInformer
//
// client-go's SharedIndexInformer cannot be stopped on its own (only its whole factory can,
// kubernetes#79610), cannot be restarted once stopped, cannot remove an indexer, and its
// reflector retries a 404 of a deleted CRD or a 403 forever while HasSynced stays true. So
// this package builds on the two client-go pieces that are right, Reflector (list, watch,
// watch-list streaming, 410 relists, bookmarks, backoff) and DeltaFIFO (deltas with
// KnownObjects so a relist yields deletions), and writes the rest by hand:
//
//   - entry (entry.go): one shared informer. It owns a long-lived Store, its handlers, its
//     status, and a supervisor goroutine (supervisor.go). It outlives its runs.
//   - run (run.go): one Reflector plus one DeltaFIFO whose KnownObjects is the entry's store,
//     and a processing loop that pops the FIFO, applies deltas to the store and queues
//     notifications. A run can be stopped (park) and a new one started (resume) without
//     losing the store, handlers or indexes; because the new FIFO knows the store, its first
//     list emits Deleted for every object that vanished meanwhile, so nothing is lost and no
//     ghost survives a park, a disconnect or an apiserver restart.
//   - classifyingLW (listwatch.go): wraps the storage mode's ListerWatcher and sees every real
//     list and watch error (watch-list streams included) before the reflector. Errors that
//     retrying cannot fix park the run: the wrapper tells the run, waits for the run's
//     context, and returns so that the reflector exits without retrying or logging. It keeps
//     client-go's watch-list support by answering IsWatchListSemanticsUnSupported from the
//     wrapped ListerWatcher.
//   - listener (processor.go): one goroutine and one unbounded FIFO per handler: a slow
//     handler delays only itself. A new handler first gets the cached objects as adds.
//   - registry (registry.go): keys (GVR, mode, namespace, selectors) to live entries;
//     creation is under its lock and does no I/O, so concurrent requests share one entry.
//   - watchAll (watchall.go): one informer per watchable resource a discovery.Filter selects,
//     following discovery's Added, Changed and Removed events.
//
// # Error policy
//
// A run parks, and makes no request until something changes, on:
//
//   - 404 when discovery confirms the resource is gone (a deleted CRD): the cache is emptied
//     and every handler gets a cache.DeletedFinalStateUnknown per object, since the server
//     deleted them. A 404 while discovery still serves the resource (an apiserver that has
//     not loaded its CRDs yet after a restart, discovery lagging) is retried with the
//     reflector's backoff and never empties the cache. Resumes when discovery serves the
//     resource again (its events, plus re-checks on a capped backoff).
//   - 403 on list: Forbidden; 403 on watch after a successful list: WatchForbidden (the
//     listed snapshot is kept; no relist every 30 s). Re-checked with
//     SelfSubjectAccessReviews for list and watch, 1 s doubling to 30 s, and at once on a
//     discovery event for the resource; resumes when both are allowed.
//   - 400/405/406/415 (an unsupported field selector): Invalid, re-checked on discovery events.
//
// A failed watch-list request never parks by itself: the reflector falls back to a LIST,
// whose answer decides. Everything else (429, 5xx, 401, refused connections) is retried by
// the reflector's backoff and shown in Status.Reason and LastError; 410 makes the reflector
// relist. Each transition is logged once (the reflector's per-retry "Failed to watch" lines
// for errors this package classified are filtered, logfilter.go); Status, a status stream
// and Prometheus metrics show the rest.
//
// # Storage modes and stores
//
// StorageMode says how objects are listed and watched (dynamic client, metadata client, a
// raw decoder later), what the store holds and how a stored item becomes the object users
// get (Object). Store is the interface the entry writes and queries read; the default wraps
// client-go's thread-safe Indexer, and Internal.NewStore plugs in another (kindex's own
// store with JSONPath indexes added and removed at run time). A compact mode that keeps raw
// JSON and decodes lazily fits behind the same two interfaces without touching the front
// ends.
//
// # Concurrency
//
// No kindex lock is held across network I/O, handler calls, handler factories or status
// subscribers. The one exception is client-go's: DeltaFIFO calls the transform and the
// process function with its own lock held, so the process function only touches the store
// and appends to handler queues. Objects in the cache and in notifications are shared: users
// must not modify them.
package informer
