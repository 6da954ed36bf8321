package metadataonly_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// s53Events records what a handler of a metadata-only informer was told: names by kind,
// the labels of each update's new object, whether deletes were tombstones, and any object
// of another type than *metav1.PartialObjectMetadata.
type s53Events struct {
	mu                     sync.Mutex
	adds, updates, deletes []string
	updLabels              map[string]map[string]string
	tombstones             []string
	badTypes               []string
}

func (ev *s53Events) handler() cache.ResourceEventHandler {
	meta := func(o any) *metav1.PartialObjectMetadata {
		m, ok := o.(*metav1.PartialObjectMetadata)
		if !ok {
			ev.badTypes = append(ev.badTypes, fmt.Sprintf("%T", o))
			return &metav1.PartialObjectMetadata{}
		}
		return m
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			ev.adds = append(ev.adds, meta(o).Name)
		},
		UpdateFunc: func(_, o any) {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			m := meta(o)
			ev.updates = append(ev.updates, m.Name)
			if ev.updLabels == nil {
				ev.updLabels = map[string]map[string]string{}
			}
			ev.updLabels[m.Name] = m.Labels
		},
		DeleteFunc: func(o any) {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				ev.tombstones = append(ev.tombstones, meta(t.Obj).Name)
				ev.deletes = append(ev.deletes, meta(t.Obj).Name)
				return
			}
			ev.deletes = append(ev.deletes, meta(o).Name)
		},
	}
}

func (ev *s53Events) get() (adds, updates, deletes, tombstones []string) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	s := func(in []string) []string { out := append([]string{}, in...); sort.Strings(out); return out }
	return s(ev.adds), s(ev.updates), s(ev.deletes), s(ev.tombstones)
}

// s53Object is an object of gvr (configmaps or podtemplates) named name with labels.
func s53Object(gvr schema.GroupVersionResource, name string, labels map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1"}}
	switch gvr.Resource {
	case "configmaps":
		o.SetKind("ConfigMap")
		o.Object["data"] = map[string]any{"k": "v"}
	case "podtemplates":
		o.SetKind("PodTemplate")
		o.Object["template"] = map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}
	}
	o.SetName(name)
	o.SetLabels(labels)
	return o
}

