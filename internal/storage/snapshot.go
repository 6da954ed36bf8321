package storage

import "k8s.io/apimachinery/pkg/runtime"

// Snapshotter is implemented by storage modes whose stored items can be written to a
// snapshot file and read back without the server (the compact mode: its items are bytes).
type Snapshotter interface {
	// SnapshotIdentity names the options that change what the mode stores for the same
	// resource (managedFields kept, projection): a snapshot written with other options is
	// not used.
	SnapshotIdentity() string
	// AppendSnapshot appends the record of a stored item to dst, or returns false for an
	// item the mode cannot write.
	AppendSnapshot(dst []byte, item any) ([]byte, bool)
	// SnapshotDecode turns a record from AppendSnapshot back into a stored item; data is
	// not retained.
	SnapshotDecode(data []byte) (any, error)
	// SnapshotList returns the list object the mode's ListerWatcher would return for items
	// (from SnapshotDecode) at resourceVersion rv.
	SnapshotList(items []any, rv string) runtime.Object
}
