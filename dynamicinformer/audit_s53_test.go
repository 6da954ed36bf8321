package dynamicinformer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// s53Content returns name -> the object's resourceVersion and content (data or template)
// as JSON.
func s53Content(objs []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		c := o.Object["data"]
		if c == nil {
			c = o.Object["template"]
		}
		b, _ := json.Marshal(c)
		out[o.GetName()] = o.GetResourceVersion() + " " + string(b)
	}
	return out
}

func s53CacheEqualsServer(t *testing.T, inf *dynamicinformer.Informer, ri dynamic.ResourceInterface) {
	t.Helper()
	var want, got map[string]string
	testenv.Eventually(t, 30*time.Second, func() bool {
		l := must(ri.List(context.Background(), metav1.ListOptions{}))
		items := make([]*unstructured.Unstructured, len(l.Items))
		for i := range l.Items {
			items[i] = &l.Items[i]
		}
		want, got = s53Content(items), s53Content(must(inf.List(nil)))
		return fmt.Sprint(want) == fmt.Sprint(got)
	}, "cache differs from the server: want %v, got %v", want, got)
}

func s53Obj(gvr schema.GroupVersionResource, name, value string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1"}}
	if gvr.Resource == "configmaps" {
		o.SetKind("ConfigMap")
		o.Object["data"] = map[string]any{"secret-ish": value}
	} else {
		o.SetKind("PodTemplate")
		o.Object["template"] = map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "busybox:" + value}}}}
	}
	o.SetName(name)
	return o
}

