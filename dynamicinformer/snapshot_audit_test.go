package dynamicinformer_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var (
	metaGet    = metav1.GetOptions{}
	metaUpdate = metav1.UpdateOptions{}
	metaCreate = metav1.CreateOptions{}
	metaDelete = metav1.DeleteOptions{}
	auditKeyA  = bytes.Repeat([]byte{0xa1}, 32)
	auditKeyB  = bytes.Repeat([]byte{0xb2}, 32)
)

// hostileCase damages or replaces the snapshot file of a ConfigMap informer between two
// runs. write is the options' key of the run that wrote it, read that of the run that
// reads it; ignored says whether the reading run must ignore it (one log line, one LIST)
// or use it (no LIST).
type hostileCase struct {
	name        string
	write, read []byte
	mutate      func(t *testing.T, path string, other []byte)
	ignored     bool
	noRecovery  bool // the reading run cannot write a file in its place
}

// corrupt returns a mutation that applies f to the file's bytes.
func corrupt(f func(b []byte) []byte) func(*testing.T, string, []byte) {
	return func(t *testing.T, path string, _ []byte) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, f(b), 0o600))
	}
}

func flipAt(pos func(n int) int) func(*testing.T, string, []byte) {
	return corrupt(func(b []byte) []byte { b[pos(len(b))] ^= 0x10; return b })
}

func truncateAt(pos func(n int) int) func(*testing.T, string, []byte) {
	return corrupt(func(b []byte) []byte { return b[:pos(len(b))] })
}

func hostileCases() []hostileCase {
	rnd := rand.New(rand.NewPCG(1, 2))
	cases := []hostileCase{
		{name: "empty", mutate: truncateAt(func(int) int { return 0 }), ignored: true},
		{name: "flip-magic", mutate: flipAt(func(int) int { return 3 }), ignored: true},
		{name: "flip-version", mutate: flipAt(func(int) int { return 9 }), ignored: true},
		{name: "flip-identity", mutate: flipAt(func(int) int { return 20 }), ignored: true},
		{name: "flip-rv", mutate: flipAt(func(int) int { return 16 + 32 + 4 }), ignored: true},
		{name: "flip-middle", mutate: flipAt(func(n int) int { return n / 2 }), ignored: true},
		{name: "flip-trailer", mutate: flipAt(func(n int) int { return n - 1 }), ignored: true},
		{name: "trailing-byte", mutate: corrupt(func(b []byte) []byte { return append(b, 0) }), ignored: true},
		{name: "enc-flip-salt", write: auditKeyA, read: auditKeyA, mutate: flipAt(func(int) int { return 18 }), ignored: true},
		{name: "enc-flip-middle", write: auditKeyA, read: auditKeyA, mutate: flipAt(func(n int) int { return n / 2 }), ignored: true},
		{name: "enc-flip-trailer", write: auditKeyA, read: auditKeyA, mutate: flipAt(func(n int) int { return n - 1 }), ignored: true},
		{name: "enc-truncated-frame", write: auditKeyA, read: auditKeyA, mutate: truncateAt(func(n int) int { return n - 17 }), ignored: true},
		{name: "other-key", write: auditKeyA, read: auditKeyB, mutate: func(*testing.T, string, []byte) {}, ignored: true},
		{name: "plain-read-with-key", read: auditKeyA, mutate: func(*testing.T, string, []byte) {}, ignored: true},
		{name: "encrypted-read-without-key", write: auditKeyA, mutate: func(*testing.T, string, []byte) {}, ignored: true},
		{name: "other-namespace", mutate: func(t *testing.T, path string, other []byte) {
			require.NoError(t, os.WriteFile(path, other, 0o600))
		}, ignored: true},
		{name: "directory", mutate: func(t *testing.T, path string, _ []byte) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Mkdir(path, 0o700))
		}, ignored: true, noRecovery: true},
		{name: "symlink-to-dev-zero", mutate: func(t *testing.T, path string, _ []byte) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Symlink("/dev/zero", path))
		}, ignored: true},
		{name: "symlink-to-itself", mutate: func(t *testing.T, path string, _ []byte) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Symlink(filepath.Base(path), path))
		}, ignored: true},
		{name: "mode-0666", mutate: func(t *testing.T, path string, _ []byte) { require.NoError(t, os.Chmod(path, 0o666)) }, ignored: true},
		{name: "mode-0644", mutate: func(t *testing.T, path string, _ []byte) { require.NoError(t, os.Chmod(path, 0o644)) }},
		{name: "symlink-to-a-valid-copy", mutate: func(t *testing.T, path string, _ []byte) {
			moved := filepath.Join(filepath.Dir(path), "elsewhere")
			require.NoError(t, os.Rename(path, moved))
			require.NoError(t, os.Symlink(moved, path))
		}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, hostileCase{name: "owned-by-another-user", mutate: func(t *testing.T, path string, _ []byte) {
			require.NoError(t, os.Chown(path, 12345, 12345))
		}, ignored: true})
	}
	for i := range 6 {
		for _, key := range [][]byte{nil, auditKeyA} {
			cases = append(cases, hostileCase{name: fmt.Sprintf("random-%d-enc=%v", i, key != nil), write: key, read: key, ignored: true,
				mutate: func(t *testing.T, path string, _ []byte) {
					b, err := os.ReadFile(path)
					require.NoError(t, err)
					at := rnd.IntN(len(b))
					if i%2 == 0 {
						t.Logf("truncated at %d of %d", at, len(b))
						b = b[:at]
					} else {
						t.Logf("byte %d of %d flipped", at, len(b))
						b[at] ^= 1 << rnd.IntN(8)
					}
					require.NoError(t, os.WriteFile(path, b, 0o600))
				}})
		}
	}
	return cases
}

