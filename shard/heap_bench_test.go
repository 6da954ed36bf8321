package shard

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testsupport"
)

// BenchmarkHandlerHeap measures what a shard Informer's handler keeps per object on a
// compact factory: the heap after 2,000 ConfigMaps of about 2 KB are held and delivered,
// with a handler and without one, in the same process.
//
//	go test -run '^$' -bench HandlerHeap -benchtime 3x ./shard/
func BenchmarkHandlerHeap(b *testing.B) {
	cp := plain
	ns := cp.Namespace(b)
	const n = 2000
	cms := cp.Clientset(b).CoreV1().ConfigMaps(ns)
	value := strings.Repeat("x", 200)
	testsupport.CreateN(b, n, func(i int) error {
		data := map[string]string{}
		for k := range 8 {
			data[fmt.Sprint("key-", k)] = value
		}
		_, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i),
			Labels: map[string]string{"app": "bench"}}, Data: data}, metav1.CreateOptions{})
		return err
	})
	heap := func(withHandler bool) uint64 {
		f, _, _ := testsupport.StartFactory(b, cp.AdminConfig(), informer.Options[dynamicinformer.Object]{},
			func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
				return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
			})
		defer f.Shutdown()
		m, err := New(Options{Client: cp.Clientset(b), Namespace: ns, Group: fmt.Sprint("heap-", time.Now().UnixNano()), Identity: "only",
			LeaseDuration: testLease, RenewPeriod: testRenew})
		if err != nil {
			b.Fatal(err)
		}
		var adds sync.WaitGroup
		adds.Add(n)
		o := InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}}
		if withHandler {
			o.Handler = cache.ResourceEventHandlerFuncs{AddFunc: func(any) { adds.Done() }}
		}
		inf, err := NewInformer(m, f, "configmaps", o)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var run sync.WaitGroup
		run.Add(2)
		go func() { defer run.Done(); _ = m.Run(ctx) }()
		go func() { defer run.Done(); _ = inf.Run(ctx) }()
		for !inf.Settled() {
			time.Sleep(10 * time.Millisecond)
		}
		if withHandler {
			adds.Wait()
		}
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		cancel()
		run.Wait()
		return ms.HeapAlloc
	}
	var with, without uint64
	for b.Loop() {
		without += heap(false)
		with += heap(true)
	}
	b.ReportMetric((float64(with)-float64(without))/float64(b.N)/n, "handler-B/object")
	b.ReportMetric(float64(without)/float64(b.N)/n, "heap-without-B/object")
}
