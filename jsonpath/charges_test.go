package jsonpath

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests check that work the hostile tester found uncharged is
// charged, with the meter (see budget.go): the work measured where it is
// done must not exceed the steps charged.

// TestNumberConversionIsCharged: converting a json.Number of a decoded
// object is charged on every path, and only where a value is converted:
// checking the type of an element a wildcard, filter or descent finds
// nothing in converts nothing.
func TestNumberConversionIsCharged(t *testing.T) {
	num := json.Number("0." + strings.Repeat("0", 100000) + "1")
	l := make([]any, 20)
	for i := range l {
		l[i] = num
	}
	obj := map[string]any{"a": l, "n": num, "m": map[string]any{"n": num}}
	for _, expr := range []string{`{.a[*].x}`, `{.a[?(@.x)]}`, `{..x}`, `{.a[0].x}`, `{.a.x}`,
		`{.n}`, `{.m.n}`, `{.a[3]}`, `{.n.x}`, `{.a[*]}`, `{.a[?(@>1)]}`, `{.m}`} {
		p := MustCompile(expr)
		for _, q := range []*Path{p, generic(p)} {
			err, m := measure(q, obj)
			if err != nil {
				require.True(t, errors.Is(err, ErrBudgetExceeded), "%s: %v", expr, err)
			}
			assert.LessOrEqual(t, m.work, m.steps, "%s (mode %d): work beyond the steps charged", expr, q.mode)
		}
	}
}

// TestNumberFastPathsKeepTheBudget: the fast paths for fields and indexes
// charge converting a long json.Number as the generic evaluator does, so
// that {.a} and {.a,.a} fail at the same step limits.
func TestNumberFastPathsKeepTheBudget(t *testing.T) {
	num := json.Number("0." + strings.Repeat("0", 2000) + "1")
	obj := map[string]any{"a": num, "l": []any{num}}
	_, err := MustCompileWithOptions(t, `{.a,.a}`, Options{MaxSteps: 10}).Eval(obj)
	require.ErrorIs(t, err, ErrBudgetExceeded)
	for _, expr := range []string{`{.a}`, `{.l[0]}`, `{.l[-1]}`, `{@}`} {
		for _, steps := range []int{1, 2, 3, 10, 999, 1000, 1001, 1002, 1003, 5000} {
			p := MustCompileWithOptions(t, expr, Options{MaxSteps: steps})
			_, serr := generic(p).Eval(obj)
			fast, ferr := p.Eval(obj)
			assert.Equal(t, serr, ferr, "%s with %d steps: Eval", expr, steps)
			if ferr == nil && expr != `{@}` {
				assert.Equal(t, "float:0", strings.Join(show(fast), ""), expr)
			}
			// Each does not charge printing a map or list (Eval does: see resultCost).
			gerr := generic(p).Each(obj, func(Value) bool { return true })
			ferr = p.Each(obj, func(Value) bool { return true })
			assert.Equal(t, gerr, ferr, "%s with %d steps: Each", expr, steps)
			_, ferr = p.AppendEval(make([]Value, 0, 1), obj)
			assert.Equal(t, serr, ferr, "%s with %d steps: AppendEval", expr, steps)
		}
	}
}

// TestSupported keeps supported in step with setValue.
func TestSupported(t *testing.T) {
	for _, x := range []any{"", map[string]any{}, []any{}, int64(1), nil, true, 1.5, 1, int32(1), int16(1),
		int8(1), uint(1), uint64(1), uint32(1), uint16(1), uint8(1), float32(1), json.Number("1"), json.Number("x"),
		[]byte("1"), json.RawMessage("1"), struct{}{}, map[string]string{}, []string{}, complex(1, 1)} {
		var v Value
		assert.Equal(t, setValue(&v, x), supported(x), "%T", x)
	}
}

