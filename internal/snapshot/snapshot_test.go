package snapshot

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testKey = bytes.Repeat([]byte{7}, 32)

func sample(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"metadata":{"name":"o%d","resourceVersion":"%d"},"data":%q}`, i, i+1, bytes.Repeat([]byte("x"), i*37%300))
	}
	return out
}

func write(t testing.TB, path string, m Meta, objs [][]byte, o Options) {
	t.Helper()
	require.NoError(t, Write(path, m, len(objs), func(i int) []byte { return objs[i] }, o))
}

// readAll reads every object of path, or fails.
func readAll(path, identity string, o Options) (Meta, [][]byte, error) {
	r, err := Open(path, identity, o)
	if err != nil {
		return Meta{}, nil, err
	}
	defer r.Close()
	var out [][]byte
	for {
		b, err := r.Next()
		if err == io.EOF {
			return r.Meta(), out, nil
		}
		if err != nil {
			return Meta{}, nil, err
		}
		out = append(out, bytes.Clone(b))
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		o    Options
	}{
		{"empty", 0, Options{}},
		{"plain", 50, Options{}},
		{"plain mapped", 50, Options{Map: true}},
		{"empty mapped", 0, Options{Map: true}},
		{"encrypted, Map ignored", 50, Options{Key: testKey, Map: true}},
		{"encrypted", 50, Options{Key: testKey}},
		{"encrypted many frames", 2000, Options{Key: testKey[:16]}},
		{"encrypted empty", 0, Options{Key: testKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s")
			objs := sample(tc.n)
			now := time.Unix(1700000000, 123)
			write(t, path, Meta{Identity: "id", ResourceVersion: "12345", Time: now}, objs, tc.o)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			m, got, err := readAll(path, "id", tc.o)
			require.NoError(t, err)
			assert.Equal(t, "12345", m.ResourceVersion)
			assert.True(t, now.Equal(m.Time))
			assert.Equal(t, len(objs), len(got))
			for i := range objs {
				require.Equal(t, objs[i], got[i])
			}
			if tc.o.Key != nil && tc.n > 0 {
				raw, _ := os.ReadFile(path)
				assert.False(t, bytes.Contains(raw, []byte(`"name":"o1"`)), "plaintext in an encrypted file")
			}
		})
	}
}

func TestSnapshotIdentityAndKeyMismatch(t *testing.T) {
	dir := t.TempDir()
	plain, enc := filepath.Join(dir, "p"), filepath.Join(dir, "e")
	write(t, plain, Meta{Identity: "pods", ResourceVersion: "1"}, sample(3), Options{})
	write(t, enc, Meta{Identity: "pods", ResourceVersion: "1"}, sample(3), Options{Key: testKey})

	_, _, err := readAll(plain, "pods?labelSelector=a", Options{})
	assert.ErrorIs(t, err, ErrIdentity)
	assert.ErrorIs(t, err, ErrInvalid)
	_, _, err = readAll(enc, "other", Options{Key: testKey})
	assert.ErrorIs(t, err, ErrIdentity)

	_, _, err = readAll(enc, "pods", Options{})
	assert.ErrorIs(t, err, ErrDecrypt, "encrypted, no key")
	_, _, err = readAll(plain, "pods", Options{Key: testKey})
	assert.ErrorIs(t, err, ErrDecrypt, "plain, key given")
	wrong := bytes.Repeat([]byte{8}, 32)
	_, _, err = readAll(enc, "pods", Options{Key: wrong})
	assert.ErrorIs(t, err, ErrDecrypt, "wrong key")
	assert.ErrorIs(t, err, ErrInvalid)
}

// Every truncation and every single-byte change of a sample is rejected, never a panic.
func TestSnapshotCorruptionAtEveryOffset(t *testing.T) {
	for _, o := range []Options{{}, {Map: true}, {Key: testKey}} {
		t.Run(fmt.Sprintf("encrypted=%v,map=%v", o.Key != nil, o.Map), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s")
			write(t, path, Meta{Identity: "id", ResourceVersion: "77"}, sample(3), o)
			good, err := os.ReadFile(path)
			require.NoError(t, err)
			bad := filepath.Join(dir, "bad")
			for i := 0; i < len(good); i++ {
				require.NoError(t, os.WriteFile(bad, good[:i], 0o600))
				_, _, err := readAll(bad, "id", o)
				require.ErrorIs(t, err, ErrInvalid, "truncated at %d of %d", i, len(good))
				for _, x := range []byte{0x01, 0x80, 0xff} {
					c := bytes.Clone(good)
					c[i] ^= x
					require.NoError(t, os.WriteFile(bad, c, 0o600))
					_, _, err = readAll(bad, "id", o)
					require.ErrorIs(t, err, ErrInvalid, "byte %d ^ %#x of %d", i, x, len(good))
				}
			}
			require.NoError(t, os.WriteFile(bad, append(bytes.Clone(good), 0), 0o600))
			_, _, err = readAll(bad, "id", o)
			require.ErrorIs(t, err, ErrInvalid, "trailing byte")
		})
	}
}

// failingWriter fails after n bytes, as a process killed mid-write stops.
type failingWriter struct {
	f *os.File
	n int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k, _ := w.f.Write(p[:w.n])
		w.n = 0
		return k, errors.New("killed")
	}
	w.n -= len(p)
	return w.f.Write(p)
}

// A write cut half way (the temporary file left as a killed process leaves it) does not
// touch the previous snapshot, and the next Write removes the leftover.
func TestSnapshotInterruptedWriteKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	write(t, path, Meta{Identity: "id", ResourceVersion: "1"}, sample(10), Options{})
	tmp, err := os.CreateTemp(dir, tmpPrefix+"s-*")
	require.NoError(t, err)
	objs := sample(1000)
	err = writeTo(&failingWriter{f: tmp, n: 20000}, Meta{Identity: "id", ResourceVersion: "2"}, len(objs), func(i int) []byte { return objs[i] }, Options{})
	require.Error(t, err)
	require.NoError(t, tmp.Close())

	m, got, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	assert.Equal(t, "1", m.ResourceVersion)
	assert.Len(t, got, 10)
	_, _, err = readAll(tmp.Name(), "id", Options{})
	assert.ErrorIs(t, err, ErrInvalid, "the cut file itself is invalid")

	write(t, path, Meta{Identity: "id", ResourceVersion: "3"}, sample(2), Options{})
	_, err = os.Stat(tmp.Name())
	assert.NoError(t, err, "a recent temporary file may be another writer's: kept")
	old := time.Now().Add(-staleAfter - time.Minute)
	require.NoError(t, os.Chtimes(tmp.Name(), old, old))
	write(t, path, Meta{Identity: "id", ResourceVersion: "4"}, sample(2), Options{})
	_, err = os.Stat(tmp.Name())
	assert.True(t, os.IsNotExist(err), "leftover removed")
}

// Two writers of one file (two processes sharing a directory) never make each other's
// writes fail, and the file is always one of theirs, whole.
func TestSnapshotConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	var wg sync.WaitGroup
	errs := make(chan error, 2*50)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			objs := sample(200)
			for i := range 50 {
				errs <- Write(path, Meta{Identity: "id", ResourceVersion: fmt.Sprint(w*1000 + i)}, len(objs),
					func(i int) []byte { return objs[i] }, Options{})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, got, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	assert.Len(t, got, 200)
}

// A key file holds the key as hexadecimal text, readable by its owner (and its group) only. A hex key
// used to be taken as raw bytes (32 hex digits made a 32-byte key of ASCII), the key of
// another tool that decodes it; a 64-digit one was refused for its length; and a key file
// anyone could read was accepted.
func TestSnapshotKeyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k")
	put := func(content string, mode os.FileMode) {
		t.Helper()
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		require.NoError(t, os.Chmod(p, mode))
	}
	key := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + 11)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		content string
		mode    os.FileMode
		want    []byte
	}{
		{"AES-256, with newline", hex.EncodeToString(key(32)) + "\n", 0o600, key(32)},
		{"AES-128", hex.EncodeToString(key(16)), 0o600, key(16)},
		{"AES-192, upper case", strings.ToUpper(hex.EncodeToString(key(24))), 0o400, key(24)},
		{"CRLF", hex.EncodeToString(key(32)) + "\r\n", 0o600, key(32)},
		// A Secret volume with defaultMode 0400 in a Pod with an fsGroup.
		{"readable by the group", hex.EncodeToString(key(32)), 0o440, key(32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.content, tc.mode)
			k, err := ReadKeyFile(p)
			require.NoError(t, err)
			assert.Equal(t, tc.want, k)
		})
	}
	for _, tc := range []struct {
		name    string
		content string
		mode    os.FileMode
		err     string
	}{
		{"raw bytes", string(key(32)), 0o600, "hexadecimal"},
		{"raw bytes of hex digits' length", string(bytes.Repeat([]byte{0xfe}, 64)), 0o600, "hexadecimal"},
		{"too short", "short", 0o600, "32, 48 or 64 hexadecimal digits"},
		{"odd length", hex.EncodeToString(key(32))[:63], 0o600, "32, 48 or 64 hexadecimal digits"},
		{"two newlines", hex.EncodeToString(key(32)) + "\n\n", 0o600, "32, 48 or 64 hexadecimal digits"},
		{"leading space", " " + hex.EncodeToString(key(16)), 0o600, "hexadecimal"},
		{"not hex", strings.Repeat("zz", 32), 0o600, "hexadecimal"},
		{"empty", "", 0o600, "32, 48 or 64 hexadecimal digits"},
		{"CRLF and more", hex.EncodeToString(key(32)) + "\r\nx", 0o600, "32, 48 or 64 hexadecimal digits"},
		{"readable by all", hex.EncodeToString(key(32)), 0o644, "accessible by others or writable by its group"},
		{"writable by the group", hex.EncodeToString(key(32)), 0o620, "accessible by others or writable by its group"},
		{"writable by others", hex.EncodeToString(key(32)), 0o602, "accessible by others or writable by its group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.content, tc.mode)
			_, err := ReadKeyFile(p)
			require.ErrorContains(t, err, tc.err)
			assert.ErrorContains(t, err, p, "the error names the file")
			if secret := strings.TrimSpace(tc.content); len(secret) > 8 {
				assert.NotContains(t, err.Error(), secret[1:], "the key is not told")
			}
		})
	}
	t.Run("not a regular file", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		for _, path := range []string{fifo, dir} {
			_, err := ReadKeyFile(path) // a FIFO must not block
			require.ErrorContains(t, err, "not a regular file")
		}
	})
}

func FuzzSnapshotOpen(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "s")
	write(f, path, Meta{Identity: "id", ResourceVersion: "5"}, sample(3), Options{})
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Skip()
		}
		_, _, err := readAll(p, "id", Options{})
		_, _, errMapped := readAll(p, "id", Options{Map: true})
		if (err == nil) != (errMapped == nil) {
			t.Fatalf("read: %v, mapped: %v", err, errMapped)
		}
	})
}

// A file whose size lies (a valid snapshot extended to 64 GiB of holes) is found invalid
// after what is read of it: mapped, it is populated ahead of the reader, not all at once.
func TestSparseFileIsNotReadWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	write(t, path, Meta{Identity: "id", ResourceVersion: "3"}, sample(3), Options{})
	if err := os.Truncate(path, 64<<30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	for _, o := range []Options{{}, {Map: true}} {
		_, _, err := readAll(path, "id", o)
		require.ErrorIs(t, err, ErrInvalid, "map=%v", o.Map)
		require.ErrorContains(t, err, "after the checksum")
	}
}

// A mapped file's views are the file's own pages, no copy: after Keep they outlive Close.
// Before the end, Keep refuses; read, a file is never mapped.
func TestMappedViewsOutliveCloseOnceKept(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped on Linux only")
	}
	path := filepath.Join(t.TempDir(), "s")
	objs := sample(20)
	write(t, path, Meta{Identity: "id", ResourceVersion: "3"}, objs, Options{})
	fi, err := os.Stat(path)
	require.NoError(t, err)

	r, err := Open(path, "id", Options{})
	require.NoError(t, err)
	assert.Zero(t, r.Mapped(), "not asked to map")
	require.NoError(t, r.Close())

	r, err = Open(path, "id", Options{Map: true})
	require.NoError(t, err)
	assert.Equal(t, int(fi.Size()), r.Mapped())
	var views [][]byte
	for {
		b, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		assert.False(t, r.Keep(), "kept before the checksum was read")
		views = append(views, b)
	}
	require.True(t, r.Keep())
	require.NoError(t, r.Close())
	// The file replaced as Write replaces it: the mapping keeps the old file's pages.
	write(t, path, Meta{Identity: "id", ResourceVersion: "4"}, sample(1), Options{})
	require.Len(t, views, len(objs))
	for i := range objs {
		assert.Equal(t, objs[i], views[i])
		assert.Equal(t, len(views[i]), cap(views[i]), "a view must not reach into the next record")
	}
}

// A FIFO in the snapshot's place blocked Open (and the informer, and its Shutdown) until a
// writer came; a directory or a device is no snapshot either. Each is refused at once.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{fifo, dir, "/dev/zero"} {
		done := make(chan error, 1)
		go func() {
			_, err := Open(path, "id", Options{})
			done <- err
		}()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, ErrInvalid, path)
		case <-time.After(10 * time.Second):
			t.Fatalf("Open(%s) blocked", path)
		}
	}
}

// SetResourceVersion leaves a file that opens as valid and claims the new version;
// PeekResourceVersion reads it back; encrypted files are refused.
func TestSetResourceVersion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	write(t, path, Meta{Identity: "id", ResourceVersion: "12"}, sample(5), Options{})
	require.NoError(t, SetResourceVersion(path, "1000012"))
	rv, err := PeekResourceVersion(path)
	require.NoError(t, err)
	assert.Equal(t, "1000012", rv)
	m, got, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	assert.Equal(t, "1000012", m.ResourceVersion)
	assert.Len(t, got, 5)

	enc := filepath.Join(dir, "e")
	write(t, enc, Meta{Identity: "id", ResourceVersion: "12"}, sample(5), Options{Key: testKey})
	assert.ErrorIs(t, SetResourceVersion(enc, "13"), ErrInvalid)
}

// A directory in the snapshot's place failed every Write only after the whole file was
// written, with an error naming the random temporary file: each attempt read as a new
// failure. Write now refuses at once, and a failure that repeats reads the same.
func TestWriteFailureNamesTheTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	require.NoError(t, os.Mkdir(path, 0o700))
	var errs []string
	for range 2 {
		err := Write(path, Meta{Identity: "id", ResourceVersion: "5"}, 1, func(int) []byte { return []byte("{}") }, Options{})
		require.Error(t, err)
		errs = append(errs, err.Error())
	}
	assert.Equal(t, errs[0], errs[1], "the same failure, told the same way")
	assert.Contains(t, errs[0], path)
	assert.Contains(t, errs[0], "is a directory")
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, left, 1, "no temporary file left behind")

	// A failure on the temporary file names the target, not the temporary file.
	err = fileError("write", path, &os.PathError{Op: "write", Path: filepath.Join(dir, tmpPrefix+"s.snap-123"), Err: syscall.ENOSPC})
	assert.Equal(t, "snapshot: write "+path+": no space left on device", err.Error())
	assert.ErrorIs(t, err, syscall.ENOSPC)
}

// A file another user owns (planted in a directory others may write to, such as /tmp) or
// that others may write to in place is refused, however valid its content: only this
// user's writes record what the server said.
func TestOpenRefusesAFileOfAnotherUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	write(t, path, Meta{Identity: "id", ResourceVersion: "5"}, sample(3), Options{})
	for _, o := range []Options{{}, {Map: true}} {
		_, _, err := readAll(path, "id", o)
		require.NoError(t, err)
	}
	for _, mode := range []os.FileMode{0o602, 0o666} {
		require.NoError(t, os.Chmod(path, mode))
		for _, o := range []Options{{}, {Map: true}} {
			_, _, err := readAll(path, "id", o)
			require.ErrorIs(t, err, ErrInvalid, "mode %04o", mode)
			require.ErrorContains(t, err, "writable by others")
		}
	}
	// Writable by its group, as the kubelet makes the files of a volume with an fsGroup at
	// each mount: accepted.
	require.NoError(t, os.Chmod(path, 0o660))
	for _, o := range []Options{{}, {Map: true}} {
		_, _, err := readAll(path, "id", o)
		require.NoError(t, err)
	}
	require.NoError(t, os.Chmod(path, 0o600))
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	require.NoError(t, os.Chown(path, 65534, 65534))
	for _, o := range []Options{{}, {Map: true}} {
		_, _, err := readAll(path, "id", o)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "owned by uid 65534")
	}
	// The directory's owner could replace the file anyway: its files are this user's as
	// far as trust goes (a root process's files on NFS with root squashing are nobody's).
	dir := filepath.Dir(path)
	require.NoError(t, os.Chown(dir, 65534, 65534))
	_, _, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	require.NoError(t, os.Chown(dir, 0, 0))
	// Write replaces it with a file of this user's, which opens.
	write(t, path, Meta{Identity: "id", ResourceVersion: "6"}, sample(3), Options{})
	m, _, err := readAll(path, "id", Options{})
	require.NoError(t, err)
	require.Equal(t, "6", m.ResourceVersion)
}

// A nil from next aborts the write: the previous file stays as it was, and no temporary
// file is left.
func TestWriteAbortedKeepsThePrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	write(t, path, Meta{Identity: "id", ResourceVersion: "5"}, sample(3), Options{})
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, o := range []Options{{}, {Key: testKey}} {
		err = Write(path, Meta{Identity: "id", ResourceVersion: "6"}, 3, func(i int) []byte {
			if i == 1 {
				return nil
			}
			return sample(3)[i]
		}, o)
		require.ErrorIs(t, err, ErrAborted)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, before, after)
		files, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, files, 1)
	}
}
