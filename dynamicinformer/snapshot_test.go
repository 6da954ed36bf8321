package dynamicinformer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

func startCompact(t *testing.T, opts dynamicinformer.Options) *fixture {
	t.Helper()
	f, rec, log := testsupport.StartFactory(t, cp.AdminConfig(), opts, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	})
	return &fixture{f: f, rec: rec, log: log}
}

// snapshotOnce runs a compact factory with opts until resource is synced, then shuts it
// down cleanly (which writes the snapshot).
func snapshotOnce(t *testing.T, opts dynamicinformer.Options, resource string) {
	t.Helper()
	fx := startCompact(t, opts)
	inf, err := fx.f.Informer(context.Background(), resource)
	require.NoError(t, err)
	waitSync(t, inf)
	fx.f.Shutdown()
}

// snapshotPodTemplates snapshots pod templates with opts (snapshotOnce) and returns the
// server's resourceVersion after it: that of the snapshot or later.
func snapshotPodTemplates(t *testing.T, opts dynamicinformer.Options, pts dynamic.ResourceInterface) string {
	t.Helper()
	snapshotOnce(t, opts, "podtemplates")
	l, err := pts.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return l.GetResourceVersion()
}

// restart starts a compact factory with opts and an event recorder on resource, registered
// before the informer handles anything (WithEventHandler): it sees the snapshot's objects as
// adds and then every change, whatever the scheduling.
func restart(t *testing.T, opts dynamicinformer.Options, resource string) (*fixture, *dynamicinformer.Informer, *testsupport.Events) {
	t.Helper()
	fx := startCompact(t, opts)
	ev := &testsupport.Events{}
	inf, err := fx.f.Informer(context.Background(), resource, informer.WithEventHandler(ev.Handler()))
	require.NoError(t, err)
	require.Len(t, inf.Registrations(), 1)
	return fx, inf, ev
}

func createConfigMaps(t *testing.T, ri dynamic.ResourceInterface, n int) {
	t.Helper()
	for i := range n {
		_, err := ri.Create(context.Background(), toUnstructured(t, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i)}}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// snapshottedConfigMaps creates n ConfigMaps in a new namespace and snapshots them once
// (snapshotOnce); it returns their client and the options of the snapshot.
func snapshottedConfigMaps(t *testing.T, n int) (dynamic.ResourceInterface, dynamicinformer.Options) {
	t.Helper()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, n)
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "configmaps")
	return cms, opts
}

// A restart within the watch window serves the snapshot at once, makes no LIST, and
// handlers see the snapshot's objects as adds and then exactly the changes made while the
// process was down.
func TestSnapshotRestartWithinWatchWindow(t *testing.T) {
	ctx := context.Background()
	cms, opts := snapshottedConfigMaps(t, 5)

	testsupport.Churn(t, ctx, cms, "new", "o0", "o1") // while the process is down

	start := time.Now()
	fx, inf, ev := restart(t, opts, "configmaps")
	testenv.Eventually(t, 10*time.Second, inf.Queryable, "queryable from the snapshot")
	t.Logf("queryable %v after start", time.Since(start))
	waitSync(t, inf)
	t.Logf("synced %v after start", time.Since(start))
	cacheEquals(t, ctx, inf, cms)
	st := inf.Status()
	require.False(t, st.SnapshotTime.IsZero(), "%+v", st)
	require.False(t, st.ServingFromSnapshot)
	lists, watches := fx.rec.Count("/api/v1/namespaces/" + opts.Namespace + "/configmaps")
	require.Zero(t, lists, "LIST requests on restart")
	require.GreaterOrEqual(t, watches, 1)
	fromSnapshot := 0 // the watch started during the load is the reflector's: one request
	for _, q := range fx.rec.Requests("/api/v1/namespaces/" + opts.Namespace + "/configmaps") {
		if q.Watch && !q.InitialEvents && strings.Contains("&"+q.Query+"&", "&resourceVersion="+st.SnapshotResourceVersion+"&") {
			fromSnapshot++
		}
	}
	require.Equal(t, 1, fromSnapshot, "watches from the snapshot's resourceVersion %s", st.SnapshotResourceVersion)
	testenv.Eventually(t, 10*time.Second, func() bool {
		a, u, d := ev.Get()
		return len(a) == 6 && len(u) == 1 && len(d) == 1
	}, "events")
	a, u, d := ev.Get()
	require.Equal(t, []string{"new", "o0", "o1", "o2", "o3", "o4"}, a)
	require.Equal(t, []string{"o0"}, u)
	require.Equal(t, []string{"o1"}, d)
	if runtime.GOOS == "linux" {
		require.Positive(t, st.SnapshotMapped, "a plaintext snapshot is mapped, not read")
	}
	requireDecodes(t, inf)

	// A second restart in this process reads the file (a path is mapped once per process),
	// as correctly.
	fx.f.Shutdown()
	testsupport.Churn(t, ctx, cms, "newer", "o2", "o3")
	fx, inf, _ = restart(t, opts, "configmaps")
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	lists, _ = fx.rec.Count("/api/v1/namespaces/" + opts.Namespace + "/configmaps")
	require.Zero(t, lists, "LIST requests on the second restart")
	require.Zero(t, inf.Status().SnapshotMapped)
	requireDecodes(t, inf)
}

