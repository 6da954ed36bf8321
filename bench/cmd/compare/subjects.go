package main

// kindex subjects. The built-in subjects (the apiserver LIST floors and the client-go
// informers) register themselves in bench/harness; kindex's front ends register here. The
// child process that measures a subject is this same binary, so a subject registered here is
// found by name in the child too.

import (
	"context"
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

func init() {
	register("kindex-dynamic", func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Namespace: ns})
	})
	compact := func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns}, dynamicinformer.CompactOptions{})
	}
	register("kindex-compact", compact)
	// The compact mode with each object zstd-compressed against its informer's dictionary
	// (CompactOptions.Compress): the sync cost of compression, and its memory.
	register("kindex-compact-compressed", func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns}, dynamicinformer.CompactOptions{Compress: true})
	})
	// The compact mode with client-go's watch-list instead of its streamed LIST: the
	// apiserver CPU column shows why the LIST is the default.
	register("kindex-compact-watchlist", func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns}, dynamicinformer.CompactOptions{WatchList: true})
	})
	// The compact mode projected to what three typical indexes read (node, phase, images).
	register("kindex-compact-projected", func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns},
			dynamicinformer.CompactOptions{Projection: []string{"{.spec.nodeName}", "{.status.phase}", "{.spec.containers[*].image}"}})
	})
	register("kindex-metadata", func(cfg *rest.Config, ns string) (*metadataonly.Factory, error) {
		return metadataonly.NewFactory(cfg, metadataonly.Options{Namespace: ns})
	})
	// Optional: the compact mode, then one read of the whole cache once synced (as a program
	// that checks its cache by counting a List does), with List (every object decoded, all
	// held at once until the count is taken) or with ListItems (nothing decoded). The peak
	// RSS column shows what such a read costs beside the sync.
	// Optional: the compact mode with a handler of decoded objects, synced once the handler
	// has had every initial add: the garbage of the objects decoded for it, paced by kindex
	// (the default) or left to the runtime (Options.DisableStartGC).
	harness.Register(optionalSubject{handlerSubject("kindex-compact-handler", 1, compact)})
	// Two handlers of decoded objects, which share the object decoded for each Pod.
	harness.Register(optionalSubject{handlerSubject("kindex-compact-2handlers", 2, compact)})
	harness.Register(optionalSubject{handlerSubject("kindex-compact-handler-nogc", 1, func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns, DisableStartGC: true}, dynamicinformer.CompactOptions{})
	})})
	harness.Register(optionalSubject{subject("kindex-compact-list", compact, func(_ context.Context, inf *dynamicinformer.Informer) (int, error) {
		all, err := inf.List(nil)
		return len(all), err
	})})
	harness.Register(optionalSubject{subject("kindex-compact-listitems", compact, func(_ context.Context, inf *dynamicinformer.Informer) (int, error) {
		all, err := inf.ListItems("")
		return len(all), err
	})})
}

// optionalSubject keeps a subject out of the default list (harness.Optional).
type optionalSubject struct{ harness.SubjectFunc }

func (optionalSubject) Optional() bool { return true }

// register adds a subject that starts a factory, syncs one informer for the resource and
// keeps it until stopped.
func register[T informer.Object](name string, newFactory func(*rest.Config, string) (*informer.Factory[T], error)) {
	harness.Register(subject(name, newFactory, func(_ context.Context, inf *informer.Informer[T]) (int, error) {
		return inf.Status().Objects, nil
	}))
}

// subject is register's subject, whose count, once synced, is read's answer; opts are the
// informer's options.
func subject[T informer.Object](name string, newFactory func(*rest.Config, string) (*informer.Factory[T], error),
	read func(context.Context, *informer.Informer[T]) (int, error), opts ...informer.Option) harness.SubjectFunc {
	return harness.SubjectFunc{
		SubjectName: name,
		SyncFunc: func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
			f, err := newFactory(cfg, ns)
			if err != nil {
				return 0, nil, err
			}
			inf, stop, err := startInformer(ctx, f, gvr, opts...)
			if err != nil {
				return 0, nil, err
			}
			release := func() { inf.Release(); stop() }
			if err := inf.WaitForSync(ctx); err != nil {
				release()
				return 0, nil, err
			}
			n, err := read(ctx, inf)
			if err != nil {
				release()
				return 0, nil, err
			}
			return n, release, nil
		},
	}
}

// startInformer starts f and returns its informer for gvr, not yet synced, and the function
// that stops the factory (the caller releases the informer first).
func startInformer[T informer.Object](ctx context.Context, f *informer.Factory[T], gvr schema.GroupVersionResource, opts ...informer.Option) (*informer.Informer[T], func(), error) {
	fctx, cancel := context.WithCancel(context.Background())
	stop := func() { cancel(); f.Shutdown() }
	if err := f.Start(fctx); err != nil {
		stop()
		return nil, nil, err
	}
	inf, err := f.InformerForGVR(ctx, gvr, opts...)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return inf, stop, nil
}

// handlerSubject is register's subject with a handler of objects that counts its adds; it
// is synced once the handler has had every object of the initial list. (Each measurement
// runs in a process of its own: one count per process.)
func handlerSubject[T informer.Object](name string, handlers int, newFactory func(*rest.Config, string) (*informer.Factory[T], error)) harness.SubjectFunc {
	var adds atomic.Int64
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { adds.Add(1) }}
	opts := make([]informer.Option, handlers)
	for i := range opts {
		opts[i] = informer.WithEventHandler(h)
	}
	return subject(name, newFactory, func(ctx context.Context, inf *informer.Informer[T]) (int, error) {
		regs := inf.Registrations()
		if len(regs) != handlers {
			return 0, fmt.Errorf("%d registrations, want %d", len(regs), handlers)
		}
		for _, reg := range regs {
			if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
				return 0, ctx.Err()
			}
		}
		n := inf.Status().Objects
		if int(adds.Load()) != handlers*n {
			return 0, fmt.Errorf("handlers: %d adds for %d objects", adds.Load(), n)
		}
		return n, nil
	}, opts...)
}
