package dynamicinformer_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// Built-ins (configmaps, pods) and a custom resource sync, answer List/Get, and follow
// changes; managedFields are stripped.
func TestSyncBuiltinsAndCustomResources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	for i := range 3 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprint("cm", i), Labels: map[string]string{"i": fmt.Sprint(i)}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	group := strings.ToLower(testenv.UniqueName(t)) + ".kindex.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	wgvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	_, err = cp.Dynamic(t).Resource(wgvr).Namespace(ns).Create(ctx, widget(group, "w1", 3), metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	cms, err := fx.f.Informer(ctx, "cm")
	require.NoError(t, err)
	defer cms.Release()
	pods, err := fx.f.InformerForGVR(ctx, schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	require.NoError(t, err)
	defer pods.Release()
	widgets, err := fx.f.Informer(ctx, "widgets."+group)
	require.NoError(t, err)
	defer widgets.Release()
	require.NoError(t, fx.f.WaitForSync(ctx))

	assert.ElementsMatch(t, []string{"cm0", "cm1", "cm2"}, names(must(cms.List(labels.Everything()))))
	assert.Equal(t, []string{"cm1"}, names(must(cms.List(labels.SelectorFromSet(labels.Set{"i": "1"})))))
	assert.ElementsMatch(t, []string{"cm0", "cm1", "cm2"}, names(must(cms.Namespace(ns).List(nil))))
	assert.Empty(t, must(cms.Namespace("default").List(nil)), "the factory watches one namespace")
	p, err := pods.Get(ns, "p")
	require.NoError(t, err)
	assert.Equal(t, "Pod", p.GetKind())
	_, err = pods.Get(ns, "nope")
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	w, err := widgets.Namespace(ns).Get("w1")
	require.NoError(t, err)
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	assert.EqualValues(t, 3, size)
	for _, o := range append(append(must(cms.List(nil)), must(pods.List(nil))...), must(widgets.List(nil))...) {
		assert.Nil(t, o.GetManagedFields(), "managedFields stripped from %s", o.GetName())
	}
	for _, inf := range []*dynamicinformer.Informer{cms, pods, widgets} {
		st := inf.Status()
		assert.Equal(t, informer.PhaseSynced, st.Phase)
		assert.False(t, st.LastSyncTime.IsZero())
	}

	// Changes reach handlers and the cache.
	var mu sync.Mutex
	events := map[string]int{}
	note := func(kind string) func(any) {
		return func(o any) {
			mu.Lock()
			defer mu.Unlock()
			if u, ok := o.(*unstructured.Unstructured); ok {
				events[kind+":"+u.GetName()]++
			}
		}
	}
	reg, err := cms.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    note("add"),
		UpdateFunc: func(_, n any) { note("update")(n) },
		DeleteFunc: note("delete"),
	})
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "handler synced")
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm3"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cm0, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm0", metav1.GetOptions{})
	require.NoError(t, err)
	cm0.Data = map[string]string{"k": "v"}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm0, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm1", metav1.DeleteOptions{}))
	testenv.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return events["add:cm3"] == 1 && events["update:cm0"] == 1 && events["delete:cm1"] == 1
	}, "events delivered: %v", events)
	mu.Lock()
	assert.Equal(t, 3, events["add:cm0"]+events["add:cm1"]+events["add:cm2"], "replay of the cached objects")
	mu.Unlock()
	got, err := cms.Get(ns, "cm0")
	require.NoError(t, err)
	data, _, _ := unstructured.NestedStringMap(got.Object, "data")
	assert.Equal(t, map[string]string{"k": "v"}, data)
	assert.ElementsMatch(t, []string{"cm0", "cm2", "cm3"}, names(must(cms.List(nil))))
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}