// requireDecodes decodes every object of inf, typed and from its raw JSON, and checks both
// agree with the metadata the cache reads in place.
func requireDecodes(t *testing.T, inf *dynamicinformer.Informer) {
	t.Helper()
	items, err := inf.ListItems("")
	require.NoError(t, err)
	require.NotEmpty(t, items)
	for _, it := range items {
		var cm corev1.ConfigMap
		require.NoError(t, it.DecodeInto(&cm))
		var u unstructured.Unstructured
		require.NoError(t, u.UnmarshalJSON(it.Raw()))
		require.Equal(t, it.Name(), cm.Name)
		require.Equal(t, u.GetName(), cm.Name)
		require.Equal(t, it.ResourceVersion(), cm.ResourceVersion)
		require.Equal(t, u.GetResourceVersion(), cm.ResourceVersion)
		require.Equal(t, it.UID(), cm.UID)
	}
}

// After an etcd compaction, the watch from the snapshot's resourceVersion gets 410: the
// informer relists once and handlers get exactly the differences with the snapshot.
// Pod templates, so that the 410 is certain (podTemplates). Not parallel: the compaction
// affects every watch.
func TestSnapshotRestartAfterCompaction(t *testing.T) {
	ctx := context.Background()
	ns, pts := podTemplates(t, 5)
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	oldRV := snapshotPodTemplates(t, opts, pts)

	testsupport.Churn(t, ctx, pts, "missed", "o0", "o1")
	compactPast(t, ns, oldRV)

	// Two handlers from the start: one of objects, one of Items (ItemHandlerFuncs), which
	// must be told the same.
	fx := startCompact(t, opts)
	ev, items := &testsupport.Events{}, &testsupport.Events{}
	inf, err := fx.f.Informer(ctx, "podtemplates", informer.WithEventHandler(ev.Handler()),
		informer.WithEventHandler(testsupport.ItemHandler[dynamicinformer.Object](items, true)))
	require.NoError(t, err)
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, pts)
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/podtemplates")
	require.Equal(t, 1, lists, "one relist after the 410")
	for _, ev := range []*testsupport.Events{ev, items} {
		testenv.Eventually(t, 10*time.Second, func() bool {
			a, u, d := ev.Get()
			return len(a) == 6 && len(u) == 1 && len(d) == 1
		}, "events")
	}
	time.Sleep(500 * time.Millisecond) // nothing more may come
	for _, ev := range []*testsupport.Events{ev, items} {
		a, u, d := ev.Get()
		// The five objects of the snapshot, then the one created while down; one update, one
		// delete: o2, o3 and o4 did not change and are not re-announced.
		require.Equal(t, []string{"missed", "o0", "o1", "o2", "o3", "o4"}, a)
		require.Equal(t, []string{"o0"}, u)
		require.Equal(t, []string{"o1"}, d)
	}
}

