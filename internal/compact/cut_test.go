package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeAny decodes JSON with numbers kept as text, so that values compare exactly.
func decodeJSON(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "%s", data)
	return v
}

// withoutManagedFields is the reference: decode, delete metadata.managedFields.
func withoutManagedFields(t testing.TB, data []byte) any {
	v := decodeJSON(t, data)
	if m, ok := v.(map[string]any); ok {
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
	}
	return v
}

func TestCutManagedFields(t *testing.T) {
	cases := []struct {
		name, in  string
		wantName  string
		wantNS    string
		wantRV    string
		wantUID   string
		wantBytes string // exact output when set
	}{
		{name: "first", in: `{"metadata":{"managedFields":[{"manager":"m"}],"name":"a","namespace":"n"},"spec":{}}`,
			wantName: "a", wantNS: "n", wantBytes: `{"metadata":{"name":"a","namespace":"n"},"spec":{}}`},
		{name: "middle", in: `{"metadata":{"name":"a","managedFields":[{"manager":"m"}],"resourceVersion":"7"}}`,
			wantName: "a", wantRV: "7", wantBytes: `{"metadata":{"name":"a","resourceVersion":"7"}}`},
		{name: "last", in: `{"kind":"Pod","metadata":{"name":"a","uid":"u-1","managedFields":[]}}`,
			wantName: "a", wantUID: "u-1", wantBytes: `{"kind":"Pod","metadata":{"name":"a","uid":"u-1"}}`},
		{name: "absent", in: `{"metadata":{"name":"a"},"spec":{"x":1}}`,
			wantName: "a", wantBytes: `{"metadata":{"name":"a"},"spec":{"x":1}}`},
		{name: "only field", in: `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:a":{}}}]}}`,
			wantBytes: `{"metadata":{}}`},
		{name: "null value", in: `{"metadata":{"managedFields":null,"name":"a"}}`, wantName: "a",
			wantBytes: `{"metadata":{"name":"a"}}`},
		{name: "nested keys elsewhere stay",
			in: `{"metadata":{"name":"a","annotations":{"managedFields":"keep"},"labels":{"x":"managedFields"}},` +
				`"spec":{"managedFields":[1],"template":{"metadata":{"managedFields":[2]}}},"managedFields":3,` +
				`"status":[{"metadata":{"managedFields":4}}]}`,
			wantName: "a"},
		{name: "pretty printed", in: "{\n  \"metadata\" : {\n    \"name\" : \"a\" ,\n    \"managedFields\" : [ ] ,\n    \"namespace\":\"n\"\n  }\n}\n",
			wantName: "a", wantNS: "n"},
		{name: "escaped key", in: `{"metadata":{"managed\u0046ields":[{"manager":"m"}],"n\u0061me":"a"},"meta\u0064ata2":{}}`,
			wantName: "a"},
		{name: "escaped metadata key", in: `{"m\u0065tadata":{"managedFields":[],"name":"a"}}`, wantName: "a"},
		{name: "duplicate managedFields", in: `{"metadata":{"managedFields":[1],"name":"a","managedFields":[2]}}`,
			wantName: "a", wantBytes: `{"metadata":{"name":"a"}}`},
		{name: "duplicate metadata, last wins", in: `{"metadata":{"managedFields":[1],"name":"first"},"metadata":{"name":"last","managedFields":[2]}}`,
			wantName: "last"},
		{name: "later metadata not an object", in: `{"metadata":{"name":"a","managedFields":[1],"labels":{"a":"b"}},"metadata":null}`},
		{name: "labels and annotations", in: `{"metadata":{"labels":{"a":"1","b\u00e9":"\"2\""},"managedFields":[],"annotations":{"x":"y"},"generateName":"g-"}}`},
		{name: "duplicate metadata keeps the last labels", in: `{"metadata":{"labels":{"a":"1"}},"metadata":{"labels":{"b":"2"},"managedFields":[]}}`},
		{name: "metadata a string", in: `{"metadata":"managedFields"}`, wantBytes: `{"metadata":"managedFields"}`},
		{name: "non-string name reads empty", in: `{"metadata":{"name":5,"namespace":{"a":1},"uid":"u"}}`, wantUID: "u"},
		{name: "unicode and escapes", in: `{"metadata":{"name":"caf\u00e9-\"q\"","namespace":"日本","managedFields":[{"m":"\ud83d\ude00"}]},"data":{"k":"line\nbreak \\ tab\t é 😀"}}`,
			wantName: "café-\"q\"", wantNS: "日本"},
		{name: "empty object", in: `{}`, wantBytes: `{}`},
		{name: "surrounding space", in: " \t\r\n{\"metadata\":{\"name\":\"a\"}} \n", wantName: "a", wantBytes: `{"metadata":{"name":"a"}}`},
	}
	d := &Decoder{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := d.DecodeObject([]byte(tc.in))
			require.NoError(t, err)
			out := o.RawJSON()
			require.True(t, json.Valid(out), "%s", out)
			assert.Equal(t, withoutManagedFields(t, []byte(tc.in)), decodeJSON(t, out))
			if tc.wantBytes != "" {
				assert.Equal(t, tc.wantBytes, string(out))
			}
			assert.Equal(t, tc.wantName, o.GetName())
			assert.Equal(t, tc.wantNS, o.GetNamespace())
			assert.Equal(t, tc.wantRV, o.GetResourceVersion())
			assert.Equal(t, tc.wantUID, string(o.GetUID()))
			assert.False(t, o.HasManagedFields())
			assert.Nil(t, o.GetManagedFields())
			checkLazyGetters(t, o, withoutManagedFields(t, []byte(tc.in)))
		})
	}
}

