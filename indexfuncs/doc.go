// Package indexfuncs turns JSONPath expressions and object metadata into index functions for
// kindex's caches.
//
// JSONPath and FromPath build an index function from a compiled kubectl-dialect path (package
// jsonpath): every value of a multi-valued path is indexed, scalars by their canonical text
// (numbers and booleans as kubectl prints them), a missing field yields no entry, and a map or
// list where a scalar is needed is reported as an error wrapping ErrNotScalar alongside the
// values that were usable. kindex's store counts such errors per index and keeps the object:
// an index function never loses an object and never panics the process, unlike client-go,
// whose indexer panics on an index function error.
//
// The same function reads every kind of object the front ends cache: unstructured objects
// (their maps, without reflection), compact objects kept as JSON bytes (with gjson, without
// decoding), and metadata-only objects (their metadata, under .metadata).
//
// Builtin returns the metadata indexes every consumer needs: namespace, name, UID, label
// (key=value), label key, annotation key, owner UID, controller UID and finalizer.
package indexfuncs