// A relist after 410 that changes nothing still makes the cache consistent with the list's
// resourceVersion, and the next snapshot saves it: the saved version did not advance, so a
// quiet resource got 410 and relisted at every later restart. Not parallel: the compaction
// affects every watch.
func TestSnapshotQuietRelistAdvancesTheSavedVersion(t *testing.T) {
	ctx := context.Background()
	ns, pts := podTemplates(t, 3)
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	oldRV := snapshotPodTemplates(t, opts, pts)

	// Other objects move the server's version on; these stay as they are.
	createConfigMaps(t, cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(cp.Namespace(t)), 3)
	compactPast(t, ns, oldRV)

	listsOf := func(fx *fixture) int {
		n, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/podtemplates")
		return n
	}
	for round, wantLists := range []int{1, 0} {
		fx, inf, ev := restart(t, opts, "podtemplates")
		waitSync(t, inf)
		// The watch from the compacted version may be refused after the snapshot was
		// judged current (its 410 is slow on a loaded machine): wait for the relist to be
		// applied (the snapshot's load counts as the first list) before Shutdown saves it.
		require.Eventually(t, func() bool { return inf.Status().Lists >= 1+wantLists }, 30*time.Second, 10*time.Millisecond,
			"round %d: the relist applied", round)
		cacheEquals(t, ctx, inf, pts)
		require.Equal(t, wantLists, listsOf(fx), "round %d: LISTs", round)
		testenv.Eventually(t, 30*time.Second, inf.Registrations()[0].HasSynced, "round %d: the handler was not delivered the initial list", round)
		a, u, d := ev.Get()
		require.Equal(t, []string{"o0", "o1", "o2"}, a, "round %d", round)
		require.Empty(t, u, "round %d", round)
		require.Empty(t, d, "round %d", round)
		fx.f.Shutdown() // writes the snapshot
	}
}

// An informer on secrets neither writes nor reads a snapshot without encryption; with a
// key it does, and the file is not plaintext.
func TestSnapshotSecretsNeedEncryption(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	secrets := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns)
	_, err := secrets.Create(ctx, toUnstructured(t, &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "s"},
		StringData: map[string]string{"password": "hunter2-very-secret"}}), metav1.CreateOptions{})
	require.NoError(t, err)

	plain := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	fx := startCompact(t, plain)
	inf, err := fx.f.Informer(ctx, "secrets")
	require.NoError(t, err)
	waitSync(t, inf)
	fx.f.Shutdown()
	files, err := os.ReadDir(plain.SnapshotDir)
	require.NoError(t, err)
	require.Empty(t, files, "no unencrypted snapshot of Secrets")
	require.Equal(t, 1, fx.log.Count("Snapshots of Secrets are refused"), "%s", fx.log)

	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(strings.Repeat("0123456789abcdef", 4)+"\n"), 0o600))
	enc := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir(), SnapshotKeyFile: keyFile}
	snapshotOnce(t, enc, "secrets")
	files, err = os.ReadDir(enc.SnapshotDir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	raw, err := os.ReadFile(filepath.Join(enc.SnapshotDir, files[0].Name()))
	require.NoError(t, err)
	require.NotContains(t, string(raw), "password")
	info, err := files[0].Info()
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	fx2, inf2, _ := restart(t, enc, "secrets")
	waitSync(t, inf2)
	lists, _ := fx2.rec.Count("/api/v1/namespaces/" + ns + "/secrets")
	require.Zero(t, lists, "the encrypted snapshot was used")

	// SnapshotPlainSecrets writes and reads a plaintext one; without it, that file is
	// refused on read as well (the informer lists).
	plainOK := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir(), SnapshotPlainSecrets: true}
	snapshotOnce(t, plainOK, "secrets")
	files, err = os.ReadDir(plainOK.SnapshotDir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	raw, err = os.ReadFile(filepath.Join(plainOK.SnapshotDir, files[0].Name()))
	require.NoError(t, err)
	require.Contains(t, string(raw), "password", "the plaintext snapshot the option asked for")

	refused := plainOK
	refused.SnapshotPlainSecrets = false
	fx3, inf3, _ := restart(t, refused, "secrets")
	waitSync(t, inf3)
	lists, _ = fx3.rec.Count("/api/v1/namespaces/" + ns + "/secrets")
	require.NotZero(t, lists, "the plaintext snapshot was not read")
	require.Equal(t, 1, fx3.log.Count("Snapshots of Secrets are refused"), "%s", fx3.log)
	// Turning the option off takes the Secrets off the disk.
	require.Equal(t, 1, fx3.log.Count("Removed a plaintext snapshot of Secrets"), "%s", fx3.log)
	files, err = os.ReadDir(plainOK.SnapshotDir)
	require.NoError(t, err)
	require.Empty(t, files, "the plaintext snapshot of Secrets is removed")
	fx3.f.Shutdown()

	fx4, inf4, _ := restart(t, plainOK, "secrets")
	waitSync(t, inf4)
	lists, _ = fx4.rec.Count("/api/v1/namespaces/" + ns + "/secrets")
	require.NotZero(t, lists, "no snapshot left: the informer lists")
	fx4.f.Shutdown()
	fx5, inf5, _ := restart(t, plainOK, "secrets")
	waitSync(t, inf5)
	lists, _ = fx5.rec.Count("/api/v1/namespaces/" + ns + "/secrets")
	require.Zero(t, lists, "with the option, the plaintext snapshot is used")
	fx5.f.Shutdown()

	// Setting a key instead takes the plaintext file off the disk at once, not when the
	// encrypted snapshot first replaces it.
	keyed := plainOK
	keyed.SnapshotPlainSecrets = false
	keyed.SnapshotKeyFile = keyFile
	fxk, infk, _ := restart(t, keyed, "secrets")
	require.Equal(t, 1, fxk.log.Count("Removed a plaintext snapshot of Secrets"), "%s", fxk.log)
	waitSync(t, infk)
	fxk.f.Shutdown()
	files, err = os.ReadDir(keyed.SnapshotDir)
	require.NoError(t, err)
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(keyed.SnapshotDir, f.Name()))
		require.NoError(t, err)
		require.NotContains(t, string(raw), "password", "%s", f.Name())
	}

	// A refused informer keeps an encrypted snapshot: the key may be set again.
	encRefused := enc
	encRefused.SnapshotKeyFile = ""
	fx6, inf6, _ := restart(t, encRefused, "secrets")
	waitSync(t, inf6)
	require.Zero(t, fx6.log.Count("Removed a plaintext snapshot"), "%s", fx6.log)
	files, err = os.ReadDir(enc.SnapshotDir)
	require.NoError(t, err)
	require.Len(t, files, 1, "the encrypted snapshot is kept")
}

