package jsonpath

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKind(t *testing.T) {
	names := map[Kind]string{KindInvalid: "invalid", KindNull: "null", KindBool: "bool", KindInt: "int",
		KindFloat: "float", KindString: "string", KindMap: "map", KindList: "list", Kind(99): "Kind(99)"}
	for k, want := range names {
		assert.Equal(t, want, k.String())
	}
}

func TestValueMethods(t *testing.T) {
	obj := decode(t, `{"s":"x","i":3,"f":1.5,"b":true,"n":null,"m":{"a":[1]},"l":[{"b":2}]}`)
	raw := []byte(`{"s":"x","i":3,"f":1.5,"b":true,"n":null,"m":{"a":[1]},"l":[{"b":2}]}`)
	cases := []struct {
		expr   string
		kind   Kind
		str    string
		iface  any
		scalar bool
	}{
		{`{.s}`, KindString, "x", "x", true},
		{`{.i}`, KindInt, "3", int64(3), true},
		{`{.f}`, KindFloat, "1.5", 1.5, true},
		{`{.b}`, KindBool, "true", true, true},
		{`{.n}`, KindNull, "null", nil, false},
		{`{.m}`, KindMap, `{"a":[1]}`, map[string]any{"a": []any{int64(1)}}, false},
		{`{.l}`, KindList, `[{"b":2}]`, []any{map[string]any{"b": int64(2)}}, false},
	}
	p := func(expr string) *Path { return MustCompile(expr) }
	for _, c := range cases {
		for name, vs := range map[string]func() ([]Value, error){
			"Eval":     func() ([]Value, error) { return p(c.expr).Eval(obj) },
			"EvalJSON": func() ([]Value, error) { return p(c.expr).Eval(JSON(raw)) },
		} {
			got, err := vs()
			require.NoError(t, err)
			require.Len(t, got, 1)
			v := got[0]
			assert.Equal(t, c.kind, v.Kind(), "%s %s", name, c.expr)
			assert.Equal(t, c.str, v.String(), "%s %s", name, c.expr)
			assert.Equal(t, c.iface, v.Interface(), "%s %s", name, c.expr)
			assert.Equal(t, c.scalar, v.IsScalar(), "%s %s", name, c.expr)
			b, err := v.AppendText([]byte("<"))
			require.NoError(t, err)
			assert.Equal(t, "<"+c.str, string(b))
			assert.Equal(t, c.str, v.Clone().String())
		}
	}
	var zero Value
	assert.Equal(t, KindInvalid, zero.Kind())
	assert.Equal(t, "", zero.String())
	assert.Nil(t, zero.Interface())
	assert.False(t, zero.IsScalar())
}

// TestValueStringMatchesKubectl checks the canonical text of numbers
// against fmt.Sprint, which kubectl uses.
func TestValueStringMatchesKubectl(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 100, 1e5, 1e6, 123456, 1234567, 1e20, 1e21, 1e-4, 1e-5, 1.0000005e6,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 0.000001, 1e-7, 6.02e23, math.Inf(1), math.Inf(-1), math.NaN(), 9007199254740993}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		floats = append(floats, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)))
	}
	for _, f := range floats {
		v, ok := valueOf(f)
		require.True(t, ok)
		require.Equal(t, fmt.Sprint(f), v.String(), "%b", f)
		f32 := float32(f)
		v, _ = valueOf(f32)
		require.Equal(t, fmt.Sprint(f32), v.String(), "%b", f32)
	}
	for _, i := range []int64{0, -1, 1, math.MaxInt64, math.MinInt64, 1 << 53} {
		v, _ := valueOf(i)
		assert.Equal(t, fmt.Sprint(i), v.String())
	}
}

