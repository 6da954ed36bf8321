//go:build unix

package snapshot

import (
	"os"
	"syscall"
)

// checkOwner refuses a file that this process's user did not write: one owned by another
// user (planted in a directory others may write to, such as /tmp, where a sticky bit
// also keeps this process from replacing it), or one others may write to in place. A
// snapshot is a record of what the server said; only this user's writes can be that.
func checkOwner(fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return invalid("owned by uid %d, not by this process's user (uid %d)", st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return invalid("writable by group or others (mode %04o)", perm)
	}
	return nil
}
