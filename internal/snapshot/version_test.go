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

// Format version 2 encrypted every file with the caller's key and 32 random bits of nonce:
// over many files with one key, nonces repeat (n²/2³³), which breaks AES-GCM. Version 3
// derives a key per file from a random salt after the header. Files of version 2 are still
// read (testdata/v2-encrypted.snap was written by the version-2 code with testKey).
func TestEncryptedFilesHaveKeysOfTheirOwn(t *testing.T) {
	// A copy of this user's, 0600: Open refuses a file another user owns or may write to,
	// which a checkout may be.
	old, err := os.ReadFile("testdata/v2-encrypted.snap")
	require.NoError(t, err)
	oldPath := filepath.Join(t.TempDir(), "v2-encrypted.snap")
	require.NoError(t, os.WriteFile(oldPath, old, 0o600))
	m, got, err := readAll(oldPath, "id", Options{Key: testKey})
	require.NoError(t, err)
	require.Equal(t, "42", m.ResourceVersion)
	require.Equal(t, sample(3), got)

	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, a, Meta{Identity: "id", ResourceVersion: "42"}, sample(3), Options{Key: testKey})
	write(t, b, Meta{Identity: "id", ResourceVersion: "42"}, sample(3), Options{Key: testKey})
	fa, err := os.ReadFile(a)
	require.NoError(t, err)
	fb, err := os.ReadFile(b)
	require.NoError(t, err)
	require.Equal(t, uint16(Version), binary.BigEndian.Uint16(fa[len(magic):]))
	require.NotEqual(t, fa[headerLen:headerLen+saltLen], fb[headerLen:headerLen+saltLen], "a salt per file")
	_, got, err = readAll(a, "id", Options{Key: testKey})
	require.NoError(t, err)
	require.Equal(t, sample(3), got)

	// The same file read as version 2 (the caller's key itself, no salt) does not decrypt:
	// the file's key is its own.
	v2 := append(append([]byte(nil), fa[:headerLen]...), fa[headerLen+saltLen:]...)
	binary.BigEndian.PutUint16(v2[len(magic):], versionSharedKey)
	require.NoError(t, os.WriteFile(a, v2, 0o600))
	_, _, err = readAll(a, "id", Options{Key: testKey})
	require.ErrorIs(t, err, ErrDecrypt)
}
