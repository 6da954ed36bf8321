// Package metadataonly watches and queries the metadata of any Kubernetes resource as
// *metav1.PartialObjectMetadata: names, namespaces, labels, annotations, owner references,
// finalizers, resource versions. It uses the metadata client, so objects travel as protobuf
// and cost a fraction of their full form in memory: the choice of garbage-collector-style
// controllers that watch every resource. The client is kindex's own: it sends the requests
// of client-go's metadata client, but cuts managedFields out of the protobuf bytes before
// they are decoded, unless Options.KeepManagedFields, and decodes each watch event from the
// stream's buffer instead of copying it twice, so that the entries the cache would drop are
// never built: decoding a realistic Pod's event allocates 1.7 KB instead of 12.9 KB
// (BenchmarkMetadataWatchDecode in internal/storage), and a sync of 20,000 Pods allocates
// 57 MB instead of 292 MB (bench/README.md).
//
// Its constructor builds a factory of package informer, where every method is documented
// (Factory, Informer, Options, Status, the errors): the same core as dynamicinformer, with
// another storage mode. Factory, Informer and Options here are aliases of
// informer.Factory[Object], informer.Informer[Object] and informer.Options[Object].
//
//	f, err := metadataonly.NewFactory(cfg, metadataonly.Options{})
//	if err != nil { ... }
//	if err := f.Start(ctx); err != nil { ... }
//	all, err := f.WatchAll(ctx, discovery.Filter{ExcludeGroups: []string{"events.k8s.io"}})
//	if err != nil { ... }
//	_, err = all.AddEventHandler(func(res discovery.Resource) cache.ResourceEventHandler {
//		return ownerIndexer(res) // called for every current and future resource
//	})
//
// The garbage collector's questions have answers from the cache: Factory.Dependents(ctx, uid)
// returns the objects of every cached resource owned by uid, Factory.Orphans(ctx) those whose
// owners no longer exist (an owner counts as gone only when a synced informer caches its
// resource and has no object with its UID; otherwise it is reported as unknown). Both use an
// owner index (Options.OwnerIndex, or registered on first use). Metadata fields can be indexed
// and queried as in dynamicinformer: Informer.AddIndex("team", "{.metadata.labels.team}"),
// Informer.Query.
//
// Options.SnapshotDir makes informers survive their process (see "Warm restart" in package
// informer): each keeps a file of its objects' metadata and, on start, serves it at once and
// resumes with a WATCH from the saved resourceVersion instead of a LIST; the metadata client
// probes the server's resourceVersion as the compact mode does. A garbage collector that
// restarts therefore does not list every resource of the cluster again.
//
// Objects returned by List and Get and passed to handlers are shared: treat them as
// read-only.
package metadataonly
