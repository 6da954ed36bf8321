package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// fuzzOptions keep fuzzed evaluations fast.
var fuzzOptions = Options{MaxSteps: 20000, MaxResults: 500}

var fuzzExprs = []string{
	`{.spec.nodeName}`, `.spec.nodeName`, `{.spec.containers[*].image}`,
	`{.status.conditions[?(@.type=="Ready")].status}`, `{.metadata.labels['app.kubernetes.io/name']}`,
	`{.metadata.namespace}/{.metadata.name}`, `{range .items[*]}{.metadata.name}{"\n"}{end}`,
	`{..name}`, `{.a[1:-1:2]}`, `{.a[-1,0,'x',*]}`, `{.a,.b}`, `{$.a[?(@.b>=1.5)].c}`,
	`{.a[?(@.b!=@.c)]}`, `{.a[?(@)]}`, `{..[0]}`, `{..*}`, `{.a\.b}`, `{.a["x\"y"]}`,
	`{range .a}{range .b[*]}[{@}]{end}{end}`, `text{"\t"}`, `{3}{-1.5}{true}`,
	`{.a[?(@.b[?(@.c)])]}`, `{.items[*]['metadata.name', 'status.capacity']}`,
	`{.a.b-c/d_e.ключ}`, `{..x..x}`, `{.a[::3]}`, `{@}`,
	`{['b.a.b']}`, `{.a[*]['c.d','b']}`, `{..['c.d']}`, `{.a[?(@['c.d'])]}`, `{['b.a\\.b']}`,
}

var fuzzDocs = []string{
	`{"a":[{"b":1,"c":"x"},{"b":2.5,"c":2.5},{"b":"1"},null,[1,2],{"b":true,"c":{"d":[]}}],"b":{"a.b":1}}`,
	`{"items":[{"metadata":{"name":"n1","labels":{"app.kubernetes.io/name":"x"}}},{"metadata":{"name":"n2"}}]}`,
	`{"spec":{"nodeName":"w","containers":[{"image":"i1"},{"image":"i2"}]},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`,
	`[1, -0, 1.0, 1e2, 9223372036854775808, "\u00e9\ud800<", true, false, null, {}, []]`,
	`{"x":{"x":{"x":{"x":1}}},"name":"a","y":[{"name":"b"}]}`,
	`"just a string"`, `42`, `null`,
}

// cleanJSON reports whether doc is JSON that encoding/json and gjson read
// identically: valid, valid UTF-8, and (to keep the comparison fast) not
// nested more than 100 deep. Duplicate keys are fine: the last wins in
// both.
func cleanJSON(doc []byte) bool {
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return false
	}
	var deep func(r gjson.Result, depth int) bool
	deep = func(r gjson.Result, depth int) bool {
		if depth > 100 {
			return true
		}
		found := false
		r.ForEach(func(_, v gjson.Result) bool {
			found = v.Type == gjson.JSON && deep(v, depth+1)
			return !found
		})
		return found
	}
	return !deep(gjson.ParseBytes(doc), 0)
}

// outcome is everything an evaluation produces, for comparisons.
type outcome struct {
	values string
	err    bool
	text   string
	tErr   bool
	json   string // ExecuteJSON's output
	jErr   bool
}

func evalObj(p *Path, obj any) outcome {
	vs, err := p.Eval(obj)
	text, terr := p.ExecuteString(obj)
	var js bytes.Buffer
	jerr := p.ExecuteJSON(&js, obj)
	return outcome{joined(vs), err != nil, text, terr != nil, js.String(), jerr != nil}
}

func evalRaw(p *Path, raw []byte) outcome {
	vs, err := p.Eval(JSON(raw))
	text, terr := p.ExecuteString(JSON(raw))
	var js bytes.Buffer
	jerr := p.ExecuteJSON(&js, JSON(raw))
	return outcome{joined(vs), err != nil, text, terr != nil, js.String(), jerr != nil}
}

func noInternal(t *testing.T, expr string, errs ...error) {
	for _, err := range errs {
		if errors.Is(err, ErrInternal) {
			t.Fatalf("%q: %v", expr, err)
		}
	}
}

