package main

// kindex subjects plug in here. The built-in subjects (the apiserver LIST floors and the
// client-go informers) register themselves in bench/harness; a kindex front end registers
// from an init function in this package, for example:
//
//	func init() {
//		harness.Register(harness.SubjectFunc{
//			SubjectName: "kindex-dynamic",
//			SyncFunc: func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
//				// start the front end on cfg, wait until gvr in ns has synced,
//				// return the number of cached objects and a function that stops it all.
//			},
//		})
//	}
//
// The child process that measures a subject is this same binary, so a subject registered
// here is found by name in the child too.
