// Package informer is kindex's informer API: factories that create shared informers on
// demand for any resource a user names, informers with JSONPath indexes and queries,
// status, watch-everything sets and the owner index. The front ends pick the object type
// and how objects are kept, and return this package's types:
//
//   - dynamicinformer.NewFactory: *unstructured.Unstructured, decoded once by kindex's
//     decoder; NewCompactFactory keeps JSON bytes and decodes on read; NewClientGoFactory
//     uses client-go's dynamic client.
//   - metadataonly.NewFactory: *metav1.PartialObjectMetadata over protobuf.
//
// A program names the types as the front end's aliases (dynamicinformer.Factory,
// dynamicinformer.Informer, dynamicinformer.Options) or as this package's generic types
// (informer.Factory[*unstructured.Unstructured]); everything else (Status, Phase, Reason,
// SyncError, the error values, WithNamespace, ...) is this package's:
//
//	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Namespace: "prod"})
//	if err != nil { ... }
//	if err := f.Start(ctx); err != nil { ... } // returns at once; everything stops with ctx
//	inf, err := f.Informer(ctx, "widgets.example.com", informer.WithLabelSelector("tier=web"))
//	if err != nil { ... }
//	defer inf.Release()
//	if err := inf.WaitForSync(ctx); err != nil { ... } // a *SyncError names what did not sync
//	if err := inf.AddIndex("size", "{.spec.size}"); err != nil { ... }
//	res, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Gt("size", "2")}})
//
// # Meanings written once
//
//   - Synced, as a latch: Informer.HasSynced and Registration.HasSynced mean what client-go's
//     HasSynced means: a complete list from the server has been applied at least once (and,
//     for a registration, handed to its handler); once true they stay true.
//   - Synced, now: Status().Phase == PhaseSynced, Informer.WaitForSync and
//     Factory.WaitForSync mean that the current run has applied a complete list (its initial
//     list, or the relist after a resume) and the informer is not parked.
//   - Objects handed out (List, Get, Query, handlers) are shared with every other user of the
//     cache: read-only; DeepCopy before modifying. In the compact mode each is decoded from
//     the stored bytes when handed out and not retained (bench/README.md, "Reads", gives the
//     cost per object); GetItem, ListItems, QueryItems and handlers of type ItemHandlerFuncs
//     get Items instead, which decode only what is asked of them.
//   - A cached object that cannot be turned into the front end's type fails Get, List and
//     Query alike with a *DecodeError naming it; nothing is silently left out.
//   - Errors: the Err values are sentinels for errors.Is; *SyncError, *IndexConflictError
//     and *DecodeError carry detail for errors.As; apierrors.IsNotFound holds for Get of a
//     missing object and meta.IsNoMatchError for an unknown resource name.
//
// # Why not SharedIndexInformer
//
// client-go's SharedIndexInformer cannot be stopped on its own (only its whole factory can,
// kubernetes#79610), cannot be restarted once stopped, cannot remove an indexer, and its
// reflector retries a 404 of a deleted CRD or a 403 forever while HasSynced stays true. So
// this package builds on the two client-go pieces that are right, Reflector (list, watch,
// watch-list streaming, 410 relists, bookmarks, backoff) and RealFIFO (events in order,
// with KnownObjects so a relist yields deletions; DeltaFIFO's item map keeps the size it
// reached during the initial list, about 90 bytes per object for the informer's life, where
// RealFIFO's queue is a slice whose drained array is dropped when the queue next grows),
// and writes the rest by hand:
//
//   - entry (entry.go): one shared informer. It owns a long-lived store, its handlers, its
//     status, and a supervisor goroutine (supervisor.go). It outlives its runs.
//   - run (run.go): one Reflector plus one RealFIFO whose KnownObjects is the entry's store,
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
//   - shardLW (shard.go): for an informer with a Shard, between the mode's ListerWatcher and
//     classifyingLW: it sends nothing itself (the mode's requests carry ShardSelector), asks
//     the server once per run whether it filters (Status.ShardFilter), and drops listed
//     objects and watch events outside the shard, so results do not depend on the answer.
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
//   - 404 when discovery confirms the resource is gone (a deleted CRD, or, for an informer of
//     one namespace, one re-created cluster-scoped, which does not resume it until the
//     scope is back; likewise an informer made for a cluster-scoped resource in a factory
//     or call restricted to a namespace, when the resource is served namespaced, without
//     waiting for a 404: it must not list every namespace): the cache is emptied
//     and every handler gets a cache.DeletedFinalStateUnknown per object, since the server
//     deleted them. Each 404 asks discovery afresh (Discovery.RecheckGVR: the group's own
//     endpoints, not its cache), so a deletion its cache missed cannot keep the informer
//     retrying until the next resync. A 404 while discovery still serves the resource (an
//     apiserver that has not loaded its CRDs yet after a restart) is retried with the
//     reflector's backoff and never empties the cache. Resumes when discovery serves the
//     resource again: its events and Recheck ask discovery afresh; re-checks on a capped
//     backoff read its cache (no request: hundreds of parked informers would otherwise
//     each make it re-discover everything), except with a discovery client that follows
//     nothing (a shared client never started, or one whose watch of CRDs is down, as while
//     the apiserver restarts and client-go backs off): no event would come, so the timer
//     asks afresh for the resource's group, once per group per second for all parked
//     informers.
//     A version retired while its resource is served at another (a CRD's version set to
//     served: false) is not a deletion: an informer asked for without a version
//     (Factory.Informer) follows the resource to the version discovery now prefers and
//     lists it there on the same cache, so that handlers are told the objects that still
//     exist changed, not deleted; Status.Resource names the version followed, and an
//     informer asked for there later shares it rather than list it again. One asked
//     for at the version (or shared with a caller that asked so) parks as above.
//   - 403 on list: Forbidden; 403 on watch after a successful list: WatchForbidden (the
//     listed snapshot is kept; no relist every 30 s). Re-checked with
//     SelfSubjectAccessReviews for list and watch, from 1 s up to Options.AccessRecheckInterval
//     (1.5 s by default) apart, at once on a discovery event for the resource and on
//     Recheck; resumes when both are allowed. Between those immediate re-checks, the
//     factory's parked informers share 4 a second: with n parked, each waits at least n/4 s.
//     A client the server refuses reviews to (403 or 404 on SelfSubjectAccessReviews, which
//     every authenticated user may create unless a cluster removed system:basic-user) tries
//     the request itself instead, on the park's backoff (1 s doubling to 30 s), logging the
//     refusal once and the repeated parks at V(1).
//     A discovery event for the resource also asks discovery afresh whether it is still
//     served: if not (its CRD deleted), the park becomes NotFound and the kept snapshot is
//     emptied as above.
//   - 400/405/406/415 (an unsupported field selector): Invalid, re-checked on discovery events.
//
// A failed watch-list request never parks by itself: the reflector falls back to a LIST,
// whose answer decides. Everything else (429, 5xx, 401, refused connections) is retried by
// the reflector's backoff and shown in Status.Reason and LastError; 410 makes the reflector
// relist. Each transition is logged once (the reflector's per-retry "Failed to watch" lines
// for errors this package classified are filtered, logfilter.go); Status, a status stream
// and Prometheus metrics show the rest.
//
// # Storage modes and the store
//
// A storage mode (internal/storage.Mode) says how objects are listed and watched (kindex's
// own JSON decoder in internal/compact, the dynamic client, the metadata client), what the
// store holds and how a stored item becomes the object users get. Every mode keeps its
// objects in kindex's indexed store (internal/store); JSONPath and built-in index functions
// read the compact mode's raw bytes without decoding.
//
// # Indexes and queries
//
// Why not client-go's indexer: its indexes cannot be removed (an informer shared by many
// consumers that come and go would only accumulate them), a second registration of a name is
// refused even with the same function (consumers cannot share one), an index function that
// returns an error panics the whole process, and its values are not split by namespace, so
// a namespaced lookup reads every namespace's entries. kindex's store
// removes indexes with reference counts, backfills new ones from the objects it holds,
// counts index function errors and panics per index (IndexStats) and keeps the object, and
// keeps each value's keys per namespace.
//
// Registration (index.go): index names belong to the informer (the entry), definitions to
// the store. A name maps to one definition: a JSONPath expression in canonical form
// ((*jsonpath.Path).String(), so "{.spec.x}" and ".spec.x" are equal), a built-in of package
// indexfuncs, or a function (never equal to another). Each store index is keyed by its
// definition, so every name with the same definition, and the owner index below, share one
// store index; the store counts one reference per registration and frees the index with the
// last. The same name with another definition is an *IndexConflictError. Each registration
// belongs to the Informer reference that made it and goes with its Release, like its
// handlers. Indexes live in the entry's store, so they survive a park and resume (objects the
// park drops leave the index; the resume's list fills it again) and end with the entry.
//
// What each index costs: the index function runs under the store's write lock on every add
// and update of an object (a JSONPath index on a decoded Pod takes 0.3-0.6 us), and AddIndex
// runs it once on every cached object before returning. The store then records the values
// in the object's record and adds the object to each value's key list: a few map operations.
// Five JSONPath indexes add 6-9% to the CPU time of decoding and storing Pods (more on a
// loaded machine), and less than the run-to-run noise (under 5%) to a real informer's initial
// sync (bench/README.md). Memory: per object, its
// values; per (value, object) pair, a slot in the value's key list (inline for a value one
// object has, a slice for a few, a map for many, split per namespace only for values with
// more than 64 objects in several namespaces).
//
// Queries (query.go) hand the store the query as written, with a resolver from the index
// names registered on the informer to the store indexes serving them (errors and plans name
// what the caller wrote), and run the store's planner. What each kind of condition, the
// order, paging and counts cost is written once, in package query's documentation.
//
// Queries read the store under its read lock and never block the informer for longer than
// the candidate walk; results are the cached objects themselves, shared and read-only.
//
// # Owner index: Dependents and Orphans
//
// Factory.Dependents and Factory.Orphans use two built-in indexes on every live informer of
// the factory (watch-all members included): owner-uid (an object under each owner's UID) and
// uid. They are registered on every informer as it starts when Options.OwnerIndex is set;
// otherwise on the first call of either method (which backfills what is cached) and on every
// informer started after it. Memory: about 300 bytes per cached object with one owner
// reference (BenchmarkQueryOwnerIndexMemory, 100,000 metadata-only objects).
//
// Dependents(uid) is one lookup per informer. Orphans walks every object with owner
// references and, per reference, resolves apiVersion and kind through discovery (once per
// kind and call) and looks the UID up in the uid index of each informer of that resource that
// is synced, has no selector and covers the owner's namespace (the dependent's, for a
// namespaced owner) or the cluster. Such an informer without the UID makes the reference
// dangling; without such an informer, or when the kind does not resolve, the reference is
// unknown: a cache that does not hold every candidate cannot prove an owner absent.
//
// # Warm restart
//
// With Options.SnapshotDir (the compact and metadata-only modes), each informer
// keeps a snapshot file of its objects and of the resourceVersion they are consistent with
// (file format: internal/snapshot; one file per API server address, resource, namespace,
// selectors, shard and storage options, whose identity is checked on load, together with
// the cluster's: the UID of its kube-system namespace, asked once per factory with one GET
// when a snapshot is first read or written). A cluster recreated at the same address (a
// development cluster deleted and created again) has another kube-system, so the old
// cluster's snapshot is ignored and replaced, even where the new cluster's resourceVersions
// have passed the snapshot's and a watch from it would be accepted
// (TestSnapshotOfAnotherClusterAtTheSameAddress). An identity that may not get namespaces
// in kube-system (403) names no cluster: its snapshots are tied to the address alone, and
// a recreated cluster is then caught only when its resourceVersion is behind the
// snapshot's (below) or the snapshot's version is older than the new watch cache. When
// the GET fails otherwise (the server unreachable at start), the snapshot is not used: it
// is never served unconfirmed. An informer with other selectors or another shard writes a
// file of its own, and the old one stays where it was unless Options.SnapshotRetention is
// set: then Start, and every half retention (at most hourly) while the factory runs,
// removes the snapshot files that no informer of the factory uses and that nothing wrote
// for that long (TestSnapshotRetentionPrunesUnusedIdentities; a file is rewritten whenever
// its informer has changes to save, and removing one in use costs a LIST at the next
// start, nothing else). A SnapshotDir removed while the factory runs is created again by
// the next write (TestSnapshotDirRemovedWhileRunningIsCreatedAgain). On start with a valid
// snapshot:
//
//   - The reflector's first List is answered from the file, without a request: handlers
//     receive its objects as adds (a handler passed with WithEventHandler is registered
//     before that and then sees every change made while the process was down as an update
//     or a delete, or an add with isInInitialList false for an object created meanwhile,
//     which a fresh start would list; one added after Factory.Informer returns may find
//     them applied already), reads answer at once, and Status.ServingFromSnapshot, SnapshotTime and
//     SnapshotResourceVersion say so (Informer.Queryable, Informer.ServingFromSnapshot).
//     The phase stays Syncing: HasSynced and WaitForSync wait for the server. Handlers are
//     held while the file loads and get the snapshot's adds once it is all in the cache
//     (the informer is queryable by then): decoding objects for them, and collecting what
//     that leaves, would otherwise take the CPU from the load (bench/README.md, "Queryable
//     sooner").
//   - The reflector then WATCHes from the saved resourceVersion: no LIST. That watch is
//     started as soon as the file's header has been read, while its objects load (and
//     stopped if they turn out invalid); the reflector's first watch takes it, so the wait
//     below overlaps the load instead of following it. The apiserver
//     answers a watch from a compacted resourceVersion with a 410 error event at once, and
//     a watch it accepts from its watch cache comes with the events since that version
//     queued before the response, but a plain watch carries no marker after them (its
//     bookmarks come about once a minute). So once the watch is accepted, the informer asks
//     the server for its current resourceVersion P without a LIST: a WATCH with
//     sendInitialEvents=true, resourceVersionMatch=NotOlderThan, resourceVersion "" (a
//     consistent read: the watch cache first catches up with etcd) and a field selector
//     that matches nothing, whose initial-events-end bookmark carries P. The watch is
//     current once it delivered an event at or beyond P, or, when nothing that recent
//     changed, once it stayed quiet for the probe's round trip (at least 20 ms) after the
//     answer; a watch that delivered nothing at all waits at least 120 ms from its start
//     (and four probe round trips), for a resource without a watch cache, whose watch
//     gets its past events from etcd's catch-up of new watchers (every 100 ms). Without a
//     probe (a mode that cannot, a server that refuses it) the watch must stay open 250 ms
//     without an error. Synced (HasSynced, WaitForSync) then waits until every object the
//     watch delivered until that point has been applied to the cache, so the changes made
//     while the process was down are in the cache when WaitForSync returns
//     (TestSnapshotSyncedIncludesChangesWhileDown). This is a timing argument, not a
//     server guarantee: on a server too loaded to send a watch's queued events within a
//     probe's round trip (or, without a watch cache, within the first-event wait), the
//     informer could report synced while such an event is still in flight; it is then
//     applied moments later, as any later change would be.
//   - If the server answers 410 Gone, the reflector relists for real. The relist is a
//     Replace against the cache, which holds the snapshot: objects whose resourceVersion did
//     not change are not announced, changed ones are updates, new ones adds, and vanished
//     ones deletes with a DeletedFinalStateUnknown tombstone: handlers see the differences,
//     never a delete-all and re-add. The compact mode decodes that relist against the
//     cache: an item whose resourceVersion and uid equal the cached object's is answered
//     with the cached object, scanned but not copied, so the relist costs its 64 KB stream
//     buffer and the changed objects rather than a second copy of the cache. Synced then
//     follows the watch after that relist, as above, and waits until the relist is applied.
//   - A snapshot ahead of the server (another cluster's at the same address, etcd restored
//     from a backup) is found by the probe: the watch from its version ends with 410 and
//     the informer relists as above. The watches after that relist start from its version,
//     which the server has, and the next snapshot records it, never the ahead one. The
//     file is removed at once: a relist that finds no object records no version, and a
//     restart after the server passed the ahead version would otherwise resume from it. A
//     tombstone of the relist (an object it no longer holds) carries the cache's version
//     of the object, not the server's: it never raises the version saved.
//   - A relist that the reflector would make at the snapshot's version (after either
//     410, or a watch refused as "too large resource version" by a server the probe
//     cannot ask) is made at the current state instead (resourceVersion "", a consistent
//     read): a compacted version is refused at once anyway, and an ahead one only after
//     the client's retries, about 40 s. The snapshot's version is then dropped, and its
//     file removed, as for one found ahead.
//   - A run that parks before it is current (its resource forbidden or gone since the
//     snapshot was written) empties the cache, as for NotFound: objects the server has not
//     confirmed, and may no longer let this identity read, are not served as if the
//     informer were catching up. Handlers get a DeletedFinalStateUnknown for each. An
//     identity that may still list but no longer watch gets what a start without a
//     snapshot gets: the informer lists (handlers see the differences) and parks
//     WatchForbidden with the listed objects (TestSnapshotOfAResourceNoLongerWatchableIsListed).
//   - With a Shard, the shard's filter is applied below the snapshot's watch, so that a
//     server that does not filter (the gate off) does not make the run wait for events
//     of other shards to be applied. The events it drops still count as the watch's: one
//     at or beyond P makes the watch current, and a stream of them is not a quiet watch,
//     so that the shard's own changes queued behind other shards' are in the cache when
//     WaitForSync returns (TestSnapshotWatchOfAShardCountsDroppedEvents).
//
// A snapshot is written in the background every Options.SnapshotInterval when the informer
// changed since the last write (rate-limited, not incremental: each write is a whole file,
// about 90 ms per 10,000 Pods of 4 KB on a 2-core machine, so the next one waits at least
// nine times as long as the last took, whatever the interval: writing takes at most a
// tenth of the time, TestSnapshotWritesTakeABoundedShareOfTime), and when the informer stops
// cleanly (release of the last reference, Shutdown, end of the factory's context). The store
// is read under the dispatch lock only to copy its item pointers (items are immutable);
// encoding, encryption and I/O happen outside it. A write that fails (a directory where the
// file should be, a full disk) is retried every interval while there are changes to save;
// each distinct failure is logged once (again after a success) and shown in
// Status.SnapshotError until a write succeeds. The resourceVersion written is the highest
// one the cache is known to be consistent with: that of a list (the run's first, or a
// relist after 410) once all of it is applied, of a later change the processing loop
// applied, or of a watch bookmark (the server sends one about once a minute; it is applied
// in order after the events before it, and a version it moves counts as a change to save),
// so that a quiet resource relisted once resumes with a watch at the next restart, and an
// informer whose own objects do not change (a namespace nobody touches, of a resource that
// changes elsewhere) saves a version that keeps up with the server's watch window.
// It is a lower bound of the cache's true position (the reflector may have received more,
// still queued; an empty list counts only through its deletions): a resumed watch can only
// replay events the cache has not seen, never skip one. No snapshot is written while a
// list is being applied (a relist after 410 arrives in key order, not version order: part
// of the cache is the list's, part older, and no version describes it); the previous file
// stays, and the next write follows the relist. Resource versions are compared as numbers, which
// every kube-apiserver version uses; a server whose versions are not numbers disables
// snapshots with one log line.
//
// A snapshot is used only when everything checks: format version, identity, the CRC-32C of
// the whole file, each record's bounds; with a key, every 64 KiB frame's AES-GCM tag.
// Anything else is ignored with one log line and the informer lists as usual. Compact
// records carry the compact object's layout, so loading is no decode: the JSON is not
// parsed again (figures in bench/README.md, "Warm restart"). They carry its spans too when
// the informer keeps them (compact mode with Options.Indexes), so that index functions and
// Item.Eval read loaded objects as fast as listed ones, not by scanning each until it
// changes: 20,000 Pods loaded and five index paths evaluated on each in 0.22-0.24 s instead of
// 0.40-0.42 s (BenchmarkSnapshotLoadIndexed in internal/compact, -count 4); a mapped object's spans
// are copied beside it (152 bytes for a realistic Pod). On Linux a plaintext
// snapshot is mapped (mmap, read-only, populated ahead of the reader) rather than read,
// and each compact object is a view of its record: no copy, and no fresh memory (a
// metadata-only object, decoded, has its strings as views of the record; a compressing
// compact mode, which copies every object anyway, reads the file instead). That matters
// because fresh memory is what a start pays for: every page of a new heap is a page fault,
// and on a virtual machine whose host backs guest memory lazily a fault costs 3.5-4 ms per
// MB (bench/README.md, "On a machine whose page faults are slow"), more than the rest of
// the load, while the file's pages are already in the page cache (just written, or read
// ahead by the mapping). Status.SnapshotMapped is the file's size. Those pages stay outside
// the Go heap: the kernel can drop them under memory pressure and read them again (a
// container's memory limit reclaims them rather than OOM-killing), and objects that change
// are replaced by heap copies as usual. The mapping is kept for the life of the process:
// the objects, and whatever was read from them without a copy (Item.Raw, the strings of
// Item.DecodeInto), are views of it, which Go cannot trace, so no point is known where no
// view is left. The cost is bounded: a path is mapped at most once per process (an informer
// released and acquired again reads the file and copies, as elsewhere than Linux, with a
// key, or when the mapping fails), and the disk space of a file replaced since is freed
// when the process exits. A mapped file must not be truncated or rewritten in place (kindex
// never does: it writes a new file and renames it over the old one, and removing one is
// safe); truncated under a mapping, its pages fault (SIGBUS) when read, as with any mapped
// file (etcd's bbolt and Prometheus's TSDB map their files likewise). Metadata-only records
// are the objects' JSON, decoded on load by kindex's typed decoder (a metadata object is a
// few hundred bytes: a few microseconds each); the metadata mode's relist after 410 decodes
// every item, as any list of that mode does, and the same comparison of resourceVersions
// keeps unchanged objects from being announced. The checksum is there to catch a damaged
// file (a torn write, a bad disk), not an attacker: a plaintext snapshot is as trustworthy
// as its directory (created 0700, files 0600), since whoever can write there can feed the
// cache whatever the checksum (on Unix a file owned by another user than the process's or
// the directory's owner, or writable by others, is ignored, so that a directory others may write to, such as /tmp, lets
// nobody else plant one), and CRC-32C (hardware-accelerated, about ten times faster
// than the SHA-256 of format version 1, which is still read) detects such damage as surely
// for this purpose. Encrypted snapshots are authenticated by AES-GCM.
// Unencrypted snapshots of Secrets are Secrets on disk: an informer on secrets refuses to
// read or write one unless a key is set (Options.SnapshotKey, SnapshotKeyFile) or
// Options.SnapshotPlainSecrets says otherwise; without that option, an informer on secrets
// (with a key or without) removes the plaintext snapshot an earlier run with it wrote, so
// that turning the option off takes the Secrets off the disk at once (an encrypted one is
// kept).
//
// In the compact mode a user Transform is not applied again to objects loaded from a
// snapshot written with one (they were stored after it; the objects of a snapshot written
// without a Transform get it at load), nor to the items of a relist answered with the
// cached object; the metadata-only mode, which cannot tell, applies it to loaded objects
// again. It is applied to the other objects of a relist as usual: it must be idempotent, as
// Options.Transform already requires. A Transform is code, not part of the identity: a
// program whose Transform changes what it keeps must use a new SnapshotDir, or the objects
// stored by the old one are served until they change.
//
// A snapshot ahead of the server (its resourceVersion beyond the server's current one: a
// directory used with another cluster at the same address, or etcd restored without a
// revision bump) is not trusted: the watch from it ends as expired (found by the probe, or
// refused as "too large resource version" by a server the probe cannot ask), and the
// relist replaces its objects by the differences. Since such a snapshot may hold, at the resourceVersion and
// uid of an object of the server, content the server does not have, that relist takes every
// object from the server's answer (none from the cache) and tells handlers of an object at
// an unchanged resourceVersion as an update when its content differs.
//
// Measured in the comparison harness on 100,000 Pods (bench/README.md, "Warm restart"): a
// restart within the watch window is queryable and synced in 0.8 s, 0.049x the cold sync of
// the same run (0.074x at 20,000 Pods), with no LIST (0.59-0.66 s in a later run, since
// handlers wait for the load and snapshots are written in key order: "Queryable sooner";
// 0.70 s, 0.046x, mapped, on a machine where copying took 2.99 s, and 0.55 s, 0.032x, with
// the watch started during the load: "Mapped snapshots"); after a 410, handlers get exactly one
// event per object that changed while the process was down, and the relist peaks at 1.24x
// the heap it leaves without a handler, 1.23-1.26x with an ItemHandlerFuncs and 1.22x with
// a handler of objects, whose decode of every object it is handed (the snapshot's adds
// included) is garbage the collector would let grow to twice the heap if kindex did not
// pace it (next section): 2.16x with Options.DisableStartGC.
//
// # Start garbage
//
// A compact informer's start makes garbage several times the size of what it keeps: a
// handler of objects is handed every object decoded (4-5x its JSON) and drops it, and a
// relist over a full cache (after a 410, or on a restart from a snapshot) decodes every
// object of the list again to compare it with the cached one. With the Go runtime's default
// pacing (GOGC=100) the collector lets the heap grow to about twice what was live before
// it runs, whatever makes the garbage, so the process peaks at about twice its steady heap
// exactly when it starts, which is when processes are OOM-killed. So in the compact mode
// kindex runs the collector itself (runtime.GC, pacer.go) while handlers of objects (and
// handlers of Items that say they decode them, ItemHandlerFuncs.Decodes, as crcache's
// do) receive their initial adds and while a list replaces cached objects, whenever the heap's objects
// exceed what the last collection found live by an eighth (and take at least 16 MB); it
// reads two runtime/metrics values every 32 objects to decide, a microsecond. Objects that
// fill the cache (a cold list, a snapshot loading) do not count: growth is not garbage.
// The modes whose objects are not decoded for handlers (unstructured, metadata-only) are
// not paced. kindex_start_collections_total counts the collections.
//
// Measured in the comparison harness (bench/README.md, "Start garbage"): a restart after a
// 410 with a handler of objects peaks at 1.27x the heap it holds instead of 2.09x (20,000
// Pods), 1.22x instead of 2.16x (100,000); a cold start with one at 153 MB instead of 248
// MB (20,000 Pods, 102 MB held), 627 MB instead of 1,102 MB (100,000, 508 MB held); for
// up to 27% more CPU in the start (the collector's extra cycles, most of them marking a heap
// that is mostly bytes without pointers). A Go memory limit (GOMEMLIMIT) of 1.25x the
// steady heap does as well or a little better (1.18x) for more CPU (47% in the same run)
// and needs the steady heap known in advance; a handler of Items (ItemHandlerFuncs) decodes
// nothing and needs neither. Options.DisableStartGC leaves collection to the runtime.
//
// # Concurrency
//
// No kindex lock is held across network I/O, handler calls, handler factories or status
// subscribers. The one exception is client-go's: RealFIFO calls the transform and the
// process function with its own lock held, so the process function only touches the store
// and appends to handler queues. Objects in the cache and in notifications are shared: users
// must not modify them.
//
// Callbacks may call back: an event handler (of objects or of Items), a watch-all handler
// factory or handler and a status subscriber may call any method of the informer, its
// factory and its watch-all sets, registering and removing indexes, handlers and
// subscriptions (their own included), Release and Factory.Shutdown included, which then do
// not wait for the caller's own call (reentry_test.go). The Transform and index functions
// (AddIndexFunc, AddItemIndexFunc) run inside the informer's write path, and no call from
// them hangs:
//
//   - A Transform may call any method. Release and Factory.Shutdown return at once: the
//     reference is released (or new informers refused) before they return, and the
//     informer (or the factory) stops once the Transform has returned.
//   - An index function runs with the informer's cache locked for writing (on the
//     processing loop for each change, on AddIndex's caller for the objects already
//     cached). The calls on the same informer that would wait for that lock return
//     ErrCalledFromCallback at once and do nothing: the reads (Get, GetItem, List,
//     ListItems, a NamespaceLister's, Query, QueryItems, Count, CountBy, IndexStats, a
//     watch-all set's QueryItems, Count and CountBy over it), AddIndex and its variants, RemoveIndex,
//     AddEventHandler (and the factory's WithEventHandler on it), RemoveEventHandler,
//     HandOffEventHandler, Factory.Dependents and Factory.Orphans. Status, HasSynced,
//     IndexNames, Registrations, Recheck, Key and Resource answer; WaitForSync answers at
//     once when the informer is synced, else when its context ends (the sync waits for the
//     function). Release, a watch-all set's Stop and Factory.Shutdown return at once, as
//     from a Transform. Other informers, and the factory's other methods, work as from
//     anywhere.
//   - From either, acquiring the informer again (Factory.Informer, ForResource) while it
//     stops after its last reference was released there returns ErrCalledFromCallback:
//     the stop waits for the callback.
//
// Recognising such a call costs nothing on the read path unless an index function of the
// caller's is running (one atomic load; then the caller's goroutine id, about a
// microsecond, while the read would have waited for the writer anyway). A callback that
// hands the call to another goroutine and waits for it is not recognised, and waits for
// itself.
package informer