// FuzzCompile checks that compiling never panics, and that the canonical
// form of a compiled expression compiles to an equivalent program: same
// canonical form, same introspection, same results.
func FuzzCompile(f *testing.F) {
	for _, e := range fuzzExprs {
		f.Add(e)
	}
	for _, c := range clientGoCases {
		f.Add(c.expr)
	}
	var seeds []any
	for _, d := range fuzzDocs {
		seeds = append(seeds, decode(f, d))
	}
	_, pod := fixture(f, "pod")
	seeds = append(seeds, pod)
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := CompileWithOptions(expr, fuzzOptions)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Expr != expr || se.Offset < 0 || se.Offset > len(expr) {
				t.Fatalf("%q: bad error %#v", expr, err)
			}
			_ = se.Error()
			return
		}
		canon := p.String()
		q, err := CompileWithOptions(canon, fuzzOptions)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not compile: %v", expr, canon, err)
		}
		if q.String() != canon {
			t.Fatalf("%q: canonical form %q recompiles as %q", expr, canon, q.String())
		}
		if p.IsTemplate() != q.IsTemplate() || p.SingleValued() != q.SingleValued() || !slices.EqualFunc(p.Fields(), q.Fields(), slices.Equal) {
			t.Fatalf("%q vs %q: introspection differs", expr, canon)
		}
		for _, obj := range seeds {
			a, b := evalObj(p, obj), evalObj(q, obj)
			if a != b {
				t.Fatalf("%q vs canonical %q: %+v != %+v", expr, canon, a, b)
			}
			if g := evalObj(generic(p), obj); g != a {
				t.Fatalf("%q: generic evaluator %+v != %+v", expr, g, a)
			}
		}
	})
}

// FuzzEval checks that evaluation never panics on any expression and
// document, and that evaluation on the decoded document and on its text
// agree.
func FuzzEval(f *testing.F) {
	for i, e := range fuzzExprs {
		f.Add(e, []byte(fuzzDocs[i%len(fuzzDocs)]))
		f.Add(e, []byte(fuzzDocs[(i+3)%len(fuzzDocs)]))
	}
	raw, _ := fixture(f, "widget")
	f.Add(`{.spec.items[?(@.weight>2)].name}`, raw)
	f.Add(`{..}`, []byte(`{"a":[{"b":{}},[],[[1]]]}`))
	f.Add(`{.a}`, []byte(`{"a":1,"a":2}`))
	for i, d := range dupDocs {
		f.Add(dupExprs[i%len(dupExprs)], []byte(d))
	}
	f.Add(`{.a[*]}`, []byte(`{"a":[1,2`))
	f.Add(`{..*}`, []byte(`{"a":"\ud800\u0041","\udc00\ud800":["\ud83d\ude00\ud800"]}`))
	f.Add(`{@}`, []byte(`[1"x,`+brackets(100)+`"]`))
	f.Add(`{.a}`, []byte(`{"a":`+strings.Repeat(`{"b":[1,2],"a":[`, 50)+`1`+strings.Repeat(`]}`, 50)+`}`))
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		p, err := CompileWithOptions(expr, fuzzOptions)
		if err != nil {
			return
		}
		// Any bytes: no panic.
		_, err1 := p.Eval(JSON(doc))
		_, err2 := p.ExecuteString(JSON(doc))
		err3 := p.Each(JSON(doc), func(v Value) bool { _ = v.String(); _ = v.Interface(); return true })
		noInternal(t, expr, err1, err2, err3)
		// Spans that do not describe the document: no panic either.
		wrong := IndexedJSON{Doc: doc, Spans: Spans{0, uint32(len(doc) / 2), 1, 1, 3, 2, 5, 1 << 31}}
		_, err4 := p.Eval(wrong)
		noInternal(t, expr, err4)
		if !cleanJSON(doc) {
			return
		}
		var obj any
		if err := k8sjson.Unmarshal(doc, &obj); err != nil {
			return // numbers out of range, too deep
		}
		a, b := evalObj(p, obj), evalRaw(p, doc)
		if a != b {
			t.Fatalf("%q on %s:\nEval          %+v\nEval on JSON  %+v", expr, doc, a, b)
		}
		for _, min := range []int{1, 8} {
			vs, err := p.Eval(IndexedJSON{Doc: doc, Spans: BuildSpans(nil, doc, min)})
			if c := (outcome{joined(vs), err != nil, a.text, a.tErr, a.json, a.jErr}); c != a {
				t.Fatalf("%q on %s: Eval on IndexedJSON (spans from %d bytes) %+v != %+v", expr, doc, min, c, a)
			}
		}
		if g := evalObj(generic(p), obj); g != a {
			t.Fatalf("%q on %s: generic evaluator %+v != %+v", expr, doc, g, a)
		}
	})
}