// s53SetValue changes the object's content (not its labels).
func s53SetValue(t *testing.T, ri dynamic.ResourceInterface, gvr schema.GroupVersionResource, name, value string) {
	t.Helper()
	o := must(ri.Get(context.Background(), name, metav1.GetOptions{}))
	n := s53Obj(gvr, name, value)
	n.SetResourceVersion(o.GetResourceVersion())
	_, err := ri.Update(context.Background(), n, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// A compact informer with an encrypted snapshot (plain and compressing), restarted after
// contents changed, objects were deleted and others created while it was down: within the
// watch window (configmaps) it makes no LIST, after a compaction (podtemplates, a 410) one
// relist; handlers get exactly the differences, the cache equals the server's content, and
// the file never holds the objects' content in clear. Restarted with another key, the file
// is ignored with one log line, the informer lists and handlers see the server's objects
// only; the file it then writes is used by the next start with that key.
func TestAuditS53CompactEncryptedRestart(t *testing.T) {
	keyA := bytes.Repeat([]byte{0x5a}, 32)
	keyB := bytes.Repeat([]byte{0xa5}, 16)
	for _, tc := range []struct {
		name     string
		gvr      schema.GroupVersionResource
		compact  bool
		compress bool
	}{
		{"within-window", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, false, false},
		{"within-window-compress", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, false, true},
		{"after-compaction", schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			ri := cp.Dynamic(t).Resource(tc.gvr).Namespace(ns)
			for i := range 5 {
				_, err := ri.Create(ctx, s53Obj(tc.gvr, fmt.Sprint("o", i), fmt.Sprint("plaintext-value-", i)), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir(), SnapshotKey: keyA}
			startC := func(o dynamicinformer.Options) *fixture {
				f, rec, log := testsupport.StartFactory(t, cp.AdminConfig(), o, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
					return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{Compress: tc.compress})
				})
				return &fixture{f: f, rec: rec, log: log}
			}
			fx := startC(opts)
			inf, err := fx.f.Informer(ctx, tc.gvr.Resource)
			require.NoError(t, err)
			waitSync(t, inf)
			fx.f.Shutdown()
			files := must(filepath.Glob(filepath.Join(opts.SnapshotDir, "*")))
			require.Len(t, files, 1)
			raw := must(os.ReadFile(files[0]))
			require.NotContains(t, string(raw), "plaintext-value-")
			require.Equal(t, os.FileMode(0o600), must(os.Stat(files[0])).Mode().Perm())
			oldRV := must(ri.List(ctx, metav1.ListOptions{})).GetResourceVersion()

			// While down: content changed (o0), deleted (o1), deleted and created again under
			// the same name (o2), created (new).
			s53SetValue(t, ri, tc.gvr, "o0", "changed")
			require.NoError(t, ri.Delete(ctx, "o1", metav1.DeleteOptions{}))
			require.NoError(t, ri.Delete(ctx, "o2", metav1.DeleteOptions{}))
			_, err = ri.Create(ctx, s53Obj(tc.gvr, "o2", "reborn"), metav1.CreateOptions{})
			require.NoError(t, err)
			_, err = ri.Create(ctx, s53Obj(tc.gvr, "new", "fresh"), metav1.CreateOptions{})
			require.NoError(t, err)
			if tc.compact {
				_, err := cp.CompactEtcd(ctx)
				require.NoError(t, err)
				testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(ctx, ri.Watch, oldRV) },
					"the apiserver answers 410 for the snapshot's resourceVersion")
			}

			fx = startC(opts)
			ev := &testsupport.Events{}
			inf, err = fx.f.Informer(ctx, tc.gvr.Resource, informer.WithEventHandler(ev.Handler()))
			require.NoError(t, err)
			waitSync(t, inf)
			require.False(t, inf.Status().SnapshotTime.IsZero(), "from the encrypted snapshot")
			s53CacheEqualsServer(t, inf, ri)
			path := "/api/v1/namespaces/" + ns + "/" + tc.gvr.Resource
			lists, _ := fx.rec.Count(path)
			if tc.compact {
				require.Equal(t, 1, lists, "one relist after the 410")
			} else {
				require.Zero(t, lists)
			}
			_, err = ri.Create(ctx, s53Obj(tc.gvr, "zz-marker", "m"), metav1.CreateOptions{})
			require.NoError(t, err)
			testenv.Eventually(t, 30*time.Second, func() bool {
				a, _, _ := ev.Get()
				return len(a) > 0 && a[len(a)-1] == "zz-marker"
			}, "the marker's add")
			a, u, d := ev.Get()
			if tc.compact {
				// The relist sees o2 at a new version: an update, as client-go's informer says.
				require.Equal(t, []string{"new", "o0", "o1", "o2", "o3", "o4", "zz-marker"}, a)
				require.Equal(t, []string{"o0", "o2"}, u)
				require.Equal(t, []string{"o1"}, d)
			} else {
				require.Equal(t, []string{"new", "o0", "o1", "o2", "o2", "o3", "o4", "zz-marker"}, a)
				require.Equal(t, []string{"o0"}, u)
				require.Equal(t, []string{"o1", "o2"}, d)
			}
			fx.f.Shutdown()
			raw = must(os.ReadFile(files[0]))
			require.NotContains(t, string(raw), "plaintext-value-")
			require.NotContains(t, string(raw), "reborn")

			// Another key: ignored, listed, and written again with it.
			other := opts
			other.SnapshotKey = keyB
			fx = startC(other)
			ev = &testsupport.Events{}
			inf, err = fx.f.Informer(ctx, tc.gvr.Resource, informer.WithEventHandler(ev.Handler()))
			require.NoError(t, err)
			waitSync(t, inf)
			require.True(t, inf.Status().SnapshotTime.IsZero())
			require.Equal(t, 1, fx.log.Count("Snapshot ignored"), "%s", fx.log)
			s53CacheEqualsServer(t, inf, ri)
			testenv.Eventually(t, 10*time.Second, func() bool { a, _, _ := ev.Get(); return len(a) == 6 }, "adds")
			a, u, d = ev.Get()
			require.Equal(t, []string{"new", "o0", "o2", "o3", "o4", "zz-marker"}, a)
			require.Empty(t, u)
			require.Empty(t, d)
			fx.f.Shutdown()

			fx = startC(other)
			inf, err = fx.f.Informer(ctx, tc.gvr.Resource)
			require.NoError(t, err)
			waitSync(t, inf)
			require.False(t, inf.Status().SnapshotTime.IsZero(), "the file written with the new key")
			lists, _ = fx.rec.Count(path)
			require.Zero(t, lists)
			s53CacheEqualsServer(t, inf, ri)
		})
	}
}

// A compact snapshot is the same file whether the writer compressed its objects or not (a
// record is the decompressed JSON): a restart that turns Options.Compress (or Spans) on or
// off resumes from it without a LIST and serves the same content, changes made while down
// included.
func TestAuditS53CompactSnapshotAcrossCompressAndSpans(t *testing.T) {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ns := cp.Namespace(t)
	ri := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	for i := range 5 {
		_, err := ri.Create(ctx, s53Obj(gvr, fmt.Sprint("o", i), fmt.Sprint("value-", i, "-", string(bytes.Repeat([]byte("x"), 200*i)))), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	for step, co := range []dynamicinformer.CompactOptions{
		{}, {Compress: true}, {Spans: true}, {Compress: true, Spans: true}, {},
	} {
		f, rec, _ := testsupport.StartFactory(t, cp.AdminConfig(), opts, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, co)
		})
		inf, err := f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		waitSync(t, inf)
		s53CacheEqualsServer(t, inf, ri)
		lists, _ := rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
		if step == 0 {
			require.Equal(t, 1, lists)
		} else {
			require.Zero(t, lists, "step %d (%+v): resumed from the snapshot", step, co)
			require.False(t, inf.Status().SnapshotTime.IsZero())
		}
		f.Shutdown()
		s53SetValue(t, ri, gvr, fmt.Sprint("o", step), fmt.Sprint("while-down-", step))
	}
}
