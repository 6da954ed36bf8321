package crcache_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// TestTombstonesReachHandlersTyped: objects deleted while the cache's watch was away, found
// gone by the relist that follows a 410, reach a handler as client-go's
// DeletedFinalStateUnknown, whose Obj is the typed object in the state the cache last knew,
// as controller-runtime's event handlers expect; the cache then holds what the server holds.
func TestTombstonesReachHandlersTyped(t *testing.T) {
	ctx := t.Context()
	ns := cp.Namespace(t)
	pts := cp.Clientset(t).CoreV1().PodTemplates(ns)
	create := func(name string) {
		pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rev": "0"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}
		_, err := pts.Create(ctx, pt, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := range 3 {
		create(fmt.Sprint("pt-", i))
	}

	rec := testsupport.NewRecorder()
	cfg := cp.AdminConfig()
	cfg.Wrap(rec.Wrap)
	c, err := crcache.NewCache(cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}, crcache.Options{})
	require.NoError(t, err)
	run(t, c)
	inf, err := c.GetInformer(ctx, &corev1.PodTemplate{})
	require.NoError(t, err)
	h := newEvents()
	_, err = inf.AddEventHandler(h.handler())
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))

	// pt-0 changes through the watch: the state the cache knows last.
	pt0, err := pts.Get(ctx, "pt-0", metav1.GetOptions{})
	require.NoError(t, err)
	pt0.Labels["rev"] = "1"
	pt0, err = pts.Update(ctx, pt0, metav1.UpdateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		var got corev1.PodTemplate
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pt-0"}, &got) == nil && got.ResourceVersion == pt0.ResourceVersion
	}, "the cache sees the update")

	// The watch goes away; pt-0 and pt-1 are deleted; etcd is compacted past the cache's
	// resourceVersion, so that its next watch gets a 410 and it lists again.
	path := "/api/v1/namespaces/" + ns + "/podtemplates"
	rec.Hold(path)
	testenv.Eventually(t, 30*time.Second, func() bool { return rec.Cut(path) > 0 }, "the cache's watch cut")
	require.NoError(t, pts.Delete(ctx, "pt-0", metav1.DeleteOptions{}))
	require.NoError(t, pts.Delete(ctx, "pt-1", metav1.DeleteOptions{}))
	_, err = cp.CompactEtcd(ctx)
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(context.Background(), pts.Watch, pt0.ResourceVersion) },
		"the apiserver answers 410 for the cache's resourceVersion")
	rec.Release()

	testenv.Eventually(t, 30*time.Second, func() bool { return h.deleteCalls() >= 2 }, "two deletions handled")
	revs := map[string]string{}
	for _, name := range []string{"pt-0", "pt-1"} {
		d := h.deleted(ns + "/" + name)
		tomb, ok := d.(toolscache.DeletedFinalStateUnknown)
		require.True(t, ok, "a deletion found by a relist is a tombstone, not a %T", d)
		pt, ok := tomb.Obj.(*corev1.PodTemplate)
		require.True(t, ok, "the tombstone holds a typed object, not a %T", tomb.Obj)
		assert.Equal(t, ns+"/"+pt.Name, tomb.Key)
		revs[pt.Name] = pt.Labels["rev"]
	}
	assert.Equal(t, map[string]string{"pt-0": "1", "pt-1": "0"}, revs, "each in the state the cache last knew")
	assert.Equal(t, 2, h.deleteCalls())

	var l corev1.PodTemplateList
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns)))
	require.Len(t, l.Items, 1)
	assert.Equal(t, "pt-2", l.Items[0].Name)
}
