package dynamicinformer_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// Watch a resource the user named, wait for it with a deadline, and query the cache.
func ExampleNewFactory() {
	cfg, err := rest.InClusterConfig() // or clientcmd, from a kubeconfig
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Namespace: "default"})
	if err != nil {
		panic(err)
	}
	if err := f.Start(ctx); err != nil { // returns at once; everything stops with ctx
		panic(err)
	}
	defer f.Shutdown()

	inf, err := f.Informer(ctx, "deploy")
	if err != nil {
		panic(err)
	}
	defer inf.Release()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { fmt.Println("changed:", obj.(dynamicinformer.Object).GetName()) },
	}); err != nil {
		panic(err)
	}
	wait, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := inf.WaitForSync(wait); err != nil {
		var se *informer.SyncError
		if errors.As(err, &se) {
			fmt.Println("not synced:", se.Reasons()) // e.g. map[deployments.apps:Forbidden]
		}
		return
	}
	deps, err := inf.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	if err != nil {
		panic(err)
	}
	for _, d := range deps {
		fmt.Println(d.GetName()) // shared: read-only
	}
}

// JSONPath indexes registered at run time, and a query over them (README.md's short example
// runs the same steps as a complete program against make demo's widgets).
func ExampleInformer_Query() {
	ctx := context.Background()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		panic(err)
	}
	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{})
	if err != nil {
		panic(err)
	}
	if err := f.Start(ctx); err != nil {
		panic(err)
	}
	defer f.Shutdown()

	inf, err := f.Informer(ctx, "widgets.example.com")
	if err != nil {
		panic(err) // meta.IsNoMatchError(err) for a typo
	}
	defer inf.Release()
	_ = inf.AddIndex("size", "{.spec.size}")
	_ = inf.AddIndex("image", "{.spec.containers[*].image}")
	if err := inf.WaitForSync(ctx); err != nil {
		panic(err)
	}
	res, err := inf.Query(ctx, query.Query{
		Namespace:  "shop",
		Conditions: []query.Condition{query.Gt("size", "2"), query.Eq("image", "nginx:1.27")},
		Limit:      50,
	})
	if err != nil {
		panic(err)
	}
	for _, w := range res.Items {
		fmt.Println(w.GetName())
	}
}

// A handler on the compact cache that decodes only what it reads: an exporter counting Pods
// per node reads one field from each object's stored bytes, and decodes a typed Pod only for
// the ones it reports.
func ExampleNewCompactFactory_itemHandler() {
	ctx := context.Background()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		panic(err)
	}
	f, err := dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{}, dynamicinformer.CompactOptions{})
	if err != nil {
		panic(err)
	}
	if err := f.Start(ctx); err != nil {
		panic(err)
	}
	defer f.Shutdown()

	nodeName := jsonpath.MustCompile("{.spec.nodeName}")
	perNode := map[string]int{} // handlers are called on one goroutine, in order
	node := func(it informer.Item[dynamicinformer.Object]) string {
		vals, err := it.Eval(nodeName) // on the bytes: no map, no decode
		if err != nil || len(vals) == 0 {
			return ""
		}
		return vals[0].String()
	}
	inf, err := f.Informer(ctx, "pods", informer.WithEventHandler(informer.ItemHandlerFuncs[dynamicinformer.Object]{
		AddFunc: func(it informer.Item[dynamicinformer.Object], _ bool) {
			perNode[node(it)]++
			if it.Labels()["tier"] == "critical" {
				var pod corev1.Pod
				if err := it.DecodeInto(&pod); err == nil { // straight into the typed struct
					fmt.Println(pod.Name, pod.Status.Phase)
				}
			}
		},
		UpdateFunc: func(old, cur informer.Item[dynamicinformer.Object]) {
			perNode[node(old)]--
			perNode[node(cur)]++
		},
		DeleteFunc: func(it informer.Item[dynamicinformer.Object], _ bool) { perNode[node(it)]-- },
	}))
	if err != nil {
		panic(err)
	}
	defer inf.Release()
	if err := inf.WaitForSync(ctx); err != nil {
		panic(err)
	}
}
