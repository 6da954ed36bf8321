package main

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/crcache"
)

// What a manager with a few controllers asks of its cache for one type: field indexes
// registered with IndexField (a Pod's node, phase and controlling owner, as controllers
// commonly index them) and an event handler per controller watching the type, all before
// the cache starts. The subjects sync Pods that way and count as synced once every
// handler has been handed the initial objects.
const (
	subjectCRControllers      = "controller-runtime-controllers"
	subjectCrcacheControllers = "crcache-controllers"
	controllerHandlers        = 2
)

func init() {
	strip := cache.TransformStripManagedFields()
	harness.Register(harness.SubjectFunc{SubjectName: subjectCRControllers, SyncFunc: controllersSync(func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		return cache.New(cfg, opts)
	}, strip)})
	harness.Register(harness.SubjectFunc{SubjectName: subjectCrcacheControllers, SyncFunc: controllersSync(func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		return crcache.NewCache(cfg, opts, crcache.Options{})
	}, strip)})
}

// podFieldIndexes are the IndexField indexes of the controllers subjects.
var podFieldIndexes = map[string]client.IndexerFunc{
	"spec.nodeName": func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} },
	"status.phase":  func(o client.Object) []string { return []string{string(o.(*corev1.Pod).Status.Phase)} },
	"metadata.controller": func(o client.Object) []string {
		for _, r := range o.GetOwnerReferences() {
			if r.Controller != nil && *r.Controller {
				return []string{string(r.UID)}
			}
		}
		return nil
	},
}

func controllersSync(newCache func(*rest.Config, cache.Options) (cache.Cache, error), transform func(any) (any, error)) func(context.Context, *rest.Config, schema.GroupVersionResource, string) (int, func(), error) {
	return func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
		if gvr != harness.PodsGVR {
			return 0, nil, fmt.Errorf("the controllers subjects sync Pods only")
		}
		c, err := newCache(cfg, cache.Options{
			Scheme:            scheme.Scheme,
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform:  transform,
		})
		if err != nil {
			return 0, nil, err
		}
		for field, fn := range podFieldIndexes {
			if err := c.IndexField(ctx, &corev1.Pod{}, field, fn); err != nil {
				return 0, nil, err
			}
		}
		inf, err := c.GetInformer(ctx, &corev1.Pod{})
		if err != nil {
			return 0, nil, err
		}
		var seen atomic.Int64
		var regs []toolscache.ResourceEventHandlerRegistration
		for range controllerHandlers {
			reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc: func(obj any) {
					if p, ok := obj.(*corev1.Pod); ok && p.Name != "" {
						seen.Add(1)
					}
				},
			})
			if err != nil {
				return 0, nil, err
			}
			regs = append(regs, reg)
		}
		n, stop, err := syncCache(ctx, c, gvr, ns)
		if err != nil {
			return 0, nil, err
		}
		for _, reg := range regs {
			if !toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
				stop()
				return 0, nil, fmt.Errorf("handler did not sync")
			}
		}
		if got := seen.Load(); got != int64(n*controllerHandlers) {
			stop()
			return 0, nil, fmt.Errorf("handlers saw %d adds, want %d", got, n*controllerHandlers)
		}
		return n, stop, nil
	}
}
