//go:build unix

package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
)

// checkOwner refuses a file, at path, that neither this process's user nor the owner of
// its directory (who could replace it anyway) wrote: one planted by another user in a
// directory others may write to, such as /tmp, where a sticky bit also keeps this process
// from replacing it; and one others may write to in place. A snapshot is a record of what
// the server said; only those writes can be that. (The directory's owner covers a
// directory on NFS with root squashing, where a root process's files belong to nobody.)
// A file its group may write to is accepted: a Kubernetes volume with an fsGroup has every
// file made group-writable by the kubelet at each mount, and the group is the Pod's.
func checkOwner(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o002 != 0 {
		return invalid("writable by others (mode %04o)", perm)
	}
	uid := os.Geteuid()
	if int(st.Uid) == uid {
		return nil
	}
	if di, err := os.Stat(filepath.Dir(path)); err == nil {
		if ds, ok := di.Sys().(*syscall.Stat_t); ok && ds.Uid == st.Uid {
			return nil
		}
	}
	return invalid("owned by uid %d, neither this process's user (uid %d) nor its directory's owner", st.Uid, uid)
}
