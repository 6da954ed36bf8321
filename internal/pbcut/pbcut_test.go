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
