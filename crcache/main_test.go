package crcache_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
)

// One control plane for the package: a real kube-apiserver and etcd.
var cp *testenv.ControlPlane

// TestMain starts the control plane. Pod templates have no watch cache, so that a watch from
// a compacted resourceVersion gets a real 410 (TestTombstonesReachHandlersTyped).
func TestMain(m *testing.M) {
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: []string{"--watch-cache-sizes=podtemplates#0"}})
}

// startCache builds a crcache on cfg (the admin's when nil) with opts, starts it, and stops
// it when the test ends, checking that Start returned.
func startCache(t *testing.T, cfg *rest.Config, opts cache.Options) *crcache.Cache {
	t.Helper()
	c := newCache(t, cfg, opts)
	run(t, c)
	require.True(t, c.WaitForCacheSync(t.Context()))
	return c
}

func newCache(t *testing.T, cfg *rest.Config, opts cache.Options) *crcache.Cache {
	t.Helper()
	if cfg == nil {
		cfg = cp.AdminConfig()
	}
	c, err := crcache.NewCache(cfg, opts, crcache.Options{})
	require.NoError(t, err)
	return c
}

// run starts c (crcache's or controller-runtime's) in the background until the test ends.
func run(t *testing.T, c cache.Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("Start did not return 30s after its context ended")
		}
	})
}

// adminClient is a controller-runtime client straight to the apiserver.
func adminClient(t *testing.T) client.Client {
	t.Helper()
	cl, err := client.New(cp.AdminConfig(), client.Options{})
	require.NoError(t, err)
	return cl
}

func newPod(ns, name string, labels map[string]string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers:    []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
			RestartPolicy: corev1.RestartPolicyAlways,
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// createPods creates n pods named prefix-0..n-1 in ns, with labels {"i": index, "group":
// even/odd} plus extra, and restartPolicy Never for odd indexes.
func createPods(t *testing.T, cl client.Client, ns, prefix string, n int, extra ...string) []*corev1.Pod {
	t.Helper()
	var out []*corev1.Pod
	for i := range n {
		group := "even"
		policy := corev1.RestartPolicyAlways
		if i%2 == 1 {
			group, policy = "odd", corev1.RestartPolicyNever
		}
		labels := map[string]string{"i": fmt.Sprint(i), "group": group}
		for k := 0; k+1 < len(extra); k += 2 {
			labels[extra[k]] = extra[k+1]
		}
		p := newPod(ns, fmt.Sprintf("%s-%02d", prefix, i), labels,
			func(p *corev1.Pod) { p.Spec.RestartPolicy = policy })
		require.NoError(t, cl.Create(t.Context(), p))
		out = append(out, p)
	}
	return out
}

func names[T client.Object](items []T) []string {
	out := []string{}
	for _, o := range items {
		out = append(out, o.GetName())
	}
	return out
}

func podNames(l *corev1.PodList) []string {
	out := []string{}
	for i := range l.Items {
		out = append(out, l.Items[i].Name)
	}
	return out
}

// requestCounter counts the requests a config sends, by path substring.
type requestCounter struct {
	mu    sync.Mutex
	paths []string
	n     atomic.Int64
}

func (rc *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			rc.mu.Lock()
			rc.paths = append(rc.paths, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
			rc.mu.Unlock()
			rc.n.Add(1)
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

// count returns how many requests so far had a path containing s.
func (rc *requestCounter) count(s string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, p := range rc.paths {
		if strings.Contains(p, s) {
			n++
		}
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