// A snapshot is only used by the informer it was written for: another selector lists.
// A snapshot file of another resource copied in its place is ignored with one log line.
func TestSnapshotOfAnotherInformerNotUsed(t *testing.T) {
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, 3)
	dir := t.TempDir()
	snapshotOnce(t, dynamicinformer.Options{Namespace: ns, SnapshotDir: dir}, "configmaps")
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)

	other := dynamicinformer.Options{Namespace: ns, SnapshotDir: dir, FieldSelector: "metadata.name=o0"}
	fx, inf, _ := restart(t, other, "configmaps")
	waitSync(t, inf)
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Equal(t, 1, lists)
	require.Len(t, must(inf.List(nil)), 1)
	fx.f.Shutdown()

	// Put the configmaps snapshot where the selector's informer looks for its own.
	files, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 2)
	first, _ := os.ReadFile(filepath.Join(dir, files[0].Name()))
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name()), first, 0o600))
	}
	fx2, inf2, _ := restart(t, other, "configmaps")
	waitSync(t, inf2)
	fx3, inf3, _ := restart(t, dynamicinformer.Options{Namespace: ns, SnapshotDir: dir}, "configmaps")
	waitSync(t, inf3)
	l2, _ := fx2.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	l3, _ := fx3.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	// One of the two found the other's snapshot in its file, ignored it and listed; the
	// other found its own.
	require.Equal(t, 1, l2+l3, "lists %d and %d", l2, l3)
	require.Equal(t, 1, fx2.log.Count("Snapshot ignored")+fx3.log.Count("Snapshot ignored"), "%s\n%s", fx2.log, fx3.log)
	require.Len(t, must(inf2.List(nil)), 1)
	require.Len(t, must(inf3.List(nil)), 3)
}

// Modes that do not keep objects as bytes cannot write snapshots: NewFactory says so.
func TestSnapshotNeedsCompactMode(t *testing.T) {
	_, err := dynamicinformer.NewFactory(cp.AdminConfig(), dynamicinformer.Options{SnapshotDir: t.TempDir()})
	require.ErrorContains(t, err, "SnapshotDir")
	_ = informer.DefaultSnapshotInterval
}

// snapshotMod returns the modification time of the snapshot in dir (zero if none).
func snapshotMod(t *testing.T, dir string) time.Time {
	t.Helper()
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".snap") {
			info, err := f.Info()
			require.NoError(t, err)
			return info.ModTime()
		}
	}
	return time.Time{}
}

