package crcache_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testsupport"
)

// Reads from crcache (compressed, its default, and uncompressed) against
// controller-runtime's cache, on the same 1,000 Pods (2.4 KB of JSON each, without
// managedFields: every cache has TransformStripManagedFields) of a real apiserver. Get
// reads the Pods in turn, so that crcache's reads decompress (a compressed object read
// again right away is not decompressed again):
//
//	cd crcache && go test -run '^$' -bench . -benchtime 2000x .
func BenchmarkReads(b *testing.B) {
	ns := cp.Namespace(b)
	cl, err := client.New(cp.AdminConfig(), client.Options{})
	require.NoError(b, err)
	const n = 1000
	testsupport.CreateN(b, n, func(i int) error { return cl.Create(context.Background(), benchPod(ns, i)) })
	indexOwner := func(o client.Object) []string { return []string{o.GetLabels()["owner"]} }
	caches := map[string]cache.Cache{}
	for name, newCache := range map[string]cache.NewCacheFunc{"controller-runtime": cache.New, "crcache": crcache.New,
		"crcache-uncompressed": crcache.NewFunc(crcache.Options{DisableCompression: true})} {
		c, err := newCache(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform: cache.TransformStripManagedFields()})
		require.NoError(b, err)
		require.NoError(b, c.IndexField(context.Background(), &corev1.Pod{}, "owner", indexOwner))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Start(ctx) }()
		b.Cleanup(func() { cancel(); <-done })
		_, err = c.GetInformer(context.Background(), &corev1.Pod{})
		require.NoError(b, err)
		require.True(b, c.WaitForCacheSync(context.Background()))
		caches[name] = c
	}
	ctx := context.Background()
	keys := make([]client.ObjectKey, n)
	for i := range keys {
		keys[i] = client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("pod-%04d", i)}
	}
	for _, name := range []string{"controller-runtime", "crcache", "crcache-uncompressed"} {
		c := caches[name]
		b.Run("Get/"+name, func(b *testing.B) {
			for i := range b.N {
				var p corev1.Pod
				if err := c.Get(ctx, keys[i%n], &p); err != nil {
					b.Fatal(err)
				}
			}
		})
		// With UnsafeDisableDeepCopy: controller-runtime hands out its object; crcache its
		// shared object, decoded on the first read of each Pod (the first 1,000 ops).
		b.Run("GetNoCopy/"+name, func(b *testing.B) {
			for i := range b.N {
				var p corev1.Pod
				if err := c.Get(ctx, keys[i%n], &p, client.UnsafeDisableDeepCopy); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ListAll/"+name, func(b *testing.B) {
			for range b.N / 20 {
				var l corev1.PodList
				if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil || len(l.Items) != n {
					b.Fatal(err, len(l.Items))
				}
			}
		})
		b.Run("ListIndexed50/"+name, func(b *testing.B) {
			for range b.N {
				var l corev1.PodList
				if err := c.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"owner": "rs-7"}); err != nil || len(l.Items) != 50 {
					b.Fatal(err, len(l.Items))
				}
			}
		})
	}
	for _, name := range []string{"controller-runtime", "crcache", "crcache-uncompressed"} {
		inf, err := caches[name].GetInformer(ctx, &corev1.Pod{})
		require.NoError(b, err)
		b.Run("HandlerReplay/"+name, func(b *testing.B) { benchReplay(b, inf, n) })
		b.Run("IndexBackfill/"+name, func(b *testing.B) { benchBackfill(b, inf, n) })
	}
	b.Run("ListPage50/crcache", func(b *testing.B) {
		for range b.N {
			var l corev1.PodList
			if err := caches["crcache"].List(ctx, &l, client.InNamespace(ns), client.Limit(50)); err != nil || len(l.Items) != 50 {
				b.Fatal(err, len(l.Items))
			}
		}
	})
}

// benchReplay measures what a typed event handler costs per object: handlers are added in
// turn, each receiving the informer's n cached Pods as adds (an op is one object), and
// removed. controller-runtime hands out the objects it holds; crcache decodes each from
// its stored bytes.
func benchReplay(b *testing.B, inf cache.Informer, n int) {
	b.ReportAllocs()
	for left := b.N; left > 0; left -= n {
		var got atomic.Int64
		done := make(chan struct{})
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
			if p, ok := o.(*corev1.Pod); !ok || p.Spec.NodeName == "" {
				b.Errorf("handler got %T", o)
			}
			if got.Add(1) == int64(n) {
				close(done)
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
		<-done
		if err := inf.RemoveEventHandler(reg); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBackfill measures what a typed index function costs per object: indexers are added
// in turn (AddIndexers after the sync), each computed for the n cached Pods (an op is one
// object), as for every change later.
var backfills atomic.Int64

func benchBackfill(b *testing.B, inf cache.Informer, n int) {
	b.ReportAllocs()
	for left := b.N; left > 0; left -= n {
		name := fmt.Sprint("backfill-", backfills.Add(1)) // index names are never reused
		err := inf.AddIndexers(toolscache.Indexers{name: func(o any) ([]string, error) {
			p, ok := o.(*corev1.Pod)
			if !ok {
				return nil, fmt.Errorf("index function got %T", o)
			}
			return []string{p.Spec.NodeName}, nil
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func benchPod(ns string, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: fmt.Sprintf("pod-%04d", i),
			Labels:      map[string]string{"app.kubernetes.io/name": "web", "owner": fmt.Sprintf("rs-%d", i%20), "pod-template-hash": "7d9f8c6b5"},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "app"},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%02d", i%30),
			Containers: []corev1.Container{{
				Name: "app", Image: "ghcr.io/acme/web:v1.2.3",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
			}, {Name: "log-shipper", Image: "fluent/fluent-bit:3.1.9"}},
		},
	}
}
