//go:build !linux

package snapshot

import (
	"errors"
	"os"
)

// mapFile is Linux-only: elsewhere files are read (Options.Map is ignored).
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func populate([]byte) {}

func unmapFile([]byte) error { return nil }
