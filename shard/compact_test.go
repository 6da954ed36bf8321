package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// shardEvents records a shard handler's events as "kind name data".
type shardEvents struct {
	mu  sync.Mutex
	got []string
}

func (e *shardEvents) add(kind, name, data string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, kind+" "+name+" "+data)
}

func (e *shardEvents) events() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// TestShardHandlersInCompactMode: on a compact factory, a shard Informer's handler of
// objects gets decoded objects and an ItemHandlerFuncs gets Items, for adds, updates and
// deletes alike (the dispatcher keeps Items, not decoded copies).
func TestShardHandlersInCompactMode(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	f := startFactory(t, cp, informer.Options[dynamicinformer.Object]{},
		func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
		})
	objs, items := &shardEvents{}, &shardEvents{}
	data := func(u *unstructured.Unstructured) string {
		v, _, _ := unstructured.NestedString(u.Object, "data", "v")
		return v
	}
	objHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { u := o.(*unstructured.Unstructured); objs.add("add", u.GetName(), data(u)) },
		UpdateFunc: func(_, o any) { u := o.(*unstructured.Unstructured); objs.add("update", u.GetName(), data(u)) },
		DeleteFunc: func(o any) { u := o.(*unstructured.Unstructured); objs.add("delete", u.GetName(), data(u)) },
	}
	itemData := func(it informer.Item[dynamicinformer.Object]) string {
		var cm struct {
			Data map[string]string `json:"data"`
		}
		assert.NoError(t, it.DecodeInto(&cm))
		return cm.Data["v"]
	}
	itemHandler := informer.ItemHandlerFuncs[dynamicinformer.Object]{
		AddFunc: func(it informer.Item[dynamicinformer.Object], _ bool) {
			assert.NotNil(t, it.Raw(), "the stored bytes")
			items.add("add", it.Name(), itemData(it))
		},
		UpdateFunc: func(_, it informer.Item[dynamicinformer.Object]) { items.add("update", it.Name(), itemData(it)) },
		DeleteFunc: func(it informer.Item[dynamicinformer.Object], _ bool) { items.add("delete", it.Name(), itemData(it)) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var infs []*Informer[dynamicinformer.Object]
	for i, h := range []cache.ResourceEventHandler{objHandler, itemHandler} {
		m, err := New(Options{Client: cp.Clientset(t), Namespace: ns, Group: "compact-" + string(rune('a'+i)), Identity: "only",
			LeaseDuration: testLease, RenewPeriod: testRenew})
		require.NoError(t, err)
		inf, err := NewInformer(m, f, "configmaps", InformerOptions{Handler: h, Options: []informer.Option{informer.WithNamespace(ns)}})
		require.NoError(t, err)
		infs = append(infs, inf)
		wg.Add(2)
		go func() { defer wg.Done(); _ = m.Run(ctx) }()
		go func() { defer wg.Done(); _ = inf.Run(ctx) }()
	}
	defer wg.Wait()
	defer cancel()
	testenv.Eventually(t, 30*time.Second, func() bool { return infs[0].Settled() && infs[1].Settled() }, "the informers hold their shards")

	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cm.Data["v"] = "2"
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, cms.Delete(ctx, "cm", metav1.DeleteOptions{}))
	want := []string{"add cm 1", "update cm 2", "delete cm 2"}
	for _, e := range []*shardEvents{objs, items} {
		testenv.Eventually(t, 30*time.Second, func() bool { return len(e.events()) >= len(want) }, "events: %v", e.events())
		assert.Equal(t, want, e.events())
	}
}
