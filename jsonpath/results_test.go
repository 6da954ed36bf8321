package jsonpath

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// printSteps returns the steps printing vs takes (String and Execute's printing charge the
// same), counted up to just past limit: results whose printing would not end stop there.
func printSteps(t *testing.T, vs []Value, limit int) int {
	t.Helper()
	b := budget{maxSteps: limit, maxDepth: MaxDataDepth}
	for _, v := range vs {
		if _, err := v.appendJSON(nil, &b); err != nil && !errors.Is(err, ErrBudgetExceeded) {
			require.NoError(t, err)
		}
		if b.steps > limit {
			break
		}
	}
	return b.steps
}

// TestResultsPrintWithinTheBudget: Eval charges each map or list it returns
// what printing it costs (resultCost), so that an evaluation that holds the default budget
// also leaves results whose String and Interface take time the budget bounds, however many
// they are and however much they overlap. Before, {..*} on lists nested 9,990 deep held its
// budget and printing its results took 1.2-1.7 s; on maps that share their values
// (m[i+1] = {a: m[i], b: m[i]}), printing {@} did not end. Asserted by steps: the steps
// of printing every result of an Eval that succeeds stay within a small multiple of the
// budget (raw JSON of the smallest items prints at up to about 4 steps for the one its
// bytes are charged).
func TestResultsPrintWithinTheBudget(t *testing.T) {
	type input struct {
		name string
		in   any
	}
	deep := func(s deepShape, n int) []input {
		obj, doc := s.build(n)
		return []input{{s.name + " decoded", obj}, {s.name + " raw", JSON(doc)}}
	}
	shared := map[string]any{"x": "leaf"}
	for i := 0; i < 40; i++ {
		shared = map[string]any{"a": shared, "b": shared}
	}
	ones := "[" + strings.Repeat("1,", 1<<20) + "1]"
	var keys strings.Builder
	for i := 0; i < 200000; i++ {
		fmt.Fprintf(&keys, `,"k%d":%d`, 200000-i, i)
	}
	keyMap := "{" + keys.String()[1:] + "}"
	var decKeys any
	require.NoError(t, k8sjson.Unmarshal([]byte(keyMap), &decKeys))

	cases := []struct {
		expr   string
		inputs []input
	}{
		{`{..*}`, deep(deepShapes[1], MaxDataDepth-10)},
		{`{..*}`, deep(deepShapes[0], 3000)},
		{`{..*}`, append(deep(deepShapes[1], 100), deep(deepShapes[2], 60)...)},
		{`{..*}`, deep(deepShapes[4], 2000)},
		{`{@}`, []input{{"shared maps", shared}}},
		{`{..a}`, []input{{"shared maps", shared}}},
		{`{@}`, []input{{"ones raw", JSON(ones)}}},
		{`{@}`, []input{{"keys raw", JSON(keyMap)}, {"keys decoded", decKeys}}},
		{`{@` + strings.Repeat(",@", 300) + `}`, []input{{"keys raw", JSON(keyMap)}, {"keys decoded", decKeys}}},
		{`{@` + strings.Repeat(",@", 300) + `}`, []input{{"ones raw", JSON(ones)}}},
	}
	for _, c := range cases {
		p := MustCompile(c.expr)
		for _, in := range c.inputs {
			t.Run(fmt.Sprintf("%.20s/%s", c.expr, in.name), func(t *testing.T) {
				vs, err := p.Eval(in.in)
				if err != nil {
					require.ErrorIs(t, err, ErrBudgetExceeded)
				} else {
					steps := printSteps(t, vs, 4*DefaultMaxSteps)
					t.Logf("%d results print in %d steps", len(vs), steps)
					assert.LessOrEqual(t, steps, 4*DefaultMaxSteps)
				}
			})
		}
	}
}

// Kubernetes objects are far from that: {..*} and {@} on each object of testdata, raw and
// decoded, succeed with the default options, and the results print alike.
func TestResultsOfObjectsHoldTheBudget(t *testing.T) {
	for _, f := range []string{"pod.json", "deployment.json", "crd.json", "nodes.json", "service.json", "configmap.json"} {
		doc, err := os.ReadFile("testdata/" + f)
		require.NoError(t, err)
		var obj any
		require.NoError(t, k8sjson.Unmarshal(doc, &obj))
		for _, expr := range []string{`{..*}`, `{@}`, `{.metadata}`} {
			p := MustCompile(expr)
			raw, err := p.Eval(JSON(doc))
			require.NoError(t, err, "%s %s raw", f, expr)
			dec, err := p.Eval(obj)
			require.NoError(t, err, "%s %s decoded", f, expr)
			require.Equal(t, len(dec), len(raw))
			for i := range raw {
				require.Equal(t, dec[i].String(), raw[i].String(), "%s %s", f, expr)
			}
			charged := 0
			for i := range raw {
				charged += resultCost(&raw[i], math.MaxInt, MaxDataDepth)
			}
			t.Logf("%s %s: %d bytes, %d results charged %d steps for printing", f, expr, len(doc), len(raw), charged)
		}
	}
}

