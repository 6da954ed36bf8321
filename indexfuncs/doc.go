// Package indexfuncs turns JSONPath expressions and object metadata into index functions for
// kindex's caches.
//
// JSONPath and FromPath build an index function from a compiled kubectl-dialect path (package
// jsonpath): every value of a multi-valued path is indexed, scalars by their canonical text
// (numbers and booleans as kubectl prints them), a missing field yields no entry, and a map or
// list is indexed under query.NonScalar: present for existence, with nothing to compare.
// Errors (an object the function cannot read, an evaluation over its budget) are counted per
// index by kindex's store, which keeps the object: an index function never loses an object
// and never panics the process, unlike client-go, whose indexer panics on an index function
// error.
//
// The same function reads every kind of object the front ends cache: unstructured objects
// (their maps, without reflection), compact objects kept as JSON bytes (read in place, as a
// jsonpath.JSON, without decoding), and metadata-only objects (their metadata, under .metadata).
//
// Builtin returns the metadata indexes every consumer needs: namespace, name, UID, label
// (key=value), label key, annotation key, owner UID, controller UID and finalizer.
//
// # How informers use them
//
// Informer.AddIndex(name, expr) compiles expr once and registers FromPath's function in
// the informer's store under the path's canonical form ((*jsonpath.Path).String()), so that
// consumers registering the same expression, however they spell it, share one index;
// AddBuiltinIndex registers a built-in under "builtin:<name>", which Factory.Dependents and
// Orphans share (owner UID and UID). A syntax error is returned as a *jsonpath.SyntaxError
// with the byte offset. The functions run on every add and update of an object, under the
// store's lock.
//
// # Costs
//
// On a decoded object, a path of fields and indexes ("{.spec.nodeName}") is a map walk; with
// wildcards and filters ("{.spec.containers[*].image}", `{.status.conditions[?(@.type==
// "Ready")].status}`) it walks more; each allocates only the returned slice (values are
// evaluated into a pooled buffer) and the text of a number or boolean. Measured on a decoded
// Pod: 0.3-0.6 us per evaluation (bench/README.md, "Indexes and queries"). On raw JSON (compact objects) the path is
// evaluated over the bytes, without decoding. On a metadata-only object the metadata is first rendered
// as a small map (a few allocations) for the path to read; the built-ins read the metadata
// directly and are the cheaper choice there.
package indexfuncs