func s53Relabel(t *testing.T, ri dynamic.ResourceInterface, name string, labels map[string]string) {
	t.Helper()
	o, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	o.SetLabels(labels)
	_, err = ri.Update(context.Background(), o, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// s53CacheMatches waits until inf holds exactly what ri lists with sel (name ->
// resourceVersion and labels).
func s53CacheMatches(t *testing.T, inf *metadataonly.Informer, ri dynamic.ResourceInterface, sel string) {
	t.Helper()
	var want, got map[string]string
	testenv.Eventually(t, 30*time.Second, func() bool {
		want, got = map[string]string{}, map[string]string{}
		for _, o := range must(ri.List(context.Background(), metav1.ListOptions{LabelSelector: sel})).Items {
			want[o.GetName()] = o.GetResourceVersion() + fmt.Sprint(o.GetLabels())
		}
		for _, o := range must(inf.List(nil)) {
			got[o.Name] = o.ResourceVersion + fmt.Sprint(o.Labels)
		}
		return fmt.Sprint(want) == fmt.Sprint(got)
	}, "cache differs from the server: want %v, got %v", want, got)
}

// A metadata-only informer with a label selector, restarted from its snapshot after
// objects moved into and out of the selection while the process was down (labels only):
// handlers get a delete for each object that left, an add for each that entered, an
// update with the new labels for each relabelled one that stayed, nothing for the
// unchanged ones nor for objects outside the selection, and the cache equals the server's
// selection. Within the watch window (configmaps, watch cache) and after a compaction
// (podtemplates, no watch cache: a 410 and one relist).
func TestAuditS53MetadataSelectionMovesWhileDown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gvr     schema.GroupVersionResource
		compact bool
	}{
		{"within-window", configMapsGVR, false},
		{"after-compaction", podTemplatesGVR, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			ri := cp.Dynamic(t).Resource(tc.gvr).Namespace(ns)
			a := map[string]string{"team": "a"}
			b := map[string]string{"team": "b"}
			for name, l := range map[string]map[string]string{
				"keep": a, "leave": a, "relabel": a, "gone": a, "enter": b, "other": b,
			} {
				_, err := ri.Create(ctx, s53Object(tc.gvr, name, l), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			const sel = "team=a"
			opts := metadataonly.Options{Namespace: ns, LabelSelector: sel, SnapshotDir: t.TempDir()}
			snapshotOnce(t, opts, tc.gvr.Resource)
			oldRV := must(ri.List(ctx, metav1.ListOptions{})).GetResourceVersion()

			// While the process is down.
			s53Relabel(t, ri, "leave", b)
			s53Relabel(t, ri, "enter", a)
			s53Relabel(t, ri, "relabel", map[string]string{"team": "a", "extra": "1"})
			s53Relabel(t, ri, "other", map[string]string{"team": "b", "extra": "1"})
			require.NoError(t, ri.Delete(ctx, "gone", metav1.DeleteOptions{}))
			_, err := ri.Create(ctx, s53Object(tc.gvr, "new", a), metav1.CreateOptions{})
			require.NoError(t, err)
			if tc.compact {
				_, err := cp.CompactEtcd(ctx)
				require.NoError(t, err)
				testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(ctx, ri.Watch, oldRV) },
					"the apiserver answers 410 for the snapshot's resourceVersion")
			}

			fx := start(t, nil, opts)
			ev := &s53Events{}
			inf, err := fx.f.Informer(ctx, tc.gvr.Resource, informer.WithEventHandler(ev.handler()))
			require.NoError(t, err)
			waitSync(t, inf)
			require.False(t, inf.Status().SnapshotTime.IsZero(), "started from the snapshot")
			s53CacheMatches(t, inf, ri, sel)

			// A change made now arrives after every event of the restart.
			_, err = ri.Create(ctx, s53Object(tc.gvr, "zz-marker", a), metav1.CreateOptions{})
			require.NoError(t, err)
			testenv.Eventually(t, 30*time.Second, func() bool {
				adds, _, _, _ := ev.get()
				return len(adds) > 0 && adds[len(adds)-1] == "zz-marker"
			}, "the marker's add")
			adds, updates, deletes, tombstones := ev.get()
			require.Equal(t, []string{"enter", "gone", "keep", "leave", "new", "relabel", "zz-marker"}, adds)
			require.Equal(t, []string{"relabel"}, updates)
			require.Equal(t, []string{"gone", "leave"}, deletes)
			if tc.compact {
				require.Equal(t, []string{"gone", "leave"}, tombstones, "the relist's deletes are tombstones")
			}
			ev.mu.Lock()
			require.Equal(t, map[string]string{"team": "a", "extra": "1"}, ev.updLabels["relabel"])
			require.Empty(t, ev.badTypes)
			ev.mu.Unlock()

			// A live change of labels only is an update with the new labels.
			s53Relabel(t, ri, "keep", map[string]string{"team": "a", "live": "yes"})
			testenv.Eventually(t, 10*time.Second, func() bool {
				ev.mu.Lock()
				defer ev.mu.Unlock()
				return ev.updLabels["keep"]["live"] == "yes"
			}, "the live relabel's update")
			s53CacheMatches(t, inf, ri, sel)
		})
	}
}

