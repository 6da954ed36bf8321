package dynamicinformer_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// serverState lists ri and returns name -> resourceVersion.
func serverState(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) map[string]string {
	t.Helper()
	l, err := ri.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]string{}
	for _, o := range l.Items {
		out[o.GetName()] = o.GetResourceVersion()
	}
	return out
}

// cacheEquals waits until inf holds exactly the server's objects, resourceVersions included.
func cacheEquals(t *testing.T, ctx context.Context, inf *dynamicinformer.Informer, ri dynamic.ResourceInterface) {
	t.Helper()
	var want, got map[string]string
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		want = serverState(t, ctx, ri)
		got = nameRVs(must(inf.List(nil)))
		return fmt.Sprint(want) == fmt.Sprint(got)
	}, func() string {
		return fmt.Sprintf("cache differs from the server: want %v, got %v (%v)", want, got, inf.Status())
	})
}

// metaCacheEquals is cacheEquals for a metadata-only informer.
func metaCacheEquals(t *testing.T, ctx context.Context, inf *metadataonly.Informer, ri dynamic.ResourceInterface) {
	t.Helper()
	var want, got map[string]string
	testenv.EventuallyWith(t, 60*time.Second, func() bool {
		want = serverState(t, ctx, ri)
		got = map[string]string{}
		for _, o := range must(inf.List(nil)) {
			got[o.Name] = o.ResourceVersion
		}
		return fmt.Sprint(want) == fmt.Sprint(got)
	}, func() string {
		return fmt.Sprintf("metadata cache differs from the server: want %v, got %v (%v)", want, got, inf.Status())
	})
}

// After an apiserver restart (graceful or crash), with changes made right before it stops
// and right after it starts (before the informer reconnects), the cache equals the server
// in every storage mode: no lost update, no ghost. The custom resource also exercises the
// window in which a restarted apiserver answers 404 for CRDs it has not loaded yet. Not
// parallel: the apiserver goes away.
func TestAPIServerRestartKeepsCacheExact(t *testing.T) {
	ctx := context.Background()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			ns := cp.Namespace(t)
			group := testenv.UniqueName(t) + ".kindex.test"
			cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
			dyn := cp.Dynamic(t)
			cms := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
			ws := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
			for i := range 6 {
				_, err := cms.Create(ctx, toUnstructured(t, &corev1.ConfigMap{
					TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i)}}), metav1.CreateOptions{})
				require.NoError(t, err)
				_, err = ws.Create(ctx, widget(group, fmt.Sprint("o", i), int64(i)), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
			cmInf, err := fx.f.Informer(ctx, "configmaps")
			require.NoError(t, err)
			defer cmInf.Release()
			wInf, err := fx.f.Informer(ctx, "widgets."+group)
			require.NoError(t, err)
			defer wInf.Release()
			waitSync(t, cmInf)
			waitSync(t, wInf)
			// The same resources in the compact and metadata-only modes.
			cf, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Namespace: ns}, dynamicinformer.CompactOptions{})
			require.NoError(t, err)
			mf, err := metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{Namespace: ns})
			require.NoError(t, err)
			fctx, cancelFactories := context.WithCancel(ctx)
			defer func() { cancelFactories(); cf.Shutdown(); mf.Shutdown() }()
			require.NoError(t, cf.Start(fctx))
			require.NoError(t, mf.Start(fctx))
			var compact []*dynamicinformer.Informer
			var meta []*metadataonly.Informer
			for _, input := range []string{"configmaps", "widgets." + group} {
				ci, err := cf.Informer(ctx, input)
				require.NoError(t, err)
				defer ci.Release()
				mi, err := mf.Informer(ctx, input)
				require.NoError(t, err)
				defer mi.Release()
				compact, meta = append(compact, ci), append(meta, mi)
			}
			require.NoError(t, cf.WaitForSync(ctx))
			require.NoError(t, mf.WaitForSync(ctx))
			cmDel, wDel := &deletes{names: map[string]bool{}}, &deletes{names: map[string]bool{}}
			_, err = cmInf.AddEventHandler(cmDel.handler())
			require.NoError(t, err)
			_, err = wInf.AddEventHandler(wDel.handler())
			require.NoError(t, err)

			testsupport.Churn(t, ctx, cms, "before", "o0", "o1")
			testsupport.Churn(t, ctx, ws, "before", "o0", "o1")
			require.NoError(t, cp.StopAPIServer(sig))
			startCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
			defer cancel()
			require.NoError(t, cp.StartAPIServer(startCtx))
			// Right away, while the informers are still backing off.
			testsupport.Churn(t, ctx, cms, "after", "o2", "o3")
			testsupport.Churn(t, ctx, ws, "after", "o2", "o3")

			cacheEquals(t, ctx, cmInf, cms)
			cacheEquals(t, ctx, wInf, ws)
			for i, ri := range []dynamic.ResourceInterface{cms, ws} {
				cacheEquals(t, ctx, compact[i], ri)
				metaCacheEquals(t, ctx, meta[i], ri)
			}
			for _, inf := range []*dynamicinformer.Informer{cmInf, wInf} {
				st := inf.Status()
				require.Equal(t, informer.PhaseSynced, st.Phase, "%v", st)
			}
			// Handlers saw exactly the real deletions: the 404s of CRDs not yet loaded by the
			// restarted apiserver did not empty the cache.
			for _, d := range []*deletes{cmDel, wDel} {
				d.mu.Lock()
				require.Equal(t, map[string]bool{"o1": true, "o3": true}, d.names)
				d.mu.Unlock()
			}
			require.Zero(t, fx.log.Count("Informer parked"), "%s", fx.log)
		})
	}
}

