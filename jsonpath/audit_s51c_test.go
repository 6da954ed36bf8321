package jsonpath

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// s51cCases are expressions and objects, decoded (obj) or raw (raw) or both, built to
// do work the budget might not see: escaped strings, long literals and keys compared many
// times, floats printed, small maps visited, duplicate keys, unions of indexes, white
// space, nested brackets, trees descended, templates of many groups.
func s51cCases() []hostileCase {
	var cs []hostileCase
	esc := strings.Repeat(`\u00e9`, 200000)
	sur := strings.Repeat(`\ud83d\ude00`, 100000)
	bad := strings.Repeat(`\ud800`, 200000)
	nl := strings.Repeat(`\n`, 500000)
	for n, s := range map[string]string{"u00e9": esc, "surrogates": sur, "lone surrogates": bad, "newlines": nl} {
		doc := []byte(`{"c":[[["` + s + `"]]]}`)
		cs = append(cs,
			hostileCase{"raw escapes " + n + " filter", "{.c" + unionOf(100) + unionOf(100) + "[?(@=='x')]}", nil, doc},
			hostileCase{"raw escapes " + n + " print", "{.c" + unionOf(100) + unionOf(100) + "}", nil, doc},
			hostileCase{"raw escapes " + n + " list print", "{.c" + unionOf(100) + "}", nil, doc})
	}
	// long literal compared with many long strings
	lit := strings.Repeat("x", 4000)
	other := strings.Repeat("x", 3999) + "y"
	strs := make([]any, 200000)
	for i := range strs {
		strs[i] = other
	}
	cs = append(cs,
		hostileCase{"fast filter == long literal", "{.c[?(@=='" + lit + "')]}", map[string]any{"c": strs}, nil},
		hostileCase{"fast filter < long literal", "{.c[?(@<'" + lit + "')]}", map[string]any{"c": strs}, nil})
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
		hostileCase{"long key lookup in 8-key maps", "{.c[*]['" + key + "']}", map[string]any{"c": ms}, nil},
		hostileCase{"long key lookup in 100-key maps", "{.c[*]['" + key + "']}", map[string]any{"c": ms100}, nil},
		hostileCase{"long key filter in 8-key maps", "{.c[?(@['" + key[:4000-20] + "'])]}", map[string]any{"c": ms}, nil},
		hostileCase{"long key filter in 100-key maps", "{.c[?(@['" + key[:4000-20] + "'])]}", map[string]any{"c": ms100}, nil})

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
		hostileCase{"floats print", "{.c}", map[string]any{"c": fl}, []byte(fj.String())},
		hostileCase{"floats each", "{.c[*]}", map[string]any{"c": fl}, []byte(fj.String())},
		hostileCase{"floats filter", "{.c[?(@>0.5)]}", map[string]any{"c": fl}, []byte(fj.String())},
		hostileCase{"numbers filter", "{.c[?(@>0.5)]}", map[string]any{"c": num}, nil},
		hostileCase{"numbers print", "{.c}", map[string]any{"c": num}, nil})
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
		hostileCase{"tiny maps wildcard", "{.c[*].*}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps descent", "{..*}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps descent b", "{..b}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps print", "{.c}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps range print", "{range .c[*]}{@}{end}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps filter", "{.c[?(@.a==1)]}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps filter 2", "{.c[?(@.b==@.a)]}", map[string]any{"c": tiny}, []byte(tj.String())},
		hostileCase{"tiny maps slice step", "{.c[::3].b}", map[string]any{"c": tiny}, []byte(tj.String())})
	// raw duplicate keys
	dup := `{"c":{` + strings.Repeat(`"a":1,`, 1000000) + `"a":2}}`
	cs = append(cs,
		hostileCase{"raw duplicates", "{.c.a}", nil, []byte(dup)},
		hostileCase{"raw duplicates union", "{.c['a','a','a','a']}", nil, []byte(dup)},
		hostileCase{"raw duplicates print", "{.c}", nil, []byte(dup)},
		hostileCase{"raw duplicates wildcard", "{.c.*}", nil, []byte(dup)})
	// unions of raw indexes
	arr := `{"c":[` + strings.Repeat(`1,`, 1000000) + `1]}`
	cs = append(cs,
		hostileCase{"raw union of indexes", "{.c" + unionOf(400) + "}", nil, []byte(arr)},
		hostileCase{"raw union of far indexes", "{.c[" + strings.TrimSuffix(strings.Repeat("999999,", 400), ",") + "]}", nil, []byte(arr)},
		hostileCase{"raw union of negative indexes", "{.c[" + strings.TrimSuffix(strings.Repeat("-1,", 400), ",") + "]}", nil, []byte(arr)},
		hostileCase{"raw slice step", "{.c[::100000]}", nil, []byte(arr)},
		hostileCase{"raw slice neg", "{.c[-2:]}", nil, []byte(arr)})
	// nested brackets for ExecuteJSON
	nb := "[" + strings.Repeat("[[[[]]]],", 300000) + "[]]"
	var nbo []any
	for i := 0; i < 300000; i++ {
		nbo = append(nbo, []any{[]any{[]any{[]any{}}}})
	}
	cs = append(cs, hostileCase{"nested brackets", "{@}", nbo, []byte(nb)},
		hostileCase{"nested brackets descent", "{..*}", nbo, []byte(nb)})

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
			hostileCase{"small escapes " + n + " filter", "{.c" + unionOf(100) + unionOf(100) + "[?(@=='x')]}", nil, doc},
			hostileCase{"small escapes " + n + " print", "{.c" + unionOf(100) + unionOf(100) + "}", nil, doc},
			hostileCase{"small escapes " + n + " list print", "{.c" + unionOf(100) + "}", nil, doc})
	}

	// white space between items
	ws := strings.Repeat(" ", 8<<20)
	cs = append(cs,
		hostileCase{"raw white space elements", "{.a[*]}", nil, []byte(`{"a":[1,` + ws + `1]}`)},
		hostileCase{"raw white space members", "{.a.b}", nil, []byte(`{"a":{"x":1,` + ws + `"b":1}}`)},
		hostileCase{"raw white space wildcard union", "{.c" + unionOf(100) + unionOf(100) + ".*}", nil, []byte(`{"c":[[{` + ws[:1<<20] + `}]]}`)},
		hostileCase{"raw white space end", "{.c" + unionOf(100) + unionOf(100) + "[*]}", nil, []byte(`{"c":[[[1` + ws[:1<<20] + `]]]}`)})
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
		hostileCase{"tree descent", "{..*}", t, tb},
		hostileCase{"tree descent a", "{..a}", t, tb},
		hostileCase{"tree descent filter", "{..c[?(@..a)]}", t, tb},
		hostileCase{"tree descent range print", "{range ..a}{@}{end}", t, tb},
		hostileCase{"tree descent print", "{..c}", t, tb})

	// ExecuteJSON groups: one indented per {} of a template
	ints := make([]any, 300000)
	for i := range ints {
		ints[i] = int64(1)
	}
	ij := []byte(`{"c":[` + strings.Repeat("1,", 299999) + `1]}`)
	cs = append(cs,
		hostileCase{"range groups", "{range .c[*]}{@}{end}", map[string]any{"c": ints}, ij},
		hostileCase{"range groups 4", "{range .c[*]}{@}{@}{@}{@}{end}", map[string]any{"c": ints}, ij},
		hostileCase{"range groups missing", "{range .c[*]}{.x}{.y}{.z}{end}", map[string]any{"c": ints}, ij},
		hostileCase{"many groups", strings.Repeat("{.c[0]}", 580), map[string]any{"c": ints}, ij})
	return cs
}

// TestS51cInputsAreBounded checks, as TestHostileInputsAreBounded does, that each probe
// either completes or stops with the budget error, within its steps, and that the work
// measured where it is done does not exceed the steps charged.
func TestS51cInputsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large inputs")
	}
	checkBounded(t, s51cCases())
}

// BenchmarkS51c times each probe of s51cCases in each way, in CPU time per evaluation
// (S51C_ONLY selects the cases whose name contains it):
//
//	GOMAXPROCS=1 go test -run '^$' -bench S51c -benchtime 5x ./jsonpath/
func BenchmarkS51c(b *testing.B) {
	benchHostile(b, s51cCases(), os.Getenv("S51C_ONLY"))
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
