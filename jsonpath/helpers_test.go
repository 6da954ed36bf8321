package jsonpath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// fixture returns a testdata JSON document, raw and decoded the way
// unstructured.Unstructured decodes it (integers as int64).
func fixture(tb testing.TB, name string) ([]byte, any) {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	return raw, decode(tb, string(raw))
}

func decode(tb testing.TB, s string) any {
	tb.Helper()
	var obj any
	if err := k8sjson.Unmarshal([]byte(s), &obj); err != nil {
		tb.Fatalf("decode %q: %v", s, err)
	}
	return obj
}

// show renders values as kind:text for comparisons and messages.
func show(vs []Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Kind().String() + ":" + v.String()
	}
	return out
}

func joined(vs []Value) string { return strings.Join(show(vs), " ") }

// generic returns a copy of p that always uses the generic evaluator, so
// that tests can check the specialized paths against it.
func generic(p *Path) *Path {
	g := *p
	g.mode, g.segs, g.keys = modeGeneric, nil, nil // see evalObj
	return &g
}

// evalAll evaluates p on obj and raw in every way the package offers and
// fails unless all agree; it returns the values.
func evalAll(tb testing.TB, p *Path, obj any, raw []byte) ([]Value, error) {
	tb.Helper()
	vs, err := p.Eval(obj)
	gvs, gerr := generic(p).Eval(obj)
	avs, aerr := p.AppendEval(make([]Value, 1, 2), obj)
	if len(avs) > 0 {
		avs = avs[1:]
	}
	jvs, jerr := p.Eval(JSON(raw))
	var each []Value
	eerr := p.Each(obj, func(v Value) bool { each = append(each, v); return true })
	var jeach []Value
	jeerr := p.Each(JSON(raw), func(v Value) bool { jeach = append(jeach, v.Clone()); return true })
	want := joined(vs)
	for name, got := range map[string][]Value{"generic Eval": gvs, "AppendEval": avs, "EvalJSON": jvs, "Each": each, "EachJSON": jeach} {
		if joined(got) != want {
			tb.Errorf("%s: %s = %q, Eval = %q", p, name, joined(got), want)
		}
	}
	for name, e := range map[string]error{"generic Eval": gerr, "AppendEval": aerr, "EvalJSON": jerr, "Each": eerr, "EachJSON": jeerr} {
		if (e == nil) != (err == nil) {
			tb.Errorf("%s: %s error %v, Eval error %v", p, name, e, err)
		}
	}
	return vs, err
}
