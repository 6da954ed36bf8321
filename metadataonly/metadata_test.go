package metadataonly_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
)

// Built-ins and custom resources sync as PartialObjectMetadata, fetched as protobuf, with
// managedFields stripped; the same core as dynamicinformer follows changes.
func TestSyncMetadataOverProtobuf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	for i := range 3 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprint("cm", i), Labels: map[string]string{"app": "x"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	group := testenv.UniqueName(t) + ".kindex.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, widget(group, "w"), metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, metadataonly.Options{Namespace: ns})
	cms, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer cms.Release()
	ws, err := fx.f.InformerForGVR(ctx, schema.GroupVersionResource{Group: group, Resource: "widgets"})
	require.NoError(t, err)
	defer ws.Release()
	require.NoError(t, fx.f.WaitForSync(ctx))

	assert.ElementsMatch(t, []string{"cm0", "cm1", "cm2"}, names(must(cms.List(nil))))
	w, err := ws.Get(ns, "w")
	require.NoError(t, err)
	assert.Equal(t, "w", w.Name)
	for _, o := range append(must(cms.List(nil)), must(ws.List(nil))...) {
		assert.Nil(t, o.ManagedFields)
		assert.Equal(t, "x", map[string]string{"cm0": "x", "cm1": "x", "cm2": "x", "w": "x"}[o.Name])
	}
	for _, r := range append(fx.rec.Requests("/namespaces/"+ns+"/configmaps"), fx.rec.Requests("/namespaces/"+ns+"/widgets")...) {
		assert.Contains(t, r.Accept, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata")
		assert.Contains(t, r.ContentType, "protobuf", "%+v", r)
	}

	del := make(chan string, 10)
	_, err = cms.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(o any) {
		if p, ok := o.(*metav1.PartialObjectMetadata); ok {
			del <- p.Name
		}
	}})
	require.NoError(t, err)
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm1", metav1.DeleteOptions{}))
	select {
	case name := <-del:
		assert.Equal(t, "cm1", name)
	case <-time.After(10 * time.Second):
		t.Fatal("no delete notification")
	}
}

// What the metadata client does with watch-list: the reflector streams the initial list
// (WATCH with sendInitialEvents=true, protobuf PartialObjectMetadata) and makes no LIST.
func TestMetadataInitialSyncUsesWatchList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	for i := range 2 {
		_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, metadataonly.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	require.Len(t, must(inf.List(nil)), 2)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	reqs := fx.rec.Requests(path)
	for _, r := range reqs {
		t.Logf("metadata informer request: watch=%v sendInitialEvents=%v status=%d content-type=%s", r.Watch, r.InitialEvents, r.Status, r.ContentType)
	}
	require.NotEmpty(t, reqs)
	assert.True(t, reqs[0].Watch && reqs[0].InitialEvents, "%+v", reqs[0])
	// No LIST: the metadata client streams the initial list too; only a watch-list whose
	// initial events never ended (a loaded apiserver) falls back to one, as client-go does.
	assert.Contains(t, [][]string{{"watch-list"}, {"watch-list-unended", "list"}}, fx.rec.Listings(path), "%+v", reqs)
}

// A garbage-collector-style consumer: metadata of every resource of a group, following CRDs
// as they come and go, with one handler for all of them.
func TestWatchAllFollowsCRDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	wgvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	_, err := cp.Dynamic(t).Resource(wgvr).Namespace(ns).Create(ctx, widget(group, "w"), metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, metadataonly.Options{Namespace: ns})
	wa, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}})
	require.NoError(t, err)
	defer wa.Stop()
	var mu sync.Mutex
	seen := map[string]bool{}
	_, err = wa.AddEventHandler(func(res discovery.Resource) cache.ResourceEventHandler {
		note := func(prefix string) func(any) {
			return func(o any) {
				key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(o)
				mu.Lock()
				seen[prefix+" "+res.GVR.Resource+" "+key[strings.LastIndex(key, "/")+1:]] = true
				mu.Unlock()
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: note("add"), DeleteFunc: note("delete")}
	})
	require.NoError(t, err)
	has := func(k string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return seen[k]
		}
	}
	testenv.Eventually(t, 10*time.Second, has("add widgets w"), "existing resource watched")

	// A CRD created later joins the set.
	gadgets := cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	ggvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	g := widget(group, "g")
	g.SetKind("Gadget")
	_, err = cp.Dynamic(t).Resource(ggvr).Namespace(ns).Create(ctx, g, metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 20*time.Second, has("add gadgets g"), "new CRD joined the set")
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, wa.WaitForSync(wctx))

	// Its deletion removes it; the handler saw its objects deleted.
	cp.DeleteCRD(t, gadgets.Name)
	testenv.Eventually(t, 20*time.Second, has("delete gadgets g"), "objects of a deleted CRD are deleted")
	testenv.Eventually(t, 20*time.Second, func() bool {
		_, ok := wa.Informer(ggvr.GroupResource())
		return !ok
	}, "member removed")
	_, ok := wa.Informer(wgvr.GroupResource())
	assert.True(t, ok)
}

// Not parallel: goleak sees every goroutine.
func TestMetadataReleaseLeavesNoGoroutines(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	disc, err := discovery.New(cp.AdminConfig(), discovery.Options{})
	require.NoError(t, err)
	fx := start(t, nil, metadataonly.Options{Namespace: ns, Discovery: disc})
	// Warm up discovery and the shared HTTP/2 connection before the snapshot.
	_, err = disc.Resolve(ctx, "configmaps")
	require.NoError(t, err)
	_, err = cp.Clientset(t).CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	ignore := goleak.IgnoreCurrent()
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	require.NoError(t, err)
	waitSync(t, inf)
	inf.Release()
	goleak.VerifyNone(t, ignore)
}
