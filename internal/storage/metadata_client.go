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
// them unless keepManagedFields (internal/pbcut). client-go's metadata client takes no
// serializer of the caller's, hence this client of its own.
func NewMetadataClient(cfg *rest.Config, keepManagedFields bool) (MetadataClient, error) {
	cfg = metadata.ConfigFor(cfg)
	if !keepManagedFields {
		cfg.NegotiatedSerializer = newCuttingSerializer(cfg.NegotiatedSerializer)
	}
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

var (
	metadataParams    = runtime.NewScheme()
	metadataParamsGV  = schema.GroupVersion{Version: "v1"}
	metadataParamCode = func() runtime.ParameterCodec {
		metav1.AddToGroupVersion(metadataParams, metadataParamsGV)
		return runtime.NewParameterCodec(metadataParams)
	}()
)

const (
	acceptMetadataList = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	acceptMetadata     = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)

func metadataPath(gvr schema.GroupVersionResource, ns string) []string {
	p := []string{"api"}
	if gvr.Group != "" {
		p = []string{"apis", gvr.Group}
	}
	p = append(p, gvr.Version)
	if ns != "" {
		p = append(p, "namespaces", ns)
	}
	return append(p, gvr.Resource)
}

func (c *restMetadataClient) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	res := c.rc.Get().AbsPath(metadataPath(gvr, ns)...).SetHeader("Accept", acceptMetadataList).
		SpecificallyVersionedParams(&o, metadataParamCode, metadataParamsGV).Do(ctx)
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
	return c.rc.Get().AbsPath(metadataPath(gvr, ns)...).SetHeader("Accept", acceptMetadata).
		SpecificallyVersionedParams(&o, metadataParamCode, metadataParamsGV).Timeout(timeout).Watch(ctx)
}

// cuttingSerializer is a NegotiatedSerializer whose protobuf decoder cuts managedFields
// from the bytes first (pbcut.Cut); watch events reach it too, since a watch decodes each
// event's object with the decoder of its content type.
type cuttingSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func newCuttingSerializer(s runtime.NegotiatedSerializer) *cuttingSerializer {
	infos := slices.Clone(s.SupportedMediaTypes())
	for i := range infos {
		if infos[i].MediaType == runtime.ContentTypeProtobuf {
			infos[i].Serializer = cuttingDecoder{infos[i].Serializer}
		}
	}
	return &cuttingSerializer{NegotiatedSerializer: s, infos: infos}
}

func (s *cuttingSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

type cuttingDecoder struct{ runtime.Serializer }

func (d cuttingDecoder) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	data, _ = pbcut.Cut(data)
	return d.Serializer.Decode(data, gvk, into)
}
