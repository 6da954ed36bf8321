package jsonpath

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// s51cCase is an expression and an object, decoded (obj) or raw (raw) or both, built to
// do work the budget might not see: escaped strings, long literals and keys compared many
// times, floats printed, small maps visited, duplicate keys, unions of indexes, white
// space, nested brackets, trees descended, templates of many groups.
type s51cCase struct {
	name string
	expr string
	obj  any
	raw  []byte
}

func s51cCases() []s51cCase {
	var cs []s51cCase
	esc := strings.Repeat(`\u00e9`, 200000)
	sur := strings.Repeat(`\ud83d\ude00`, 100000)
	bad := strings.Repeat(`\ud800`, 200000)
	nl := strings.Repeat(`\n`, 500000)
	for n, s := range map[string]string{"u00e9": esc, "surrogates": sur, "lone surrogates": bad, "newlines": nl} {
		doc := []byte(`{"c":[[["` + s + `"]]]}`)
		cs = append(cs,
			s51cCase{"raw escapes " + n + " filter", "{.c" + unionOf(100) + unionOf(100) + "[?(@=='x')]}", nil, doc},
			s51cCase{"raw escapes " + n + " print", "{.c" + unionOf(100) + unionOf(100) + "}", nil, doc},
			s51cCase{"raw escapes " + n + " list print", "{.c" + unionOf(100) + "}", nil, doc})
	}
	// long literal compared with many long strings
	lit := strings.Repeat("x", 4000)
	other := strings.Repeat("x", 3999) + "y"
	strs := make([]any, 200000)
	for i := range strs {
		strs[i] = other
	}
	cs = append(cs,
		s51cCase{"fast filter == long literal", "{.c[?(@=='" + lit + "')]}", map[string]any{"c": strs}, nil},
		s51cCase{"fast filter < long literal", "{.c[?(@<'" + lit + "')]}", map[string]any{"c": strs}, nil})
	// long keys
	key := strings.Repeat("k", 4000)
	m8 := map[string]any{}
	for i := 0; i < 8; i++ {
		m8[key[:3999]+string(rune('a'+i))] = int64(i)
	}
	m100 := map[string]any{}
	for i := 0; i < 100; i++ {
		m100[key[:3998]+string(rune('a'+i%26))+string(rune('a'+i/26))] = int64(i)
	}
	ms := make([]any, 200000)
	for i := range ms {
		ms[i] = m8
	}
	ms100 := make([]any, 200000)
	for i := range ms100 {
		ms100[i] = m100
	}
	cs = append(cs,
		s51cCase{"long key lookup in 8-key maps", "{.c[*]['" + key + "']}", map[string]any{"c": ms}, nil},
		s51cCase{"long key lookup in 100-key maps", "{.c[*]['" + key + "']}", map[string]any{"c": ms100}, nil},
		s51cCase{"long key filter in 8-key maps", "{.c[?(@['" + key[:4000-20] + "'])]}", map[string]any{"c": ms}, nil},
		s51cCase{"long key filter in 100-key maps", "{.c[?(@['" + key[:4000-20] + "'])]}", map[string]any{"c": ms100}, nil})

	// floats
	fl := make([]any, 300000)
	num := make([]any, 300000)
	var fj strings.Builder
	fj.WriteString(`{"c":[`)
	for i := range fl {
		fl[i] = 1.2345678901234567e-300 * float64(i+1)
		num[i] = json.Number("1.2345678901234567e-300")
		if i > 0 {
			fj.WriteByte(',')
		}
		fj.WriteString(strconv.FormatFloat(fl[i].(float64), 'g', -1, 64))
	}
	fj.WriteString("]}")
	cs = append(cs,
		s51cCase{"floats print", "{.c}", map[string]any{"c": fl}, []byte(fj.String())},
		s51cCase{"floats each", "{.c[*]}", map[string]any{"c": fl}, []byte(fj.String())},
		s51cCase{"floats filter", "{.c[?(@>0.5)]}", map[string]any{"c": fl}, []byte(fj.String())},
		s51cCase{"numbers filter", "{.c[?(@>0.5)]}", map[string]any{"c": num}, nil},
		s51cCase{"numbers print", "{.c}", map[string]any{"c": num}, nil})
	// tiny maps
	tiny := make([]any, 300000)
	var tj strings.Builder
	tj.WriteString(`{"c":[`)
	for i := range tiny {
		tiny[i] = map[string]any{"a": int64(1), "b": int64(2)}
		if i > 0 {
			tj.WriteByte(',')
		}
		tj.WriteString(`{"a":1,"b":2}`)
	}
	tj.WriteString("]}")
	cs = append(cs,
		s51cCase{"tiny maps wildcard", "{.c[*].*}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps descent", "{..*}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps descent b", "{..b}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps print", "{.c}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps range print", "{range .c[*]}{@}{end}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps filter", "{.c[?(@.a==1)]}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps filter 2", "{.c[?(@.b==@.a)]}", map[string]any{"c": tiny}, []byte(tj.String())},
		s51cCase{"tiny maps slice step", "{.c[::3].b}", map[string]any{"c": tiny}, []byte(tj.String())})
	// raw duplicate keys
	dup := `{"c":{` + strings.Repeat(`"a":1,`, 1000000) + `"a":2}}`
	cs = append(cs,
		s51cCase{"raw duplicates", "{.c.a}", nil, []byte(dup)},
		s51cCase{"raw duplicates union", "{.c['a','a','a','a']}", nil, []byte(dup)},
		s51cCase{"raw duplicates print", "{.c}", nil, []byte(dup)},
		s51cCase{"raw duplicates wildcard", "{.c.*}", nil, []byte(dup)})
	// unions of raw indexes
	arr := `{"c":[` + strings.Repeat(`1,`, 1000000) + `1]}`
	cs = append(cs,
		s51cCase{"raw union of indexes", "{.c" + unionOf(400) + "}", nil, []byte(arr)},
		s51cCase{"raw union of far indexes", "{.c[" + strings.TrimSuffix(strings.Repeat("999999,", 400), ",") + "]}", nil, []byte(arr)},
		s51cCase{"raw union of negative indexes", "{.c[" + strings.TrimSuffix(strings.Repeat("-1,", 400), ",") + "]}", nil, []byte(arr)},
		s51cCase{"raw slice step", "{.c[::100000]}", nil, []byte(arr)},
		s51cCase{"raw slice neg", "{.c[-2:]}", nil, []byte(arr)})
	// nested brackets for ExecuteJSON
	nb := "[" + strings.Repeat("[[[[]]]],", 300000) + "[]]"
	var nbo []any
	for i := 0; i < 300000; i++ {
		nbo = append(nbo, []any{[]any{[]any{[]any{}}}})
	}
	cs = append(cs, s51cCase{"nested brackets", "{@}", nbo, []byte(nb)},
		s51cCase{"nested brackets descent", "{..*}", nbo, []byte(nb)})

	// escaped strings small enough to be parsed many times
	for n, s := range map[string]string{
		"lone surrogates":       strings.Repeat(`\ud800`, 10000),
		"surrogate pairs":       strings.Repeat(`\ud83d\ude00`, 5000),
		"backslashes + fffd":    `\ud800` + strings.Repeat(`\\`, 30000),
		"u0001 + fffd":          `\ud800` + strings.Repeat(`\u0001`, 10000),
		"utf8 invalid + escape": `\n` + strings.Repeat("\xff", 30000),
	} {
		doc := []byte(`{"c":[[["` + s + `"]]]}`)
		cs = append(cs,
			s51cCase{"small escapes " + n + " filter", "{.c" + unionOf(100) + unionOf(100) + "[?(@=='x')]}", nil, doc},
			s51cCase{"small escapes " + n + " print", "{.c" + unionOf(100) + unionOf(100) + "}", nil, doc},
			s51cCase{"small escapes " + n + " list print", "{.c" + unionOf(100) + "}", nil, doc})
	}

	// white space between items
	ws := strings.Repeat(" ", 8<<20)
	cs = append(cs,
		s51cCase{"raw white space elements", "{.a[*]}", nil, []byte(`{"a":[1,` + ws + `1]}`)},
		s51cCase{"raw white space members", "{.a.b}", nil, []byte(`{"a":{"x":1,` + ws + `"b":1}}`)},
		s51cCase{"raw white space wildcard union", "{.c" + unionOf(100) + unionOf(100) + ".*}", nil, []byte(`{"c":[[{` + ws[:1<<20] + `}]]}`)},
		s51cCase{"raw white space end", "{.c" + unionOf(100) + unionOf(100) + "[*]}", nil, []byte(`{"c":[[[1` + ws[:1<<20] + `]]]}`)})
	// wide and deep trees
	var tree func(d int) any
	tree = func(d int) any {
		if d == 0 {
			return int64(1)
		}
		return map[string]any{"a": tree(d - 1), "b": tree(d - 1), "c": []any{tree(d - 1)}}
	}
	t := tree(11)
	tb, _ := json.Marshal(t)
	cs = append(cs,
		s51cCase{"tree descent", "{..*}", t, tb},
		s51cCase{"tree descent a", "{..a}", t, tb},
		s51cCase{"tree descent filter", "{..c[?(@..a)]}", t, tb},
		s51cCase{"tree descent range print", "{range ..a}{@}{end}", t, tb},
		s51cCase{"tree descent print", "{..c}", t, tb})

	// ExecuteJSON groups: one indented per {} of a template
	ints := make([]any, 300000)
	for i := range ints {
		ints[i] = int64(1)
	}
	ij := []byte(`{"c":[` + strings.Repeat("1,", 299999) + `1]}`)
	cs = append(cs,
		s51cCase{"range groups", "{range .c[*]}{@}{end}", map[string]any{"c": ints}, ij},
		s51cCase{"range groups 4", "{range .c[*]}{@}{@}{@}{@}{end}", map[string]any{"c": ints}, ij},
		s51cCase{"range groups missing", "{range .c[*]}{.x}{.y}{.z}{end}", map[string]any{"c": ints}, ij},
		s51cCase{"many groups", strings.Repeat("{.c[0]}", 580), map[string]any{"c": ints}, ij})
	return cs
}

