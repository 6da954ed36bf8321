package crcache_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testsupport"
)

// A controller's event handler gets typed objects that crcache decodes for it from the
// cache's bytes, garbage once the handler returns; kindex runs the collector itself while
// the informer starts (kindex_start_collections_total), as for any handler of decoded
// objects, so that the start does not peak at twice the heap. 200 ConfigMaps of 3,000 keys
// (100 KB of JSON each): each decoded ConfigMap is a map of about 250 KB.
func TestHandlerStartPacesGarbage(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	const n, keys = 200, 3000
	cl := adminClient(t)
	testsupport.CreateN(t, n, func(i int) error {
		return cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("big-", i)},
			Data: testsupport.BigConfigMapData(uint64(i), keys)})
	})
	reg := prometheus.NewRegistry()
	c, err := crcache.NewCache(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}, crcache.Options{Registerer: reg})
	require.NoError(t, err)
	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	var adds, entries atomic.Int64
	h, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		adds.Add(1)
		entries.Add(int64(len(o.(*corev1.ConfigMap).Data)))
	}})
	require.NoError(t, err)
	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), h.HasSynced))
	require.Equal(t, int64(n), adds.Load())
	require.Equal(t, int64(n*keys), entries.Load(), "every object decoded whole")
	collections := testsupport.MetricSum(t, reg, "kindex_start_collections_total")
	t.Logf("%v collections", collections)
	assert.GreaterOrEqual(t, collections, 1.0)
}
