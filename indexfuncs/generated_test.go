package indexfuncs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
	k8sjsonpath "k8s.io/client-go/util/jsonpath"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// source is an object kept as raw JSON with its spans (as compact objects are).
type source jsonpath.IndexedJSON

func (s source) JSONSource() jsonpath.IndexedJSON { return jsonpath.IndexedJSON(s) }

var (
	genNums = []string{"0", "-0", "1", "-1", "7", "1.0", "1.5", "-2.25", "0.1", "0.0", "-0.0", "5e-324", "1e21",
		"1E21", "1e+21", "1e20", "1e-7", "100e-2", "2.5e3", "12E-1", "1e308", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
		"9007199254740993", "123456789012345678901234567890", "100000000000000000000", "1000000", "1e6"}
	genStrs = []string{"", "a", "Ready", "1", "1.0", "true", "null", "é", `say \"hi\"`, `line\nbreak`, `\u003cb\u003e&amp;`,
		`back\\slash`, `\u2028`, `\ud83d\ude00`, "😀", `\/`, "a.b", " ", `\u0000x`}
	genNames = []string{"a", "b", "x", "name", "value", "a.b", "é", `q\"q`, "items", "spec"}
)

// genJSON writes a random JSON value, with duplicate members (the last
// wins) and escapes.
func genJSON(r *rand.Rand, b *strings.Builder, depth int) {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	n := r.IntN(10)
	if depth <= 0 {
		n = r.IntN(6)
	}
	switch {
	case n < 2:
		b.WriteString(pick(genNums))
	case n < 4:
		b.WriteString(`"` + pick(genStrs) + `"`)
	case n < 5:
		b.WriteString(pick([]string{"true", "false", "null", "{}", "[]"}))
	case n < 8:
		b.WriteString("{")
		for i := r.IntN(5); i >= 0; i-- {
			fmt.Fprintf(b, `"%s":`, pick(genNames))
			genJSON(r, b, depth-1)
			if i > 0 {
				b.WriteString(", ")
			}
		}
		b.WriteString("}")
	default:
		b.WriteString("[")
		for i := r.IntN(4); i >= 0; i-- {
			genJSON(r, b, depth-1)
			if i > 0 {
				b.WriteString(",")
			}
		}
		b.WriteString("]")
	}
}

var genPaths = []string{
	"{.a}", "{.b}", "{.x}", "{.a.b}", "{.a.x}", "{['a.b']}", "{.a\\.b}", "{.é}", `{['q"q']}`, "{.items[*].name}",
	"{.items[0]}", "{.items[-1].value}", "{.a[*]}", "{.a[*].x}", "{.a[1:]}", "{.a[::2]}", "{..x}", "{..name}",
	"{.*}", "{.a.*}", "{.a[?(@.x)].name}", "{.a[?(@.x==1)].name}", "{.a[?(@.x>=1.5)].x}", "{.a[?(@.x<0)].x}",
	"{.a[?(@.x==@.b)].x}", "{.a[?(@.name==\"Ready\")].value}", "{.a[?(@==1)]}", "{.a[?(@!='a')]}",
	"{.a,.b}", "{.a['x','b']}", "{.a[0,0]}", "{.a}/{.b}", "{range .a[*]}{.x},{end}", "{.spec.a}", "{.items}",
	"{.items[*]}", "{@}", "{.a.a.a}", "{.b[?(@.a)]}", "{..*}",
}

// TestGeneratedIndexValues evaluates index functions on generated raw
// JSON (numbers written every way JSON allows, escapes, duplicate members)
// given as RawJSON, as a Source with spans, as a map and as an
// Unstructured: all index the same values. The value of a single-valued
// path is what kubectl prints for it.
func TestGeneratedIndexValues(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	checked, printed := 0, 0
	for i := 0; i < 700; i++ {
		var b strings.Builder
		b.WriteString("{")
		for j := r.IntN(5); j >= 0; j-- {
			fmt.Fprintf(&b, `"%s":`, genNames[r.IntN(len(genNames))])
			genJSON(r, &b, 3)
			if j > 0 {
				b.WriteString(",")
			}
		}
		b.WriteString("}")
		doc := []byte(b.String())
		var obj map[string]any
		if err := k8sjson.Unmarshal(doc, &obj); err != nil {
			continue
		}
		for _, expr := range genPaths {
			p := jsonpath.MustCompile(expr)
			f := indexfuncs.FromPath(p)
			want, werr := f(obj)
			for _, in := range []any{raw(doc), source{Doc: doc, Spans: jsonpath.BuildSpans(nil, doc, 0)}, &unstructured.Unstructured{Object: obj}} {
				got, err := f(in)
				if (err != nil) != (werr != nil) || !slices.Equal(got, want) {
					t.Fatalf("%s on %s (%T): %q, %v; on the map: %q, %v", expr, doc, in, got, err, want, werr)
				}
			}
			checked++
			// kubectl prints nulls, and reads ['a.b'] as .a.b (see jsonpath's doc.go)
			if werr != nil || !p.SingleValued() || strings.Contains(expr, "a.b") || len(want) != 1 || want[0] == query.NonScalar {
				continue
			}
			j := k8sjsonpath.New("p").AllowMissingKeys(true)
			if j.Parse(expr) != nil {
				continue
			}
			var out bytes.Buffer
			if err := j.Execute(&out, obj); err != nil {
				continue
			}
			if out.String() != want[0] {
				t.Errorf("%s on %s: indexed %q, kubectl prints %q", expr, doc, want[0], out.String())
			}
			printed++
		}
	}
	t.Logf("%d index values compared, %d with kubectl's output", checked, printed)
}
