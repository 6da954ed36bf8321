package metadataonly_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// A garbage-collector-style consumer: the metadata of every listable resource, following
// CRDs as they come and go, with one handler per resource.
func ExampleFactory_WatchAll() {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := metadataonly.NewFactory(cfg, metadataonly.Options{})
	if err != nil {
		panic(err)
	}
	if err := f.Start(ctx); err != nil {
		panic(err)
	}
	defer f.Shutdown()
	all, err := f.WatchAll(ctx, discovery.Filter{ExcludeGroups: []string{"events.k8s.io"}})
	if err != nil {
		panic(err)
	}
	if _, err := all.AddEventHandler(func(res discovery.Resource) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			o := obj.(metadataonly.Object)
			for _, ref := range o.OwnerReferences {
				fmt.Printf("%s %s/%s is owned by %s\n", res.GVR.Resource, o.Namespace, o.Name, ref.UID)
			}
		}}
	}); err != nil {
		panic(err)
	}
	unsubscribe, _ := f.SubscribeStatus(func(st informer.Status) {
		if st.Phase == informer.PhaseParked {
			fmt.Println("parked:", st.Key, st.Reason)
		}
	})
	defer unsubscribe()
	<-ctx.Done()
}