// A snapshot is used only by the informer it was written for: a compact informer's file is
// not read by a metadata-only one of the same resource, nor a metadata-only file of a
// namespace by an informer of all namespaces or of another field selector; each of those
// lists and holds what the server has for it.
func TestAuditS53MetadataSnapshotIdentities(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	for _, n := range []string{"a", "b"} {
		_, err := ri.Create(ctx, s53Object(configMapsGVR, n, map[string]string{"x": n}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	dir := t.TempDir()

	// A compact informer's snapshot, then a metadata-only informer on the same directory.
	f, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Namespace: ns, SnapshotDir: dir}, dynamicinformer.CompactOptions{})
	require.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	require.NoError(t, f.Start(fctx))
	cinf, err := f.InformerForGVR(ctx, configMapsGVR)
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	require.NoError(t, cinf.WaitForSync(wctx))
	f.Shutdown()
	files := must(filepath.Glob(filepath.Join(dir, "*.snap")))
	require.Len(t, files, 1, "the compact informer's snapshot")

	check := func(opts metadataonly.Options, want []string) {
		t.Helper()
		fx := start(t, nil, opts)
		inf, err := fx.f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		waitSync(t, inf)
		require.True(t, inf.Status().SnapshotTime.IsZero(), "%+v: not from another informer's snapshot", opts)
		got := []string{}
		for _, o := range must(inf.List(nil)) {
			if o.Namespace == ns {
				got = append(got, o.Name)
			}
			require.IsType(t, &metav1.PartialObjectMetadata{}, o)
		}
		sort.Strings(got)
		require.Equal(t, want, got)
		require.Zero(t, fx.log.Count("Snapshot ignored"), "another identity's file is another file: %s", fx.log)
		fx.f.Shutdown()
	}
	check(metadataonly.Options{Namespace: ns, SnapshotDir: dir}, []string{"a", "b"})
	check(metadataonly.Options{SnapshotDir: dir, LabelSelector: "x=a"}, []string{"a"})
	check(metadataonly.Options{Namespace: ns, SnapshotDir: dir, FieldSelector: "metadata.name=b"}, []string{"b"})
	require.Len(t, must(filepath.Glob(filepath.Join(dir, "*.snap"))), 4, "one file per identity")
}

// A metadata-only snapshot truncated, or read with another key than the one it was written
// with, is ignored with one log line: the informer lists once, holds exactly the server's
// objects (no ghost of the file), and the next clean stop writes a file the next start uses
// without a LIST.
func TestAuditS53MetadataDamagedOrOtherKey(t *testing.T) {
	ctx := context.Background()
	keyA := []byte("0123456789abcdef0123456789abcdef")
	keyB := []byte("fedcba9876543210fedcba9876543210")
	for _, tc := range []struct {
		name        string
		write, read []byte
		damage      func(t *testing.T, path string)
	}{
		{"truncated", nil, nil, func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b[:len(b)*2/3], 0o600))
		}},
		{"encrypted-truncated", keyA, keyA, func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b[:len(b)-20], 0o600))
		}},
		{"other-key", keyA, keyB, func(*testing.T, string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cp.Namespace(t)
			ri := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
			for i := range 4 {
				_, err := ri.Create(ctx, s53Object(configMapsGVR, fmt.Sprint("o", i), map[string]string{"i": fmt.Sprint(i)}), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir(), SnapshotKey: tc.write}
			file := snapshotOnce(t, opts, "configmaps")
			if tc.write != nil {
				raw, err := os.ReadFile(file)
				require.NoError(t, err)
				require.NotContains(t, string(raw), `"o1"`, "encrypted")
			}
			tc.damage(t, file)
			require.NoError(t, ri.Delete(ctx, "o0", metav1.DeleteOptions{}))
			_, err := ri.Create(ctx, s53Object(configMapsGVR, "new", nil), metav1.CreateOptions{})
			require.NoError(t, err)

			opts.SnapshotKey = tc.read
			fx := start(t, nil, opts)
			ev := &s53Events{}
			inf, err := fx.f.Informer(ctx, "configmaps", informer.WithEventHandler(ev.handler()))
			require.NoError(t, err)
			waitSync(t, inf)
			require.True(t, inf.Status().SnapshotTime.IsZero())
			require.Equal(t, 1, fx.log.Count("Snapshot ignored"), "%s", fx.log)
			s53CacheMatches(t, inf, ri, "")
			// One initial listing: a watch-list, or a LIST. client-go's reflector falls back
			// from a watch-list whose initial events did not end (an apiserver too loaded to
			// serve its consistent read in time) to one LIST: that is no relist.
			path := "/api/v1/namespaces/" + ns + "/configmaps"
			require.Contains(t, [][]string{{"list"}, {"watch-list"}, {"watch-list-unended", "list"}}, fx.rec.Listings(path),
				"one listing: %+v\n%s", fx.rec.Requests(path), fx.log)
			testenv.Eventually(t, 10*time.Second, func() bool { a, _, _, _ := ev.get(); return len(a) == 4 }, "adds")
			adds, updates, deletes, _ := ev.get()
			require.Equal(t, []string{"new", "o1", "o2", "o3"}, adds)
			require.Empty(t, updates)
			require.Empty(t, deletes)
			fx.f.Shutdown()

			fx2 := start(t, nil, opts)
			inf2, err := fx2.f.Informer(ctx, "configmaps")
			require.NoError(t, err)
			waitSync(t, inf2)
			require.False(t, inf2.Status().SnapshotTime.IsZero(), "the file written after the damage is used")
			lists, _ := fx2.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
			require.Zero(t, lists)
			s53CacheMatches(t, inf2, ri, "")
		})
	}
}

