// Package crcache is a controller-runtime cache (sigs.k8s.io/controller-runtime/pkg/cache,
// v0.25) backed by kindex. A manager, its clients and its controllers use it unchanged; the
// switch is one line:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{NewCache: crcache.New})
//
// crcache is a Go module of its own (github.com/kindex/kindex/crcache), so that kindex's
// module does not require controller-runtime.
//
// # What it does differently
//
// Storage. Every resource a controller reads as a Go type (&corev1.Pod{}, any type of the
// scheme) or as *unstructured.Unstructured is kept once, in kindex's compact store: each
// object as its JSON bytes, managedFields kept as controller-runtime keeps them (cut from
// the bytes when TransformStripManagedFields is the transform), zstd-compressed against a dictionary its informer makes of the first objects it stores
// (Options.DisableCompression keeps the bytes as they are; see Costs). A typed Get or List
// decodes the stored bytes straight into the caller's struct (kindex's typed decoder, with
// the semantics of apimachinery's JSON decoder and no intermediate map); an unstructured
// read decodes them into a new map; a metadata-only read (*metav1.PartialObjectMetadata)
// decodes only the metadata. The three share one informer, where controller-runtime runs
// one per kind (controller-runtime#977); a resource read only as metadata gets a
// metadata-only informer (protobuf, a few hundred bytes per object), as with
// controller-runtime, until it is read whole (typed or unstructured): once that informer
// has synced, the metadata reads and their handlers move to it and the metadata-only
// informer stops, so that the resource is listed and watched once (the handlers are handed
// nothing again: an object changed meanwhile is an update, one deleted a delete). Every object a read returns is the caller's own: decoding is the
// copy. With UnsafeDisableDeepCopy, reads share objects as controller-runtime's do (two
// reads of an unchanged object share their maps, and a change made through one is seen by
// the next): the access keeps the object it decoded for each object read that way, at its
// resourceVersion, beside the stored bytes, which costs that object's memory for the
// objects read that way only (metadata-only informers share the objects they hold).
//
// Lists. List returns its objects in (namespace, name) order and supports Limit and
// Continue: a page of Limit objects (after the label and field selectors, never before)
// with a continue token that returns the next page, consistent while objects come and go
// (an object present throughout is returned exactly once), and RemainingItemCount. A token
// is good for the cache that issued it, the list it was issued for (resource, namespace,
// selectors) and the informers that answered it: any other use (another cache or list, a
// token kept across RemoveInformer of the resource's last informer or a scope change) fails
// with a 410 Expired (apierrors.IsResourceExpired; errors.Is ErrContinueExpired), as the API
// server answers a token it cannot continue, instead of returning a page of another list.
// controller-runtime's cache refuses Continue and truncates limited lists
// (controller-runtime#532, #3044).
//
// Field selectors. IndexField indexes answer client.MatchingFields equality as in
// controller-runtime, and != as well; a plain selector on a name that is not an index is an
// error, as there. Beyond that, a *FieldSelector (ParseFields) adds set membership (in,
// notin), existence (field, !field) and numeric ranges (>, >=, <, <=), on IndexField names,
// on JSONPath indexes named with IndexJSONPath, or on any JSONPath into the object
// ("spec.nodeName", "{.status.containerStatuses[*].restartCount}"), which kindex indexes
// from the stored JSON on first use (16 such paths per resource; further ones are evaluated
// on each object instead, so that selectors built from user input cannot grow the cache):
//
//	cl.List(ctx, &pods, crcache.MustParseFields("spec.nodeName in (n1,n2),status.phase!=Running"))
//
// Informers. RemoveInformer stops the informer for real: its handlers and indexes go, and
// the kindex informer behind it stops (its cache freed) as soon as no other read of the
// resource holds it. A resource the server refuses (403) or no longer serves (its CRD
// deleted) parks its informer: no request is made until a grant arrives or the resource is
// served again, when it resumes by itself; handlers are told, with deletes, that a deleted
// CRD's objects are gone. A read or GetInformer that would wait for a parked informer's
// first sync returns at once with the server's error (apierrors.IsForbidden,
// apierrors.IsNotFound; errors.Is(err, informer.ErrParked)) instead of blocking until its
// context ends. WaitForCacheSync waits for it, as controller-runtime's does: a controller
// waits for its sources with it, over every informer of the cache, and so would fail, and
// its manager with it, at once for another controller's resource whose RBAC grant is
// applied a moment after the manager started. In a cache over several namespaces, a read
// of one namespace waits for that namespace's informer only: a 403 in another does not fail
// it. The informers parked on a 403 re-check access (a SelfSubjectAccessReview) at a rate
// they all share, about 4 a second whatever the number of resources
// (informer.Options.AccessChecks: the cache has a kindex factory per resource). Once an
// informer has synced, reads are served from memory whatever their context: one that has
// ended fails only a read that would have to wait, as with controller-runtime's cache.
// Statuses (and Informer.Statuses) show each informer's phase, reason, last error and
// object count.
//
// Scope changes. A CRD deleted and re-created with the other scope (cluster-scoped to
// namespaced, or the reverse) keeps its GVK, and the cache plans its informers again for the
// new scope as soon as it notices (from discovery's events, and from what kindex's informers
// say of their resource, checked by every read): one informer per namespace of
// DefaultNamespaces (or ByObject.Namespaces) for a namespaced resource, one for a
// cluster-scoped one, and reads routed by namespace only when it is namespaced. Informers
// handed out before stay valid: their indexes are registered on the new kindex informers,
// and each handler first gets what the old informers had queued for it (a handler busy
// during the change loses no delete), is then told, with DeletedFinalStateUnknown deletes,
// that what it holds of them is gone, and then gets the new objects as adds; a second change
// before the first is done is told of both. A read never answers with the old scope: one
// that would (or that raced the change) plans the resource again and reads again. A
// resource that cannot be planned again because it is not served at that moment (deleted
// again) fails its reads with ErrScopeChanged until it is served again. When the new
// informers cannot be had, the old ones stop all the same (their handlers told their
// objects are gone), and reads, GetInformer, WaitForCacheSync and the statuses (Stopped,
// with the error) show the failure until a read or the cache's own retry (after 1 s, backing
// off to a minute) moves the informer.
//
// Stop. When Start's context ends, the informers stop watching and take no new handler or
// index, and the cache's reads go on answering from what they held (kindex's
// informer.Options.ReadAfterShutdown), as controller-runtime's stopped informers do: a
// manager stops its caches before its webhooks and HTTP servers, which may still serve
// requests that read through the manager's client (TestReadsAfterStop). A resource never
// read before the stop cannot be read after it.
//
// # controller-runtime's options
//
// cache.Options are honoured as controller-runtime documents them: Scheme, Mapper,
// DefaultNamespaces and ByObject (with their precedence, AllNamespaces included),
// DefaultLabelSelector, DefaultFieldSelector, DefaultTransform and ByObject transforms,
// DefaultUnsafeDisableDeepCopy (see above), ReaderFailOnMissingInformer (a resource cached
// for one kind of read may be read another way the data allows without a new informer),
// and SyncPeriod (the resync period, 10 hours by default; ByObject's and a namespace
// Config's SyncPeriod apply to their type, and a type cached in several namespace
// configurations resyncs with the shortest of their periods, since kindex resyncs per
// factory and a resource has one factory per storage mode). A transform
// receives the typed object when the scheme knows the kind (as controller-runtime's typed
// informer has it: a client-go type without the TypeMeta of its nested objects, which are put
// back in the result where it leaves them empty; kindex encodes its result
// again, so transforms cost a decode and an encode per object), *unstructured.Unstructured
// otherwise, and *metav1.PartialObjectMetadata in a metadata-only informer.
// controller-runtime's TransformStripManagedFields is recognized and done on the bytes
// instead: kindex cuts managedFields before it stores an object, for a resource whose every
// namespace configuration has it (a resource is stored once for all of them).
//
// Reads answer as controller-runtime's do: objects equal to the server's, typed objects in
// handlers and index functions with an empty TypeMeta, typed objects of client-go's types
// without the TypeMeta of the objects nested in them (a StatefulSet's volumeClaimTemplates),
// as controller-runtime reads them over protobuf (unless the rest.Config asks for JSON), apierrors.NewNotFound naming the
// kind, a List without Limit whose Continue is "continue-not-supported" (refused when passed
// back), an error for a namespace outside the cache before anything waits, objects shared
// by reads with UnsafeDisableDeepCopy. Where it differs on purpose: a List of a
// cluster-scoped type with a namespace returns the type's objects, as the API server does,
// where controller-runtime's cache returns none; GetInformerForKind of a kind the scheme
// lacks gives an unstructured informer rather than an error.
//
// DefaultWatchErrorHandler is called with each list or watch error an informer records
// (Statuses has them too), once per error: kindex classifies errors itself and parks an
// informer that cannot succeed (a deleted CRD, a 403) instead of retrying, so the handler
// hears of a parked informer once. It gets a stand-in *cache.Reflector named after the
// informer, since kindex has none; client-go's DefaultWatchErrorHandler may be called with
// it.
//
// Not used: HTTPClient (kindex builds its clients from the rest.Config, refusing redirects
// to another host), NewInformer (there is no SharedIndexInformer), EnableWatchBookmarks
// (kindex decides), and the resync period a handler asks for.
//
// controller-runtime's own test suites (of the version this module requires) pass with every
// cache they build made by New and New as a manager's default cache: the cache's 276
// specs, its read-your-writes client, sources, controllers, builder, cluster and manager.
// conformance/run.sh runs them, and `make test` runs that (README.md, "Example and tests",
// says what is skipped and why).
//
// # Costs
//
// Memory: a fraction of controller-runtime's cache (0.060x for realistic Pods, 0.055x
// without managedFields); see README.md for measurements. Compression takes most of it: a Pod's 4.4 KB of JSON are
// kept as about 0.3-0.4 KB. Its price is CPU: the initial sync compresses every object
// once, and every read other than of the object's key (namespace, name, resourceVersion,
// uid) decompresses the JSON first, 6-10 µs for such a Pod, about as much as the decode
// that follows. The first objects of each informer, which make its dictionary (at most 16,
// or 32 KiB), stay uncompressed, and so a resource with a handful of objects is not
// compressed at all. Options.DisableCompression turns it off. CPU: every read decodes. A
// typed Get of a Pod costs a JSON decode straight into the struct (5-10 µs for a 2.4 KB
// Pod) where controller-runtime's costs a deep copy: with the decompression 0.63-0.88x the
// time of that deep copy, without it 0.47-0.59x (README.md). A List decodes only the
// objects it returns, after the selectors and Limit. Handlers receive objects decoded for
// them as a read decodes them: crcache adds them to kindex as an informer.ItemHandlerFuncs,
// whose Items it decodes straight into the handler's kind (8-16 µs a Pod, 0.25-0.45x the
// decode into a map and conversion it replaced; README.md). IndexField and AddIndexers
// functions get objects decoded the same way (informer.Informer.AddItemIndexFunc), under
// the informer's lock, for every object added or changed; an IndexJSONPath index reads the
// stored JSON instead and is much cheaper.
package crcache
