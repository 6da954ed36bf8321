package informer

// ServingFromSnapshot reports whether the informer answers from a snapshot it started
// from and is not current with the server yet (Status.ServingFromSnapshot).
func (i *Informer[T]) ServingFromSnapshot() bool { return i.Status().ServingFromSnapshot }

// Queryable reports whether reads answer from a complete set of objects: the informer is
// synced, or it serves a snapshot (possibly stale, see Status.SnapshotTime) while it
// catches up. HasSynced and WaitForSync wait for the server. It is false once reads fail:
// after Release (ErrReleased) and once the factory stopped (ErrShutdown).
func (i *Informer[T]) Queryable() bool {
	if !i.valid() {
		return false
	}
	if i.h.gone() != nil {
		return false
	}
	st := i.h.e.Status()
	return st.ServingFromSnapshot || !st.LastSyncTime.IsZero()
}