// sortedNames returns the sorted keys of m.
func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A snapshot file damaged, replaced or planted by a hostile operator is never trusted: the
// informer ignores it with one log line, lists once and ends equal to the server, handlers
// see the server's objects only (no ghost of the snapshot), and the next clean stop writes
// a good file again. What is documented as accepted (mode 0644, a symbolic link to a valid
// file) is used without a LIST.
func TestSnapshotAuditHostileFiles(t *testing.T) {
	ctx := context.Background()
	// The snapshot of another namespace, for "other-namespace".
	otherNS := cp.Namespace(t)
	createConfigMaps(t, cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(otherNS), 2)
	otherOpts := dynamicinformer.Options{Namespace: otherNS, SnapshotDir: t.TempDir()}
	snapshotOnce(t, otherOpts, "configmaps")
	other, err := os.ReadFile(snapshotFile(t, otherOpts.SnapshotDir))
	require.NoError(t, err)

	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			ns := cp.Namespace(t)
			cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
			createConfigMaps(t, cms, 4)
			dir := t.TempDir()
			snapshotOnce(t, dynamicinformer.Options{Namespace: ns, SnapshotDir: dir, SnapshotKey: c.write}, "configmaps")
			path := snapshotFile(t, dir)
			churnWhileDown(t, ctx, cms)
			c.mutate(t, path, other)

			opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: dir, SnapshotKey: c.read}
			fx, inf, ev := restart(t, opts, "configmaps")
			waitSync(t, inf)
			cacheEquals(t, ctx, inf, cms)
			// The cache synced; the handler is delivered its initial list on its own.
			testenv.Eventually(t, 30*time.Second, inf.Registrations()[0].HasSynced, "the handler was not delivered the initial list")
			lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
			ignored := fx.log.Matching("Snapshot ignored")
			want := serverState(t, ctx, cms)
			a, u, d := ev.Get()
			if c.ignored {
				require.Len(t, ignored, 1, "%s", fx.log)
				t.Logf("%s", ignored[0])
				require.Equal(t, 1, lists)
				require.Equal(t, sortedNames(want), a, "adds: the server's objects, none of the snapshot's")
				require.Empty(t, u)
				require.Empty(t, d)
			} else {
				require.Empty(t, ignored, "%s", fx.log)
				require.Zero(t, lists)
			}
			fx.f.Shutdown()
			if c.noRecovery {
				return
			}
			// The next run finds a good file of its own.
			fx, inf, _ = restart(t, opts, "configmaps")
			waitSync(t, inf)
			cacheEquals(t, ctx, inf, cms)
			lists, _ = fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
			require.Zero(t, lists, "%s", fx.log)
			require.Zero(t, fx.log.Count("Snapshot ignored"), "%s", fx.log)
		})
	}
}

