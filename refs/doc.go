// Package refs keeps a graph of the references between the objects of a cluster (who uses
// what) across every resource, custom ones included, and keeps it current event by event.
package refs