// Two factories of one process sharing a SnapshotDir on the same metadata-only resource,
// with changes while both run: each ends equal to the server, both write the same file,
// and a restart from what they left makes no LIST and equals the server after the
// changes made while down.
func TestAuditS53MetadataSharedDir(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	for i := range 5 {
		_, err := ri.Create(ctx, s53Object(configMapsGVR, fmt.Sprint("o", i), nil), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir(), SnapshotInterval: 50 * time.Millisecond}
	var fxs []*fixture
	var infs []*metadataonly.Informer
	for range 2 {
		fx := start(t, nil, opts)
		inf, err := fx.f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		waitSync(t, inf)
		fxs, infs = append(fxs, fx), append(infs, inf)
	}
	for i := range 10 {
		s53Relabel(t, ri, fmt.Sprint("o", i%5), map[string]string{"n": fmt.Sprint(i)})
		_, err := ri.Create(ctx, s53Object(configMapsGVR, fmt.Sprint("c", i), nil), metav1.CreateOptions{})
		require.NoError(t, err)
		if i%3 == 0 {
			require.NoError(t, ri.Delete(ctx, fmt.Sprint("c", i), metav1.DeleteOptions{}))
		}
	}
	for _, inf := range infs {
		s53CacheMatches(t, inf, ri, "")
		require.Nil(t, inf.Status().SnapshotError)
	}
	fxs[0].f.Shutdown()
	testsupport.Churn(t, ctx, ri, "while-one-down", "o1", "o2")
	s53CacheMatches(t, infs[1], ri, "")
	fxs[1].f.Shutdown()
	require.Len(t, must(filepath.Glob(filepath.Join(opts.SnapshotDir, "*"))), 1, "one file, no temporary left")
	testsupport.Churn(t, ctx, ri, "while-both-down", "o3", "o4")

	fx := start(t, nil, opts)
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	require.False(t, inf.Status().SnapshotTime.IsZero())
	lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Zero(t, lists)
	s53CacheMatches(t, inf, ri, "")
}

// A metadata-only snapshot ahead of the server (another timeline's: etcd restored without a
// revision bump) is relisted, and the relist tells handlers of an object at an unchanged
// resourceVersion as an update only when its metadata differs from the snapshot's: here
// o1, whose label the snapshot holds otherwise. The objects whose metadata is the same are
// not announced again.
func TestAuditS53MetadataAheadSnapshotUpdatesOnlyWhatDiffers(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	for i := range 3 {
		o := s53Object(configMapsGVR, fmt.Sprint("o", i), map[string]string{"v": fmt.Sprint("server-timeline-", i)})
		o.SetAnnotations(map[string]string{"note": "kept"})
		o.SetFinalizers([]string{"example.com/keep"})
		_, err := ri.Create(ctx, o, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for i := range 3 {
			o, err := ri.Get(ctx, fmt.Sprint("o", i), metav1.GetOptions{})
			if err == nil {
				o.SetFinalizers(nil)
				_, _ = ri.Update(ctx, o, metav1.UpdateOptions{})
			}
		}
	})
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	path := snapshotOnce(t, opts, "configmaps")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(b, []byte("server-timeline-1")))
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte("server-timeline-1"), []byte("older-timeline--1"), 1), 0o600))
	now, err := strconv.ParseUint(must(ri.List(ctx, metav1.ListOptions{})).GetResourceVersion(), 10, 64)
	require.NoError(t, err)
	require.NoError(t, snapshot.SetResourceVersion(path, strconv.FormatUint(now+50, 10)))

	fx := start(t, nil, opts)
	ev := &s53Events{}
	inf, err := fx.f.Informer(ctx, "configmaps", informer.WithEventHandler(ev.handler()))
	require.NoError(t, err)
	waitSync(t, inf)
	require.Equal(t, 1, fx.log.Count("The snapshot is ahead of the server"), "%s", fx.log)
	s53CacheMatches(t, inf, ri, "")
	_, err = ri.Create(ctx, s53Object(configMapsGVR, "zz-marker", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		adds, _, _, _ := ev.get()
		return len(adds) > 0 && adds[len(adds)-1] == "zz-marker"
	}, "the marker's add")
	adds, updates, deletes, _ := ev.get()
	require.Equal(t, []string{"o0", "o1", "o2", "zz-marker"}, adds)
	require.Equal(t, []string{"o1"}, updates, "only the object whose metadata differs is an update")
	require.Empty(t, deletes)
	ev.mu.Lock()
	require.Equal(t, "server-timeline-1", ev.updLabels["o1"]["v"])
	ev.mu.Unlock()
}