// churnWhileDown updates o1, deletes o2 and creates "new", as if while the process was
// down.
func churnWhileDown(t *testing.T, ctx context.Context, cms dynamic.ResourceInterface) {
	t.Helper()
	churn := func(create, update, del string) {
		obj, err := cms.Get(ctx, update, metaGet)
		require.NoError(t, err)
		obj.SetLabels(map[string]string{"changed": "yes"})
		_, err = cms.Update(ctx, obj, metaUpdate)
		require.NoError(t, err)
		require.NoError(t, cms.Delete(ctx, del, metaDelete))
		obj.SetName(create)
		obj.SetResourceVersion("")
		obj.SetUID("")
		_, err = cms.Create(ctx, obj, metaCreate)
		require.NoError(t, err)
	}
	churn("new", "o1", "o2")
}

// SnapshotDir naming a regular file is refused by NewFactory with a clear error.
func TestSnapshotAuditDirIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{SnapshotDir: file}, dynamicinformer.CompactOptions{})
	require.ErrorContains(t, err, "SnapshotDir")
	require.True(t, strings.Contains(err.Error(), "not a directory"), "%v", err)
}

// Two factories (two processes' worth) sharing a SnapshotDir for the same informer, writing
// concurrently while the server changes, leave a file that a restart uses without a LIST
// and that ends equal to the server.
func TestSnapshotAuditSharedDirConcurrent(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, 5)
	dir := t.TempDir()
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: dir, SnapshotInterval: 5e6}
	var fxs []*fixture
	for range 2 {
		fx := startCompact(t, opts)
		inf, err := fx.f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		waitSync(t, inf)
		fxs = append(fxs, fx)
	}
	for i := range 20 {
		churnNamed(t, ctx, cms, fmt.Sprint("c", i))
	}
	var wg sync.WaitGroup
	for _, fx := range fxs {
		wg.Go(fx.f.Shutdown)
	}
	wg.Wait()
	for _, fx := range fxs {
		require.Zero(t, fx.log.Count("Cannot write"), "%s", fx.log)
	}
	churnWhileDown(t, ctx, cms)
	fx, inf, _ := restart(t, opts, "configmaps")
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Zero(t, lists, "%s", fx.log)
	fx.f.Shutdown() // its own writes done: a file being written is not one left over
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")
}

// churnNamed creates name and deletes it again after updating o0.
func churnNamed(t *testing.T, ctx context.Context, cms dynamic.ResourceInterface, name string) {
	t.Helper()
	obj, err := cms.Get(ctx, "o0", metaGet)
	require.NoError(t, err)
	obj.SetLabels(map[string]string{"n": name})
	_, err = cms.Update(ctx, obj, metaUpdate)
	require.NoError(t, err)
	obj.SetName(name)
	obj.SetResourceVersion("")
	obj.SetUID("")
	_, err = cms.Create(ctx, obj, metaCreate)
	require.NoError(t, err)
	if len(name)%2 == 0 {
		require.NoError(t, cms.Delete(ctx, name, metaDelete))
	}
}

// readOnly makes dir a read-only bind mount of itself until the test ends (skipping the
// test where mounts are not allowed).
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount: %v", err)
	}
	// Lazily: a snapshot mapped for good keeps the mount busy.
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	require.NoError(t, syscall.Mount(dir, dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""))
}

