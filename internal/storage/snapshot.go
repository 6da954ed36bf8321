package storage

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

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

// SnapshotViewer is implemented by Snapshotters whose items can be views of a record
// (the compact mode's): SnapshotView is SnapshotDecode without a copy, for records that
// stay valid and unchanged for the life of the process (a mapped snapshot file kept).
type SnapshotViewer interface {
	SnapshotView(data []byte) (any, error)
	// SnapshotViews reports whether the mode keeps such views as they are; false when its
	// transform copies every item anyway (the compact mode's compression), which leaves a
	// mapping nothing refers to.
	SnapshotViews() bool
}

// ResourceVersionProber is implemented by ListerWatchers that can learn the server's
// current resourceVersion for their target without a LIST (the compact mode's, with a
// watch that sends no object). The informer core uses it to decide when a watch resumed
// from a snapshot has delivered what changed while the process was down.
type ResourceVersionProber interface {
	// CurrentResourceVersion returns a resourceVersion at least as recent as every change
	// the server had accepted when the call began.
	CurrentResourceVersion(ctx context.Context) (string, error)
}