// A watch-everything set of a metadata-only factory with a SnapshotDir, restarted after
// changes while down: every member resumes from its snapshot without a LIST, a handler
// added to the set as its members load gets each object once as an add (no duplicate, no
// miss) and then exactly the changes made while down, and the owner index answers from the
// resumed caches once synced.
func TestAuditS53MetadataWatchAllRestart(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	pts := cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns)
	const n = 300
	testsupport.CreateN(t, n, func(i int) error {
		_, err := cms.Create(ctx, s53Object(configMapsGVR, fmt.Sprintf("cm%03d", i), nil), metav1.CreateOptions{})
		return err
	})
	owner := must(cms.Get(ctx, "cm000", metav1.GetOptions{}))
	for i := range 3 {
		o := s53Object(podTemplatesGVR, fmt.Sprint("pt", i), nil)
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm000", UID: owner.GetUID()}})
		_, err := pts.Create(ctx, o, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	filter := discovery.Filter{IncludeResources: []string{"configmaps", "podtemplates"}}
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	fx := start(t, nil, opts)
	wa, err := fx.f.WatchAll(ctx, filter)
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, wa.WaitForSync(wctx))
	fx.f.Shutdown()
	require.Len(t, must(filepath.Glob(filepath.Join(opts.SnapshotDir, "*.snap"))), 2)

	// While down.
	testsupport.Churn(t, ctx, cms, "new-cm", "cm001", "cm002")
	testsupport.Churn(t, ctx, pts, "pt-new", "pt0", "pt1") // pt-new is a copy of pt0: owned too

	fx = start(t, nil, opts)
	wa, err = fx.f.WatchAll(ctx, filter)
	require.NoError(t, err)
	evs := map[string]*s53Events{}
	var mu sync.Mutex
	_, err = wa.AddEventHandler(func(res discovery.Resource) cache.ResourceEventHandler {
		mu.Lock()
		defer mu.Unlock()
		ev := &s53Events{}
		evs[res.GVR.Resource] = ev
		return ev.handler()
	})
	require.NoError(t, err)
	require.NoError(t, wa.WaitForSync(wctx))
	for _, res := range []string{"configmaps", "podtemplates"} {
		lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/" + res)
		require.Zero(t, lists, "%s: resumed from the snapshot", res)
	}
	inf, ok := wa.Informer(schema.GroupResource{Resource: "configmaps"})
	require.True(t, ok)
	s53CacheMatches(t, inf, cms, "")
	pinf, ok := wa.Informer(schema.GroupResource{Resource: "podtemplates"})
	require.True(t, ok)
	s53CacheMatches(t, pinf, pts, "")

	wantCM := []string{"new-cm"}
	for i := range n {
		if i != 2 {
			wantCM = append(wantCM, fmt.Sprintf("cm%03d", i))
		}
	}
	sort.Strings(wantCM)
	testenv.Eventually(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		c, p := evs["configmaps"], evs["podtemplates"]
		if c == nil || p == nil {
			return false
		}
		_, cu, cd, _ := c.get()
		_, pu, pd, _ := p.get()
		return len(cu) == 1 && len(cd) == 1 && len(pu) == 1 && len(pd) == 1
	}, "the changes made while down")
	mu.Lock()
	c, p := evs["configmaps"], evs["podtemplates"]
	mu.Unlock()
	adds, updates, deletes, _ := c.get()
	// The snapshot's objects (cm002 included, deleted while down) and new-cm.
	wantAdds := append([]string{}, wantCM...)
	wantAdds = append(wantAdds, "cm002")
	sort.Strings(wantAdds)
	require.Equal(t, wantAdds, adds)
	require.Equal(t, []string{"cm001"}, updates)
	require.Equal(t, []string{"cm002"}, deletes)
	adds, updates, deletes, _ = p.get()
	require.Equal(t, []string{"pt-new", "pt0", "pt1", "pt2"}, adds)
	require.Equal(t, []string{"pt0"}, updates)
	require.Equal(t, []string{"pt1"}, deletes)

	deps, err := fx.f.Dependents(ctx, owner.GetUID())
	require.NoError(t, err)
	got := []string{}
	for _, d := range deps {
		got = append(got, d.Object.Name)
	}
	require.Equal(t, []string{"pt-new", "pt0", "pt2"}, got)
}

