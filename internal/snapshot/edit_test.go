package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Plaintext tells a plaintext snapshot from an encrypted one by its header, and is false
// for what is no snapshot.
func TestPlaintext(t *testing.T) {
	dir := t.TempDir()
	plain, enc, junk, short := filepath.Join(dir, "plain"), filepath.Join(dir, "enc"), filepath.Join(dir, "junk"), filepath.Join(dir, "short")
	write(t, plain, Meta{Identity: "id", ResourceVersion: "5"}, sample(3), Options{})
	write(t, enc, Meta{Identity: "id", ResourceVersion: "5"}, sample(3), Options{Key: testKey})
	require.NoError(t, os.WriteFile(junk, []byte("not a snapshot at all, but long enough"), 0o600))
	require.NoError(t, os.WriteFile(short, []byte(magic), 0o600))
	for path, want := range map[string]bool{plain: true, enc: false, junk: false, short: false} {
		got, err := Plaintext(path)
		require.NoError(t, err, path)
		require.Equal(t, want, got, path)
	}
	_, err := Plaintext(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