// checkLazyGetters compares the getters that read the bytes with the decoded object want.
func checkLazyGetters(t require.TestingT, o *Object, want any) {
	md, _ := want.(map[string]any)["metadata"].(map[string]any)
	strMap := func(v any) map[string]string {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		out := map[string]string{}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil
			}
			out[k] = s
		}
		return out
	}
	gen, _ := md["generateName"].(string)
	require.Equal(t, strMap(md["labels"]), o.GetLabels())
	require.Equal(t, strMap(md["annotations"]), o.GetAnnotations())
	require.Equal(t, gen, o.GetGenerateName())
}

func TestKeepManagedFields(t *testing.T) {
	in := podJSON(t, 3)
	d, err := NewDecoder(Options{KeepManagedFields: true})
	require.NoError(t, err)
	o, err := d.DecodeObject(in)
	require.NoError(t, err)
	assert.Equal(t, in, o.RawJSON(), "kept byte for byte")
	assert.True(t, o.HasManagedFields())
	require.Len(t, o.GetManagedFields(), 2)
	assert.Equal(t, "kubelet", o.GetManagedFields()[1].Manager)

	cut, err := (&Decoder{}).DecodeObject(in)
	require.NoError(t, err)
	assert.Less(t, len(cut.RawJSON()), len(in)*6/10, "managedFields are over 40%% of a pod")
	assert.Equal(t, withoutManagedFields(t, in), decodeJSON(t, cut.RawJSON()))
	assert.Equal(t, o.GetName(), cut.GetName())
}

func TestDecodeObjectMalformed(t *testing.T) {
	deep := func(n int) string {
		return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	cases := map[string]string{
		"empty":                "",
		"space only":           "  ",
		"truncated":            `{"metadata":{"name":"a"`,
		"truncated string":     `{"a":"abc`,
		"missing value":        `{"a":}`,
		"trailing comma":       `{"a":1,}`,
		"missing colon":        `{"a" 1}`,
		"bad literal":          `{"a":tru}`,
		"literal suffix":       `{"a":truex}`,
		"leading zero":         `{"a":01}`,
		"bare minus":           `{"a":-}`,
		"bad fraction":         `{"a":1.}`,
		"bad exponent":         `{"a":1e}`,
		"bad escape":           `{"a":"\x"}`,
		"short unicode escape": `{"a":"\u12"}`,
		"control character":    "{\"a\":\"x\x01y\"}",
		"unquoted key":         `{a:1}`,
		"single quotes":        `{'a':1}`,
		"not an object":        `[{"metadata":{}}]`,
		"a string":             `"metadata"`,
		"trailing garbage":     `{"a":1}x`,
		"two objects":          `{}{}`,
		"unclosed array":       `{"a":[1,2}`,
		"mismatched":           `{"a":[}]}`,
		"too deep":             deep(maxDepth + 1),
		"bom":                  "\xef\xbb\xbf{}",
	}
	d := &Decoder{}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := d.DecodeObject([]byte(in))
			require.Error(t, err)
			assert.Nil(t, o)
			assert.ErrorIs(t, err, ErrMalformed)
		})
	}
	t.Run("syntax errors carry an offset", func(t *testing.T) {
		_, err := d.DecodeObject([]byte(`{"a":1,"b":tru}`))
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.EqualValues(t, 11, se.Offset)
	})
	t.Run("max depth is encoding/json's", func(t *testing.T) {
		ok := deep(maxDepth)
		require.True(t, json.Valid([]byte(ok)))
		_, err := d.DecodeObject([]byte(ok))
		require.NoError(t, err)
		require.False(t, json.Valid([]byte(deep(maxDepth+1))))
	})
}

// TestScannerAgreesWithEncodingJSON checks validity on values of every kind.
func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`0`, `-0`, `-0.5e+10`, `1E-3`, `12345678901234567890123`, `1e400`, `00`, `-`, `.5`, `1.e3`, `+1`,
		`"a\/b\b\f\n\r\t\u00e9\uD83D\uDE00"`, `"\ud800"`, "\"\xff\xfe\"", `"\'"`, `"\u00g0"`,
		`true`, `false`, `null`, `nul`, `True`, `[]`, `[1,]`, `[,1]`, `{}`, `{"a":{"b":[{"c":null}]}}`,
		`[1 2]`, `{"a":1 "b":2}`, ` [ 1 , { "a" : [ ] } ] `, "[\"\t\"]", `"`, `"\`, `"\u`,
	} {
		err := validDocument([]byte(in))
		assert.Equal(t, json.Valid([]byte(in)), err == nil, "%q: %v", in, err)
	}
}

func TestHasStop(t *testing.T) {
	buf := make([]byte, 8)
	for c := range 256 {
		for pos := range 8 {
			for k := range buf {
				buf[k] = 'a'
			}
			buf[pos] = byte(c)
			x := uint64(buf[0]) | uint64(buf[1])<<8 | uint64(buf[2])<<16 | uint64(buf[3])<<24 |
				uint64(buf[4])<<32 | uint64(buf[5])<<40 | uint64(buf[6])<<48 | uint64(buf[7])<<56
			require.Equal(t, strStop[c], hasStop(x), "byte %#x at %d", c, pos)
			require.Equal(t, c == '"' || c == '\\', hasQuoteOrBackslash(x), "byte %#x at %d", c, pos)
		}
	}
}
