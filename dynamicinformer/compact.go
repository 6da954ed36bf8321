package dynamicinformer

import (
	"maps"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/compact"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

// ErrNotProjected is matched (errors.Is) by the error for an index or query condition that
// reads a field the compact mode's projection drops.
var ErrNotProjected = compact.ErrNotProjected

// ErrManagedFieldsDropped is matched (errors.Is) by the error for an index or query
// condition that reads metadata.managedFields by name ({.metadata.managedFields[*].manager})
// in a factory without Options.KeepManagedFields, in every storage mode: the cache drops
// them, so it would find none where the server's objects have them (the metadata-only mode
// refuses such an expression too, with ErrNotMetadata).
var ErrManagedFieldsDropped = storage.ErrManagedFieldsDropped

// CompactOptions configures the compact storage mode.
type CompactOptions struct {
	// Projection, when set, keeps only the fields these JSONPath expressions read (plus
	// apiVersion, kind and metadata) in each cached object; handlers, List, Get and Query
	// see only those fields. An index (AddIndex) or a query condition (query.Where) on a
	// field the projection drops fails with an error matching ErrNotProjected instead of
	// finding nothing. An expression with recursive descent ({..x}) keeps everything.
	Projection []string
	// ProjectIndexes keeps only what Options.Indexes read (plus Projection, apiVersion,
	// kind and metadata): the factory's informers hold the fields their indexes need and
	// nothing else. Indexes added later with AddIndex must read fields kept (ErrNotProjected).
	ProjectIndexes bool
	// WatchList makes the initial sync (and every relist) client-go's watch-list stream, as
	// the other modes do, instead of the compact mode's default: one consistent LIST whose
	// body is decoded as it arrives, then a WATCH. On kube-apiserver 1.37 the watch-list
	// stream costs the apiserver about twice the CPU time of that LIST (bench/README.md);
	// prefer it only against apiservers older than 1.33, whose LIST responses are not
	// streamed.
	WatchList bool
	// Spans keeps, with each object, the extents of its objects and arrays of 128 bytes
	// and more, so that JSONPath paths of fields and indexes (index functions, Item.Eval,
	// query conditions) step over them instead of scanning the bytes: Item.Eval of
	// {.spec.nodeName} on a Pod goes from 8.2 to about 0.8 µs (bench/README.md). It costs one
	// more scan of each object as it is decoded and 8 bytes per large value (19 for a
	// realistic Pod: 150 bytes). It is on whenever Options.Indexes is not empty, whose
	// index functions it speeds up on every change. Compressed objects (Compress) keep no
	// spans: reading them decompresses them first anyway.
	Spans bool
	// Compress keeps each cached object's JSON zstd-compressed, against a dictionary that
	// each informer makes of the first objects it stores (up to 16 of them or 32 KiB, kept
	// uncompressed): a realistic Pod's 4.3 KB of JSON (managedFields cut) become about 300
	// bytes, and the Pod takes about 0.8 KB of heap in a cache, a sixth of the compact mode's
	// 5.1 KB. Namespace, name,
	// resourceVersion, uid and the store key are still read without decompressing; every
	// other read of an object (handlers, List, Get, Query, JSONPath indexes and conditions,
	// Item.Raw, DecodeInto) decompresses its JSON first, about 10 µs for such a Pod, on top
	// of the read's own cost, and the sync compresses each object once (bench/README.md and
	// crcache/README.md have the figures). Snapshots hold the decompressed JSON, so any
	// process can load them.
	Compress bool
}

// NewCompactFactory returns a factory whose informers keep each object as its JSON bytes
// (managedFields cut, unless Options.KeepManagedFields) instead of a decoded map: about a
// tenth of the memory of client-go's dynamic informer, and a sync five to six times faster,
// in 1.1-1.3x the time the apiserver takes to serve the same LIST (bench/README.md): list and watch bodies
// are split into objects without building maps, and the initial list is one consistent LIST
// decoded while it streams (see CompactOptions.WatchList).
//
// Handlers, List, Get and Query still hand out *unstructured.Unstructured: each one is
// decoded from the bytes when it is handed out (tens of microseconds for a Pod) and not
// retained, so callers that read the same object often should keep what they read. JSONPath
// indexes and the built-in metadata indexes read the bytes and never decode. A caller's
// Options.Transform receives the decoded object and its result is encoded again, which costs
// a decode and an encode per object: prefer CompactOptions.Projection to shrink objects.
func NewCompactFactory(cfg *rest.Config, opts Options, copts CompactOptions) (*Factory, error) {
	return informer.New(cfg, opts, func(cfg *rest.Config, sc storage.Config) (storage.Mode, error) {
		m, err := compact.New(cfg, compactModeOptions(sc, copts))
		if err != nil {
			return nil, err // keep a typed nil *compact.Mode out of the interface
		}
		return m, nil
	})
}

// compactModeOptions are the compact mode's options for the factory's storage config and
// copts: the projection (with the indexes' paths when ProjectIndexes), and spans when asked
// for or when the factory has indexes, unless objects are compressed.
func compactModeOptions(sc storage.Config, copts CompactOptions) compact.Options {
	var indexes []*jsonpath.Path
	projection := copts.Projection
	if copts.ProjectIndexes {
		if projection == nil {
			projection = []string{} // projection on, whatever the indexes
		}
		for _, name := range slices.Sorted(maps.Keys(sc.Indexes)) {
			indexes = append(indexes, sc.Indexes[name])
		}
	}
	return compact.Options{
		KeepManagedFields: sc.KeepManagedFields, Projection: projection, ProjectPaths: indexes,
		StreamList: !copts.WatchList, Compress: copts.Compress, Spans: !copts.Compress && (copts.Spans || len(sc.Indexes) > 0),
	}
}
