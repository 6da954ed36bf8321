package compact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clientGoItems decodes body as client-go's dynamic client does and deletes
// managedFields: the reference every compact list must equal.
func clientGoItems(t testing.TB, body []byte) []map[string]any {
	t.Helper()
	var l unstructured.UnstructuredList
	require.NoError(t, l.UnmarshalJSON(body))
	out := make([]map[string]any, len(l.Items))
	for i := range l.Items {
		unstructured.RemoveNestedField(l.Items[i].Object, "metadata", "managedFields")
		out[i] = l.Items[i].Object
	}
	return out
}

func compactItems(t testing.TB, l *List) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(l.Items))
	for i, o := range l.Items {
		u, err := o.Unstructured()
		require.NoError(t, err)
		out[i] = u.Object
	}
	return out
}

func TestDecodeList(t *testing.T) {
	cases := []struct {
		name        string
		body        string
		items       int
		rv, cont    string
		remaining   *int64
		kind        string
		firstKind   string // kind of the first item
		skipClient  bool   // client-go rejects the body (compact is stricter or looser on purpose)
		checkFields func(t *testing.T, l *List)
	}{
		{name: "no items", body: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`,
			rv: "5", kind: "PodList"},
		{name: "items null", body: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"6"},"items":null}`,
			rv: "6", kind: "PodList"},
		{name: "items absent", body: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"}}`,
			rv: "7", kind: "PodList"},
		{name: "continue token", body: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"8","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OCwic3RhcnQiOiJiXHUwMDAwIn0","remainingItemCount":3},` +
			`"items":[{"metadata":{"name":"a","namespace":"n","resourceVersion":"3","managedFields":[{"manager":"m"}]},"data":{"x":"y"}},{"metadata":{"name":"b","namespace":"n"}}]}`,
			items: 2, rv: "8", cont: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OCwic3RhcnQiOiJiXHUwMDAwIn0", remaining: ptrTo(int64(3)),
			kind: "ConfigMapList", firstKind: "ConfigMap",
			checkFields: func(t *testing.T, l *List) {
				assert.Equal(t, "n", l.Items[0].GetNamespace())
				assert.Equal(t, "a", l.Items[0].GetName())
				assert.Equal(t, "3", l.Items[0].GetResourceVersion())
				assert.Equal(t, "b", l.Items[1].GetName())
				assert.NotContains(t, string(l.Items[0].RawJSON()), "managedFields")
			}},
		{name: "custom resources keep their kind", body: `{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"continue":"","resourceVersion":"9"},` +
			`"items":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}]}`,
			items: 1, rv: "9", kind: "WidgetList", firstKind: "Widget"},
		{name: "item with only a kind is not completed", body: `{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Other","metadata":{"name":"a"}}]}`,
			items: 1, kind: "PodList", firstKind: "Other"},
		{name: "empty kind is replaced", body: `{"kind":"PodList","apiVersion":"v1","items":[{"kind":"","apiVersion":5,"metadata":{"name":"a"}}]}`,
			items: 1, kind: "PodList", firstKind: "Pod"},
		{name: "kind after items", body: `{"items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"10"},"apiVersion":"v1","kind":"PodList"}`,
			items: 1, rv: "10", kind: "PodList", firstKind: "Pod"},
		{name: "duplicate kind, last wins", body: `{"kind":"FooList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":"PodList"}`,
			items: 1, kind: "PodList", firstKind: "Pod"},
		{name: "duplicate items, last wins", body: `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{}],"items":[{"metadata":{"name":"b"}}]}`,
			items: 1, kind: "PodList", firstKind: "Pod",
			checkFields: func(t *testing.T, l *List) { assert.Equal(t, "b", l.Items[0].GetName()) }},
		{name: "odd keys", body: `{"kind":"PodList","apiVersion":"v1","x-extra":{"items":[1,2]},"metadata":{"selfLink":"/x","resourceVersion":"11","items":[]},"items":[{"metadata":{"name":"a","items":[]},"items":{"metadata":{"managedFields":[]}}}]}`,
			items: 1, rv: "11", kind: "PodList", firstKind: "Pod",
			checkFields: func(t *testing.T, l *List) {
				assert.Contains(t, string(l.Items[0].RawJSON()), `"items":{"metadata":{"managedFields":[]}}`, "only the item's own metadata is cut")
			}},
		{name: "unicode and escapes", body: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"caf\u00e9","namespace":"ns\"q","annotations":{"é":"😀\u2028\\"}},"data":{"\u0000":"\ud83d\ude00","k":"a\/b"}}]}`,
			items: 1, kind: "ConfigMapList", firstKind: "ConfigMap",
			checkFields: func(t *testing.T, l *List) {
				assert.Equal(t, "café", l.Items[0].GetName())
				assert.Equal(t, `ns"q`, l.Items[0].GetNamespace())
				assert.Equal(t, map[string]string{"é": "😀\u2028\\"}, l.Items[0].GetAnnotations())
			}},
		{name: "pretty printed", body: "{\n \"kind\" : \"PodList\" ,\n \"apiVersion\":\"v1\",\n \"metadata\": { \"resourceVersion\" : \"12\" },\n \"items\" : [\n  { \"metadata\" : { \"name\" : \"a\" , \"managedFields\" : [ ] } } ,\n  {\"metadata\":{\"name\":\"b\"}}\n ]\n}\n",
			items: 2, rv: "12", kind: "PodList", firstKind: "Pod"},
	}
	d := &Decoder{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := d.DecodeList([]byte(tc.body))
			require.NoError(t, err)
			require.Len(t, l.Items, tc.items)
			assert.Equal(t, tc.rv, l.ResourceVersion)
			assert.Equal(t, tc.cont, l.Continue)
			assert.Equal(t, tc.remaining, l.RemainingItemCount)
			assert.Equal(t, tc.kind, l.Kind)
			if tc.items > 0 {
				assert.Equal(t, tc.firstKind, l.Items[0].GroupVersionKind().Kind)
			}
			for _, o := range l.Items {
				require.True(t, json.Valid(o.RawJSON()), "%s", o.RawJSON())
			}
			if !tc.skipClient {
				assert.Equal(t, clientGoItems(t, []byte(tc.body)), compactItems(t, l), "equal to client-go's decoding")
			}
			if tc.checkFields != nil {
				tc.checkFields(t, l)
			}
			// What client-go's pager and reflector read.
			la, err := meta.ListAccessor(l)
			require.NoError(t, err)
			assert.Equal(t, tc.rv, la.GetResourceVersion())
			objs, err := meta.ExtractListWithAlloc(l)
			require.NoError(t, err)
			assert.Len(t, objs, tc.items)
		})
	}
}