// A SnapshotDir made read-only while the process was down: the snapshot in it is used
// (no LIST), every write fails and is logged once with the failure in the status, and the
// informer ends equal to the server. A SnapshotDir that cannot be created (under a
// read-only directory) is NewFactory's error.
func TestSnapshotAuditReadOnlyDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bind mounts")
	}
	ctx := context.Background()
	cms, opts := snapshottedConfigMaps(t, 3)
	readOnly(t, opts.SnapshotDir)
	churnWhileDown(t, ctx, cms)

	opts.SnapshotInterval = 20 * time.Millisecond
	fx, inf, ev := restart(t, opts, "configmaps")
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + opts.Namespace + "/configmaps")
	require.Zero(t, lists)
	testsupport.Churn(t, ctx, cms, "newer", "o0", "new")
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotError != nil }, "write failure in the status")
	last := inf.Status().SnapshotErrorTime
	testsupport.Churn(t, ctx, cms, "newest", "o0", "newer")
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotErrorTime.After(last) }, "another attempt")
	cacheEquals(t, ctx, inf, cms)
	require.Equal(t, 1, fx.log.Count("Cannot write a snapshot"), "%s", fx.log)
	require.Zero(t, fx.log.Count("Snapshot ignored"), "%s", fx.log)
	testenv.Eventually(t, 10*time.Second, func() bool { _, _, d := ev.Get(); return len(d) == 3 }, "newer's delete delivered")
	_, _, d := ev.Get()
	require.Equal(t, []string{"new", "newer", "o2"}, d)

	_, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{SnapshotDir: filepath.Join(opts.SnapshotDir, "sub")}, dynamicinformer.CompactOptions{})
	require.ErrorContains(t, err, "read-only file system")
}

// replaceInFile replaces old by new (of the same length) once in the file at path.
func replaceInFile(t *testing.T, path, old, new string) {
	t.Helper()
	require.Len(t, new, len(old))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(b, []byte(old)), "%q in the snapshot", old)
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o600))
}

// A snapshot ahead of the server is another timeline's (etcd restored from a backup without
// a revision bump): an object it holds at the same resourceVersion and uid as the server's
// may have other content (the restored etcd wrote that revision again, differently). The
// relist that replaces it must serve the server's objects, not keep the snapshot's because
// their resourceVersion and uid match. Simulated by editing an object's content in the
// snapshot and moving its version ahead of the server's.
func TestSnapshotAuditAheadRelistServesTheServersContent(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	for i := range 3 {
		_, err := cms.Create(ctx, toUnstructured(t, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i)},
			Data: map[string]string{"v": fmt.Sprint("server-timeline-", i)}}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "configmaps")
	path := snapshotFile(t, opts.SnapshotDir)
	replaceInFile(t, path, "server-timeline-1", "older-timeline--1")
	now, err := strconv.ParseUint(must(cms.List(ctx, metav1.ListOptions{})).GetResourceVersion(), 10, 64)
	require.NoError(t, err)
	require.NoError(t, snapshot.SetResourceVersion(path, strconv.FormatUint(now+50, 10)))

	fx, inf, ev := restart(t, opts, "configmaps")
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	require.Equal(t, 1, fx.log.Count("The snapshot is ahead of the server"), "%s", fx.log)
	// The handler, handed the snapshot's objects as adds, is told of the one whose content
	// the server holds otherwise at the same resourceVersion, and of no other.
	testenv.Eventually(t, 30*time.Second, func() bool { _, updates, _ := ev.Get(); return len(updates) > 0 },
		"the handler was not told of o1's content on the server")
	adds, updates, deletes := ev.Get()
	assert.ElementsMatch(t, []string{"o0", "o1", "o2"}, adds)
	assert.Equal(t, []string{"o1"}, updates)
	assert.Empty(t, deletes)
	for i := range 3 {
		var cm corev1.ConfigMap
		it, err := inf.GetItem(ns, fmt.Sprint("o", i))
		require.NoError(t, err)
		require.NoError(t, it.DecodeInto(&cm))
		require.Equal(t, fmt.Sprint("server-timeline-", i), cm.Data["v"], "o%d: the ahead snapshot's content is served", i)
	}
}