// FuzzBudget checks the budget on any expression, document and step
// limit: evaluation does not panic; no evaluation charges more steps than
// its budget; the work done, measured where it is done (see meter), never
// exceeds the steps charged, so that no work escapes the budget; and the
// canonical form of the expression compiles, with the same options, to
// the same canonical form.
func FuzzBudget(f *testing.F) {
	keys := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `,"k%d":%d`, i, i)
		}
		return "{" + b.String()[1:] + "}"
	}
	long := strings.Repeat("7", 300)
	seeds := []struct{ expr, doc string }{
		{`{.c[0,0,0][0,0,0][?(@.*)]}`, `{"c":[[[` + keys(200) + `]]]}`},
		{`{.c[0,0,0][0,0,0][?(@..*)]}`, `{"c":[[[` + keys(200) + `]]]}`},
		{`{.c[0,0,0][?(@.*==1)]}`, `{"c":[[` + keys(200) + `]]}`},
		{`{.m.*}`, `{"m":` + keys(300) + `}`},
		{`{.m}{.m}`, `{"m":` + keys(300) + `}`},
		{`{..*}`, `{"m":` + keys(100) + `,"n":[[[[1]]]]}`},
		{`{.a.a.a.a.a.a}`, strings.Repeat(`{"a":`, 6) + `"` + strings.Repeat("x", 2000) + `"` + strings.Repeat("}", 6)},
		{`{.c[0,0,0,0][0,0,0,0]}`, `{"c":[[` + long + `]]}`},
		{`{.c[0,0][?(@>1)]}`, `{"c":[[` + long + `,1.` + long + `]]}`},
		{`{.c[0,0,0][?(@.a==@.b)].a}`, `{"c":[[{"a":"` + strings.Repeat("s", 3000) + `","b":"` + strings.Repeat("s", 3000) + `"}]]}`},
		{`{@,@,@,@}`, `"` + strings.Repeat("r", 3000) + `"`},
		{`{range .c[0,0,0]}{@}{"\n"}{end}`, `{"c":[` + keys(100) + `]}`},
		{`{.a[*]}`, `{"a":[` + strings.Repeat("0,", 3000) + `0]}`},
		{`{.a[-1]}`, `{"a":[` + strings.Repeat("0,", 3000) + `0]}`},
		{`{.a}`, `{"a":1,"a":{"b":2},"\u0061":3}`},
		{strings.Repeat("{..*}", 10), `[[[]]]`},
		{`{.a[*].x}`, `{"a":[` + long + `,` + long + `]}`},
		{`{.a}{.a}`, `{"a":` + long + `}`},
		{`{.b}`, `{"a":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `,"b":1}`},
		{`{[0]}`, `[[{"a":[]}],"` + strings.Repeat("x", 3000) + `"]`},
		{`{.a}{@}`, `{"a":` + strings.Repeat(`{"b":0,"a":[`, 200) + `1` + strings.Repeat(`]}`, 200) + `}`},
	}
	for i, s := range seeds {
		f.Add(s.expr, []byte(s.doc), uint16(i*997))
	}
	for i, e := range fuzzExprs {
		f.Add(e, []byte(fuzzDocs[i%len(fuzzDocs)]), uint16(i*131))
	}
	f.Fuzz(func(t *testing.T, expr string, doc []byte, steps uint16) {
		opts := Options{MaxSteps: 1 + int(steps)%20000, MaxResults: 500}
		p, err := CompileWithOptions(expr, opts)
		if err != nil {
			return
		}
		q, err := CompileWithOptions(p.String(), opts)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not compile: %v", expr, p.String(), err)
		}
		if q.String() != p.String() {
			t.Fatalf("%q: canonical form %q recompiles as %q", expr, p.String(), q.String())
		}
		inputs := []any{JSON(doc), IndexedJSON{Doc: doc, Spans: BuildSpans(nil, doc, 1)}}
		if cleanJSON(doc) {
			var obj any
			if k8sjson.Unmarshal(doc, &obj) == nil {
				inputs = append(inputs, obj)
			}
			// Numbers as json.Number, which evaluation converts (and charges).
			d := json.NewDecoder(bytes.NewReader(doc))
			d.UseNumber()
			var nobj any
			if d.Decode(&nobj) == nil {
				inputs = append(inputs, nobj)
			}
		}
		for _, in := range inputs {
			for name, eval := range map[string]func() error{
				"Eval":          func() error { _, err := p.Eval(in); return err },
				"Each":          func() error { return p.Each(in, func(Value) bool { return true }) },
				"ExecuteString": func() error { _, err := p.ExecuteString(in); return err },
				"ExecuteJSON":   func() error { return p.ExecuteJSON(io.Discard, in) },
				"generic Eval":  func() error { _, err := generic(p).Eval(in); return err },
			} {
				var m workMeter
				meter = &m
				err := eval()
				meter = nil
				if err != nil && !errors.Is(err, ErrBudgetExceeded) && !errors.Is(err, ErrUnsupportedType) {
					t.Fatalf("%s %q on %.200q (%T): %v", name, expr, doc, in, err)
				}
				if m.charged > opts.MaxSteps {
					t.Fatalf("%s %q on %.200q (%T): %d steps charged, more than %d", name, expr, doc, in, m.charged, opts.MaxSteps)
				}
				if m.work > m.steps {
					t.Fatalf("%s %q on %.200q (%T): %d steps of work for %d charged", name, expr, doc, in, m.work, m.steps)
				}
			}
		}
	})
}
