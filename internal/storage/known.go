package storage

import "context"

type knownObjectsKey struct{}

// WithKnownObjects returns ctx carrying lookup, the cache's objects by key, for a LIST
// that will be applied against that cache (a relist): a mode may answer an item that did
// not change (same resourceVersion and uid) with the cached object instead of a new one.
func WithKnownObjects(ctx context.Context, lookup func(key string) (any, bool)) context.Context {
	return context.WithValue(ctx, knownObjectsKey{}, lookup)
}

// KnownObjectsFrom returns the lookup WithKnownObjects put in ctx, or nil.
func KnownObjectsFrom(ctx context.Context) func(key string) (any, bool) {
	f, _ := ctx.Value(knownObjectsKey{}).(func(key string) (any, bool))
	return f
}