// brackets returns an array nested n deep.
func brackets(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestScanChargesAsItGoes: scanning raw JSON checks the budget as it
// goes, so that one huge member or element (or key, or run of white
// space) overshoots the budget by a constant, not by its size: the work
// done stays within the budget and a step.
func TestScanChargesAsItGoes(t *testing.T) {
	const steps = 1000
	cases := []struct{ expr, doc string }{
		{`{.b}`, `{"a":` + brackets(100000) + `,"b":1}`},
		{`{[1]}`, `[[` + strings.Repeat("[],", 70000) + `[]],1]`},
		{`{[0]}`, `[[` + strings.Repeat("[],", 70000) + `[]]]`},
		{`{[-1]}`, `[[` + strings.Repeat("[],", 70000) + `[]],1]`},
		{`{.b}`, `{"a":"` + strings.Repeat("x", 200000) + `","b":1}`},
		{`{.b}`, `{"` + strings.Repeat("k", 200000) + `":1,"b":1}`},
		{`{.b}`, `{"a":1,` + strings.Repeat(" ", 200000) + `"b":1}`},
		{`{.b}`, `{"a":1` + strings.Repeat(" ", 200000) + `}`},
		{`{.a[*]}`, `{"a":[` + brackets(100000) + `]}`},
		{`{.a.*}`, `{"a":{"x":` + brackets(100000) + `}}`},
		{`{.a}`, `{"a":{"x":` + brackets(100000) + `}}`},
		{`{.a[0]}`, strings.Repeat(" ", 200000) + `{"a":[1]}`},
		{`{.a[?(@.b)]}`, `{"a":[` + brackets(100000) + `]}`},
	}
	for _, c := range cases {
		doc := []byte(c.doc)
		p := MustCompileWithOptions(t, c.expr, Options{MaxSteps: steps})
		for _, in := range []any{JSON(doc), IndexedJSON{Doc: doc}, IndexedJSON{Doc: doc, Spans: BuildSpans(nil, doc, 0)}} {
			for name, eval := range map[string]func() error{
				"Eval":          func() error { _, err := p.Eval(in); return err },
				"Each":          func() error { return p.Each(in, func(Value) bool { return true }) },
				"ExecuteString": func() error { _, err := p.ExecuteString(in); return err },
			} {
				var m workMeter
				meter = &m
				err := eval()
				meter = nil
				if _, indexed := in.(IndexedJSON); !indexed || in.(IndexedJSON).Spans == nil {
					assert.ErrorIs(t, err, ErrBudgetExceeded, "%s %s (%T)", name, c.expr, in)
				}
				assert.LessOrEqual(t, m.work, steps+2, "%s %s (%T): work beyond the budget", name, c.expr, in)
				assert.LessOrEqual(t, m.work, m.steps, "%s %s (%T): work beyond the steps charged", name, c.expr, in)
			}
		}
	}
}

// TestSpansChargeTheValueReached: on an indexed document, the value a path
// reaches is charged when no span steps over it, as on the JSON: both
// forms exhaust the budget the same way.
func TestSpansChargeTheValueReached(t *testing.T) {
	big := "[" + strings.Repeat("[],", 1<<20) + "[]]"
	for _, c := range []struct{ expr, doc string }{
		{`{[0]}`, "[" + big + "]"},
		{`{.a}`, `{"a":` + big + `}`},
		{`{` + strings.Repeat("[0]", 64) + `}`, strings.Repeat("[", 64) + big + strings.Repeat("]", 64)}, // deeper than spans go
	} {
		p := MustCompile(c.expr)
		doc := []byte(c.doc)
		_, jerr := p.Eval(JSON(doc))
		require.ErrorIs(t, jerr, ErrBudgetExceeded, c.expr)
		ierr := p.Each(IndexedJSON{Doc: doc}, func(Value) bool { return true })
		assert.ErrorIs(t, ierr, ErrBudgetExceeded, "%s without spans", c.expr)
		if strings.HasPrefix(c.expr, "{[0][0]") {
			_, serr := p.Eval(IndexedJSON{Doc: doc, Spans: BuildSpans(nil, doc, 0)})
			assert.ErrorIs(t, serr, ErrBudgetExceeded, "%s with spans", c.expr)
		}
	}
}

// TestEvalCopiesOnlyItsResults: Eval on raw JSON copies the text of the
// maps and lists it returns, not the whole document, and charges it.
func TestEvalCopiesOnlyItsResults(t *testing.T) {
	doc := []byte(`[{"a":{"b":[1]}},"` + strings.Repeat("x", 4<<20) + `"]`)
	for _, c := range []struct{ expr, want string }{
		{`{[0]}`, `map:{"a":{"b":[1]}}`},
		{`{[0].a,[0],[0].a.b}`, `map:{"b":[1]} map:{"a":{"b":[1]}} list:[1]`},
		{`{[0]..b}`, `list:[1]`},
	} {
		p := MustCompile(c.expr)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		vs, err := p.Eval(JSON(doc))
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "%s: bytes allocated", c.expr)
		for i := range doc[:20] { // the values do not refer to the document
			doc[i] = ' '
		}
		assert.Equal(t, c.want, joined(vs), c.expr)
		copy(doc, `[{"a":{"b":[1]}},"`)
	}
	// The copy is charged: a list of 1 MB, returned 70 times. The values
	// share one copy, which is charged once.
	list := "[" + strings.Repeat("1,", 1<<19) + "1]"
	p := MustCompile(`{.a` + unionOf(70) + `}`)
	_, err := p.Eval(JSON(`{"a":[` + list + `]}`))
	assert.ErrorIs(t, err, ErrBudgetExceeded)
	var m workMeter
	meter = &m
	vs, err := MustCompileWithOptions(t, p.String(), Options{MaxSteps: -1}).Eval(JSON(`{"a":[` + list + `]}`))
	meter = nil
	require.NoError(t, err)
	require.Len(t, vs, 70)
	for _, v := range vs {
		require.Equal(t, unsafe.StringData(vs[0].str), unsafe.StringData(v.str), "one copy")
	}
	assert.LessOrEqual(t, m.work, m.steps)
	// Printing each of them is charged (see resultCost); reading and copying the list, a
	// few times its length, not 70.
	printing := 0
	for _, v := range vs {
		printing += resultCost(&v, math.MaxInt, MaxDataDepth)
	}
	assert.Equal(t, 70*(1+len(list)/rawPrintBytesPerStep+strings.Count(list, ",")+1), printing, "its bytes and items")
	assert.Less(t, m.charged-printing, 8*(len(list)/scanBytesPerStep+len(list)/copyBytesPerStep), "steps: the list is read and copied a few times, not 70")
}