// A running informer writes its snapshot in the background every SnapshotInterval when
// something changed, and not when nothing did.
func TestSnapshotWrittenInBackground(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, 2)
	dir := t.TempDir()
	fx := startCompact(t, dynamicinformer.Options{Namespace: ns, SnapshotDir: dir, SnapshotInterval: 200 * time.Millisecond})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	testenv.Eventually(t, 10*time.Second, func() bool { return !snapshotMod(t, dir).IsZero() }, "first snapshot written")
	first := snapshotMod(t, dir)
	time.Sleep(600 * time.Millisecond)
	require.Equal(t, first, snapshotMod(t, dir), "no change, no write")
	testsupport.Churn(t, ctx, cms, "new", "o0", "o1")
	testenv.Eventually(t, 10*time.Second, func() bool { return snapshotMod(t, dir).After(first) }, "rewritten after a change")
	// Kill the process without a clean shutdown: the file on disk is the background one.
	// (Simulated by copying it away before Shutdown writes again.)
	bg := t.TempDir()
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(bg, f.Name()), b, 0o600))
	}
	fx.f.Shutdown()
	fx2, inf2, _ := restart(t, dynamicinformer.Options{Namespace: ns, SnapshotDir: bg}, "configmaps")
	waitSync(t, inf2)
	cacheEquals(t, ctx, inf2, cms)
	lists, _ := fx2.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Zero(t, lists)
}

// TestSnapshotRestartCost measures a cold sync against a restart from a snapshot with
// KINDEX_SNAPSHOT_E2E=<objects> ConfigMaps of about 4 KB each.
func TestSnapshotRestartCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KINDEX_SNAPSHOT_E2E"))
	if n == 0 {
		t.Skip("set KINDEX_SNAPSHOT_E2E=<objects> to measure")
	}
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	data := map[string]string{"blob": strings.Repeat("x", 4000)}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i)}, Data: data}, metav1.CreateOptions{})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	path := "/api/v1/namespaces/" + ns + "/configmaps"

	fx := startCompact(t, opts)
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	start := time.Now() // from the informer's creation: discovery and factory start excluded
	waitSync(t, inf)
	cold := time.Since(start)
	coldLists, _ := fx.rec.Count(path)
	start = time.Now()
	fx.f.Shutdown()
	write := time.Since(start)

	if prof := os.Getenv("KINDEX_SNAPSHOT_PROFILE"); prof != "" {
		f, err := os.Create(prof)
		require.NoError(t, err)
		require.NoError(t, pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	fx2 := startCompact(t, opts)
	inf2, err := fx2.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	start = time.Now()
	for !inf2.Queryable() {
		require.Less(t, time.Since(start), time.Minute, "not queryable")
		time.Sleep(time.Millisecond)
	}
	queryable := time.Since(start)
	require.Len(t, must(inf2.List(nil)), n)
	waitSync(t, inf2)
	synced := time.Since(start)
	lists, _ := fx2.rec.Count(path)
	t.Logf("%d ConfigMaps: cold sync %v (%d LIST); shutdown with snapshot write %v; restart: queryable %v, synced %v (%.3fx cold; %d LIST)",
		n, cold.Round(time.Millisecond), coldLists, write.Round(time.Millisecond), queryable.Round(time.Millisecond),
		synced.Round(time.Millisecond), float64(synced)/float64(cold), lists)
	require.Zero(t, lists)
}

// Releasing the last reference writes the snapshot; acquiring the informer again in the
// same factory starts from it, without a LIST.
func TestSnapshotReleaseAndReacquire(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, 3)
	fx := startCompact(t, dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	inf.Release()
	testsupport.Churn(t, ctx, cms, "new", "o0", "o1")
	inf, err = fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Equal(t, 1, lists, "only the first acquisition listed")
	require.False(t, inf.Status().SnapshotTime.IsZero())
}

// An informer with no object writes a snapshot too (at its list's resourceVersion) and
// resumes from it without a LIST, seeing what was created meanwhile.
func TestSnapshotOfEmptyInformer(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir(), FieldSelector: "metadata.name=o0"}
	snapshotOnce(t, opts, "configmaps")
	createConfigMaps(t, cms, 2)
	fx, inf, ev := restart(t, opts, "configmaps")
	waitSync(t, inf)
	testenv.Eventually(t, 10*time.Second, func() bool { a, _, _ := ev.Get(); return len(a) == 1 }, "o0 added")
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Zero(t, lists)
	require.Equal(t, map[string]string{"o0": must(cms.Get(ctx, "o0", metav1.GetOptions{})).GetResourceVersion()}, nameRVs(must(inf.List(nil))))
}

