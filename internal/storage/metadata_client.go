package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/internal/pbcut"
)

// MetadataClient lists and watches the PartialObjectMetadata of one resource, in one
// namespace or ("") all: what the metadata-only mode needs of a metadata client.
type MetadataClient interface {
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
	Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, o metav1.ListOptions) (watch.Interface, error)
}

// NewMetadataClient returns the metadata-only mode's client: the requests of client-go's
// metadata client (protobuf PartialObjectMetadata, JSON from servers without it), through a
// REST client whose protobuf decoder removes managedFields from the bytes before decoding
// them unless keepManagedFields (internal/pbcut), and decodes without the copies client-go
// makes (metadataSerializer). client-go's metadata client takes no serializer of the
// caller's, hence this client of its own.
func NewMetadataClient(cfg *rest.Config, keepManagedFields bool) (MetadataClient, error) {
	cfg = metadata.ConfigFor(cfg)
	cfg.NegotiatedSerializer = newMetadataSerializer(cfg.NegotiatedSerializer, !keepManagedFields)
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.APIPath = "/never-used" // requests give absolute paths
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &restMetadataClient{rc: rc}, nil
}

// MetadataClientFrom adapts a client-go metadata client (a fake one in tests), keeping its
// answer to whether it supports watch-list semantics.
func MetadataClientFrom(c metadata.Interface) MetadataClient { return metadataAdapter{c} }

type metadataAdapter struct{ c metadata.Interface }

func (a metadataAdapter) resource(gvr schema.GroupVersionResource, ns string) metadata.ResourceInterface {
	if ns == "" {
		return a.c.Resource(gvr)
	}
	return a.c.Resource(gvr).Namespace(ns)
}

func (a metadataAdapter) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return a.resource(gvr, ns).List(ctx, o)
}

func (a metadataAdapter) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (watch.Interface, error) {
	return a.resource(gvr, ns).Watch(ctx, o)
}

func (a metadataAdapter) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(a.c)
}

// restMetadataClient sends the requests client-go's metadata client sends.
type restMetadataClient struct{ rc *rest.RESTClient }

const (
	acceptMetadataList = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	acceptMetadata     = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)

func (c *restMetadataClient) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	res := c.rc.Get().AbsPath(ResourcePath(gvr, ns)...).SetHeader("Accept", acceptMetadataList).
		SpecificallyVersionedParams(&o, ParameterCodec, ParamsVersion).Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	obj, err := res.Get()
	if runtime.IsNotRegisteredError(err) {
		// A server that answered with something else as JSON: read its metadata, as
		// client-go's metadata client does.
		raw, err := res.Raw()
		if err != nil {
			return nil, err
		}
		var l metav1.PartialObjectMetadataList
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("decoding %s as PartialObjectMetadataList: %w", gvr, err)
		}
		l.TypeMeta = metav1.TypeMeta{}
		return &l, nil
	}
	if err != nil {
		return nil, err
	}
	l, ok := obj.(*metav1.PartialObjectMetadataList)
	if !ok {
		return nil, fmt.Errorf("listing %s: got %T, want PartialObjectMetadataList", gvr, obj)
	}
	return l, nil
}

func (c *restMetadataClient) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (watch.Interface, error) {
	var timeout time.Duration
	if o.TimeoutSeconds != nil {
		timeout = time.Duration(*o.TimeoutSeconds) * time.Second
	}
	o.Watch = true
	return c.rc.Get().AbsPath(ResourcePath(gvr, ns)...).SetHeader("Accept", acceptMetadata).
		SpecificallyVersionedParams(&o, ParameterCodec, ParamsVersion).Timeout(timeout).Watch(ctx)
}

// metadataSerializer is a NegotiatedSerializer for the metadata client's protobuf that
// cuts managedFields from the bytes before decoding them (pbcut; unless they are kept) and
// decodes PartialObjectMetadata and its list without copying the bytes first: the watch
// stream's decoder cuts each event's object in place in its frame buffer and hands a view
// of it on (client-go's decodes the object from the event at once, before the next frame;
// TestCuttingSerializerWatch decodes a stream through client-go's own decoders and would
// see objects overwritten if that changed),
// and the object decoder unmarshals the message inside its envelope directly, as the
// protobuf serializer would after copying it out.
type metadataSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func newMetadataSerializer(s runtime.NegotiatedSerializer, cut bool) *metadataSerializer {
	infos := slices.Clone(s.SupportedMediaTypes())
	for i := range infos {
		if infos[i].MediaType != runtime.ContentTypeProtobuf {
			continue
		}
		infos[i].Serializer = metadataDecoder{infos[i].Serializer, cut}
		if ss := infos[i].StreamSerializer; ss != nil {
			c := *ss
			c.Serializer = eventDecoder{ss.Serializer, cut}
			infos[i].StreamSerializer = &c
		}
	}
	return &metadataSerializer{NegotiatedSerializer: s, infos: infos}
}

func (s *metadataSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

// metadataDecoder decodes a PartialObjectMetadata or PartialObjectMetadataList, without
// its managedFields if cut; anything else, or into a given object, goes to the protobuf
// serializer.
type metadataDecoder struct {
	runtime.Serializer
	cut bool
}

var metadataGV = metav1.SchemeGroupVersion

func (d metadataDecoder) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if d.cut {
		data, _ = pbcut.Cut(data)
	}
	if into != nil {
		return d.Serializer.Decode(data, gvk, into)
	}
	var obj interface {
		runtime.Object
		Unmarshal([]byte) error
	}
	var name string
	kind, msg := pbcut.Message(data)
	switch kind {
	case pbcut.Object:
		obj, name = &metav1.PartialObjectMetadata{}, "PartialObjectMetadata"
	case pbcut.List:
		obj, name = &metav1.PartialObjectMetadataList{}, "PartialObjectMetadataList"
	default:
		return d.Serializer.Decode(data, gvk, into)
	}
	actual := metadataGV.WithKind(name)
	if err := obj.Unmarshal(msg); err != nil {
		return nil, &actual, err
	}
	obj.GetObjectKind().SetGroupVersionKind(actual)
	return obj, &actual, nil
}

// eventDecoder decodes one frame of a protobuf watch stream (a bare metav1.WatchEvent
// message) into a *metav1.WatchEvent whose object is a view of the frame, managedFields cut
// in place if cut; anything else goes to the stream serializer.
type eventDecoder struct {
	runtime.Serializer
	cut bool
}

func (d eventDecoder) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	ev, isEvent := into.(*metav1.WatchEvent)
	typ, obj, ok := pbcut.WatchEvent(data)
	if !isEvent || !ok {
		return d.Serializer.Decode(data, gvk, into)
	}
	if d.cut {
		obj, _ = pbcut.CutInPlace(obj)
	}
	*ev = metav1.WatchEvent{Type: eventType(typ), Object: runtime.RawExtension{Raw: obj}}
	return ev, &schema.GroupVersionKind{Group: metadataGV.Group, Version: metadataGV.Version, Kind: "WatchEvent"}, nil
}

// eventType returns a watch event's type, without allocating for the five there are.
func eventType(b []byte) string {
	for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if string(b) == string(t) {
			return string(t)
		}
	}
	return string(b)
}
