package compact

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	kjson "sigs.k8s.io/json"
)

// Seeds shared by the fuzz targets.
var fuzzSeeds = []string{
	`{}`,
	`{"metadata":{"managedFields":[{"manager":"m"}],"name":"a"}}`,
	`{"metadata":{"name":"a","managedFields":[]},"spec":{"managedFields":1}}`,
	`{"metadata":{"managed\u0046ields":1,"managedFields":2,"n\u0061me":"x"},"metadata":{"managedFields":3}}`,
	`{"kind":"","apiVersion":5,"metadata":null}`,
	"{\n \"metadata\" : { \"name\" : \"caf\u00e9\" , \"managedFields\" : [ ] } }",
	`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"c"},"items":[{"metadata":{"name":"a","managedFields":[]}},{"kind":"X"}]}`,
	`{"items":null}`,
	`{"MetAdAtA":[],"Items":1}`,
	`{"items":[],"kind":"AList","items":[{}]}`,
	`{"a":[1,-0.5e+3,true,false,null,"\ud83d\ude00\n"]}`,
	`{"a":01}`,
	`{"items":[1]}`,
	`[{}]`,
}

// FuzzCutManagedFields: DecodeObject never panics; it accepts exactly the JSON objects
// encoding/json accepts, and its output is valid JSON equal to the input decoded with
// metadata.managedFields deleted.
func FuzzCutManagedFields(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	d := &Decoder{}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := d.DecodeObject(data)
		valid := json.Valid(data) && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		if !valid {
			require.Error(t, err, "accepted invalid input %q", data)
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		require.NoError(t, err, "%q", data)
		out := o.RawJSON()
		require.True(t, json.Valid(out), "invalid output %q from %q", out, data)
		want := withoutManagedFields(t, data)
		require.Equal(t, want, decodeJSON(t, out), "from %q", data)
		md, _ := want.(map[string]any)["metadata"].(map[string]any)
		str := func(k string) string { s, _ := md[k].(string); return s }
		require.Equal(t, str("name"), o.GetName())
		require.Equal(t, str("namespace"), o.GetNamespace())
		require.Equal(t, str("resourceVersion"), o.GetResourceVersion())
		require.Equal(t, str("uid"), string(o.GetUID()))
		checkLazyGetters(t, o, want)
	})
}

// FuzzDecodeList: DecodeList never panics; a valid list body decodes, and its items are
// what client-go's unstructured decoding gives, less managedFields (kind and apiVersion
// completed from the list); anything else is an error.
func FuzzDecodeList(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	d := &Decoder{}
	f.Fuzz(func(t *testing.T, data []byte) {
		if nesting(data) > maxDepth-2 {
			// Items are held to the limit on their own, not with the list around them:
			// encoding/json on the whole body is no reference there
			// (TestItemsNestAsDeepAsObjects).
			t.Skip()
		}
		l, err := d.DecodeList(data)
		want, ok := referenceList(t, data)
		if !ok {
			require.Error(t, err, "accepted %q", data)
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		require.NoError(t, err, "%q", data)
		require.Len(t, l.Items, len(want))
		for i, o := range l.Items {
			require.True(t, json.Valid(o.RawJSON()), "%q", o.RawJSON())
			require.Equal(t, want[i], decodeJSON(t, o.RawJSON()), "item %d of %q", i, data)
		}
	})
}

// nesting is the deepest nesting of arrays and objects in data, read as JSON (brackets in
// strings do not count), whether or not data is valid.
func nesting(data []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// referenceList decodes a list body with encoding/json as client-go would read it: the
// last "items" must be null, absent or an array of objects, and metadata must decode into
// ListMeta. It returns the expected items (managedFields deleted, kind and apiVersion
// completed).
func referenceList(t *testing.T, data []byte) ([]any, bool) {
	if !json.Valid(data) || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		return nil, false
	}
	top, _ := decodeJSON(t, data).(map[string]any)
	var meta struct {
		Metadata *struct {
			ResourceVersion    string `json:"resourceVersion"`
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
			SelfLink           string `json:"selfLink"`
		} `json:"metadata"`
	}
	// Case-sensitive, as Kubernetes decodes ("MetAdAtA" is another field, not metadata;
	// encoding/json would match it).
	if kjson.UnmarshalCaseSensitivePreserveInts(data, &meta) != nil {
		return nil, false
	}
	kind, _ := top["kind"].(string)
	apiVersion, _ := top["apiVersion"].(string)
	raw, present := top["items"]
	if !present || raw == nil {
		return nil, true
	}
	items, isList := raw.([]any)
	if !isList {
		return nil, false
	}
	for _, it := range items {
		m, isMap := it.(map[string]any)
		if !isMap {
			return nil, false
		}
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
		k, _ := m["kind"].(string)
		v, _ := m["apiVersion"].(string)
		if k == "" && v == "" {
			m["kind"] = strings.TrimSuffix(kind, "List")
			m["apiVersion"] = apiVersion
		}
	}
	return items, true
}

// FuzzWatchStream: the frame reader and event decoder never panic, and every event they
// accept holds a valid JSON object.
func FuzzWatchStream(f *testing.F) {
	f.Add([]byte(frameAdded + "\n" + frameBookmark + "\n" + frameGone))
	f.Add([]byte(`{"type":"ADDED","object":{"a":"}\"{"}}{"type":"DELETED","object":{}}`))
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":"x"}}`))
	f.Add([]byte("{\"type\":\"ADDED\",\"object\":{]}\n"))
	d := &Decoder{}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := framer{}.NewFrameReader(io.NopCloser(bytes.NewReader(data)))
		buf := make([]byte, 16)
		for range 100 {
			base := 0
			var err error
			for {
				var n int
				n, err = fr.Read(buf[base:])
				base += n
				if err != io.ErrShortBuffer {
					break
				}
				buf = append(buf, make([]byte, len(buf))...)
			}
			if err != nil {
				return
			}
			ev, derr := d.DecodeWatchEvent(buf[:base])
			if derr != nil {
				require.ErrorIs(t, derr, ErrMalformed)
				continue
			}
			if o, ok := ev.Object.(*Object); ok {
				require.True(t, json.Valid(o.RawJSON()))
			}
		}
	})
}