// While the watch from the snapshot's resourceVersion is not established, the informer
// serves the snapshot (queryable, ServingFromSnapshot) but is not synced.
func TestSnapshotServedWhileNotCurrent(t *testing.T) {
	ctx := context.Background()
	_, opts := snapshottedConfigMaps(t, 3)

	fx := startCompact(t, opts)
	path := "/api/v1/namespaces/" + opts.Namespace + "/configmaps"
	fx.rec.Hold(path)
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, inf.ServingFromSnapshot, "serving from the snapshot")
	require.True(t, inf.Queryable())
	require.False(t, inf.HasSynced())
	st := inf.Status()
	require.Equal(t, informer.PhaseSyncing, st.Phase)
	require.NotEmpty(t, st.SnapshotResourceVersion)
	require.Less(t, time.Since(st.SnapshotTime), time.Minute)
	require.Len(t, must(inf.List(nil)), 3)
	shortCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	require.Error(t, inf.WaitForSync(shortCtx), "WaitForSync waits for the server")

	fx.rec.Release()
	waitSync(t, inf)
	require.False(t, inf.ServingFromSnapshot())
	lists, _ := fx.rec.Count(path)
	require.Zero(t, lists)
}

// Handlers wait while a snapshot loads: the first of the snapshot's adds reaches a handler
// once the informer serves the whole snapshot, so that decoding for handlers does not take
// the CPU from the load. The handler still gets every object, then the changes.
func TestSnapshotHandlersWaitForTheLoad(t *testing.T) {
	ctx := context.Background()
	const n = 200
	_, opts := snapshottedConfigMaps(t, n)

	fx := startCompact(t, opts)
	first := make(chan informer.Status, 1)
	var adds atomic.Int64
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		if adds.Add(1) == 1 {
			for _, st := range fx.f.Statuses() {
				if st.Key.GVR.Resource == "configmaps" && st.Key.Namespace == opts.Namespace {
					first <- st
				}
			}
		}
	}}
	inf, err := fx.f.Informer(ctx, "configmaps", informer.WithEventHandler(h))
	require.NoError(t, err)
	var st informer.Status
	select {
	case st = <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("no add delivered")
	}
	require.True(t, st.ServingFromSnapshot || !st.LastSyncTime.IsZero(), "the first add came before the snapshot was served: %+v", st)
	require.EqualValues(t, n, st.Objects, "objects in the cache at the first add")
	waitSync(t, inf)
	testenv.Eventually(t, 10*time.Second, func() bool { return adds.Load() == n }, "every object delivered")
}

// WaitForSync after a restart from a snapshot returns only once every change made while
// the process was down is in the cache: the cache is compared with the server once, right
// when WaitForSync returns, after hundreds of changes the resumed watch must deliver first.
// Config maps are served from the apiserver's watch cache, as every resource is by
// default. (Pod templates, which TestMain serves from etcd, are left out: a watch from
// etcd gets its past events from etcd's catch-up loop, and the informer's wait for them is
// a timing bound that a heavily loaded machine can exceed; see "Warm restart".)
func TestSnapshotSyncedIncludesChangesWhileDown(t *testing.T) {
	for _, resource := range []string{"configmaps"} {
		t.Run(resource, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			ri := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: resource}).Namespace(ns)
			newObj := func(name string) *unstructured.Unstructured {
				if resource == "configmaps" {
					return toUnstructured(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
						ObjectMeta: metav1.ObjectMeta{Name: name}})
				}
				return toUnstructured(t, &corev1.PodTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"},
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}})
			}
			for i := range 30 {
				_, err := ri.Create(ctx, newObj(fmt.Sprint("o", i)), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
			snapshotOnce(t, opts, resource)

			// While down: 300 updates, 5 deletes, 20 creates.
			for round := range 10 {
				for i := range 30 {
					o, err := ri.Get(ctx, fmt.Sprint("o", i), metav1.GetOptions{})
					require.NoError(t, err)
					o.SetLabels(map[string]string{"round": fmt.Sprint(round)})
					_, err = ri.Update(ctx, o, metav1.UpdateOptions{})
					require.NoError(t, err)
				}
			}
			for i := range 5 {
				require.NoError(t, ri.Delete(ctx, fmt.Sprint("o", i), metav1.DeleteOptions{}))
			}
			for i := range 20 {
				_, err := ri.Create(ctx, newObj(fmt.Sprint("new", i)), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			want := serverState(t, ctx, ri)

			fx, inf, _ := restart(t, opts, resource)
			waitSync(t, inf)
			got := nameRVs(must(inf.List(nil)))
			require.Equal(t, want, got, "synced before the changes made while down were applied")
			lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/" + resource)
			require.Zero(t, lists, "LIST requests on restart")
		})
	}
}

