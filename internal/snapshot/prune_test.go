package snapshot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A directory removed while its files are written is created again, 0700, by the next
// write, instead of every write failing until the process restarts.
func TestWriteCreatesARemovedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snaps")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "s.snap")
	write(t, path, Meta{Identity: "id", ResourceVersion: "1"}, sample(3), Options{})
	require.NoError(t, os.RemoveAll(dir))

	write(t, path, Meta{Identity: "id", ResourceVersion: "2"}, sample(4), Options{})
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	m, got, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	assert.Equal(t, "2", m.ResourceVersion)
	assert.Len(t, got, 4)
}

// Prune removes the snapshots and leftover temporary files older than the cutoff, and
// nothing else: not a newer snapshot, not one kept, not a file that only has the suffix,
// not a directory, not a symbolic link to an old snapshot.
func TestPruneRemovesOnlyOldSnapshots(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	cutoff := time.Now().Add(-24 * time.Hour)
	mk := func(name string, age time.Time) string {
		p := filepath.Join(dir, name)
		write(t, p, Meta{Identity: name, ResourceVersion: "1"}, sample(2), Options{})
		require.NoError(t, os.Chtimes(p, age, age))
		return p
	}
	gone := mk("a_v1_old.snap", old)
	encrypted := filepath.Join(dir, "b_v1_enc.snap")
	write(t, encrypted, Meta{Identity: "e", ResourceVersion: "1"}, sample(2), Options{Key: testKey})
	require.NoError(t, os.Chtimes(encrypted, old, old))
	fresh := mk("c_v1_new.snap", time.Now())
	kept := mk("d_v1_kept.snap", old)
	notOurs := filepath.Join(dir, "notes.snap")
	require.NoError(t, os.WriteFile(notOurs, []byte("something else entirely"), 0o600))
	require.NoError(t, os.Chtimes(notOurs, old, old))
	tmp := filepath.Join(dir, tmpPrefix+"x.snap-123")
	require.NoError(t, os.WriteFile(tmp, []byte("cut"), 0o600))
	require.NoError(t, os.Chtimes(tmp, old, old))
	sub := filepath.Join(dir, "sub.snap")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.Chtimes(sub, old, old))
	link := filepath.Join(dir, "link.snap")
	require.NoError(t, os.Symlink(kept, link))

	removed, err := Prune(dir, cutoff, func(p string) bool { return p == kept })
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{gone, encrypted, tmp}, removed)
	for _, p := range []string{gone, encrypted, tmp} {
		_, err := os.Lstat(p)
		assert.True(t, os.IsNotExist(err), "%s removed", p)
	}
	for _, p := range []string{fresh, kept, notOurs, sub, link} {
		_, err := os.Lstat(p)
		assert.NoError(t, err, "%s kept", p)
	}

	_, err = Prune(filepath.Join(dir, "missing"), cutoff, nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
