package compact

import (
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// negotiatedSerializer is the content configuration of the compact rest client: JSON only,
// decoded by this package. With it, client-go's rest client does everything else as for
// the dynamic client (request building, retries, rate limits, warnings, error statuses,
// watch streaming and its error reporting).
type negotiatedSerializer struct{ c codec }

// newNegotiatedSerializer returns the serializer of a client decoding with d.
func newNegotiatedSerializer(d *Decoder) negotiatedSerializer {
	return negotiatedSerializer{c: codec{d: d, h: &handoff{}}}
}

func (n negotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType:        "application/json",
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       n.c,
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer:    eventDecoder{d: n.c.d, h: n.c.h},
			Framer:        framer{},
		},
	}}
}

func (negotiatedSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (negotiatedSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// codec decodes response bodies: LIST bodies into *List, error bodies into *metav1.Status
// (so that the rest client returns apierrors that apierrors.IsGone etc. recognize), and
// single objects (watch event objects) into *Object or *metav1.Status.
type codec struct {
	d *Decoder
	h *handoff // objects the watch event decoder decoded already; may be nil
}

func (c codec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	switch into := into.(type) {
	case *List:
		l, err := c.d.DecodeList(data)
		if err != nil {
			return nil, nil, err
		}
		if l.Kind == "Status" && l.APIVersion == "v1" {
			st, err := decodeStatus(data)
			return st, gvkOf(st), err
		}
		*into = *l
		return into, gvkOf(into), nil
	case *metav1.Status:
		if err := json.Unmarshal(data, into); err != nil {
			return nil, nil, fmt.Errorf("compact: status: %w: %w", ErrMalformed, err)
		}
		return into, gvkOf(into), nil
	case *Object:
		obj, err := c.d.decodeAny(data)
		if err != nil {
			return nil, nil, err
		}
		if o, ok := obj.(*Object); ok {
			*into = *o
			return into, nil, nil
		}
		return obj, gvkOf(obj), nil
	case nil:
		if o := c.h.take(data); o != nil {
			return o, nil, nil
		}
		obj, err := c.d.decodeAny(data)
		if err != nil {
			return nil, nil, err
		}
		return obj, nil, nil
	}
	return nil, nil, fmt.Errorf("compact: %w: cannot decode into %T", ErrUnsupported, into)
}

func gvkOf(obj runtime.Object) *schema.GroupVersionKind {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return &gvk
}

// Encode writes JSON; the compact client sends no bodies, so this is for completeness.
func (c codec) Encode(obj runtime.Object, w io.Writer) error {
	if o, ok := obj.(*Object); ok {
		_, err := w.Write(o.RawJSON())
		return err
	}
	return json.NewEncoder(w).Encode(obj)
}

func (c codec) Identifier() runtime.Identifier { return "compact-json" }
