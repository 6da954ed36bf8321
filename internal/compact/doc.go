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
// decode into a *metav1.Status, so a 410 Gone makes the Reflector relist. A relist whose
// context carries the cache's objects (storage.WithKnownObjects, which the informer core
// sets) is decoded by DecodeListFromReusing: unchanged items are the cached objects. A
// ListerWatcher also learns the server's current resourceVersion without a LIST
// (CurrentResourceVersion), for the informer's warm restarts.
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
// # Compression
//
// Options.Compress (dynamicinformer.CompactOptions.Compress; crcache's default) keeps each
// object's JSON zstd-compressed (github.com/klauspost/compress, the maintained Go zstd)
// against a raw dictionary of its informer: the first objects the informer stores, up to
// 16 of them or 32 KiB, which stay uncompressed (compress.go). Objects of one resource
// share most of their text, so each compresses to what differs from those. The key text
// stays uncompressed after the compressed bytes, so namespace, name, resourceVersion, uid
// and StoreKey are still free; every other read decompresses (see Object). A dictionary is
// immutable and each object points to its own, so an object always decompresses with the
// dictionary it was compressed with; a corrupted object is an error wrapping ErrCorrupt.
// Snapshots hold decompressed JSON, compressed again, with the loading informer's
// dictionary, by its transform.
//
// Measured on realistic Pods (4,263 bytes of JSON with managedFields cut;
// go test -run '^$' -bench Compression -benchtime 20000x ./internal/compact/, and
// KINDEX_DICT_MEMORY=1 go test -run TestDictionaryMemory -v ./internal/compact/, on the
// 2-core shared machine, load about 3-10):
//
//   - size: 313 bytes of compressed JSON per Pod (0.073), 466 bytes of heap per object
//     with its header and key text, against about 4.4 KB uncompressed;
//   - choice of dictionary and level (bytes per Pod for SpeedFastest / SpeedDefault /
//     SpeedBetterCompression / SpeedBestCompression): a dictionary of 1 Pod (4 KiB)
//     396 / 370 / 356 / 358, 4 Pods (17 KiB) 366 / 349 / 332 / 328, 8 Pods (32 KiB)
//     316 / 301 / 291 / 286, 16 Pods (64 KiB) 308 / 291 / 283 / 275; compressing one Pod
//     took about 25-35 µs at SpeedFastest, 65-130 µs at SpeedDefault, 190-260 µs at
//     SpeedBetterCompression and 2-4 ms at SpeedBestCompression. SpeedFastest with 32 KiB
//     it is: the better levels save 5-10% for two to a hundred times the sync cost, and a
//     larger dictionary saves 3% more for twice the per-informer memory. A trained
//     dictionary (klauspost's dict.BuildZstdDict on 16-64 Pods) gave 755-838 bytes, worse
//     than the raw one;
//   - sync cost: 21-40 µs per Pod compressed, most of it resetting the fast encoder's
//     256 KiB match table to the dictionary's state for each object (a cost of
//     klauspost's dictionary encoder); the uncompressed object made by the decoder is
//     garbage afterwards;
//   - read cost: decompressing a Pod takes 6-10 µs and allocates its 4.9 KB (RawJSON);
//     a metadata getter on a compressed Pod costs 8 µs instead of 1.6, an index function
//     18 µs instead of 7, a decode into a map 39 µs instead of 27 (same run). Reads of an
//     object the dictionary compressed or decompressed among its last four cost nothing
//     more: the index functions the store runs on an object, one after the other,
//     decompress it at most once (TestIndexesDecompressOnce);
//   - memory besides the objects: about 87 KB per informer with a dictionary (the
//     dictionary, its decoder, its last few decompressions), and a pool of encoders
//     shared by the process (at most min(4, GOMAXPROCS), each about 0.8 MB, 1.7 MB once
//     switched between dictionaries), where an encoder per informer would cost 0.9 MB
//     each.
//
// In a cache, against the apiserver's LIST (bench/README.md, kindex-compact-compressed;
// crcache/README.md): 20,000 Pods held 0.8 KB each instead of 5.1 KB, for 17-33 µs more
// client CPU per Pod at sync and a sync in 1.37x the LIST against 1.26x uncompressed.
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
// else (HTTP, retries, watch streaming, the Reflector, the stores) is client-go's, and
// compression (encoding, decoding, dictionaries, checksums) is klauspost/compress's zstd:
// compress.go only chooses the samples, keeps an encoder pool, and lays the compressed
// bytes out with the key text. A faster decompression was measured and left out for that
// reason (2026-11-29): klauspost's encoder writes a Huffman table for the literals into
// every frame even when its dictionary has one, and rewriting each frame's literal
// sections to use a table kept with the dictionary (zstd's "treeless" literals, a few
// hundred lines of frame rewriting) made a Pod's decompression 1.43x faster (RawJSON 3.9 µs
// against 5.6, medians of 5 of go test -run '^$' -bench 'Compression/(compress|RawJSON$)'
// -benchtime 20000x -count 5 ./internal/compact/, each code in turn) and its bytes 5%
// smaller, for 54 KB more per informer; end to end (cd crcache && go test -run '^$' -bench
// . -benchtime 2000x ., old and new code alternating), crcache's List of 50 Pods by an index
// went from 2.03-2.17x controller-runtime's time to 1.75-1.98x, within the noise of runs,
// and its Get did not gain. Frame rewriting of
// our own would put every compressed object's readability on code that is not the
// decoder's, for a gain the reads do not show.
//
// # Nesting
//
// encoding/json's nesting limit (10,000 objects and arrays) applies to each object on its
// own, counted from the object: a list item or a watch event's object may nest as deeply
// as an object decoded alone (DecodeObject), although the list body or event frame around
// it then nests one or two levels deeper than encoding/json would accept as a whole
// document. This is deliberate: the API server judges each object alone (it serves by GET
// any object its decoder accepted, up to that limit), the bytes kept are decoded later
// alone (Object, DecodeInto, jsondecode's and typedjson's limits are the same), and
// managedFields nest five levels deeper than the fields they describe, so the deepest
// custom resources a server accepts would otherwise fail a whole LIST, leaving the informer
// unsynced (client-go's own LIST of them fails the same way). Everything else about a
// body, the list and event members included, is validated as encoding/json does.
package compact
