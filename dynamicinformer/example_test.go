package dynamicinformer_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
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
		var se *dynamicinformer.SyncError
		if errors.As(err, &se) {
			fmt.Println("not synced:", se.Reasons()) // e.g. map[deployments.apps:Forbidden]
		}
		return
	}
	for _, d := range inf.List(labels.SelectorFromSet(labels.Set{"app": "web"})) {
		fmt.Println(d.GetName()) // shared: read-only
	}
}
