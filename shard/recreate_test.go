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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// TestShardHandlerObjectRecreatedDuringRelist: an object deleted and created again under
// the same name while the replica's watch is away (a 410, then a relist that finds the new
// one in its place) reaches the handler as the old one's delete and the new one's add: the
// handler holds only the new one, as the replica does, on both paths.
func TestShardHandlerObjectRecreatedDuringRelist(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
	}{{"server", gated}, {"client", plain}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			ns := cp.Namespace(t)
			cs := cp.Clientset(t)
			pts := cs.CoreV1().PodTemplates(ns)
			create := func() *corev1.PodTemplate {
				pt, err := pts.Create(context.Background(), &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "x"},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
					metav1.CreateOptions{})
				require.NoError(t, err)
				return pt
			}
			old := create()
			f, rec, _ := testsupport.StartFactory(t, cp.AdminConfig(), metadataonly.Options{Logger: (&testsupport.Lines{}).Logger(0)}, metadataonly.NewFactory)
			var mu sync.Mutex
			handled := map[types.UID]bool{}
			set := func(obj any, in bool) {
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				mu.Lock()
				defer mu.Unlock()
				if uid := obj.(*metav1.PartialObjectMetadata).UID; in {
					handled[uid] = true
				} else {
					delete(handled, uid)
				}
			}
			h := cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { set(obj, true) },
				UpdateFunc: func(_, obj any) { set(obj, true) },
				DeleteFunc: func(obj any) { set(obj, false) },
			}
			handledNow := func() map[types.UID]bool {
				mu.Lock()
				defer mu.Unlock()
				out := map[types.UID]bool{}
				for u := range handled {
					out[u] = true
				}
				return out
			}
			m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "a", LeaseDuration: testLease, RenewPeriod: testRenew})
			require.NoError(t, err)
			inf, err := NewInformer(m, f, "podtemplates", InformerOptions{Handler: h, Options: []informer.Option{informer.WithNamespace(ns)}})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); _ = m.Run(ctx) }()
			go func() { defer wg.Done(); _ = inf.Run(ctx) }()
			defer func() { cancel(); wg.Wait() }()
			require.Eventually(t, func() bool { return inf.Settled() && handledNow()[old.UID] }, 20*time.Second, 20*time.Millisecond)

			// The watch goes away; x is deleted and created again; etcd is compacted past what
			// the informer knows, so that its next watch gets a 410 and it lists again.
			path := "/api/v1/namespaces/" + ns + "/podtemplates"
			rec.Hold(path)
			testenv.Eventually(t, 30*time.Second, func() bool { return rec.Cut(path) > 0 }, "the watch cut")
			require.NoError(t, pts.Delete(context.Background(), "x", metav1.DeleteOptions{}))
			recreated := create()
			_, err = cp.CompactEtcd(context.Background())
			require.NoError(t, err)
			testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(context.Background(), pts.Watch, old.ResourceVersion) },
				"the apiserver answers 410 for the informer's resourceVersion")
			rec.Release()

			want := map[types.UID]bool{recreated.UID: true}
			require.Eventually(t, func() bool {
				objs, err := inf.List()
				return err == nil && assert.ObjectsAreEqual(want, uidSet(objs))
			}, 20*time.Second, 20*time.Millisecond, "the replica holds the new x")
			assert.Eventually(t, func() bool { return assert.ObjectsAreEqual(want, handledNow()) }, 5*time.Second, 20*time.Millisecond,
				"the handler holds the new x only: %v", handledNow())
		})
	}
}