// s51cWays returns the ways of evaluating p on in: ExecuteString, ExecuteJSON and, for a
// path, Eval, Each, and Eval with its results printed and decoded.
func s51cWays(p *Path, in any) map[string]func() error {
	ways := map[string]func() error{
		"ExecuteString": func() error { _, err := p.ExecuteString(in); return err },
		"ExecuteJSON":   func() error { return p.ExecuteJSON(io.Discard, in) },
	}
	if !p.IsTemplate() {
		ways["Eval"] = func() error { _, err := p.Eval(in); return err }
		ways["Each"] = func() error { return p.Each(in, func(Value) bool { return true }) }
		ways["EvalPrint"] = func() error {
			vs, err := p.Eval(in)
			for _, v := range vs {
				benchSink += len(v.String())
				if v.Interface() == nil {
					benchSink++
				}
			}
			return err
		}
	}
	return ways
}

func (c s51cCase) inputs() []hostileInput {
	return hostileCase{c.name, c.expr, c.obj, c.raw}.inputs()
}

// TestS51cInputsAreBounded checks, as TestHostileInputsAreBounded does, that each probe
// either completes or stops with the budget error, within its steps, and that the work
// measured where it is done does not exceed the steps charged.
func TestS51cInputsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large inputs")
	}
	for _, c := range s51cCases() {
		p := MustCompile(c.expr)
		for _, in := range c.inputs() {
			t.Run(c.name+"/"+in.kind, func(t *testing.T) {
				cpu := cpuTime()
				err, m := measure(p, in.obj)
				cpu = cpuTime() - cpu
				if err != nil && !errors.Is(err, ErrBudgetExceeded) {
					t.Fatalf("%v", err)
				}
				evals := 4
				if p.IsTemplate() {
					evals = 2
				}
				if m.charged > evals*DefaultMaxSteps {
					t.Errorf("%d steps charged, more than %d", m.charged, evals*DefaultMaxSteps)
				}
				if lim := m.steps + evals*(1+len(c.raw)/scanBytesPerStep); m.work > lim {
					t.Errorf("%d steps of work, beyond the %d charged", m.work, lim)
				}
				t.Logf("%d evaluations, %v of CPU: %d steps charged, %d of work, error: %v", evals, cpu, m.charged, m.work, err)
			})
		}
	}
}

