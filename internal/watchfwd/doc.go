// Package watchfwd forwards the events of a watch through one goroutine, passing each
// event through a filter and telling a hook when the events end: what kindex's list-watch
// wrappers need (the kind of metadata-only objects, the shard filter, watch errors
// observed, discovery's record of whether its watches are open).
//
// Hand-written rather than apimachinery's watch.Filter: that one's goroutine sends without
// watching Stop, so a watch whose consumer stopped reading (a reflector stops reading
// before it stops a watch) keeps its goroutine blocked for ever; and it has no end hook.
package watchfwd
