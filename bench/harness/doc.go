// Package harness is kindex's measuring stick: it compares ways of caching every object of a
// resource (client-go's informers, kindex's front ends, a bare LIST) on the same objects, in
// the same run, against the same kube-apiserver, and reports ratios rather than absolute
// figures, because the machines it runs on are shared and noisy. bench/cmd/compare is the
// program (`make bench-compare`); this package is its engine.
//
// # What is seeded
//
// Run seeds, in one namespace per N (kindex-bench-<N>), N pods and M (default N/10)
// Databases, a custom resource with a free-form spec and status. A pod is what a ReplicaSet
// controller creates and a kubelet completes, about 7.6 KB of compact JSON: an app container
// with env, ports, resources, a probe and mounts, a sidecar, a config volume and the
// projected service-account volume, labels and annotations with dotted keys, an owner
// reference and a kubelet-like status (conditions, containerStatuses, podIPs). It is created by field manager
// kube-controller-manager and its status written through the status subresource by field
// manager kubelet, so managedFields hold two real entries (about 42% of the bytes). Every
// object is a pure function of its index, an object counts as seeded once its status is
// written, and seeding runs 32 workers: an interrupted seed resumes and a complete one is
// skipped. The report gives the stored size, sampled by GET, and the managedFields share.
//
// # What is measured
//
// A Subject's Sync fills a cache with every object of the resource and returns when it is
// synced. Each Sync runs in a child process of its own: the harness re-executes its own
// binary (IsChild / RunChild), so that every subject starts from the same empty heap, pays
// its own warm-up and cannot leave garbage or goroutines behind for the next. The child:
//
//  1. runs runtime.GC twice and reads runtime.MemStats.HeapAlloc and TotalAlloc;
//  2. calls Sync and times it (wall clock), and reads the process CPU time, the bytes
//     allocated and the peak RSS around it (the LIST floors stop all four at their last
//     body byte, before they count the items);
//  3. runs runtime.GC twice and reads HeapAlloc again, while the cache is still held;
//  4. reports, as one JSON line on stdout: the object count, the time, the heap delta and
//     the delta per object (what the cache costs to keep), the bytes allocated during the
//     sync (garbage), CPU seconds, peak RSS, response body bytes and the requests made;
//  5. calls stop.
//
// Every subject is run Options.Runs times, round-robin so that a noisy minute hits all of
// them alike, and the report gives the median with min and max. Ratios compare medians with
// client-go's dynamic informer (SubjectDynamic) and with the JSON LIST (SubjectListJSON) of
// the same run. One unrecorded LIST warms the apiserver first. The apiserver and etcd run on
// the same machine and compete with the client for CPU, as does anything else running there:
// wall times spread widely on a loaded machine, the client's CPU time and heap much less, so
// the report gives the load average at the start and the end and a CPU-time ratio as well.
//
// The built-in subjects:
//   - apiserver-list-json, -nogzip, -protobuf: one unpaginated LIST with a client-go user
//     agent (the apiserver pretty-prints for curl), body read to the end and kept, not
//     decoded: the server-bound floor. Their heap figure is the raw body size. The default
//     client-go transport asks for gzip, and the apiserver compresses large responses;
//     -nogzip turns that off to show what compression costs on loopback.
//   - client-go-dynamic: dynamicinformer as shipped, with watch-list (client-go's default
//     since 0.35); -strip-mf adds a transform dropping managedFields; -paged-list turns the
//     WatchListClient gate off (paginated LIST then WATCH, client-go before 0.35).
//   - client-go-metadata: metadatainformer, PartialObjectMetadata over protobuf.
//
// Other subjects (kindex's front ends) plug in with Register; see Subject.
//
// # Restarts
//
// A Staged subject is measured after a preparation, for restarts from a snapshot: a first
// child runs Prepare (a cold sync that writes the snapshot), the parent runs Between
// (changes made while "the process is down"; ParentEnv can compact etcd and restart
// kube-apiserver, so that the snapshot falls out of the watch window), and a fresh child
// runs the measured Sync; both children share StateDir. An Annotator adds figures of its own
// (WarmFigures: time to queryable, handler events against changes). Every measurement
// counts the LIST requests on the resource's collection as sent on the wire (GETs without
// watch=true) and the RSS before the Sync, so that the report can give a restart's peak RSS
// against the heap it holds. A subject marked Optional is measured only when named.
package harness