// snapshotFile returns the one snapshot file in dir.
func snapshotFile(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.snap"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0]
}

// A snapshot ahead of the server (another cluster's at the same address, etcd restored from
// a backup) is not trusted: the informer relists and syncs with the server's objects, with
// and without the apiserver's watch cache (pod templates have none here), however far
// ahead. It relisted forever: the watch after the relist was judged ahead again.
func TestSnapshotAheadOfTheServer(t *testing.T) {
	ctx := context.Background()
	for _, res := range []string{"configmaps", "podtemplates"} {
		for _, ahead := range []uint64{50, 1_000_000} {
			t.Run(fmt.Sprintf("%s+%d", res, ahead), func(t *testing.T) {
				ns := cp.Namespace(t)
				ri := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: res}).Namespace(ns)
				for i := range 3 {
					_, err := ri.Create(ctx, podTemplateOrConfigMap(t, res, fmt.Sprint("o", i)), metav1.CreateOptions{})
					require.NoError(t, err)
				}
				opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
				snapshotOnce(t, opts, res)
				require.NoError(t, ri.Delete(ctx, "o0", metav1.DeleteOptions{})) // while down
				l, err := ri.List(ctx, metav1.ListOptions{})
				require.NoError(t, err)
				now, err := strconv.ParseUint(l.GetResourceVersion(), 10, 64)
				require.NoError(t, err)
				require.NoError(t, snapshot.SetResourceVersion(snapshotFile(t, opts.SnapshotDir), strconv.FormatUint(now+ahead, 10)))

				fx, inf, _ := restart(t, opts, res)
				wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
				defer cancel()
				require.NoError(t, inf.WaitForSync(wctx), "%s", inf.Status())
				cacheEquals(t, ctx, inf, ri)
				// One list of the current state, not lists at the snapshot's version, which
				// the server answers "too large" only after the client's retries.
				lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/" + res)
				require.Equal(t, 1, lists)
				// The snapshot written next records a version the server has reached, never
				// the ahead one: a restart once the server passes it would skip changes.
				fx.f.Shutdown()
				saved, err := snapshot.PeekResourceVersion(snapshotFile(t, opts.SnapshotDir))
				require.NoError(t, err)
				n, err := strconv.ParseUint(saved, 10, 64)
				require.NoError(t, err)
				l, err = ri.List(ctx, metav1.ListOptions{})
				require.NoError(t, err)
				server, err := strconv.ParseUint(l.GetResourceVersion(), 10, 64)
				require.NoError(t, err)
				require.LessOrEqual(t, n, server, "saved %d, server at %d", n, server)
			})
		}
	}
}

func podTemplateOrConfigMap(t *testing.T, res, name string) *unstructured.Unstructured {
	if res == "configmaps" {
		return toUnstructured(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return toUnstructured(t, &corev1.PodTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}})
}

// revokedSnapshot is a snapshot of three ConfigMaps written by a user allowed to list and
// watch them, whose grant was then revoked (as if while the process was down).
type revokedSnapshot struct {
	ns         string
	cms        dynamic.ResourceInterface
	user       string
	ucfg       *rest.Config
	opts       dynamicinformer.Options
	newCompact func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error)
}

func snapshotThenRevoke(t *testing.T) revokedSnapshot {
	t.Helper()
	r := revokedSnapshot{ns: cp.Namespace(t)}
	r.cms = cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(r.ns)
	createConfigMaps(t, r.cms, 3)
	var err error
	r.user, r.ucfg, err = cp.NewUser()
	require.NoError(t, err)
	revoke := cp.Grant(t, r.user, r.ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	r.opts = dynamicinformer.Options{Namespace: r.ns, SnapshotDir: t.TempDir()}
	r.newCompact = func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	}
	f, _, _ := testsupport.StartFactory(t, r.ucfg, r.opts, r.newCompact)
	inf, err := f.Informer(context.Background(), "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	f.Shutdown() // writes the snapshot
	revoke()
	return r
}

// A snapshot whose resource the identity can no longer read (its grant revoked while the
// process was down, or a snapshot another identity wrote in a shared directory) is not
// served: the informer parks Forbidden with an empty cache, and handlers are told the
// snapshot's objects are deleted. A grant then resumes it from the server.
func TestSnapshotOfAForbiddenResourceIsNotServed(t *testing.T) {
	ctx := context.Background()
	r := snapshotThenRevoke(t)
	ns, cms, user, ucfg, opts, newCompact := r.ns, r.cms, r.user, r.ucfg, r.opts, r.newCompact

	f, _, _ := testsupport.StartFactory(t, ucfg, opts, newCompact)
	ev := &testsupport.Events{}
	inf, err := f.Informer(ctx, "configmaps", informer.WithEventHandler(ev.Handler()))
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		st := inf.Status()
		return st.Phase == informer.PhaseParked && st.Reason == informer.ReasonForbidden && !inf.Queryable()
	}, "parked forbidden and no longer serving the snapshot")
	objs, err := inf.List(nil)
	require.NoError(t, err)
	require.Empty(t, objs)
	testenv.Eventually(t, 10*time.Second, func() bool {
		a, _, d := ev.Get()
		return len(a) == 3 && len(d) == 3
	}, "the snapshot's adds, then their deletes")

	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
}

