//go:build linux

package snapshot

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only. Its pages are filled in ahead of the reader
// (populate), not at once: a file whose size lies (a sparse file of a terabyte) costs
// what is read of it before it is found invalid, not its size.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

// populate fills in the page tables of b (MADV_POPULATE_READ, Linux 5.14): the pages of a
// file the page cache holds then cost no fault each, as fresh memory would. Where the
// kernel is older, the reads fault the pages in one at a time.
func populate(b []byte) { _ = unix.Madvise(b, unix.MADV_POPULATE_READ) }

func unmapFile(b []byte) error { return unix.Munmap(b) }
