package dynamicinformer_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testsupport"
)

// A compact informer whose handler gets decoded objects runs the collector itself during
// its start (kindex_start_collections_total counts it), and not with DisableStartGC; the
// handler gets every object either way. 200 ConfigMaps of 3,000 keys (100 KB of JSON each):
// each object decoded for the handler is a map of about 300 KB, garbage once the handler
// returns, over the pacer's slack of an eighth of the live heap every few objects. The
// initial sync is a watch-list stream (CompactOptions.WatchList): one LIST of those 20 MB
// read under the race detector on a loaded machine outlived this package's apiserver
// --request-timeout=5s, and a LIST of 200 objects is one page (100 objects made too little
// garbage for a collection in some runs).
func TestCompactStartPacesGarbage(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	const n, keys = 200, 3000
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	testsupport.CreateN(t, n, func(i int) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("big-", i)},
			Data: testsupport.BigConfigMapData(uint64(i), keys)}, metav1.CreateOptions{})
		return err
	})
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableStartGC=%v", disable), func(t *testing.T) {
			// The pacer measures garbage against the heap live at the last collection: not
			// against what the tests before this one left.
			runtime.GC()
			reg := prometheus.NewRegistry()
			opts := dynamicinformer.Options{Namespace: ns, Registerer: reg, DisableStartGC: disable}
			f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(), opts, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
				return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{WatchList: true})
			})
			var adds, entries atomic.Int64
			h := cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
				adds.Add(1)
				data, _, _ := unstructured.NestedMap(o.(*unstructured.Unstructured).Object, "data")
				entries.Add(int64(len(data)))
			}}
			inf, err := f.Informer(ctx, "configmaps", informer.WithEventHandler(h))
			require.NoError(t, err)
			defer inf.Release()
			waitSync(t, inf)
			regs := inf.Registrations()
			require.Len(t, regs, 1)
			require.True(t, cache.WaitForCacheSync(ctx.Done(), regs[0].HasSynced))
			require.Equal(t, int64(n), adds.Load())
			require.Equal(t, int64(n*keys), entries.Load(), "every object decoded whole")
			collections := testsupport.MetricSum(t, reg, "kindex_start_collections_total")
			t.Logf("%v collections", collections)
			if disable {
				assert.Zero(t, collections)
			} else {
				assert.GreaterOrEqual(t, collections, 1.0)
			}
		})
	}
}
