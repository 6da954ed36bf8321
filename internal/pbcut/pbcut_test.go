package pbcut

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kindex/kindex/internal/testsupport/podgen"
)

func protobufInfo(tb testing.TB) runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(tb, ok)
	return info
}

// encode writes obj as the API server does for the metadata client.
func encode(tb testing.TB, obj runtime.Object) []byte {
	enc := metainternalversionscheme.Codecs.EncoderForVersion(protobufInfo(tb).Serializer, metav1.SchemeGroupVersion)
	var buf bytes.Buffer
	require.NoError(tb, enc.Encode(obj, &buf))
	return buf.Bytes()
}

// decode reads data as the metadata client does.
func decode(tb testing.TB, data []byte) (runtime.Object, error) {
	obj, _, err := protobufInfo(tb).Serializer.Decode(data, nil, nil)
	return obj, err
}

func podMeta(i int) *metav1.PartialObjectMetadata {
	p := podgen.GenPod(i)
	return &metav1.PartialObjectMetadata{ObjectMeta: p.ObjectMeta}
}

func withoutManagedFields(o *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	c := o.DeepCopy()
	c.ManagedFields = nil
	return c
}

func TestCutObject(t *testing.T) {
	o := podMeta(1)
	require.NotEmpty(t, o.ManagedFields)
	data := encode(t, o)
	out, ok := Cut(data)
	require.True(t, ok)
	require.Less(t, len(out), len(data)/2, "managedFields are most of a Pod's metadata")
	got, err := decode(t, out)
	require.NoError(t, err)
	want, err := decode(t, data)
	require.NoError(t, err)
	want.(*metav1.PartialObjectMetadata).ManagedFields = nil
	require.Equal(t, want, got)
	// The input is left alone: the caller may still hold it.
	require.Equal(t, encode(t, o), data)
}

func TestCutList(t *testing.T) {
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "c"}}
	for i := range 5 {
		o := podMeta(i)
		if i == 2 {
			o.ManagedFields = nil // an item with nothing to cut keeps its bytes
		}
		l.Items = append(l.Items, *o)
	}
	data := encode(t, l)
	out, ok := Cut(data)
	require.True(t, ok)
	got, err := decode(t, out)
	require.NoError(t, err)
	want, err := decode(t, data)
	require.NoError(t, err)
	for i := range want.(*metav1.PartialObjectMetadataList).Items {
		want.(*metav1.PartialObjectMetadataList).Items[i].ManagedFields = nil
	}
	require.Equal(t, want, got)
	require.Len(t, got.(*metav1.PartialObjectMetadataList).Items, 5)
}

