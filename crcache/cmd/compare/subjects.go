package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/crcache"
)

const (
	subjectCRDefault    = "controller-runtime"
	subjectCRStripMF    = "controller-runtime-strip-mf"
	subjectCrcache      = "crcache"
	subjectCrcacheStrip = "crcache-strip-mf"
	subjectCrcachePlain = "crcache-strip-mf-uncompressed"
)

// defaultSubjects: the apiserver's LIST (the floor of any sync, from bench/harness),
// controller-runtime's cache with and without managedFields, and crcache the same two ways
// (compressed, its default), and without managedFields uncompressed.
var defaultSubjects = []string{harness.SubjectListJSON, subjectCRDefault, subjectCRStripMF, subjectCrcache, subjectCrcacheStrip, subjectCrcachePlain}

func init() {
	harness.Register(harness.SubjectFunc{SubjectName: subjectCRDefault, SyncFunc: crSync(nil)})
	harness.Register(harness.SubjectFunc{SubjectName: subjectCRStripMF, SyncFunc: crSync(cache.TransformStripManagedFields())})
	strip := cache.TransformStripManagedFields()
	harness.Register(harness.SubjectFunc{SubjectName: subjectCrcache, SyncFunc: crcacheSync(nil, crcache.Options{})})
	harness.Register(harness.SubjectFunc{SubjectName: subjectCrcacheStrip, SyncFunc: crcacheSync(strip, crcache.Options{})})
	harness.Register(harness.SubjectFunc{SubjectName: subjectCrcachePlain, SyncFunc: crcacheSync(strip, crcache.Options{DisableCompression: true})})
}

// listFor returns the list object a controller would read gvr with: typed when the scheme
// knows the kind (Pods), unstructured otherwise (the seeded custom resources).
func listFor(gvr schema.GroupVersionResource) (client.ObjectList, client.Object) {
	if gvr == harness.PodsGVR {
		return &corev1.PodList{}, &corev1.Pod{}
	}
	gvk := schema.GroupVersionKind{Group: gvr.Group, Version: gvr.Version, Kind: "Database"}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	return l, o
}

// syncCache starts c, waits for the informer of gvr (typed for Pods) and counts what it
// holds: with a List for controller-runtime's cache (without deep copies), from the
// informer's status for crcache (a List would decode every object).
func syncCache(ctx context.Context, c cache.Cache, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(cctx) }()
	stop := func() { cancel(); <-done }
	list, obj := listFor(gvr)
	if _, err := c.GetInformer(ctx, obj); err != nil {
		stop()
		return 0, nil, err
	}
	if !c.WaitForCacheSync(ctx) {
		stop()
		return 0, nil, fmt.Errorf("cache did not sync")
	}
	if kc, ok := c.(*crcache.Cache); ok {
		n := 0
		for _, s := range kc.Statuses() {
			n += s.Objects
		}
		return n, stop, nil
	}
	if err := c.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		stop()
		return 0, nil, err
	}
	return apimeta.LenList(list), stop, nil
}

// crSync is controller-runtime's default cache (cache.New), restricted to the namespace, with
// an optional default transform.
func crSync(transform func(any) (any, error)) func(context.Context, *rest.Config, schema.GroupVersionResource, string) (int, func(), error) {
	return func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
		c, err := cache.New(cfg, cache.Options{
			Scheme:            scheme.Scheme,
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform:  transform,
		})
		if err != nil {
			return 0, nil, err
		}
		return syncCache(ctx, c, gvr, ns)
	}
}

// crcacheSync is crcache, restricted to the namespace as controller-runtime's is.
func crcacheSync(transform func(any) (any, error), o crcache.Options) func(context.Context, *rest.Config, schema.GroupVersionResource, string) (int, func(), error) {
	return func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
		c, err := crcache.NewCache(cfg, cache.Options{
			Scheme:            scheme.Scheme,
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform:  transform,
		}, o)
		if err != nil {
			return 0, nil, err
		}
		return syncCache(ctx, c, gvr, ns)
	}
}
