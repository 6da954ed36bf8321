package crcache_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
)

// TestCompressedTypedReads: with compression on (the default) and off, typed Get and List
// of Pods return the server's Pods, and the same ones, through the initial list and
// updates, deletes and creates seen through the watch; label selectors, IndexField
// selectors, JSONPath field selectors and pages agree. 40 pods are more than the 16 samples
// a dictionary is made of: most of the compressing cache's pods are compressed.
func TestCompressedTypedReads(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns, "p", 40)
	ctx := t.Context()
	start := func(o crcache.Options) *crcache.Cache {
		c, err := crcache.NewCache(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}, o)
		require.NoError(t, err)
		require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "spec.restartPolicy", func(o client.Object) []string {
			return []string{string(o.(*corev1.Pod).Spec.RestartPolicy)}
		}))
		require.NoError(t, c.IndexJSONPath(ctx, &corev1.Pod{}, "image", "{.spec.containers[*].image}"))
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		return c
	}
	compressed, plain := start(crcache.Options{}), start(crcache.Options{DisableCompression: true})

	// server returns the server's pods by name, as a cache returns them: with their kind.
	server := func() map[string]corev1.Pod {
		var l corev1.PodList
		require.NoError(t, cl.List(ctx, &l, client.InNamespace(ns)))
		out := map[string]corev1.Pod{}
		for _, p := range l.Items {
			p.APIVersion, p.Kind = "v1", "Pod"
			out[p.Name] = p
		}
		return out
	}
	check := func(stage string) {
		t.Helper()
		want := server()
		for _, c := range []*crcache.Cache{compressed, plain} {
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				var l corev1.PodList
				if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil || len(l.Items) != len(want) {
					return false
				}
				for _, p := range l.Items {
					if want[p.Name].ResourceVersion != p.ResourceVersion {
						return false
					}
				}
				return true
			}, func() string { return stage + ": the cache does not follow the server" })
		}
		for name, w := range want {
			for _, c := range []*crcache.Cache{compressed, plain} {
				var got corev1.Pod
				require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &got))
				require.Equal(t, w, got, "%s: %s", stage, name)
			}
		}
		for _, opts := range [][]client.ListOption{
			{client.InNamespace(ns)},
			{client.InNamespace(ns), client.MatchingLabels{"group": "odd"}},
			{client.InNamespace(ns), client.MatchingFields{"spec.restartPolicy": "Never"}},
			{client.InNamespace(ns), crcache.MustParseFields("image=nginx:1.28")},
			{client.InNamespace(ns), crcache.MustParseFields("metadata.labels.i in (3,7,33)")},
			{client.InNamespace(ns), client.Limit(7)},
		} {
			var a, b corev1.PodList
			require.NoError(t, compressed.List(ctx, &a, opts...))
			require.NoError(t, plain.List(ctx, &b, opts...))
			require.Equal(t, b.Items, a.Items, "%s: %v", stage, opts)
			for _, p := range a.Items {
				require.Equal(t, want[p.Name], p, stage)
			}
			if a.Continue != "" && a.Continue != "continue-not-supported" {
				var a2, b2 corev1.PodList
				require.NoError(t, compressed.List(ctx, &a2, append(opts, client.Continue(a.Continue))...))
				require.NoError(t, plain.List(ctx, &b2, append(opts, client.Continue(b.Continue))...))
				require.Equal(t, b2.Items, a2.Items, "%s: second page", stage)
			}
		}
	}
	check("initial list")

	for i := range 8 {
		var p corev1.Pod
		require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("p-%02d", i)}, &p))
		p.Labels["updated"] = "yes"
		p.Spec.Containers[0].Image = "nginx:1.28"
		require.NoError(t, cl.Update(ctx, &p))
	}
	for i := 8; i < 12; i++ {
		require.NoError(t, cl.Delete(ctx, newPod(ns, fmt.Sprintf("p-%02d", i), nil)))
	}
	createPods(t, cl, ns, "q", 5)
	check("after updates, deletes and creates")

	var gone corev1.Pod
	err := compressed.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-09"}, &gone)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}