// TestPrintingDeepDataIsCharged: printing a decoded object charges each
// level of maps and lists for the recursion (see levelCost), so that the
// default budget stops printing data nested thousands deep within
// milliseconds, goroutine stack growth included (the hostile suite logs
// the time a step).
func TestPrintingDeepDataIsCharged(t *testing.T) {
	const depth = 1000
	var m, l any = int64(1), int64(1)
	for i := 0; i < depth; i++ {
		m, l = map[string]any{"a": m}, []any{l}
	}
	p := MustCompileWithOptions(t, `{@}`, Options{MaxSteps: -1})
	for _, c := range []struct {
		obj      any
		perLevel int
	}{{m, 2 + levelCost}, {l, 1 + levelCost}} {
		var wm workMeter
		meter = &wm
		_, err := p.ExecuteString(c.obj)
		meter = nil
		require.NoError(t, err)
		assert.GreaterOrEqual(t, wm.charged, depth*c.perLevel, "%T", c.obj)
	}
}

// TestLongStringsAreChargedAsTheyArePrinted checks that a long string of a
// decoded object is charged before it is copied to the output, or, when it
// is encoded as JSON (in a map or a list, as a key, or by ExecuteJSON), a
// chunk at a time as it is encoded: a 32 MB string once took tens of
// milliseconds to encode (hundreds for control characters, which escaping
// makes six times longer) before the budget error.
func TestLongStringsAreChargedAsTheyArePrinted(t *testing.T) {
	for _, c := range []string{"x", "\x01", "é"} {
		big := strings.Repeat(c, (32<<20)/len(c))
		for _, tc := range []struct {
			expr string
			obj  any
		}{
			{"{.s}", map[string]any{"s": big}},
			{"{.a}", map[string]any{"a": []any{big}}},
			{"{@}", map[string]any{big: int64(1)}},
			{"{range @}{@}{end}", big},
		} {
			p := MustCompile(tc.expr)
			for _, asJSON := range []bool{false, true} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				var err error
				if asJSON {
					err = p.ExecuteJSON(io.Discard, tc.obj)
				} else {
					_, err = p.ExecuteString(tc.obj)
				}
				runtime.ReadMemStats(&after)
				require.ErrorIs(t, err, ErrBudgetExceeded, "%q %q", tc.expr, c)
				// The budget pays for 1 MB of output: the buffers grow to a few MB.
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "%q %q (JSON: %v): bytes allocated", tc.expr, c, asJSON)
			}
		}
	}
	// Short strings print as before, escapes included.
	for _, s := range []string{"", "a<b", "\x01\u2028é", strings.Repeat("ab\x00", 5000), "a" + strings.Repeat("é", 3000) + "\xff" + strings.Repeat("€", 2000), "ab" + strings.Repeat("€", 3000)} {
		want, _ := json.Marshal([]any{s})
		got, err := MustCompile("{@}").ExecuteString([]any{s})
		require.NoError(t, err)
		assert.Equal(t, string(want), got)
	}
}