// A metadata-only informer of a resource without a watch cache (its watch from the
// snapshot's version gets its past events from etcd's catch-up) resumed after many changes
// while down, the last change of the cluster being another resource's (so no event of its
// own watch reaches the server's current version): once WaitForSync returns, the cache
// already holds every change made while down.
func TestAuditS53MetadataSyncedIncludesBacklog(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	pts := cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns)
	cms := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	for i := range 20 {
		_, err := pts.Create(ctx, s53Object(podTemplatesGVR, fmt.Sprintf("o%02d", i), nil), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "podtemplates")
	for round := range 3 {
		// While down.
		testsupport.CreateN(t, 60, func(i int) error {
			_, err := pts.Create(ctx, s53Object(podTemplatesGVR, fmt.Sprintf("r%d-%02d", round, i), nil), metav1.CreateOptions{})
			return err
		})
		for i := range 20 {
			s53Relabel(t, pts, fmt.Sprintf("o%02d", i), map[string]string{"round": fmt.Sprint(round)})
		}
		_, err := cms.Create(ctx, s53Object(configMapsGVR, fmt.Sprint("other", round), nil), metav1.CreateOptions{})
		require.NoError(t, err)

		fx := start(t, nil, opts)
		inf, err := fx.f.Informer(ctx, "podtemplates")
		require.NoError(t, err)
		waitSync(t, inf)
		require.False(t, inf.Status().SnapshotTime.IsZero())
		want := map[string]string{}
		for _, o := range must(pts.List(ctx, metav1.ListOptions{})).Items {
			want[o.GetName()] = o.GetResourceVersion()
		}
		got := map[string]string{}
		for _, o := range must(inf.List(nil)) {
			got[o.Name] = o.ResourceVersion
		}
		require.Equal(t, want, got, "round %d: the cache once WaitForSync returned", round)
		fx.f.Shutdown()
	}
}

// A garbage collector restarted from snapshots: while the owners' informer serves a
// snapshot taken before an owner was created (its watch held, not current with the server
// yet), a dependent of that owner is not reported as an orphan (its reference is Unknown,
// never Dangling); once that informer is current, the owner is found.
func TestAuditS53MetadataOrphansWaitForTheServer(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	pts := cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns)
	_, err := pts.Create(ctx, s53Object(podTemplatesGVR, "early", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "podtemplates") // before the owner exists

	owner, err := pts.Create(ctx, s53Object(podTemplatesGVR, "owner", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	dep := s53Object(configMapsGVR, "dep", nil)
	dep.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "PodTemplate", Name: "owner", UID: owner.GetUID()}})
	_, err = cms.Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	fx := start(t, nil, opts)
	cinf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, cinf)
	fx.f.Shutdown()

	fx = start(t, nil, opts)
	ptPath := "/api/v1/namespaces/" + ns + "/podtemplates"
	fx.rec.Hold(ptPath)
	cinf, err = fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	pinf, err := fx.f.Informer(ctx, "podtemplates")
	require.NoError(t, err)
	waitSync(t, cinf)
	testenv.Eventually(t, 10*time.Second, pinf.ServingFromSnapshot, "the owners' informer serves its snapshot")
	require.True(t, pinf.Queryable())
	require.False(t, pinf.HasSynced())
	require.Equal(t, []string{"early"}, names(must(pinf.List(nil))), "the snapshot, without the owner")
	orphans, err := fx.f.Orphans(ctx)
	require.NoError(t, err)
	require.Len(t, orphans, 1)
	require.Equal(t, "dep", orphans[0].Object.Name)
	require.False(t, orphans[0].Orphaned(), "an owner not confirmed absent by the server: %+v", orphans[0])
	require.Empty(t, orphans[0].Dangling)
	require.Len(t, orphans[0].Unknown, 1)

	fx.rec.Release()
	waitSync(t, pinf)
	require.False(t, pinf.ServingFromSnapshot())
	orphans, err = fx.f.Orphans(ctx)
	require.NoError(t, err)
	require.Empty(t, orphans, "the owner exists")
	deps, err := fx.f.Dependents(ctx, owner.GetUID())
	require.NoError(t, err)
	require.Len(t, deps, 1)
}