// An identity whose watch was revoked while the process was down, and that may still list,
// gets what a start without a snapshot gets: the informer lists once and parks
// WatchForbidden with the listed objects, and handlers see the differences with the
// snapshot. It parked with an empty cache and never listed, serving less than a cold start.
func TestSnapshotOfAResourceNoLongerWatchableIsListed(t *testing.T) {
	ctx := context.Background()
	r := snapshotThenRevoke(t)
	ns, cms, user, ucfg, opts, newCompact := r.ns, r.cms, r.user, r.ucfg, r.opts, r.newCompact
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}})
	require.NoError(t, cms.Delete(ctx, "o0", metav1.DeleteOptions{})) // while down

	f, rec, log := testsupport.StartFactory(t, ucfg, opts, newCompact)
	ev := &testsupport.Events{}
	inf, err := f.Informer(ctx, "configmaps", informer.WithEventHandler(ev.Handler()))
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		st := inf.Status()
		return st.Phase == informer.PhaseParked && st.Reason == informer.ReasonWatchForbidden && inf.Queryable()
	}, "parked WatchForbidden with the listed objects: %v", inf.Status())
	require.Equal(t, serverState(t, ctx, cms), nameRVs(must(inf.List(nil))))
	lists, _ := rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Equal(t, 1, lists)
	// A status read may see the park a moment before its log line is written.
	testenv.Eventually(t, 5*time.Second, func() bool { return log.Count("Informer parked") > 0 }, "the park logged: %s", log)
	require.Equal(t, 1, log.Count("Informer parked"), "%s", log)
	testenv.Eventually(t, 10*time.Second, func() bool { _, _, d := ev.Get(); return len(d) == 1 }, "o0's delete")
	a, u, d := ev.Get()
	require.Equal(t, []string{"o0", "o1", "o2"}, a)
	require.Empty(t, u)
	require.Equal(t, []string{"o0"}, d)
}

// A directory where an informer's snapshot file should be failed every write, and each
// interval logged the failure again. It is logged once per distinct failure (again after a
// success), and Status.SnapshotError shows it while it lasts.
func TestSnapshotWriteFailureLoggedOnce(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, 2)
	dir := t.TempDir()
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: dir}
	snapshotOnce(t, opts, "configmaps")
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	path := filepath.Join(dir, files[0].Name())
	blockWith := func() {
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Mkdir(path, 0o700))
	}
	blockWith()

	opts.SnapshotInterval = 20 * time.Millisecond
	fx := startCompact(t, opts)
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	testsupport.Churn(t, ctx, cms, "new", "o0", "o1")
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotError != nil }, "write failure in the status")
	require.ErrorContains(t, inf.Status().SnapshotError, "is a directory")
	// Three more failed attempts.
	for range 3 {
		last := inf.Status().SnapshotErrorTime
		testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotErrorTime.After(last) }, "another attempt")
	}
	const failure = "Cannot write a snapshot"
	require.Equal(t, 1, fx.log.Count(failure), "%s", fx.log)

	// The directory removed, the next write succeeds and clears the status.
	require.NoError(t, os.Remove(path))
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotError == nil }, "recovered")
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, info.Mode().IsRegular())
	require.Equal(t, 1, fx.log.Count("Wrote a snapshot again"), "%s", fx.log)

	// The same failure after a success is logged again.
	blockWith()
	testsupport.Churn(t, ctx, cms, "newer", "o0", "new")
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotError != nil }, "write failure in the status")
	require.Equal(t, 2, fx.log.Count(failure), "%s", fx.log)
}
