package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Files of format version 1 (a SHA-256 instead of the CRC-32C) are still read, and their
// checksum still checked; a version-2 file's CRC-32C catches a flipped byte.
func TestVersion1StillReadAndChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	objs := sample(20)
	write(t, path, Meta{Identity: "id", ResourceVersion: "9"}, objs, Options{})
	v2, err := os.ReadFile(path)
	require.NoError(t, err)

	// The same content as version 1: the version field, then a SHA-256 over everything
	// before the checksum.
	v1 := append([]byte(nil), v2[:len(v2)-4]...)
	binary.BigEndian.PutUint16(v1[len(magic):], versionSHA256)
	sum := sha256.Sum256(v1)
	v1 = append(v1, sum[:]...)
	require.NoError(t, os.WriteFile(path, v1, 0o600))
	m, got, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	require.Equal(t, "9", m.ResourceVersion)
	require.Equal(t, objs, got)

	for name, file := range map[string][]byte{"version 1": v1, "version 2": v2} {
		bad := append([]byte(nil), file...)
		bad[len(bad)/2] ^= 0x20
		require.NoError(t, os.WriteFile(path, bad, 0o600))
		_, _, err = readAll(path, "id", Options{})
		require.ErrorIs(t, err, ErrInvalid, name)
	}
}