// A metadata-only informer whose SnapshotDir is read-only (a read-only bind mount: root
// ignores modes) works as without a SnapshotDir: it lists, syncs and follows changes; each
// write fails, the failure is logged once and kept in the status.
func TestAuditS53MetadataReadOnlyDir(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	_, err := ri.Create(ctx, s53Object(configMapsGVR, "a", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	require.NoError(t, syscall.Mount(dir, dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""))

	fx := start(t, nil, metadataonly.Options{Namespace: ns, SnapshotDir: dir, SnapshotInterval: 20 * time.Millisecond})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	s53CacheMatches(t, inf, ri, "")
	_, err = ri.Create(ctx, s53Object(configMapsGVR, "b", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotError != nil }, "the write failure in the status")
	require.ErrorContains(t, inf.Status().SnapshotError, "read-only file system")
	last := inf.Status().SnapshotErrorTime
	s53Relabel(t, ri, "a", map[string]string{"x": "1"})
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().SnapshotErrorTime.After(last) }, "another attempt")
	s53CacheMatches(t, inf, ri, "")
	require.Equal(t, 1, fx.log.Count("Cannot write a snapshot"), "%s", fx.log)
	require.Empty(t, must(os.ReadDir(dir)))
}

// A custom resource whose CRD was deleted and created again while the process was down
// (same group, version and name: the same snapshot identity) resumes from the old CRD's
// snapshot: the watch from its version is refused (the new resource's history starts
// after it), the informer relists, handlers are told the old objects are deleted, and the
// cache holds the new CRD's objects only.
func TestAuditS53MetadataCRDRecreatedWhileDown(t *testing.T) {
	ctx := context.Background()
	group := testenv.UniqueName(t) + ".kindex.test"
	crd := testenv.NewCRD(group, "Widget", "widgets")
	cp.InstallCRD(t, crd)
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	for _, n := range []string{"old-a", "old-b", "same"} {
		_, err := ri.Create(ctx, widget(group, n), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "widgets."+group)

	// While down.
	cp.DeleteCRD(t, crd.Name)
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	for _, n := range []string{"same", "fresh"} {
		_, err := ri.Create(ctx, widget(group, n), metav1.CreateOptions{})
		require.NoError(t, err)
	}

	fx := start(t, nil, opts)
	ev := &s53Events{}
	inf, err := fx.f.Informer(ctx, "widgets."+group, informer.WithEventHandler(ev.handler()))
	require.NoError(t, err)
	waitSync(t, inf)
	s53CacheMatches(t, inf, ri, "")
	_, err = ri.Create(ctx, widget(group, "zz-marker"), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		adds, _, _, _ := ev.get()
		return len(adds) > 0 && adds[len(adds)-1] == "zz-marker"
	}, "the marker's add")
	adds, updates, deletes, _ := ev.get()
	t.Logf("adds %v updates %v deletes %v", adds, updates, deletes)
	require.Equal(t, []string{"old-a", "old-b"}, deletes)
	require.Contains(t, adds, "fresh")
	uids := map[string]bool{}
	for _, o := range must(ri.List(ctx, metav1.ListOptions{})).Items {
		uids[string(o.GetUID())] = true
	}
	for _, o := range must(inf.List(nil)) {
		require.True(t, uids[string(o.UID)], "%s: the new CRD's object", o.Name)
	}
}

// A metadata-only informer of an empty collection, synced with a watch-list, writes a
// snapshot of no object at the version of that list; a restart resumes from it without a
// list or watch-list, and sees what was created while it was down.
func TestAuditS53MetadataEmptyCollection(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(configMapsGVR).Namespace(ns)
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir(), LabelSelector: "none=here"}
	snapshotOnce(t, opts, "configmaps")
	_, err := ri.Create(ctx, s53Object(configMapsGVR, "later", map[string]string{"none": "here"}), metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, opts)
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	require.False(t, inf.Status().SnapshotTime.IsZero(), "resumed from the empty snapshot")
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	lists, _ := fx.rec.Count(path)
	require.Zero(t, lists)
	for _, r := range fx.rec.Requests(path) {
		require.False(t, r.InitialEvents && !strings.Contains(r.Query, "fieldSelector=metadata.name"), "a watch-list on restart: %+v", r)
	}
	s53CacheMatches(t, inf, ri, "none=here")
}