// BenchmarkS51c times each probe of s51cCases in each way, in CPU time per evaluation
// (S51C_ONLY selects the cases whose name contains it):
//
//	GOMAXPROCS=1 go test -run '^$' -bench S51c -benchtime 5x ./jsonpath/
func BenchmarkS51c(b *testing.B) {
	filter := os.Getenv("S51C_ONLY")
	for _, c := range s51cCases() {
		if filter != "" && !strings.Contains(c.name, filter) {
			continue
		}
		p := MustCompile(c.expr)
		for _, in := range c.inputs() {
			for way, f := range s51cWays(p, in.obj) {
				b.Run(c.name+"/"+in.kind+"/"+way, func(b *testing.B) {
					cpu0 := cpuTime()
					for b.Loop() {
						if err := f(); err != nil && !errors.Is(err, ErrBudgetExceeded) {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// BenchmarkS51cSparseMap: a decoded map that held a million keys, all but two since
// deleted. Go maps do not shrink, and ranging over one visits its whole capacity: each
// visit of the map (sorting its two keys to apply the wildcard) costs milliseconds, where
// the budget charges it by its length, a few steps. Decoders never build such maps (they
// only insert); a program that deletes keys from a large decoded object can.
//
//	GOMAXPROCS=1 go test -run '^$' -bench S51cSparseMap -benchtime 3x ./jsonpath/
func BenchmarkS51cSparseMap(b *testing.B) {
	sparse := map[string]any{}
	for i := 0; i < 1000000; i++ {
		sparse[strconv.Itoa(i)] = int64(i)
	}
	for i := 2; i < 1000000; i++ {
		delete(sparse, strconv.Itoa(i))
	}
	p := MustCompile("{.c" + unionOf(100) + ".*}")
	obj := map[string]any{"c": []any{sparse}}
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := p.ExecuteString(obj); err != nil && !errors.Is(err, ErrBudgetExceeded) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
