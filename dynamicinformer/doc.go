// Package dynamicinformer is kindex's front end for *unstructured.Unstructured objects: its
// constructors build a factory of package informer, where every method is documented
// (Factory, Informer, Options, Status, the errors). Factory, Informer and Options here are
// aliases of informer.Factory[Object], informer.Informer[Object] and informer.Options[Object].
//
//	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Namespace: "prod"})
//	if err != nil { ... }
//	if err := f.Start(ctx); err != nil { ... } // returns at once; everything stops with ctx
//	inf, err := f.Informer(ctx, "widgets.example.com")
//	if err != nil { ... }
//	defer inf.Release()
//	if err := inf.WaitForSync(ctx); err != nil { ... } // *informer.SyncError says why not
//	widgets, err := inf.List(labels.Everything())
//
// Three constructors choose how objects travel and are kept:
//
//   - NewFactory splits list and watch bodies itself, cuts managedFields from the bytes
//     before decoding (Options.KeepManagedFields keeps them) and decodes each object once
//     with kindex's decoder: about 0.4x client-go's sync time and under half its heap.
//   - NewCompactFactory keeps each object as its JSON bytes and decodes on every read: a
//     tenth of the heap, and a sync five to six times faster than client-go's. Its initial
//     list is one consistent LIST decoded as it streams, which costs the apiserver about
//     half the CPU time of watch-list (CompactOptions.WatchList). CompactOptions.Compress
//     also keeps each object's JSON zstd-compressed against a dictionary of its informer:
//     a realistic Pod in a sixth of the heap again, for a compression per object at sync
//     and a decompression per read.
//   - NewClientGoFactory uses client-go's dynamic client and decoder, for comparison and as
//     a fallback.
//
// NewFactory and NewClientGoFactory stream the initial list with watch-list where the
// server supports it, with client-go's fallback to a paged LIST. Every HTTP client a factory
// builds refuses redirects to another host, so credentials never leave for a host the
// config does not name.
package dynamicinformer
