package compact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/watch"
)

// An object is judged by its own nesting wherever it travels, as the API server judges it
// (it serves by GET every object its decoder accepts): one nested maxDepth deep, valid for
// DecodeObject and encoding/json, decodes as a list item (DecodeList, DecodeListFrom,
// DecodeListFromReusing) and as a watch event's object, to the same bytes, although the
// list or event around it makes the whole body nest deeper than encoding/json accepts; one
// nested a level deeper is refused everywhere. Its managedFields, which the server nests
// five levels deeper than the fields they describe, are cut after the check.
func TestItemsNestAsDeepAsObjects(t *testing.T) {
	object := func(depth int) []byte {
		// The object is 1, metadata 2, managedFields 3, the entry 4, fieldsV1 5, then
		// depth-5 maps; spec is 2, then depth-2 maps.
		return []byte(`{"apiVersion":"v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","resourceVersion":"5","uid":"u",` +
			`"managedFields":[{"manager":"m","fieldsV1":` + strings.Repeat(`{"f:a":`, depth-5) + `{}` + strings.Repeat(`}`, depth-5) + `}]},` +
			`"spec":` + strings.Repeat(`{"a":`, depth-2) + `-0` + strings.Repeat(`}`, depth-2) + `}`)
	}
	ok, over := object(maxDepth), object(maxDepth+1)
	require.True(t, json.Valid(ok))
	require.False(t, json.Valid(over))

	d := &Decoder{}
	want, err := d.DecodeObject(ok)
	require.NoError(t, err)
	_, err = d.DecodeObject(over)
	require.ErrorIs(t, err, ErrMalformed)

	list := func(item []byte) []byte {
		return []byte(`{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"resourceVersion":"7"},"items":[` + string(item) + `]}`)
	}
	event := func(item []byte) []byte { return []byte(`{"type":"ADDED","object":` + string(item) + `}`) }
	decoders := map[string]func([]byte) (*Object, error){
		"DecodeList": func(b []byte) (*Object, error) {
			l, err := d.DecodeList(list(b))
			if err != nil {
				return nil, err
			}
			return l.Items[0], nil
		},
		"DecodeListFrom": func(b []byte) (*Object, error) {
			l, err := d.DecodeListFrom(bytes.NewReader(list(b)))
			if err != nil {
				return nil, err
			}
			return l.Items[0], nil
		},
		"DecodeListFromReusing": func(b []byte) (*Object, error) {
			l, err := d.DecodeListFromReusing(bytes.NewReader(list(b)), func(string) (any, bool) { return nil, false })
			if err != nil {
				return nil, err
			}
			return l.Items[0], nil
		},
		"DecodeWatchEvent": func(b []byte) (*Object, error) {
			ev, err := d.DecodeWatchEvent(event(b))
			if err != nil {
				return nil, err
			}
			require.Equal(t, watch.Added, ev.Type)
			return ev.Object.(*Object), nil
		},
	}
	for name, decode := range decoders {
		t.Run(name, func(t *testing.T) {
			got, err := decode(ok)
			require.NoError(t, err)
			require.Equal(t, string(want.RawJSON()), string(got.RawJSON()))
			require.NotContains(t, string(got.RawJSON()), "managedFields")
			_, err = decode(over)
			require.ErrorIs(t, err, ErrMalformed)
		})
	}
}

func TestNesting(t *testing.T) {
	for in, want := range map[string]int{``: 0, `{}`: 1, `{"a":[[]]}`: 3, `{"a":"[[[{"}`: 1, `{"a":"\"[[","b":[]}`: 2, `[[`: 2} {
		require.Equal(t, want, nesting([]byte(in)), "%s", in)
	}
}
