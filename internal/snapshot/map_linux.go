//go:build linux

package snapshot

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only, its page tables filled at once (MAP_POPULATE):
// the pages of a file the page cache holds cost no fault each, as fresh memory would.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }
