package jsonpath

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evalDoc is the document of TestEval.
const evalDoc = `{
  "a": {"b": 1, "c.d": 2, "e": [1, 2.5, "x", null, {"f": true}], "g": {"z": 26, "y": 25}},
  "n": null,
  "t": true,
  "s": "str",
  "i": 42,
  "big": 9223372036854775807,
  "over": 9223372036854775808,
  "exact": 9007199254740993,
  "fl": 1.0,
  "list": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  "objs": [
    {"k": "a", "v": 1, "w": 1.0, "b": true, "l": [1], "m": {"x": 1}, "n": null, "p": {"q": [{"r": 1}]}},
    {"k": "b", "v": 2, "w": 2.5, "b": false, "l": [1, 2], "m": {}, "x": "1"},
    {"k": "c", "v": 3, "w": 3, "l": [], "n": "null", "p": {"q": [{"r": 2}, {"r": 3}]}},
    {"k": "d", "v": -1, "w": -0.5, "b": "true", "x": 1},
    "scalar",
    null
  ],
  "deep": {"x": {"x": {"x": 1, "y": [{"x": 2}]}}},
  "odd": {"": "empty", " ": "space", "a'b": "quote", "a\"b": "dquote", "a\\b": "backslash", "*": "star", "@": "at", "$": "dollar", "1": "one", "[x]": "brackets", "ü": "umlaut"}
}`

func TestEval(t *testing.T) {
	raw := []byte(evalDoc)
	obj := decode(t, evalDoc)
	cases := []struct {
		expr string
		want string // values as kind:text, space-separated
	}{
		// Fields and scalars, with their kinds.
		{`{.a.b}`, "int:1"},
		{`{.n}`, "null:null"},
		{`{.t}`, "bool:true"},
		{`{.s}`, "string:str"},
		{`{.big}`, "int:9223372036854775807"},
		{`{.over}`, "float:9.223372036854776e+18"},
		{`{.exact}`, "int:9007199254740993"},
		{`{.fl}`, "float:1"},
		{`{.a.g}`, `map:{"y":25,"z":26}`},
		{`{.a.e}`, `list:[1,2.5,"x",null,{"f":true}]`},
		{`{@.a.b}`, "int:1"},
		{`{$.a.b}`, "int:1"},
		{`.a.b`, "int:1"},
		{`{.missing}`, ""},
		{`{.a.b.c}`, ""},
		{`{.n.x}`, ""},
		{`{.s.x}`, ""},
		{`{.a.e.x}`, ""},
		{`{.a['c.d']}`, "int:2"},
		{`{.a.c\.d}`, "int:2"},
		{`{.a["c.d"]}`, "int:2"},
		// Keys that need quoting.
		{`{.odd['']}`, "string:empty"},
		{`{.odd[' ']}`, "string:space"},
		{`{.odd['a\'b']}`, "string:quote"},
		{`{.odd["a\"b"]}`, "string:dquote"},
		{`{.odd['a\\b']}`, "string:backslash"},
		{`{.odd.a\\b}`, "string:backslash"},
		{`{.odd.a\'b}`, "string:quote"},
		{`{.odd['*']}`, "string:star"},
		{`{.odd.\*}`, "string:star"},
		{`{.odd['@']}`, "string:at"},
		{`{.odd.\@}`, "string:at"},
		{`{.odd['$']}`, "string:dollar"},
		{`{.odd.1}`, "string:one"},
		{`{.odd['1']}`, "string:one"},
		{`{.odd['[x]']}`, "string:brackets"},
		{`{.odd.ü}`, "string:umlaut"},
		{`{.odd['\u00fc']}`, "string:umlaut"},
		// Indexes and slices.
		{`{.list[0]}`, "int:0"},
		{`{.list[9]}`, "int:9"},
		{`{.list[10]}`, ""},
		{`{.list[-1]}`, "int:9"},
		{`{.list[-10]}`, "int:0"},
		{`{.list[-11]}`, ""},
		{`{.list[2:5]}`, "int:2 int:3 int:4"},
		{`{.list[:3]}`, "int:0 int:1 int:2"},
		{`{.list[7:]}`, "int:7 int:8 int:9"},
		{`{.list[-2:]}`, "int:8 int:9"},
		{`{.list[:-8]}`, "int:0 int:1"},
		{`{.list[::3]}`, "int:0 int:3 int:6 int:9"},
		{`{.list[1::4]}`, "int:1 int:5 int:9"},
		{`{.list[1:8:3]}`, "int:1 int:4 int:7"},
		{`{.list[::9223372036854775807]}`, "int:0"},
		{`{.list[5:2]}`, ""},
		{`{.list[-100:2]}`, "int:0 int:1"},
		{`{.list[8:100]}`, "int:8 int:9"},
		{`{.list[-9223372036854775808:1]}`, "int:0"},
		{`{.a[0]}`, ""},
		{`{.s[0]}`, ""},
		{`{.a[0:1]}`, ""},
		// Wildcards: arrays in order, maps in key order; nothing for scalars.
		{`{.a.e[*]}`, `int:1 float:2.5 string:x null:null map:{"f":true}`},
		{`{.a.e.*}`, `int:1 float:2.5 string:x null:null map:{"f":true}`},
		{`{.a.g[*]}`, "int:25 int:26"},
		{`{.a.g.*}`, "int:25 int:26"},
		{`{.s[*]}`, ""},
		{`{.n[*]}`, ""},
		{`{.objs[*].k}`, "string:a string:b string:c string:d"},
		{`{.objs[*].l[*]}`, "int:1 int:1 int:2"},
		{`{.objs[*].m.*}`, "int:1"},
		// Unions: branch by branch, over all values that reach them (as kubectl).
		{`{.list[0,9,0]}`, "int:0 int:9 int:0"},
		{`{.list[1:3,-1]}`, "int:1 int:2 int:9"},
		{`{.objs[*]['k','v']}`, "string:a string:b string:c string:d int:1 int:2 int:3 int:-1"},
		{`{.objs[0:2]['k',"v"].x}`, ""},
		{`{.objs[0:2]['m','l'][*]}`, "int:1 int:1 int:1 int:2"},
		{`{.a['b','c.d',*]}`, `int:1 int:2 int:1 int:2 list:[1,2.5,"x",null,{"f":true}] map:{"y":25,"z":26}`},
		{`{.a.b,.s,.missing,.t}`, "int:1 string:str bool:true"},
		{`{.objs[*]['k','v'][0]}`, ""},
		// Recursive descent: pre-order, map members in key order; objects
		// and arrays only.
		{`{.deep..x}`, `map:{"x":{"x":1,"y":[{"x":2}]}} map:{"x":1,"y":[{"x":2}]} int:1 int:2`},
		{`{.deep..}`, `map:{"x":{"x":{"x":1,"y":[{"x":2}]}}} map:{"x":{"x":1,"y":[{"x":2}]}} map:{"x":1,"y":[{"x":2}]} list:[{"x":2}] map:{"x":2}`},
		{`{.deep..*}`, `map:{"x":{"x":1,"y":[{"x":2}]}} map:{"x":1,"y":[{"x":2}]} int:1 list:[{"x":2}] map:{"x":2} int:2`},
		{`{.deep..[0].x}`, "int:2"},
		{`{.deep..['x','y']}`, `map:{"x":{"x":1,"y":[{"x":2}]}} map:{"x":1,"y":[{"x":2}]} int:1 int:2 list:[{"x":2}]`},
		{`{.a..f}`, "bool:true"},
		{`{.s..x}`, ""},
		{`{.objs[0]..r}`, "int:1"},
		// Filters: existence (null exists), comparisons of every kind.
		{`{.objs[?(@.n)].k}`, "string:a string:c"},
		{`{.objs[?(@.b)].k}`, "string:a string:b string:d"},
		{`{.objs[?(@.l[1])].k}`, "string:b"},
		{`{.objs[?(@)].k}`, "string:a string:b string:c string:d"},
		{`{.objs[?(@.v==1)].k}`, "string:a"},
		{`{.objs[?(@.v==1.0)].k}`, "string:a"},
		{`{.objs[?(@.w==1)].k}`, "string:a"},
		{`{.objs[?(@.w==3)].k}`, "string:c"},
		{`{.objs[?(@.v!=1)].k}`, "string:b string:c string:d"},
		{`{.objs[?(@.v>1)].k}`, "string:b string:c"},
		{`{.objs[?(@.v>=2)].k}`, "string:b string:c"},
		{`{.objs[?(@.v<2)].k}`, "string:a string:d"},
		{`{.objs[?(@.v<=-1)].k}`, "string:d"},
		{`{.objs[?(@.w>2)].k}`, "string:b string:c"},
		{`{.objs[?(@.w<0)].k}`, "string:d"},
		{`{.objs[?(@.w>=2.5)].k}`, "string:b string:c"},
		{`{.objs[?(@.w>2.4)].k}`, "string:b string:c"},
		{`{.objs[?(@.v<-0.5)].k}`, "string:d"},
		{`{.objs[?(@.v>-1.5)].k}`, "string:a string:b string:c string:d"},
		{`{.objs[?(@.k>"b")].k}`, "string:c string:d"},
		{`{.objs[?(@.k<="b")].k}`, "string:a string:b"},
		{`{.objs[?(@.k!="b")].k}`, "string:a string:c string:d"},
		{`{.objs[?(@.b==true)].k}`, "string:a"},
		{`{.objs[?(@.b!=true)].k}`, "string:b string:d"},
		{`{.objs[?(@.b=="true")].k}`, "string:d"},
		{`{.objs[?(@.b>false)].k}`, ""},
		{`{.objs[?(@.x==1)].k}`, "string:d"},
		{`{.objs[?(@.x=="1")].k}`, "string:b"},
		{`{.objs[?(@.x!=1)].k}`, "string:b"},
		{`{.objs[?(@.n==@.n)].k}`, "string:a string:c"},
		{`{.objs[?(@.n!=@.n)].k}`, ""},
		{`{.objs[?(@.m==@.m)].k}`, ""},
		{`{.objs[?(@.m!=@.m)].k}`, "string:a string:b"},
		{`{.objs[?(@.l<@.l)].k}`, ""},
		{`{.objs[?(@.v==@.w)].k}`, "string:a string:c"},
		{`{.objs[?(@.v<@.w)].k}`, "string:b string:d"},
		{`{.objs[?(1==@.v)].k}`, "string:a"},
		{`{.objs[?(2<@.v)].k}`, "string:c"},
		{`{.objs[?(true)].k}`, "string:a string:b string:c string:d"},
		{`{.objs[?("a"=="a")].k}`, "string:a string:b string:c string:d"},
		{`{.objs[?(1==2)].k}`, ""},
		{`{.objs[?(@.l[*]==1)].k}`, "string:a"},
		{`{.objs[?(@.l[*]!=2)].k}`, "string:a"},
		{`{.objs[?(@.p.q[?(@.r>1)])].k}`, "string:c"},
		{`{.objs[?(@.p.q[?(@.r>1)].r==3)].k}`, ""},
		{`{.objs[?(@.p.q[-1].r==3)].k}`, "string:c"},
		{`{.objs[?(@..r==1)].k}`, "string:a"},
		{`{.objs[?(@['k','v']=="a")].k}`, ""},
		{`{.objs[?($.k=="a")].k}`, "string:a"},
		{`{.objs[?(.k=="b")].k}`, "string:b"},
		{`{.objs[?(@.k=="a")][?(@.l)].k}`, ""},
		{`{.a.e[?(@==1)]}`, "int:1"},
		{`{.a.e[?(@=="x")]}`, "string:x"},
		{`{.a.e[?(@>1)]}`, "float:2.5"},
		{`{.a.e[?(@.f==true)].f}`, "bool:true"},
		{`{.a[?(@.b)]}`, ""},
		{`{.n[?(@.b)]}`, ""},
		// Literals.
		{`{"x"}`, "string:x"},
		{`{'a\tb'}`, "string:a\tb"},
		{`{3}`, "int:3"},
		{`{-3.25}`, "float:-3.25"},
		{`{true}`, "bool:true"},
		{`{false,"y",.a.b}`, "bool:false string:y int:1"},
		// Templates evaluate to their text.
		{`{.a.b}/{.s}`, "string:1/str"},
		{`{range .objs[*]}{.k}{end}`, "string:abcd"},
		{`{.objs[*].k}`, "string:a string:b string:c string:d"},
		{`x{.missing}y`, "string:xy"},
		{`text`, "string:text"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			p, err := Compile(c.expr)
			require.NoError(t, err)
			vs, err := evalAll(t, p, obj, raw)
			require.NoError(t, err)
			assert.Equal(t, c.want, joined(vs))
		})
	}
}

func TestExecute(t *testing.T) {
	raw := []byte(evalDoc)
	obj := decode(t, evalDoc)
	cases := []struct{ expr, want string }{
		{`{.a.b}`, "1"},
		{`{.a.e[*]}`, `1 2.5 x null {"f":true}`},
		{`{.a.b,.s}`, "1 str"},
		{`{.a.b}{.s}`, "1str"},
		{`{.a.b} {.s}`, "1 str"},
		{`{.missing}`, ""},
		{`[{.missing}]`, "[]"},
		{`{.objs[?(@.k=="zz")].k}|`, "|"},
		{`{range .objs[*]}{.k}:{.v};{end}`, "a:1;b:2;c:3;d:-1;:;:;"},
		{`{range .objs[0:2]}{range .l[*]}<{@}>{end}|{end}`, "<1>|<1><2>|"},
		{`{range .a.g}{.y}{end}`, "25"},
		{`{range .a.g.*}{@}{end}`, "2526"},
		{`{range .missing[*]}x{end}done`, "done"},
		{`{range .objs[*].l, .list[0:2]}({@}){end}`, "([1])([1,2])([])(0)(1)"},
		{`{range .objs[0].p.q[*]}{$.r}{@.r}{.r}{end}`, "111"},
		{`{"\n"}{'\t'}{"{"}{"}"}`, "\n\t{}"},
		{`{.over} {.big} {.fl}`, "9.223372036854776e+18 9223372036854775807 1"},
		{`{.odd}`, `{"":"empty"," ":"space","$":"dollar","*":"star","1":"one","@":"at","[x]":"brackets","a\"b":"dquote","a'b":"quote","a\\b":"backslash","ü":"umlaut"}`},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			p, err := Compile(c.expr)
			require.NoError(t, err)
			got, err := p.ExecuteString(obj)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			got, err = p.ExecuteString(JSON(raw))
			require.NoError(t, err)
			assert.Equal(t, c.want, got, "JSON")
			var b strings.Builder
			require.NoError(t, p.Execute(&b, obj))
			assert.Equal(t, c.want, b.String())
			b.Reset()
			require.NoError(t, p.Execute(&b, JSON(raw)))
			assert.Equal(t, c.want, b.String())
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestExecuteWriterError(t *testing.T) {
	p := MustCompile(`{.a}`)
	assert.EqualError(t, p.Execute(failingWriter{}, map[string]any{"a": 1}), "disk full")
	assert.EqualError(t, p.Execute(failingWriter{}, JSON(`{"a":1}`)), "disk full")
}

func TestGoTypes(t *testing.T) {
	type custom struct{ A int }
	obj := map[string]any{
		"int": 1, "int8": int8(-8), "int16": int16(16), "int32": int32(-32),
		"uint": uint(7), "uint8": uint8(8), "uint16": uint16(16), "uint32": uint32(32),
		"uint64": uint64(64), "hugeuint": uint64(math.MaxUint64),
		"f32": float32(1.1), "f64": 1.1,
		"num": json.Number("12"), "numf": json.Number("1.50"), "numbad": json.Number("x"),
		"list":   []any{int32(3), float32(0.5)},
		"strs":   []string{"a"},
		"labels": map[string]string{"a": "b"},
		"custom": custom{A: 1},
		"nilmap": map[string]any(nil),
	}
	cases := []struct{ expr, want string }{
		{`{.int} {.int8} {.int16} {.int32}`, "1 -8 16 -32"},
		{`{.uint} {.uint8} {.uint16} {.uint32} {.uint64} {.hugeuint}`, "7 8 16 32 64 1.8446744073709552e+19"},
		{`{.f32} {.f64}`, "1.1 1.1"},
		{`{.num} {.numf} {.numbad}`, "12 1.5 x"},
		{`{.list}`, "[3,0.5]"},
		{`{.list[?(@>1)]}`, "3"},
		{`{.nilmap} {.nilmap.x}`, "null "},
	}
	for _, c := range cases {
		got, err := MustCompile(c.expr).ExecuteString(obj)
		require.NoError(t, err, c.expr)
		assert.Equal(t, c.want, got, c.expr)
	}
	vs, err := MustCompile(`{.int}`).Eval(obj)
	require.NoError(t, err)
	assert.Equal(t, int64(1), vs[0].Interface())
	vs, err = MustCompile(`{.f32}`).Eval(obj)
	require.NoError(t, err)
	assert.Equal(t, KindFloat, vs[0].Kind())
	assert.Equal(t, float64(float32(1.1)), vs[0].Interface())

	// Unsupported types are an error when evaluation has to look into
	// them, with every evaluator.
	for _, expr := range []string{`{.strs[0]}`, `{.labels.a}`, `{.custom.A}`, `{.custom}`, `{.strs[*]}`, `{.labels[?(@.x)]}`, `{.custom,.int}`, `{.int}{.custom}`, `{..zzz}`, `{.strs..x}`} {
		p := MustCompile(expr)
		for name, p := range map[string]*Path{"fast": p, "generic": generic(p)} {
			_, err := p.Eval(obj)
			assert.True(t, errors.Is(err, ErrUnsupportedType), "%s %s: %v", name, expr, err)
		}
	}
	// Untouched, they do not matter.
	_, err = MustCompile(`{.int,.missing.x}`).Eval(obj)
	assert.NoError(t, err)
	// Values containing them cannot be printed.
	_, err = MustCompile(`{@}`).ExecuteString(obj)
	assert.True(t, errors.Is(err, ErrUnsupportedType), "%v", err)
	// So are numbers JSON cannot hold, inside a map or a list (alone, they print as Go prints
	// them, as kubectl does): decoded, or raw JSON beyond float64's range.
	for _, in := range []any{
		map[string]any{"nan": []any{math.NaN()}},
		map[string]any{"nan": map[string]any{"a": math.Inf(-1)}},
		JSON(`{"nan":[1e400]}`),
		JSON(`{"nan":{"a":-1e400}}`),
	} {
		got, err := MustCompile(`{.nan}`).ExecuteString(in)
		assert.True(t, errors.Is(err, ErrUnsupportedType), "%v: %v", in, err)
		assert.Empty(t, got, "%v: no partial output with the error", in)
	}
	got, err := MustCompile(`{.nan[0]}`).ExecuteString(JSON(`{"nan":[1e400]}`))
	require.NoError(t, err)
	assert.Equal(t, "+Inf", got)
}

func TestEachStops(t *testing.T) {
	raw := []byte(evalDoc)
	obj := decode(t, evalDoc)
	for _, expr := range []string{`{.list[*]}`, `{.list[0:5]}`, `{..x}`, `{.list[0,1,2]}`, `{.objs[?(@.v)].v}`} {
		p := MustCompile(expr)
		for name, p := range map[string]*Path{"fast": p, "generic": generic(p)} {
			n := 0
			require.NoError(t, p.Each(obj, func(Value) bool { n++; return n < 2 }))
			assert.Equal(t, 2, n, "%s %s", name, expr)
		}
		n := 0
		require.NoError(t, p.Each(JSON(raw), func(Value) bool { n++; return n < 2 }))
		assert.Equal(t, 2, n, "JSON %s", expr)
	}
}

// TestConcurrentUse evaluates shared Paths, templates with ranges
// included, from many goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	raw := []byte(evalDoc)
	obj := decode(t, evalDoc)
	paths := []*Path{
		MustCompile(`{range .objs[*]}{.k}{range .l[*]}{@}{end};{end}`),
		MustCompile(`{.objs[?(@.v>1)].k}`),
		MustCompile(`{..x}`),
		MustCompile(`{.objs[*]['k','v']}`),
	}
	want := make([]string, len(paths))
	for i, p := range paths {
		want[i], _ = p.ExecuteString(obj)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for j, p := range paths {
					got, err := p.ExecuteString(obj)
					if err != nil || got != want[j] {
						t.Errorf("%s = %q, %v", p, got, err)
						return
					}
					got, err = p.ExecuteString(JSON(raw))
					if err != nil || got != want[j] {
						t.Errorf("JSON %s = %q, %v", p, got, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestJSONValuesAreDetached(t *testing.T) {
	data := []byte(`{"a": "hello", "m": {"k": "v"}, "l": [1, {"x": "y"}]}`)
	p := MustCompile(`{.a,.m,.l}`)
	vs, err := p.Eval(JSON(data))
	require.NoError(t, err)
	appended, err := p.AppendEval([]Value{stringValue("first")}, JSON(data))
	require.NoError(t, err)
	single, err := MustCompile(`{.a}`).AppendEval(nil, JSON(data))
	require.NoError(t, err)
	for i := range data {
		data[i] = ' '
	}
	assert.Equal(t, `string:hello map:{"k":"v"} list:[1,{"x":"y"}]`, joined(vs))
	assert.Equal(t, `string:first string:hello map:{"k":"v"} list:[1,{"x":"y"}]`, joined(appended))
	assert.Equal(t, `string:hello`, joined(single))
	assert.Equal(t, map[string]any{"k": "v"}, vs[1].Interface())
	assert.Equal(t, []any{int64(1), map[string]any{"x": "y"}}, vs[2].Interface())
}

// TestOnlyJSONIsRawJSON checks that raw JSON is recognized by its type
// only: bytes of another type are an unsupported value, with a hint.
func TestOnlyJSONIsRawJSON(t *testing.T) {
	p := MustCompile(`{.a}`)
	for _, in := range []any{[]byte(`{"a":1}`), json.RawMessage(`{"a":1}`), map[string]any{"a": []byte("x")}} {
		_, err := p.ExecuteString(in)
		require.ErrorIs(t, err, ErrUnsupportedType, "%T", in)
		assert.Contains(t, err.Error(), "jsonpath.JSON")
	}
	got, err := p.ExecuteString(JSON(`{"a":1}`))
	require.NoError(t, err)
	assert.Equal(t, "1", got)
}

func TestInvalidJSONDoesNotPanic(t *testing.T) {
	inputs := []string{``, `{`, `[`, `{"a":`, `{"a":[1,2`, `"abc`, `nul`, `{"a":{"b":}}`, `]]]`, `{"a" 1}`, "\x00\xff", `{"a":1e999}`, `{"a":-}`, `[NaN, Infinity]`}
	paths := []string{`{.a}`, `{.a.b}`, `{..}`, `{.a[*]}`, `{[0]}`, `{[-1]}`, `{@}`, `{.a[?(@.b)]}`, `{range .a[*]}{@}{end}`}
	for _, in := range inputs {
		for _, expr := range paths {
			p := MustCompile(expr)
			_, err := p.Eval(JSON(in))
			assert.False(t, errors.Is(err, ErrInternal), "%q on %q: %v", expr, in, err)
			_, err = p.ExecuteString(JSON(in))
			assert.False(t, errors.Is(err, ErrInternal), "%q on %q: %v", expr, in, err)
			if vs, err := p.Eval(JSON(in)); err == nil {
				for _, v := range vs {
					_ = v.String()
					_ = v.Interface()
				}
			}
		}
	}
}

// A quoted key with unescaped dots is the key when the object has it, and its parts when
// it does not (as client-go reads it); an escaped dot is part of the key only. The same on
// decoded objects, raw JSON and raw JSON with spans, in every evaluator.
func TestDottedQuotedKeys(t *testing.T) {
	doc := `{"metadata":{"name":"n1","labels":{"app.kubernetes.io/name":"web","app":{"kubernetes":{"io/name":"nested"}}}},` +
		`"a.b":"literal","a":{"b":"path","c":{"d":"deep"}},"items":[{"metadata":{"name":"x"}},{"m.n":"lit","metadata":{"name":"y"}}],` +
		`"pad":"` + strings.Repeat("z", 300) + `"}`
	obj := decode(t, doc)
	cases := []struct{ expr, want string }{
		{`{.metadata.labels['app.kubernetes.io/name']}`, "web"}, // the key wins over the path
		{`{['metadata.name']}`, "n1"},                           // no such key: the path
		{`{['a.b']}`, "literal"},
		{`{['a\.b']}`, "literal"},
		{`{.a['c.d']}`, "deep"},
		{`{['a.c.d']}`, "deep"},
		{`{['a.x']}`, ""},
		{`{['metadata.labels'].app.kubernetes}`, ""}, // a map, not a value: printed below
		{`{.items[*]['metadata.name']}`, "x y"},
		{`{.items[*]['metadata.name','m.n']}`, "x y lit"},
		{`{.items[?(@['metadata.name']=="y")]['m.n']}`, "lit"},
		{`{..['metadata.name']}`, "n1 x y"},
		{`{.metadata.labels.app\.kubernetes\.io/name}`, "web"},
		{`{['metadata\.name']}`, ""}, // one key, which the object lacks
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			p, err := Compile(c.expr)
			require.NoError(t, err)
			vs, err := evalAll(t, p, obj, []byte(doc))
			require.NoError(t, err)
			if c.expr == `{['metadata.labels'].app.kubernetes}` {
				require.Len(t, vs, 1)
				assert.Equal(t, KindMap, vs[0].Kind())
				return
			}
			var words []string
			for _, v := range vs {
				words = append(words, v.String())
			}
			assert.Equal(t, c.want, strings.Join(words, " "))
			for _, min := range []int{1, 8, 64} {
				spans, err := p.Eval(IndexedJSON{Doc: []byte(doc), Spans: BuildSpans(nil, []byte(doc), min)})
				require.NoError(t, err)
				assert.Equal(t, joined(vs), joined(spans), "with spans from %d bytes", min)
			}
			again := MustCompile(p.String())
			got, err := again.Eval(obj)
			require.NoError(t, err)
			assert.Equal(t, joined(vs), joined(got), "the canonical form %s reads the same", p.String())
		})
	}
}
