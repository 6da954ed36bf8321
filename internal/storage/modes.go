package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// NewDynamicMode returns the storage mode of dynamicinformer's client-go variant: JSON lists
// and watches through the dynamic client, *unstructured.Unstructured stored as received
// (after the transform).
func NewDynamicMode(client dynamic.Interface, sc Config) Mode {
	return &dynamicMode{client: client, keep: sc.KeepManagedFields}
}

type dynamicMode struct {
	client dynamic.Interface
	keep   bool
}

func (m *dynamicMode) Name() string                  { return "dynamic" }
func (m *dynamicMode) ExampleObject() runtime.Object { return &unstructured.Unstructured{} }
func (m *dynamicMode) Object(item any) (any, error)  { return item, nil }

func (m *dynamicMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	return IdentityTransform(m.keep, user)
}

func (m *dynamicMode) ListerWatcher(t Target) cache.ListerWatcherWithContext {
	var ri dynamic.ResourceInterface = m.client.Resource(t.Resource.GVR)
	if t.Resource.Namespaced && t.Namespace != "" {
		ri = m.client.Resource(t.Resource.GVR).Namespace(t.Namespace)
	}
	return clientListerWatcher(t, ri.List, ri.Watch, m.client)
}

// NewMetadataMode returns the storage mode of metadataonly: the metadata client (protobuf
// PartialObjectMetadata), objects stored as received.
func NewMetadataMode(client metadata.Interface, sc Config) Mode {
	return &metadataMode{client: client, keep: sc.KeepManagedFields}
}

type metadataMode struct {
	client metadata.Interface
	keep   bool
}

func (m *metadataMode) Name() string                  { return "metadata" }
func (m *metadataMode) ExampleObject() runtime.Object { return &metav1.PartialObjectMetadata{} }
func (m *metadataMode) Object(item any) (any, error)  { return item, nil }

func (m *metadataMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	return IdentityTransform(m.keep, user)
}

func (m *metadataMode) ListerWatcher(t Target) cache.ListerWatcherWithContext {
	var ri metadata.ResourceInterface = m.client.Resource(t.Resource.GVR)
	if t.Resource.Namespaced && t.Namespace != "" {
		ri = m.client.Resource(t.Resource.GVR).Namespace(t.Namespace)
	}
	return clientListerWatcher(t, ri.List, ri.Watch, m.client)
}

// clientListerWatcher lists and watches one target through a client-go client's List and
// Watch, with the target's selectors applied, keeping the client's watch-list support.
func clientListerWatcher[L runtime.Object](t Target,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	client any) cache.ListerWatcherWithContext {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			t.Apply(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			t.Apply(&o)
			return watchFn(ctx, o)
		},
	}
	return asContextLW(cache.ToListWatcherWithWatchListSemantics(lw, client))
}

// IdentityTransform is the transform of a mode that stores what the client decoded: strip
// managedFields unless keep, then user.
func IdentityTransform(keep bool, user cache.TransformFunc) cache.TransformFunc {
	var strip cache.TransformFunc
	if !keep {
		strip = StripManagedFields
	}
	return ComposeTransforms(strip, user)
}

// asContextLW keeps the IsWatchListSemanticsUnSupported answer of lw while exposing the
// context-aware methods (cache.ToListWatcherWithWatchListSemantics returns the old
// interface type although its value has both).
func asContextLW(lw cache.ListerWatcher) cache.ListerWatcherWithContext {
	if c, ok := lw.(cache.ListerWatcherWithContext); ok {
		return c
	}
	return cache.ToListerWatcherWithContext(lw)
}
