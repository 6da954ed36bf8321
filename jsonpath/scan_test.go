package jsonpath

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tidwall/gjson"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// TestKeyIs checks the shortcuts of keyIs against decoding the key: escapes that give the
// name, escapes in the first byte, control bytes, empty names and names with backslashes.
func TestKeyIs(t *testing.T) {
	keys := []string{`""`, `"a"`, `"b"`, `"ab"`, `"ba"`, `"\u0062"`, `"\u0061b"`, `"a\u0062"`,
		`"\\"`, `"a\\b"`, `"a\b"`, `"\"a"`, `"\ta"`, "\"\x01a\"", `"\u0000"`, `"nodeName"`, `"node\u004eame"`,
		`"\u006eodeName"`, `"é"`, `"\u00e9"`, `"xnodeName"`}
	names := []string{"", "a", "b", "ab", `\`, `a\b`, `"a`, "\ta", "\x00", "nodeName", "é"}
	for _, k := range keys {
		for _, n := range names {
			want := gjson.Parse(k).Str == n
			if got, _ := keyIs(k, n, 1<<30); got != want {
				t.Errorf("keyIs(%s, %q) = %v, want %v", k, n, got, want)
			}
		}
	}
}

// TestKeyIsChargesBeforeDecoding: a key with escapes is decoded only when the steps left pay
// for it (decoding allocates the decoded key: none is made when they do not).
func TestKeyIsChargesBeforeDecoding(t *testing.T) {
	key := `"a` + strings.Repeat(`\u0062`, 10000) + `"`
	name := "a" + strings.Repeat("b", 10000)
	want := len(key) / textBytesPerStep
	match, cost := keyIs(key, name, want)
	require.True(t, match)
	require.Equal(t, want, cost)
	allocs := testing.AllocsPerRun(5, func() {
		match, cost = keyIs(key, name, want-1)
	})
	assert.False(t, match)
	assert.Equal(t, want, cost)
	assert.Zero(t, allocs, "the key was decoded although the steps left did not pay for it")
}

// TestRawSurrogatesDecodeAsDecoded checks that strings and keys with an
// escaped UTF-16 surrogate that has no pair read as encoding/json (and
// Kubernetes' decoders) read them: U+FFFD for the surrogate, and the escape
// after it read on its own. gjson took that escape as the pair, whatever
// it was: "\ud800\u0041" read as "\ufffd" instead of "\ufffdA".
func TestRawSurrogatesDecodeAsDecoded(t *testing.T) {
	docs := []string{
		`{"a":"\ud800\u0041","b":"\udc00\ud800","c":"\uD800\uDC00\uDBFF\uDFFF\uDFFF","d":"\ud83d\ude00\ud800","e":"x\ud800"}`,
		`{"\ud800\u0062":1,"x":["\ud800\u005c","\ud800\n","\ud800\\u0041"]}`,
		`{"x":[{"a":"\ud800\u0041"},{"a":"\ufffdA"},{"a":"\ud800\ud800"}],"\ud800\ud800":{"y":1}}`,
	}
	exprs := []string{`{@}`, `{.*}`, `{..*}`, `{.a}`, `{.b}`, `{.c}`, `{.d}`, `{.e}`, `{.x[*]}`, `{["\ufffdb"]}`,
		`{["\ufffd\ufffd"].y}`, `{.x[?(@.a=="\ufffdA")].a}`, `{.x[?(@.a<"\ufffdB")].a}`, `{.x[?(@.a=="\ufffd\ufffd")].a}`}
	for _, d := range docs {
		var obj any
		require.NoError(t, k8sjson.Unmarshal([]byte(d), &obj))
		for _, e := range exprs {
			p := MustCompile(e)
			want := evalObj(p, obj)
			for _, in := range []any{JSON(d), IndexedJSON{Doc: JSON(d), Spans: BuildSpans(nil, JSON(d), 1)}} {
				vs, err := p.Eval(in)
				text, terr := p.ExecuteString(in)
				var js bytes.Buffer
				jerr := p.ExecuteJSON(&js, in)
				got := outcome{joined(vs), err != nil, text, terr != nil, js.String(), jerr != nil}
				assert.Equal(t, want, got, "%s on %s (%T)", e, d, in)
			}
		}
	}
}
