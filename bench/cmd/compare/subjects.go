package main

// kindex subjects. The built-in subjects (the apiserver LIST floors and the client-go
// informers) register themselves in bench/harness; kindex's front ends register here. The
// child process that measures a subject is this same binary, so a subject registered here is
// found by name in the child too.

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/metadataonly"
)

func init() {
	harness.Register(harness.SubjectFunc{
		SubjectName: "kindex-dynamic",
		SyncFunc: func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
			f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Namespace: ns})
			if err != nil {
				return 0, nil, err
			}
			return syncKindex(ctx, f.Start, f.Shutdown, func(ctx context.Context) (int, func(), error) {
				inf, err := f.InformerForGVR(ctx, gvr)
				if err != nil {
					return 0, nil, err
				}
				if err := inf.WaitForSync(ctx); err != nil {
					return 0, nil, err
				}
				return inf.Status().Objects, inf.Release, nil
			})
		},
	})
	harness.Register(harness.SubjectFunc{
		SubjectName: "kindex-metadata",
		SyncFunc: func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
			f, err := metadataonly.NewFactory(cfg, metadataonly.Options{Namespace: ns})
			if err != nil {
				return 0, nil, err
			}
			return syncKindex(ctx, f.Start, f.Shutdown, func(ctx context.Context) (int, func(), error) {
				inf, err := f.InformerForGVR(ctx, gvr)
				if err != nil {
					return 0, nil, err
				}
				if err := inf.WaitForSync(ctx); err != nil {
					return 0, nil, err
				}
				return inf.Status().Objects, inf.Release, nil
			})
		},
	})
}

// syncKindex starts a factory, syncs one informer through acquire and returns a stop function
// that releases the informer and shuts the factory down.
func syncKindex(ctx context.Context, start func(context.Context) error, shutdown func(),
	acquire func(context.Context) (int, func(), error)) (int, func(), error) {
	fctx, cancel := context.WithCancel(context.Background())
	if err := start(fctx); err != nil {
		cancel()
		return 0, nil, err
	}
	n, release, err := acquire(ctx)
	if err != nil {
		cancel()
		shutdown()
		return 0, nil, err
	}
	return n, func() {
		release()
		cancel()
		shutdown()
	}, nil
}
