package jsonpath

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On an indexed document a lookup stops at the first match only in an object whose keys
// are proven unique: a repeated key, one spelled with an escape, or a collision keep the
// last one winning, as on the plain document.
func TestIndexedJSONDuplicateKeys(t *testing.T) {
	pad := `"pad":"` + strings.Repeat("x", 300) + `"`
	docs := map[string]string{
		"unique":    `{"spec":{` + pad + `,"node":"a","other":1}}`,
		"repeated":  `{"spec":{` + pad + `,"node":"a","other":1,"node":"b"}}`,
		"escaped":   `{"spec":{` + pad + `,"node":"a","n\u006fde":"c"}}`,
		"nested":    `{"spec":{"node":"a",` + pad + `,"x":{"node":"d"}},"spec":{"node":"e",` + pad + `}}`,
		"arraylike": `{"spec":[{"node":"a",` + pad + `},{"node":"b"}]}`,
	}
	for _, expr := range []string{`{.spec.node}`, `{.spec[1].node}`, `{.spec.x.node}`} {
		p := MustCompile(expr)
		for name, doc := range docs {
			want, werr := p.Eval(JSON(doc))
			got, gerr := p.Eval(IndexedJSON{Doc: JSON(doc), Spans: BuildSpans(nil, JSON(doc), 64)})
			require.Equal(t, werr, gerr, "%s on %s", expr, name)
			assert.Equal(t, want, got, "%s on %s", expr, name)
		}
	}
	sp := BuildSpans(nil, JSON(docs["unique"]), 64)
	_, unique, ok := sp.end(docs["unique"], strings.Index(docs["unique"], `{"pad"`))
	assert.True(t, ok && unique, "an object of distinct keys is marked unique")
	sp = BuildSpans(nil, JSON(docs["repeated"]), 64)
	_, unique, ok = sp.end(docs["repeated"], strings.Index(docs["repeated"], `{"pad"`))
	assert.True(t, ok && !unique, "an object with a repeated key is not")
}

type testSource IndexedJSON

func (s testSource) JSONSource() IndexedJSON { return IndexedJSON(s) }

// A Source evaluates as the document it returns, with or without spans, in every method.
func TestSource(t *testing.T) {
	doc := JSON(`{"spec":{"pad":"` + strings.Repeat("x", 300) + `","node":"a","list":[1,2]}}`)
	for _, src := range []Source{testSource{Doc: doc}, testSource{Doc: doc, Spans: BuildSpans(nil, doc, 16)}} {
		for _, expr := range []string{`{.spec.node}`, `{.spec.list[*]}`, `{.spec.nope}`} {
			p := MustCompile(expr)
			want, _ := p.Eval(doc)
			got, err := p.Eval(src)
			require.NoError(t, err)
			assert.Equal(t, want, got, expr)
			app, err := p.AppendEval(nil, src)
			require.NoError(t, err)
			assert.Equal(t, want, app, expr)
			var each []Value
			require.NoError(t, p.Each(src, func(v Value) bool { each = append(each, v.Clone()); return true }))
			assert.Equal(t, len(want), len(each), expr)
			wt, _ := p.ExecuteString(doc)
			gt, err := p.ExecuteString(src)
			require.NoError(t, err)
			assert.Equal(t, wt, gt, expr)
		}
	}
}