// TestJSONEncodingMatchesEncodingJSON checks maps and lists print exactly
// as encoding/json (kubectl) prints them.
func TestJSONEncodingMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `"quoted"`, `back\slash`, "<html>&amp;</html>", "\u2028\u2029", "tab\tnl\ncr\r",
		"\b\f\x00\x01\x1f\x7f", "é✓🚀", "invalid \xff\xfe utf8", "\xed\xa0\x80 surrogate", "\xc0\xaf overlong", "end\xe2\x82"}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.IntN(12))
		for j := range b {
			b[j] = byte(r.IntN(256))
			if r.IntN(3) == 0 {
				const special = "<>&\"\\\n\x00\xe2\x80\xa8"
				b[j] = special[r.IntN(len(special))]
			}
		}
		strs = append(strs, string(b))
	}
	floats := []any{0.0, math.Copysign(0, -1), 1e-7, 1e-6, 1e20, 1e21, 123456789.0, 1.5, float32(1e-7), float32(1e21), float32(3.4e38), float32(0.1)}
	for i := 0; i < 500; i++ {
		floats = append(floats, math.Float64frombits(r.Uint64()&^(0x7ff<<52)|uint64(r.IntN(2046)+1)<<52))
	}
	check := func(x any) {
		t.Helper()
		want, err := json.Marshal(x)
		require.NoError(t, err)
		got, err := appendJSONAny(nil, x, 0, nil)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%#v", x)
	}
	m := map[string]any{}
	for i, s := range strs {
		check(s)
		check([]any{s})
		m[s] = i
	}
	check(m)
	for _, f := range floats {
		check(f)
	}
	check(map[string]any{"a": []any{nil, true, false, int64(-3), 2.5, map[string]any{}, []any{}}, "b": nil, "": "x"})
	check([]any(nil))
	check(map[string]any(nil))
	check([]any{json.Number("12"), int32(5), uint8(7)})
}

// TestRawJSONIsCanonical checks that values read from raw JSON print as
// the decoded values do, whatever the input spelling.
func TestRawJSONIsCanonical(t *testing.T) {
	cases := []struct{ raw, want string }{
		{`{"b": 1, "a": [ 1.0, 2e3, -0, 10000000000000000000000 ] }`, `{"a":[1,2000,0,1e+22],"b":1}`},
		{`{"s": "\u00e9\/\"\\\t\u2028<", "k\u0041": 1}`, `{"kA":1,"s":"é/\"\\\t\u2028\u003c"}`},
		{`{"dup": 1, "dup": 2}`, `{"dup":2}`},
		{`[true,false,null,"",{},[]]`, `[true,false,null,"",{},[]]`},
	}
	for _, c := range cases {
		vs, err := MustCompile(`{@}`).Eval(JSON(c.raw))
		require.NoError(t, err)
		require.Len(t, vs, 1)
		assert.Equal(t, c.want, vs[0].String(), c.raw)
		got, err := MustCompile(`{@}`).ExecuteString(JSON(c.raw))
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
	// Numbers keep full precision.
	vs, err := MustCompile(`{.a[*]}`).Eval(JSON(`{"a":[9223372036854775807,-9223372036854775808,9223372036854775808,1.5e300,0.1]}`))
	require.NoError(t, err)
	assert.Equal(t, []any{int64(math.MaxInt64), int64(math.MinInt64), 9223372036854775808.0, 1.5e300, 0.1},
		[]any{vs[0].Interface(), vs[1].Interface(), vs[2].Interface(), vs[3].Interface(), vs[4].Interface()})
}

func TestValueStringErrors(t *testing.T) {
	v, _ := valueOf(map[string]any{"f": func() {}})
	assert.True(t, strings.HasPrefix(v.String(), "!(ERROR jsonpath: unsupported Go type"), v.String())
	_, err := v.AppendText(nil)
	assert.ErrorIs(t, err, ErrUnsupportedType)
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	v, _ = valueOf(cyclic)
	_, err = v.AppendText(nil)
	assert.ErrorIs(t, err, ErrBudgetExceeded)
}
