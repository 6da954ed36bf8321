package snapshot

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Prune removes from dir the snapshot files (names ending in ".snap" whose content starts
// as a snapshot of any format version does) and the temporary files of interrupted writes
// that have not been modified since before cutoff, except those keep reports true for
// (their paths as filepath.Join(dir, name)); keep may be nil. It returns the paths removed.
// Anything else in dir (other files, directories, symbolic links) is left alone, and a file
// that cannot be read or removed is skipped: the first such error is returned with what was
// removed. A file removed while a process has it mapped stays readable by that process.
func Prune(dir string, cutoff time.Time, keep func(path string) bool) (removed []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, de := range entries {
		name := de.Name()
		tmp := strings.HasPrefix(name, tmpPrefix)
		if !de.Type().IsRegular() || (!tmp && !strings.HasSuffix(name, ".snap")) {
			continue
		}
		path := filepath.Join(dir, name)
		if keep != nil && keep(path) {
			continue
		}
		fi, ierr := de.Info()
		if ierr != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		if tmp && time.Since(fi.ModTime()) < staleAfter {
			continue // another writer's, maybe still being written
		}
		if !tmp && !hasMagic(path) {
			continue
		}
		if rerr := os.Remove(path); rerr != nil {
			if err == nil && !os.IsNotExist(rerr) {
				err = rerr
			}
			continue
		}
		removed = append(removed, path)
	}
	return removed, err
}

// hasMagic reports whether the file at path starts with a snapshot's magic.
func hasMagic(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	var b [len(magic)]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return string(b[:]) == magic
}