// A watch from a compacted resourceVersion gets 410 Gone: the informer relists and its cache
// equals the server, including the changes it missed while disconnected. Pod templates have
// no watch cache in this control plane (TestMain), so the watch from the old
// resourceVersion reaches etcd and the 410 is certain; the watch cache would keep serving
// it for a while. (Watch-list works without a watch cache too: the initial sync and the
// relist are watch-list streams.)
// Not parallel: the compaction affects every watch.
func TestCompactionForcesRelist(t *testing.T) {
	ctx := context.Background()
	ns, pts := podTemplates(t, 4)
	reg := prometheus.NewRegistry()
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns, Registerer: reg})
	inf, err := fx.f.Informer(ctx, "podtemplates")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	require.Equal(t, 1, inf.Status().Lists)
	// One event through the watch, so that cutting it makes the reflector re-watch from its
	// resourceVersion (a watch that ends empty within a second makes it relist instead).
	o3, err := pts.Get(ctx, "o3", metav1.GetOptions{})
	require.NoError(t, err)
	o3.SetLabels(map[string]string{"seen": "yes"})
	o3, err = pts.Update(ctx, o3, metav1.UpdateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, func() bool {
		got, err := inf.Get(ns, "o3")
		return err == nil && got.GetResourceVersion() == o3.GetResourceVersion()
	}, "update seen through the watch")
	lastRV := o3.GetResourceVersion()

	// Disconnect the informer: its next watch waits, from the resourceVersion it has.
	path := "/api/v1/namespaces/" + ns + "/podtemplates"
	fx.rec.Hold(path)
	require.Equal(t, 1, fx.rec.Cut(path))
	testsupport.Churn(t, ctx, pts, "missed", "o0", "o1")
	compactPast(t, ns, lastRV)
	fx.rec.Release()

	cacheEquals(t, ctx, inf, pts)
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Lists >= 2 }, "relisted: %v", inf.Status())
	require.Equal(t, informer.PhaseSynced, inf.Status().Phase)
	require.GreaterOrEqual(t, counter(t, reg, "kindex_informer_errors_total", "reason", "Expired"), 1.0,
		"the relist followed a 410")
}

// counter sums the samples of a metric whose label has value.
func counter(t *testing.T, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return sum
}
