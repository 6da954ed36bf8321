package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// syncDynamic runs client-go's dynamic informer for gvr, as a program would get it from
// dynamicinformer, with watch-list as client-go's feature gates decide (on by default).
func syncDynamic(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string, transform cache.TransformFunc) (int, func(), error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, nil, err
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(client, gvr, ns, 0, cache.Indexers{}, nil).Informer()
	if transform != nil {
		if err := inf.SetTransform(transform); err != nil {
			return 0, nil, err
		}
	}
	return runInformer(ctx, inf)
}

// syncMetadata runs client-go's metadata informer, which asks for protobuf.
func syncMetadata(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return 0, nil, err
	}
	return runInformer(ctx, metadatainformer.NewFilteredMetadataInformer(client, gvr, ns, 0, cache.Indexers{}, nil).Informer())
}

// runInformer runs inf until stop and returns once it has synced.
func runInformer(ctx context.Context, inf cache.SharedIndexInformer) (int, func(), error) {
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(runCtx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	select {
	case <-inf.HasSyncedChecker().Done():
	case <-ctx.Done():
		stop()
		return 0, nil, fmt.Errorf("informer did not sync: %w", context.Cause(ctx))
	}
	return len(inf.GetStore().ListKeys()), stop, nil
}

func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// withoutWatchList turns off client-go's WatchListClient gate, so that the reflector falls
// back to paginated LISTs followed by a WATCH (client-go before 0.35).
type withoutWatchList struct{ clientfeatures.Gates }

func (g withoutWatchList) Enabled(f clientfeatures.Feature) bool {
	return f != clientfeatures.WatchListClient && g.Gates.Enabled(f)
}