func TestCutLeavesOthersAlone(t *testing.T) {
	bare := withoutManagedFields(podMeta(3))
	cases := map[string][]byte{
		"nothing to cut": encode(t, bare),
		"empty list":     encode(t, &metav1.PartialObjectMetadataList{}),
		"another kind":   encode(t, &metav1.Status{Message: "x"}),
		"JSON":           []byte(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"managedFields":[{}]}}`),
		"empty":          nil,
		"magic only":     Magic,
		"group wire":     append(bytes.Clone(Magic), 0x0b),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			out, ok := Cut(data)
			require.False(t, ok)
			require.Equal(t, data, out)
		})
	}
}

// TestCutDamaged truncates and flips every byte of an encoded object: Cut never panics nor
// changes its input, and what is still a message the API server could send (see check)
// decodes after the cut to the same object without managedFields.
func TestCutDamaged(t *testing.T) {
	data := encode(t, podMeta(4))
	for i := range data {
		check(t, data[:i])
		for _, b := range []byte{0, 0x7f, 0x80, 0xff} {
			d := bytes.Clone(data)
			d[i] = b
			check(t, d)
		}
	}
}

func FuzzCut(f *testing.F) {
	f.Add(encode(f, podMeta(1)))
	f.Add(encode(f, &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{*podMeta(2), *podMeta(3)}}))
	f.Add(encode(f, withoutManagedFields(podMeta(5))))
	f.Fuzz(func(t *testing.T, data []byte) { check(t, data) })
}

// check asserts Cut's promise on data: input untouched, and an input the API server could
// send (one that decodes and is its object's encoding: the protobuf decoder also accepts
// damaged maps whose strings run past their entry, which the cut may then end early) gives
// an output that decodes to the same object, managedFields aside.
func check(t *testing.T, data []byte) {
	orig := bytes.Clone(data)
	out, ok := Cut(data)
	require.Equal(t, orig, data, "Cut changed its input")
	if !ok {
		require.Equal(t, data, out)
		return
	}
	want, err := decode(t, data)
	if err != nil || !bytes.Equal(encode(t, want), data) {
		return
	}
	got, err := decode(t, out)
	require.NoError(t, err)
	switch w := want.(type) {
	case *metav1.PartialObjectMetadata:
		w.ManagedFields = nil
	case *metav1.PartialObjectMetadataList:
		for i := range w.Items {
			w.Items[i].ManagedFields = nil
		}
	default:
		t.Fatalf("cut a %T", want)
	}
	require.Equal(t, want, got)
}

func TestCutInPlace(t *testing.T) {
	for _, obj := range []runtime.Object{podMeta(6), &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{*podMeta(7), *podMeta(8)}}} {
		data := encode(t, obj)
		want, ok := Cut(data)
		require.True(t, ok)
		got, ok := CutInPlace(bytes.Clone(data))
		require.True(t, ok)
		require.Equal(t, want, got)
	}
	bare := encode(t, withoutManagedFields(podMeta(9)))
	got, ok := CutInPlace(bytes.Clone(bare))
	require.False(t, ok)
	require.Equal(t, bare, got)
}

func TestMessage(t *testing.T) {
	o := podMeta(10)
	kind, msg := Message(encode(t, o))
	require.Equal(t, Object, kind)
	var got metav1.PartialObjectMetadata
	require.NoError(t, got.Unmarshal(msg))
	require.Equal(t, o.Name, got.Name)
	require.Len(t, got.ManagedFields, len(o.ManagedFields))

	kind, msg = Message(encode(t, &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{*o}}))
	require.Equal(t, List, kind)
	var l metav1.PartialObjectMetadataList
	require.NoError(t, l.Unmarshal(msg))
	require.Len(t, l.Items, 1)

	kind, _ = Message(encode(t, &metav1.Status{Message: "x"}))
	require.Equal(t, Other, kind)
}

// encodeEvent writes a watch event's frame as the API server does: a bare WatchEvent message
// whose object is the object's encoding.
func encodeEvent(tb testing.TB, typ string, obj runtime.Object) []byte {
	ev := &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: encode(tb, obj)}}
	b, err := ev.Marshal()
	require.NoError(tb, err)
	return b
}

func TestWatchEvent(t *testing.T) {
	o := podMeta(11)
	frame := encodeEvent(t, "MODIFIED", o)
	typ, obj, ok := WatchEvent(frame)
	require.True(t, ok)
	require.Equal(t, "MODIFIED", string(typ))
	require.Equal(t, encode(t, o), obj)

	for _, bad := range [][]byte{nil, {0x0a}, encode(t, o), append(bytes.Clone(frame), 0x12, 0x00), append(bytes.Clone(frame), 0x0a, 0x01, 'X')} {
		_, _, ok := WatchEvent(bad)
		require.False(t, ok, "% x", bad)
	}
}

func FuzzWatchEvent(f *testing.F) {
	f.Add(encodeEvent(f, "ADDED", podMeta(1)))
	f.Add(encodeEvent(f, "ERROR", &metav1.Status{Message: "gone", Code: 410}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		orig := bytes.Clone(frame)
		typ, obj, ok := WatchEvent(frame)
		require.Equal(t, orig, frame)
		if !ok {
			return
		}
		var ev metav1.WatchEvent
		if ev.Unmarshal(frame) == nil {
			require.Equal(t, ev.Type, string(typ))
			require.Equal(t, ev.Object.Raw, obj)
		}
		check(t, obj)
		cut, _ := CutInPlace(bytes.Clone(obj))
		want, _ := Cut(obj)
		require.Equal(t, want, cut)
	})
}
