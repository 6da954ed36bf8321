package storage

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/kindex/kindex/internal/testsupport/podgen"
)

func metaObject(i int) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: podgen.GenPod(i).ObjectMeta}
}

// encodeProtobuf writes obj as the API server does for the metadata client.
func encodeProtobuf(tb testing.TB, obj runtime.Object) []byte {
	info, ok := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(tb, ok)
	var buf bytes.Buffer
	require.NoError(tb, metainternalversionscheme.Codecs.EncoderForVersion(info.Serializer, metav1.SchemeGroupVersion).Encode(obj, &buf))
	return buf.Bytes()
}

type event struct {
	typ string
	obj runtime.Object
}

// watchStream writes events as an API server's protobuf watch response body.
func watchStream(tb testing.TB, events []event) []byte {
	var buf bytes.Buffer
	info, _ := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	w := info.StreamSerializer.Framer.NewFrameWriter(&buf)
	for _, e := range events {
		b, err := (&metav1.WatchEvent{Type: e.typ, Object: runtime.RawExtension{Raw: encodeProtobuf(tb, e.obj)}}).Marshal()
		require.NoError(tb, err)
		_, err = w.Write(b)
		require.NoError(tb, err)
	}
	return buf.Bytes()
}

// decodeStream reads a watch response body as client-go's REST client does, with the
// decoders s negotiates for protobuf.
func decodeStream(tb testing.TB, s runtime.NegotiatedSerializer, body []byte) []event {
	objDec, streamSer, framer, err := runtime.NewClientNegotiator(s, schema.GroupVersion{}).StreamDecoder(runtime.ContentTypeProtobuf, nil)
	require.NoError(tb, err)
	d := restclientwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(bytes.NewReader(body))), streamSer), objDec)
	var out []event
	for {
		typ, obj, err := d.Decode()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(tb, err)
		out = append(out, event{string(typ), obj})
	}
}

// The metadata client's serializer decodes what client-go's does, managedFields aside,
// through client-go's own watch decoding: objects, a bookmark, an error event's Status.
func TestCuttingSerializerWatch(t *testing.T) {
	plain := metainternalversionscheme.Codecs.WithoutConversion()
	events := []event{
		{string(watch.Added), metaObject(1)},
		{string(watch.Modified), metaObject(2)},
		{string(watch.Bookmark), &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}},
		{string(watch.Deleted), metaObject(3)},
		{string(watch.Error), &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}},
	}
	body := watchStream(t, events)
	want := decodeStream(t, plain, body)
	got := decodeStream(t, newMetadataSerializer(plain, true), body)
	require.Len(t, got, len(events))
	for i := range want {
		if o, ok := want[i].obj.(*metav1.PartialObjectMetadata); ok {
			if i < 2 {
				require.NotEmpty(t, o.ManagedFields)
			}
			o.ManagedFields = nil
		}
		require.Equal(t, want[i], got[i], "event %d", i)
	}
	require.Equal(t, metaObject(1).Name, metaName(got[0].obj))
	require.Equal(t, decodeStream(t, plain, body), decodeStream(t, newMetadataSerializer(plain, false), body), "kept managedFields")
}

func metaName(o runtime.Object) string { return o.(*metav1.PartialObjectMetadata).Name }

func TestCuttingSerializerList(t *testing.T) {
	plain := metainternalversionscheme.Codecs.WithoutConversion()
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []metav1.PartialObjectMetadata{*metaObject(4), *metaObject(5)}}
	body := encodeProtobuf(t, l)
	decode := func(s runtime.NegotiatedSerializer) runtime.Object {
		d, err := runtime.NewClientNegotiator(s, schema.GroupVersion{}).Decoder(runtime.ContentTypeProtobuf, nil)
		require.NoError(t, err)
		obj, err := runtime.Decode(d, body)
		require.NoError(t, err)
		return obj
	}
	want := decode(plain).(*metav1.PartialObjectMetadataList)
	for i := range want.Items {
		require.NotEmpty(t, want.Items[i].ManagedFields)
		want.Items[i].ManagedFields = nil
	}
	require.Equal(t, decode(plain), decode(newMetadataSerializer(plain, false)), "kept managedFields")
	require.Equal(t, want, decode(newMetadataSerializer(plain, true)))
	require.Equal(t, encodeProtobuf(t, l), body, "the response body is left alone")
}

// BenchmarkMetadataWatchDecode decodes a protobuf watch stream of realistic Pods' metadata
// (managedFields of two managers) as client-go's metadata client does and as kindex's does:
//
//	go test -run '^$' -bench MetadataWatchDecode -benchmem ./internal/storage/
func BenchmarkMetadataWatchDecode(b *testing.B) {
	events := make([]event, 1000)
	for i := range events {
		events[i] = event{string(watch.Added), metaObject(i)}
	}
	body := watchStream(b, events)
	plain := metainternalversionscheme.Codecs.WithoutConversion()
	for _, s := range []struct {
		name string
		s    runtime.NegotiatedSerializer
	}{{"client-go", plain}, {"kindex", newMetadataSerializer(plain, true)}, {"kindex-keep-managed-fields", newMetadataSerializer(plain, false)}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decodeStream(b, s.s, body)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}

// refusing is a serializer that fails every call: what the metadata decoders fall back to
// for anything but their own forms.
type refusing struct{ runtime.Serializer }

func (refusing) Decode([]byte, *schema.GroupVersionKind, runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	return nil, nil, errors.New("fell back to the serializer")
}

// The decoders' own paths, not the serializer's: a PartialObjectMetadata is unmarshalled
// from its envelope, and a watch frame's object is a view of the frame, cut in place.
func TestMetadataDecodersTakeTheirOwnPath(t *testing.T) {
	o := metaObject(6)
	obj, _, err := metadataDecoder{refusing{}, true}.Decode(encodeProtobuf(t, o), nil, nil)
	require.NoError(t, err)
	require.Equal(t, o.Name, metaName(obj))
	require.Empty(t, obj.(*metav1.PartialObjectMetadata).ManagedFields)

	frame, err := (&metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Raw: encodeProtobuf(t, o)}}).Marshal()
	require.NoError(t, err)
	var ev metav1.WatchEvent
	_, _, err = eventDecoder{refusing{}, true}.Decode(frame, nil, &ev)
	require.NoError(t, err)
	require.Equal(t, string(watch.Added), ev.Type)
	raw := ev.Object.Raw
	require.Less(t, len(raw), len(encodeProtobuf(t, o)), "managedFields cut")
	start := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	require.True(t, at >= start && at+uintptr(len(raw)) <= start+uintptr(len(frame)), "the object is a view of the frame")

	_, _, err = metadataDecoder{refusing{}, true}.Decode(encodeProtobuf(t, &metav1.Status{Message: "x"}), nil, nil)
	require.ErrorContains(t, err, "fell back", "another kind goes to the serializer")
}
