package metadataonly_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

var (
	configMapsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podTemplatesGVR = schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}
)

// snapshotOnce syncs resource with opts and shuts the factory down cleanly, which writes
// the snapshot; it returns the snapshot file.
func snapshotOnce(t *testing.T, opts metadataonly.Options, resource string) string {
	t.Helper()
	fx := start(t, nil, opts)
	inf, err := fx.f.Informer(context.Background(), resource)
	require.NoError(t, err)
	waitSync(t, inf)
	fx.f.Shutdown()
	files, err := filepath.Glob(filepath.Join(opts.SnapshotDir, "*.snap"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one snapshot written on shutdown")
	return files[0]
}

// restartWithHandler starts a factory with opts and an event recorder on resource,
// registered before the informer handles anything (WithEventHandler).
func restartWithHandler(t *testing.T, opts metadataonly.Options, resource string) (*fixture, *metadataonly.Informer, *testsupport.Events) {
	t.Helper()
	fx := start(t, nil, opts)
	ev := &testsupport.Events{}
	inf, err := fx.f.Informer(context.Background(), resource, informer.WithEventHandler(ev.Handler()))
	require.NoError(t, err)
	return fx, inf, ev
}

// cacheMatches waits until the cache holds exactly what ri lists (name -> resourceVersion).
func cacheMatches(t *testing.T, inf *metadataonly.Informer, ri dynamic.ResourceInterface) {
	t.Helper()
	var want, got map[string]string
	testenv.Eventually(t, 30*time.Second, func() bool {
		want, got = map[string]string{}, map[string]string{}
		for _, o := range must(ri.List(context.Background(), metav1.ListOptions{})).Items {
			want[o.GetName()] = o.GetResourceVersion()
		}
		for _, o := range must(inf.List(nil)) {
			got[o.Name] = o.ResourceVersion
		}
		return fmt.Sprint(want) == fmt.Sprint(got)
	}, "cache differs from the server: want %v, got %v", want, got)
}

// A metadata-only informer restarted within the watch window serves its snapshot at once,
// makes no LIST, learns the server's resourceVersion with the probe watch, and handlers
// see the snapshot's objects as adds and then exactly the changes made while it was down.
func TestSnapshotRestartWithinWatchWindow(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	for i := range 5 {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i),
			Labels: map[string]string{"i": fmt.Sprint(i)}, Annotations: map[string]string{"note": "kept"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	file := snapshotOnce(t, opts, "configmaps")
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	testsupport.Churn(t, ctx, cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns), "new", "o0", "o1") // while the process is down

	fx, inf, ev := restartWithHandler(t, opts, "configmaps")
	testenv.Eventually(t, 10*time.Second, inf.Queryable, "queryable from the snapshot")
	waitSync(t, inf)
	cacheMatches(t, inf, cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns))
	o2, err := inf.Get(ns, "o2")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"i": "2"}, o2.Labels, "labels come back from the snapshot")
	require.Equal(t, "kept", o2.Annotations["note"])
	require.Nil(t, o2.ManagedFields)
	st := inf.Status()
	require.False(t, st.SnapshotTime.IsZero(), "%+v", st)
	require.False(t, st.ServingFromSnapshot)
	if runtime.GOOS == "linux" {
		require.Positive(t, st.SnapshotMapped, "mapped: the objects' strings are views of the file")
	}

	path := "/api/v1/namespaces/" + ns + "/configmaps"
	lists, watches := fx.rec.Count(path)
	require.Zero(t, lists, "LIST requests on restart")
	require.GreaterOrEqual(t, watches, 2, "the watch from the snapshot and the probe")
	probed, streamed := false, 0
	for _, r := range fx.rec.Requests(path) {
		probe := r.InitialEvents && strings.Contains(r.Query, "fieldSelector=metadata.name")
		probed = probed || probe
		if r.InitialEvents && !probe {
			streamed++ // a watch-list: the whole collection again
		}
	}
	require.True(t, probed, "the server's resourceVersion was probed with a watch that sends nothing")
	require.Zero(t, streamed, "watch-list requests on restart")

	testenv.Eventually(t, 10*time.Second, func() bool {
		a, u, d := ev.Get()
		return len(a) == 6 && len(u) == 1 && len(d) == 1
	}, "events")
	a, u, d := ev.Get()
	require.Equal(t, []string{"new", "o0", "o1", "o2", "o3", "o4"}, a)
	require.Equal(t, []string{"o0"}, u)
	require.Equal(t, []string{"o1"}, d)
}

// After an etcd compaction the watch from a metadata snapshot's resourceVersion gets 410:
// the informer relists once, and handlers get exactly the differences with the snapshot.
// Not parallel: the compaction affects every watch.
func TestSnapshotRestartAfterCompaction(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	pts := cp.Clientset(t).CoreV1().PodTemplates(ns)
	for i := range 5 {
		_, err := pts.Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i)},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
			metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "podtemplates")
	oldRV := must(pts.List(ctx, metav1.ListOptions{})).ResourceVersion

	testsupport.Churn(t, ctx, cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns), "missed", "o0", "o1")
	_, err := cp.CompactEtcd(ctx)
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(ctx, pts.Watch, oldRV) },
		"the apiserver answers 410 for the snapshot's resourceVersion")

	fx, inf, ev := restartWithHandler(t, opts, "podtemplates")
	waitSync(t, inf)
	cacheMatches(t, inf, cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns))
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/podtemplates")
	require.Equal(t, 1, lists, "one relist after the 410")
	testenv.Eventually(t, 10*time.Second, func() bool {
		a, u, d := ev.Get()
		return len(a) == 6 && len(u) == 1 && len(d) == 1
	}, "events")
	// Nothing more may come: a second relist or a re-announcement would add events. Wait
	// for a change made now to arrive, which every earlier event precedes.
	_, err = pts.Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "zz-marker"},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, func() bool { a, _, _ := ev.Get(); return len(a) == 7 }, "the marker's add")
	a, u, d := ev.Get()
	// The five objects of the snapshot, the one created while down and the marker; o2, o3
	// and o4 did not change and are not re-announced.
	require.Equal(t, []string{"missed", "o0", "o1", "o2", "o3", "o4", "zz-marker"}, a)
	require.Equal(t, []string{"o0"}, u)
	require.Equal(t, []string{"o1"}, d)
}

// A metadata-only snapshot is not used by another storage mode of the same resource (the
// identity names the mode), nor by a metadata informer with another label selector.
func TestSnapshotOfAnotherModeNotUsed(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "1"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	snapshotOnce(t, metadataonly.Options{Namespace: ns, SnapshotDir: dir}, "configmaps")

	other := start(t, nil, metadataonly.Options{Namespace: ns, SnapshotDir: dir, LabelSelector: "x=1"})
	inf, err := other.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	require.True(t, inf.Status().SnapshotTime.IsZero(), "another selector: not from the snapshot")
	require.Equal(t, []string{"a"}, names(must(inf.List(nil))))

	f, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Namespace: ns, SnapshotDir: dir}, dynamicinformer.CompactOptions{})
	require.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	require.NoError(t, f.Start(fctx))
	defer f.Shutdown()
	cinf, err := f.InformerForGVR(ctx, configMapsGVR)
	require.NoError(t, err)
	defer cinf.Release()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	require.NoError(t, cinf.WaitForSync(wctx))
	require.True(t, cinf.Status().SnapshotTime.IsZero(), "the compact mode: not from the metadata snapshot")
}
