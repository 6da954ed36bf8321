// Package compact is kindex's compact storage mode: informers that keep each object as
// its JSON bytes instead of client-go's map[string]any, for a tenth of the memory and a
// sync many times faster than the dynamic informer's.
//
// # Why
//
// client-go's dynamic informer decodes every LIST and watch event into nested maps, at
// about 20 MB/s, and keeps the maps: a 7.5 KB Pod costs about 53 KB of heap, and syncing
// 20,000 of them takes 12-16 s although the API server serves their JSON in about 2.3 s.
// The decoding is the bottleneck and the maps are the memory.
//
// # What the mode does
//
// The list and watch path decodes the API server's JSON straight into Object values,
// without maps: a LIST body is split into its items, and each watch frame into its type and
// object, by a hand-written validating scanner (scan.go) that makes one pass over the bytes
// at several hundred MB/s. Each object is copied into an allocation of its own (so that no
// object keeps a large body alive) with metadata.managedFields cut out of the bytes (about
// 45% of a typical object; Options.KeepManagedFields keeps them), optionally projected to
// the fields a set of JSONPath expressions reads (Options.Projection), and, for items of
// typed lists, with kind and apiVersion added as client-go adds them. Besides the bytes an
// Object keeps only namespace, name, resourceVersion and uid as text (what keys, the
// Reflector and the FIFO read on every operation), written after the JSON in the same
// allocation so that the getters, and the store key (StoreKey), are views that cost
// nothing, and where its metadata is; every other field is read from the bytes when asked.
// An object therefore costs two allocations: a 64-byte header, and its bytes.
//
// The requests are client-go's: NewClient builds a rest client from the caller's
// rest.Config with this package's negotiated serializer, and ListerWatcher makes the
// dynamic client's requests with it (Request.Do or Request.Stream for LISTs, Request.Watch
// for watches), so retries, rate limits, warnings, timeouts (timeoutSeconds is sent to the
// server, as the dynamic client does) and API errors (apierrors.IsNotFound, IsForbidden,
// IsGone...) behave as usual. client-go's Reflector and FIFOs are used
// unchanged. A ListerWatcher supports watch-list by default, so the initial sync is a single
// WATCH with sendInitialEvents=true (the BOOKMARK that ends it carries the
// k8s.io/initial-events-end annotation the Reflector looks for), falling back to paged LISTs
// when the WatchListClient feature is off or the server refuses. With Options.StreamList
// (the compact front end's default) it declines watch-list instead and makes each LIST one
// consistent request whose body DecodeListFrom decodes while it arrives, holding one item
// at a time, never the body: on kube-apiserver 1.37 that costs the apiserver about half
// the CPU time of the watch-list stream (ListerWatcher has the details). ERROR events
// decode into a *metav1.Status, so a 410 Gone makes the Reflector relist.
//
// Mode implements storage.Mode: it stores *Object and hands handlers and queries
// an *unstructured.Unstructured decoded from the bytes (Mode.Object), so that the dynamic
// front end's users see the same objects as in the unstructured mode.
//
// # Costs
//
// Each read of a whole object decodes it: Object.Unstructured (and so Mode.Object, which
// handlers and listers go through) costs about what client-go's decoding of that object
// costs (roughly 60-150 µs for a 4 KB Pod on these machines) and allocates a new
// *unstructured.Unstructured that is not retained: memory is saved by paying CPU on reads.
// Programs that read few objects, or read through indexes, win; a program that lists every
// object often pays the decode each time. Index functions do not decode: JSONPath indexes
// (package indexfuncs) evaluate on the bytes (RawJSON), and metadata getters scan only the
// metadata (about a microsecond for labels). A user transform decodes each object, runs,
// and re-encodes it (see Mode.Transform); Projection is the cheap way to drop fields.
// Object setters rewrite the bytes and are meant for objects no one else sees.
//
// # What is hand-written, and why
//
// The JSON scanner, the LIST and watch-frame decoders, the managedFields cut and the
// projection are written here: no maintained library decodes Kubernetes list and watch
// bodies into per-object byte slices. encoding/json and sigs.k8s.io/json build values (the
// cost this mode avoids), and gjson finds values but does not validate, and reads the first
// of duplicate keys where Kubernetes decoding keeps the last. The scanner accepts exactly
// what encoding/json's Valid accepts (tested by fuzzing against it), including its nesting
// limit, and never panics; what it rejects is an error wrapping ErrMalformed. Everything
// else (HTTP, retries, watch streaming, the Reflector, the stores) is client-go's.
package compact
