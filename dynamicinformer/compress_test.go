package dynamicinformer_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testsupport"
)

// TestSnapshotOfCompressedInformer: a snapshot written by a compressing informer (40
// ConfigMaps, more than its dictionary's samples) is read by an informer that does not
// compress (the file does not depend on the writer's dictionary), and the other way round;
// both serve the snapshot without a LIST and end up equal to the server, with the same
// bytes.
func TestSnapshotOfCompressedInformer(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	for i := range 40 {
		_, err := cms.Create(ctx, toUnstructured(t, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("o%02d", i), Labels: map[string]string{"app": "a", "i": fmt.Sprint(i)}},
			Data:       map[string]string{"config.yaml": fmt.Sprintf("replicas: %d\nimage: ghcr.io/acme/app:v%d\n", i, i%3)},
		}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	start := func(compress bool, opts dynamicinformer.Options) (*fixture, *dynamicinformer.Informer) {
		f, rec, log := testsupport.StartFactory(t, cp.AdminConfig(), opts, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{Compress: compress})
		})
		inf, err := f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		waitSync(t, inf)
		return &fixture{f: f, rec: rec, log: log}, inf
	}
	raws := func(inf *dynamicinformer.Informer) map[string]string {
		items, err := inf.ListItems(ns)
		require.NoError(t, err)
		out := map[string]string{}
		for _, it := range items {
			out[it.Name()] = string(it.Raw())
		}
		return out
	}
	for _, c := range []struct{ writer, reader bool }{{true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("written compressed=%v, read compressed=%v", c.writer, c.reader), func(t *testing.T) {
			opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
			fx, inf := start(c.writer, opts)
			want := raws(inf)
			require.Len(t, want, 40)
			fx.f.Shutdown() // writes the snapshot

			fx, inf = start(c.reader, opts)
			defer fx.f.Shutdown()
			require.False(t, inf.Status().SnapshotTime.IsZero(), "served from the snapshot: %+v", inf.Status())
			lists, _ := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
			require.Zero(t, lists, "LIST requests on restart")
			cacheEquals(t, ctx, inf, cms)
			require.Equal(t, want, raws(inf), "the same bytes")
			if runtime.GOOS == "linux" {
				// Mapped unless compressed: compression copies every object anyway.
				require.Equal(t, !c.reader, inf.Status().SnapshotMapped > 0, "%+v", inf.Status())
			}
		})
	}
}