// TestRawResultsChargeTheirKeysAndItems: the cost Eval charges for a map or list of raw JSON
// it returns (resultCost) includes the sorting of its keys and a step for each of its items,
// as printing it charges them. It charged only its bytes: {.m} on a raw map of 25,000 keys
// in random order held the default budget, and printing the result (String) took 15 ms
// sorting them, where ExecuteString fails with the budget error; decoding (Interface) a raw
// list of 110,000 numbers, two bytes each, took 12 ms.
func TestRawResultsChargeTheirKeysAndItems(t *testing.T) {
	perm := rand.New(rand.NewSource(1)).Perm(25000)
	var keys strings.Builder
	for _, k := range perm {
		fmt.Fprintf(&keys, `,"%x":1`, k)
	}
	randomKeys := `{"m":{` + keys.String()[1:] + `}}`
	ones := `{"m":[` + strings.Repeat("1,", 110000) + `1]}`
	p := MustCompile(`{.m}`)
	for name, doc := range map[string]string{"keys": randomKeys, "ones": ones} {
		_, err := p.Eval(JSON(doc))
		assert.ErrorIs(t, err, ErrBudgetExceeded, name)
		vs, err := MustCompileWithOptions(t, `{.m}`, Options{MaxSteps: -1}).Eval(JSON(doc))
		require.NoError(t, err)
		require.Len(t, vs, 1)
		charged := resultCost(&vs[0], math.MaxInt, MaxDataDepth)
		printing := printSteps(t, vs, math.MaxInt)
		t.Logf("%s: %d bytes charged %d steps, printed in %d", name, len(vs[0].str), charged, printing)
		assert.Greater(t, charged, DefaultMaxSteps, name)
	}
	// The sorting charged for a map bounds what printing it charges, nested maps included.
	vs, err := MustCompileWithOptions(t, `{.m}`, Options{MaxSteps: -1}).Eval(JSON(randomKeys))
	require.NoError(t, err)
	keyBytes := 0
	for _, k := range perm {
		keyBytes += len(fmt.Sprintf("%x", k))
	}
	assert.GreaterOrEqual(t, resultCost(&vs[0], math.MaxInt, MaxDataDepth), sortCost(len(perm), keyBytes))
	nested, err := MustCompileWithOptions(t, `{@}`, Options{MaxSteps: -1}).Eval(JSON(`{"a":{"b":1,"c":2},"d":[{"e":1,"f":{"g":2}}]}`))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, resultCost(&nested[0], math.MaxInt, MaxDataDepth),
		1+sortCost(2, 2)+sortCost(2, 2)+sortCost(2, 2), "sorted: the root, a, and d[0]")
}

// TestResultCostReadsNoMapPastTheBudget: counting what printing a decoded map that Eval
// returns costs (resultCost) reads its keys only when the budget left pays for a step each,
// and the bytes of its keys and strings only when it pays for printing them.
// It read all the keys of a map first: Eval of {.m} on a map of 500,000 keys took 7 ms
// before failing with the budget error, and time in proportion to the keys past that.
func TestResultCostReadsNoMapPastTheBudget(t *testing.T) {
	m, _ := keyMap(200000)
	// Nor the bytes of a long key or string, which it reads to count their escapes.
	long := strings.Repeat("\x01", 16<<20)
	for _, c := range []struct {
		expr string
		obj  any
	}{
		{`{.m}`, map[string]any{"m": m}},
		{`{.l}`, map[string]any{"l": []any{m, m}}},
		{`{.l[?(@.k1)]}`, map[string]any{"l": []any{m, m}}},
		{`{@}`, map[string]any{"m": m}},
		{`{.m}`, map[string]any{"m": map[string]any{long: int64(1), "b": int64(2)}}},
		{`{.m}`, map[string]any{"m": []any{long}}},
		// Nor the text of a map or list of raw JSON, which it reads to count its keys and items.
		{`{@}`, JSON("[" + strings.Repeat("[],", 3<<20) + "[]]")},
		{`{.m}`, JSON(`{"m":[` + strings.Repeat("[],", 3<<20) + "[]]}")},
	} {
		expr := c.expr
		var wm workMeter
		meter = &wm
		_, err := MustCompile(expr).Eval(c.obj)
		meter = nil
		assert.ErrorIs(t, err, ErrBudgetExceeded, expr)
		assert.LessOrEqual(t, wm.work, DefaultMaxSteps, "%s: work beyond the budget", expr)
	}
}

// TestResultCostChargesEscapes: the cost Eval charges for a decoded map or list it returns
// counts its strings and keys as printing writes them, escaped: a control character, <, >,
// &, a byte of invalid UTF-8 take six bytes (\u0001, \u003c, \ufffd). It counted them
// as one: {.a} on a list holding a string of 1,000,000 <s held the budget, and printing
// the result (String) wrote 6 MB in 9 to 26 ms, where ExecuteString fails with the budget
// error.
func TestResultCostChargesEscapes(t *testing.T) {
	for _, ch := range []string{"\x01", "<", "&", "\xff", "\u2028", "\n"} {
		long := strings.Repeat(ch, 1000000/len(ch))
		for name, obj := range map[string]any{
			"string": map[string]any{"a": []any{long}},
			"key":    map[string]any{"a": map[string]any{long: int64(1), "b": int64(2)}},
		} {
			vs, err := MustCompileWithOptions(t, `{.a}`, Options{MaxSteps: -1}).Eval(obj)
			require.NoError(t, err)
			charged := resultCost(&vs[0], math.MaxInt, MaxDataDepth)
			printing := printSteps(t, vs, math.MaxInt)
			assert.GreaterOrEqual(t, charged, printing, "%q %s: the steps of printing it", ch, name)
			if ch != "\u2028" { // 3 bytes printed as 6: twice its length
				_, err = MustCompile(`{.a}`).Eval(obj)
				assert.ErrorIs(t, err, ErrBudgetExceeded, "%q %s", ch, name)
			}
		}
	}
}
