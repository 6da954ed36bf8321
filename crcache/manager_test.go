package crcache_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// TestManager: a manager switched to crcache with one line; its client reads through the
// cache (field indexes registered before Start included), and a controller built with the
// builder reconciles through a workqueue.
func TestManager(t *testing.T) {
	ns := cp.Namespace(t)
	ctx := t.Context()
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		NewCache: crcache.New,
		Cache:    cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:  metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	_, isCrcache := mgr.GetCache().(*crcache.Cache)
	require.True(t, isCrcache)
	require.NoError(t, mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "data.color", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["color"]}
	}))

	var mu sync.Mutex
	reconciled := map[string]int{}
	err = builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			mu.Lock()
			reconciled[req.Name]++
			mu.Unlock()
			return reconcile.Result{}, nil
		}))
	require.NoError(t, err)

	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	}()

	cl := adminClient(t)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "red-1"}, Data: map[string]string{"color": "red"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "red-2"}, Data: map[string]string{"color": "red"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blue-1"}, Data: map[string]string{"color": "blue"}},
	} {
		require.NoError(t, cl.Create(ctx, cm))
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return reconciled["red-1"] > 0 && reconciled["red-2"] > 0 && reconciled["blue-1"] > 0
	}, "the controller did not reconcile every ConfigMap")

	var reds corev1.ConfigMapList
	require.NoError(t, mgr.GetClient().List(ctx, &reds, client.InNamespace(ns), client.MatchingFields{"data.color": "red"}))
	assert.Equal(t, []string{"red-1", "red-2"}, names(ptrs(reds.Items)))
	var page corev1.ConfigMapList
	require.NoError(t, mgr.GetClient().List(ctx, &page, client.InNamespace(ns), client.Limit(2)))
	require.Len(t, page.Items, 2)
	require.NotEmpty(t, page.Continue)
	var rest corev1.ConfigMapList
	require.NoError(t, mgr.GetClient().List(ctx, &rest, client.InNamespace(ns), client.Limit(2), client.Continue(page.Continue)))
	assert.Len(t, rest.Items, 1, "the manager's client pages through the cache")
	var blues corev1.ConfigMapList
	require.NoError(t, mgr.GetClient().List(ctx, &blues, crcache.MustParseFields("data.color notin (red)"), client.InNamespace(ns)))
	assert.Contains(t, names(ptrs(blues.Items)), "blue-1")
}

// TestStopLeavesNoGoroutine: once Start returns, every goroutine the cache started has
// ended: informers, handlers, discovery, factories.
// Not parallel: goleak sees every goroutine.
func TestStopLeavesNoGoroutine(t *testing.T) {
	ns := cp.Namespace(t)
	createPods(t, adminClient(t), ns, "p", 2)
	ignore := goleak.IgnoreCurrent()
	func() {
		c, err := crcache.NewCache(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}, "default": {}}}, crcache.Options{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Start(ctx) }()
		inf, err := c.GetInformer(t.Context(), &corev1.Pod{})
		require.NoError(t, err)
		_, err = inf.AddEventHandler(newEvents().handler())
		require.NoError(t, err)
		_ = inf.HasSyncedChecker()
		require.True(t, c.WaitForCacheSync(t.Context()))
		require.NoError(t, c.List(t.Context(), metadataPodList()))
		cms := &metav1.PartialObjectMetadataList{}
		cms.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		require.NoError(t, c.List(t.Context(), cms))
		require.NoError(t, c.RemoveInformer(t.Context(), &corev1.Pod{}))
		cancel()
		require.NoError(t, <-done)
	}()
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

// A cache no one asks for an informer makes no request, as controller-runtime's own makes
// none: discovery starts with the first informer. It started with the cache, and a manager
// stopped at once (controller-runtime's "should not leak goroutines when stopped") then
// had requests in flight at the stop, whose HTTP/2 streams outlived it for a moment and kept
// their connection from being closed as idle.
func TestNoRequestWithoutAnInformer(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	cfg := cp.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testsupport.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			paths = append(paths, req.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths)
	}
	c, err := crcache.NewCache(cfg, cache.Options{}, crcache.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	require.True(t, c.WaitForCacheSync(t.Context()))
	assert.Empty(t, requests(), "started, no informer")

	// The first informer starts discovery, and its requests go through the same transport.
	_, err = c.GetInformer(t.Context(), &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(t.Context()))
	assert.Contains(t, requests(), "/apis", "discovery with the first informer")
	cancel()
	require.NoError(t, <-done)
}
