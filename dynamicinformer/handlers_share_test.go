package dynamicinformer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// lastObjects records the last object a handler was given per name.
type lastObjects struct {
	mu   sync.Mutex
	objs map[string]any
}

func (l *lastObjects) handler() cache.ResourceEventHandler {
	set := func(obj any) {
		o := obj.(dynamicinformer.Object)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.objs[o.GetName()+"@"+o.GetResourceVersion()] = obj
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: set, UpdateFunc: func(_, n any) { set(n) }}
}

func (l *lastObjects) get(key string) any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.objs[key]
}

// In the compact mode, two handlers of objects are given one object per version of a cached
// object (decoded once), as client-go's informers give their one stored object to every
// handler; a handler alone gets objects decoded for it.
func TestCompactHandlersShareObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := seedConfigMaps(t, 2)
	f, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Namespace: ns, Logger: (&testsupport.Lines{}).Logger(0)},
		dynamicinformer.CompactOptions{})
	require.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); f.Shutdown() }()
	require.NoError(t, f.Start(fctx))
	inf, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)

	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	alone := &lastObjects{objs: map[string]any{}}
	reg, err := inf.AddEventHandler(alone.handler())
	require.NoError(t, err)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), reg.HasSynced))
	solo, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "solo"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	soloKey := "solo@" + solo.ResourceVersion
	testenv.Eventually(t, 10*time.Second, func() bool { return alone.get(soloKey) != nil }, "the handler did not see the new object")

	other := &lastObjects{objs: map[string]any{}}
	reg, err = inf.AddEventHandler(other.handler())
	require.NoError(t, err)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), reg.HasSynced))
	require.NotNil(t, other.get(soloKey), "replayed to the new handler")
	assert.NotSame(t, alone.get(soloKey), other.get(soloKey), "decoded for the handler alone, then for the new one")

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cm.Data = map[string]string{"k": "v"}
	cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	key := "new@" + cm.ResourceVersion
	testenv.Eventually(t, 10*time.Second, func() bool { return alone.get(key) != nil && other.get(key) != nil },
		"handlers did not see the update")
	assert.Same(t, alone.get(key), other.get(key), "two handlers, one object")
	assert.Equal(t, "v", other.get(key).(dynamicinformer.Object).Object["data"].(map[string]any)["k"])
}
