package dynamicinformer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// seedConfigMaps creates n empty ConfigMaps (cm0, cm1...) in a new namespace, which it returns.
func seedConfigMaps(t *testing.T, n int) string {
	t.Helper()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	for i := range n {
		_, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return ns
}

// The initial sync streams (watch-list: a WATCH with sendInitialEvents=true) instead of a
// LIST: kindex's ListerWatcher wrapper keeps client-go's watch-list support on.
func TestInitialSyncUsesWatchList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := seedConfigMaps(t, 3)
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	assert.Len(t, must(inf.List(nil)), 3)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	reqs := fx.rec.Requests(path)
	require.NotEmpty(t, reqs)
	assert.True(t, reqs[0].Watch && reqs[0].InitialEvents, "first request is a watch-list: %+v", reqs[0])
	assert.Equal(t, 200, reqs[0].Status)
	// No LIST for the initial sync; only a watch-list whose initial events never ended (a
	// loaded apiserver) falls back to one, as client-go does.
	assert.Contains(t, [][]string{{"watch-list"}, {"watch-list-unended", "list"}}, fx.rec.Listings(path), "%+v", reqs)
	assert.Equal(t, 1, inf.Status().Lists)
}

// A compact factory's initial sync is one consistent LIST with no page limit, decoded as it
// streams, then a WATCH (CompactOptions.WatchList turns watch-list back on).
func TestCompactInitialSyncStreamsOneList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := seedConfigMaps(t, 3)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	for _, watchList := range []bool{false, true} {
		rec := testsupport.NewRecorder()
		cfg := cp.AdminConfig()
		cfg.Wrap(rec.Wrap)
		f, err := dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns, Logger: (&testsupport.Lines{}).Logger(0)},
			dynamicinformer.CompactOptions{WatchList: watchList})
		require.NoError(t, err)
		fctx, cancel := context.WithCancel(ctx)
		require.NoError(t, f.Start(fctx))
		inf, err := f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		waitSync(t, inf)
		assert.Len(t, must(inf.List(nil)), 3)
		reqs := rec.Requests(path)
		require.NotEmpty(t, reqs)
		lists, _ := rec.Count(path)
		if watchList {
			assert.True(t, reqs[0].Watch && reqs[0].InitialEvents, "WatchList: the first request is a watch-list: %+v", reqs[0])
			assert.Contains(t, [][]string{{"watch-list"}, {"watch-list-unended", "list"}}, rec.Listings(path),
				"WatchList: no LIST unless the watch-list's initial events never ended: %+v", reqs)
		} else {
			assert.False(t, reqs[0].Watch, "the first request is a LIST: %+v", reqs[0])
			assert.Equal(t, 1, lists, "one LIST, not pages")
			assert.NotContains(t, reqs[0].Query, "limit=", "no page limit")
			assert.NotContains(t, reqs[0].Query, "resourceVersion=", "a consistent read")
			testenv.Eventually(t, 10*time.Second, func() bool {
				for _, r := range rec.Requests(path) {
					if r.Watch && !r.InitialEvents {
						return true
					}
				}
				return false
			}, "a WATCH follows the LIST: %+v", rec.Requests(path))
		}
		assert.Equal(t, 1, inf.Status().Lists)
		inf.Release()
		cancel()
		f.Shutdown()
	}
}

// Equal requests share one informer (one watch on the wire); a different namespace or
// selector gets its own.
func TestEqualRequestsShareOneInformer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	a, err := fx.f.Informer(ctx, "cm")
	require.NoError(t, err)
	defer a.Release()
	b, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer b.Release()
	c, err := fx.f.InformerForGVK(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	require.NoError(t, err)
	defer c.Release()
	waitSync(t, a)
	assert.Equal(t, a.Key(), b.Key())
	assert.Equal(t, a.Key(), c.Key())
	require.Len(t, fx.f.Statuses(), 1)
	_, watches := fx.rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	assert.Equal(t, 1, watches, "one watch for three references")

	other := cp.Namespace(t)
	d, err := fx.f.Informer(ctx, "cm", informer.WithNamespace(other))
	require.NoError(t, err)
	defer d.Release()
	e, err := fx.f.Informer(ctx, "cm", informer.WithLabelSelector("app=x"))
	require.NoError(t, err)
	defer e.Release()
	waitSync(t, d)
	waitSync(t, e)
	assert.Len(t, fx.f.Statuses(), 3)
	assert.NotEqual(t, a.Key(), d.Key())
	assert.NotEqual(t, a.Key(), e.Key())
}

// Releasing the last reference stops the reflector, the processing loop and the handler
// goroutines: nothing is left behind. Not parallel: goleak sees every goroutine. The
// discovery client is not started, so that its own watches (which may restart at any time)
// do not show up as goroutines created after the snapshot.
func TestReleaseLeavesNoGoroutines(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	disc, err := discovery.New(cp.AdminConfig(), discovery.Options{})
	require.NoError(t, err)
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns, Discovery: disc})
	// Warm up discovery and the shared HTTP/2 connection before the snapshot.
	_, err = disc.Resolve(ctx, "configmaps")
	require.NoError(t, err)
	_, err = cp.Clientset(t).CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	ignore := goleak.IgnoreCurrent()
	for range 2 { // and again: a released resource can be acquired and synced afresh
		inf, err := fx.f.Informer(ctx, "configmaps")
		require.NoError(t, err)
		_, err = inf.AddEventHandler(noopHandler{})
		require.NoError(t, err)
		waitSync(t, inf)
		inf.Release()
		assert.Equal(t, informer.PhaseStopped, inf.Status().Phase)
		goleak.VerifyNone(t, ignore)
	}
	assert.Empty(t, fx.f.Statuses())
}

type noopHandler struct{}

func (noopHandler) OnAdd(any, bool)   {}
func (noopHandler) OnUpdate(any, any) {}
func (noopHandler) OnDelete(any)      {}