// TestDecodeRealisticList compares a list of realistic pods with client-go's decoding, and
// checks that items are copies: the body is not retained.
func TestDecodeRealisticList(t *testing.T) {
	body := podListBody(t, 50)
	l, err := (&Decoder{}).DecodeList(body)
	require.NoError(t, err)
	require.Len(t, l.Items, 50)
	assert.Equal(t, "987654", l.ResourceVersion)
	assert.Equal(t, clientGoItems(t, body), compactItems(t, l))
	for _, o := range l.Items {
		raw := o.RawJSON()
		assert.Equal(t, len(raw), cap(raw), "an allocation of the exact size")
		assert.NotContains(t, string(raw), "managedFields")
		assert.Equal(t, "Pod", o.GroupVersionKind().Kind)
		assert.Equal(t, "v1", o.GroupVersionKind().Version)
	}
	// Overwriting the body changes no item.
	before := string(l.Items[7].RawJSON())
	for i := range body {
		body[i] = ' '
	}
	assert.Equal(t, before, string(l.Items[7].RawJSON()))
}

func TestDecodeListMalformed(t *testing.T) {
	cases := map[string]string{
		"empty":                "",
		"not an object":        `[]`,
		"items an object":      `{"kind":"PodList","items":{}}`,
		"items a string":       `{"items":"x"}`,
		"item not an object":   `{"kind":"PodList","items":[{"metadata":{}},1]}`,
		"item null":            `{"items":[null]}`,
		"truncated":            `{"kind":"PodList","items":[{"metadata":{"name":"a"}}`,
		"truncated in item":    `{"kind":"PodList","items":[{"metadata":{"name":"a`,
		"invalid in item":      `{"items":[{"metadata":{"name":"a"},"spec":{"x":01}}]}`,
		"invalid after items":  `{"items":[],"kind":}`,
		"trailing garbage":     `{"items":[]}]`,
		"metadata not a map":   `{"metadata":"x","items":[]}`,
		"metadata wrong types": `{"metadata":{"resourceVersion":5},"items":[]}`,
		"bad escape in key":    `{"it\ems":[]}`,
	}
	d := &Decoder{}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := d.DecodeList([]byte(body))
			require.Error(t, err)
			assert.Nil(t, l)
			assert.ErrorIs(t, err, ErrMalformed)
		})
	}
}

// TestCodecStatus: a LIST answered with a Status (an error body) decodes to a
// *metav1.Status, which the rest client turns into an API error.
func TestCodecStatus(t *testing.T) {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`
	c := codec{d: &Decoder{}}
	into := &List{}
	out, _, err := c.Decode([]byte(body), nil, into)
	require.NoError(t, err)
	st, ok := out.(*metav1.Status)
	require.True(t, ok, "%T", out)
	assert.True(t, apierrors.IsResourceExpired(apierrors.FromObject(st)))

	out, _, err = c.Decode([]byte(body), nil, nil)
	require.NoError(t, err)
	assert.IsType(t, &metav1.Status{}, out)

	_, _, err = c.Decode([]byte(`{}`), nil, &metav1.PartialObjectMetadata{})
	assert.ErrorIs(t, err, ErrUnsupported)

	var obj Object
	out, _, err = c.Decode([]byte(`{"metadata":{"name":"a","managedFields":[]}}`), nil, &obj)
	require.NoError(t, err)
	assert.Same(t, &obj, out)
	assert.Equal(t, "a", obj.GetName())
	assert.False(t, strings.Contains(string(obj.RawJSON()), "managedFields"))
}

func TestListDeepCopy(t *testing.T) {
	l, err := (&Decoder{}).DecodeList([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","remainingItemCount":2},"items":[{"metadata":{"name":"a"}}]}`))
	require.NoError(t, err)
	c := l.DeepCopyObject().(*List)
	assert.Equal(t, l, c)
	*c.RemainingItemCount = 9
	c.Items[0] = nil
	assert.EqualValues(t, 2, *l.RemainingItemCount)
	assert.Equal(t, "a", l.Items[0].GetName())
	assert.Nil(t, (*List)(nil).DeepCopyObject())
}
