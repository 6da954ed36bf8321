package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/internal/watchfwd"
)

// NewDynamicMode returns the storage mode of dynamicinformer's client-go variant: JSON lists
// and watches through the dynamic client, *unstructured.Unstructured stored as received
// (after the transform).
func NewDynamicMode(client dynamic.Interface, sc Config) Mode {
	return &clientMode{name: "dynamic", example: &unstructured.Unstructured{}, keep: sc.KeepManagedFields,
		lw: func(t Target) cache.ListerWatcherWithContext {
			var ri dynamic.ResourceInterface = client.Resource(t.Resource.GVR)
			if t.Resource.Namespaced && t.Namespace != "" {
				ri = client.Resource(t.Resource.GVR).Namespace(t.Namespace)
			}
			return clientListerWatcher(t, ri.List, ri.Watch, client)
		}}
}

// NewMetadataMode returns the storage mode of metadataonly: a metadata client (protobuf
// PartialObjectMetadata, NewMetadataClient), objects stored as received. It writes snapshots
// (Snapshotter, metadata_snapshot.go) and probes the server's resourceVersion
// (ResourceVersionProber).
func NewMetadataMode(client MetadataClient, sc Config) Mode {
	m := &metadataMode{clientMode: clientMode{name: "metadata", example: &metav1.PartialObjectMetadata{}, keep: sc.KeepManagedFields}}
	m.lw = func(t Target) cache.ListerWatcherWithContext {
		gvr, ns := t.Resource.GVR, ""
		if t.Resource.Namespaced {
			ns = t.Namespace
		}
		kind := kindSetter(t.Resource.GVK)
		list := func(ctx context.Context, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
			l, err := client.List(ctx, gvr, ns, o)
			if err == nil {
				for i := range l.Items {
					kind(&l.Items[i])
				}
			}
			return l, err
		}
		watchFn := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := client.Watch(ctx, gvr, ns, o)
			if err != nil {
				return nil, err
			}
			return newKindWatch(w, kind), nil
		}
		return &probingLW{ListerWatcherWithContext: clientListerWatcher(t, list, watchFn, client), watch: watchFn}
	}
	return m
}

// kindSetter returns a function that gives an object of the resource its kind and
// apiVersion when the server sent none, or PartialObjectMetadata's: objects decoded from
// protobuf, and from JSON watch events, come without them, while the items of a JSON list
// (from a server without protobuf) carry meta.k8s.io/v1 PartialObjectMetadata; JSONPath
// reads .kind and .apiVersion (indexfuncs' metadata map) of every object alike.
func kindSetter(gvk schema.GroupVersionKind) func(*metav1.PartialObjectMetadata) {
	apiVersion := gvk.GroupVersion().String() // one string shared by every object
	return func(p *metav1.PartialObjectMetadata) {
		partial := p.Kind == "PartialObjectMetadata" && p.APIVersion == metadataGV.String()
		if (p.Kind == "" || partial) && gvk.Kind != "" {
			p.APIVersion, p.Kind = apiVersion, gvk.Kind
		}
	}
}

// newKindWatch passes a watch's events on, each object given its kind (kindSetter) on the
// way.
func newKindWatch(in watch.Interface, kind func(*metav1.PartialObjectMetadata)) watch.Interface {
	return watchfwd.New(in, watchfwd.Options{Keep: func(ev watch.Event) bool {
		if p, ok := ev.Object.(*metav1.PartialObjectMetadata); ok && ev.Type != watch.Bookmark {
			kind(p)
		}
		return true
	}})
}

// clientMode is a mode on a client-go client that decodes: objects are stored as received.
type clientMode struct {
	name    string
	example runtime.Object
	keep    bool
	lw      func(Target) cache.ListerWatcherWithContext
}

func (m *clientMode) Name() string                                          { return m.name }
func (m *clientMode) ExampleObject() runtime.Object                         { return m.example }
func (m *clientMode) Object(item any) (any, error)                          { return item, nil }
func (m *clientMode) ListerWatcher(t Target) cache.ListerWatcherWithContext { return m.lw(t) }

func (m *clientMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	return IdentityTransform(m.keep, user)
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
