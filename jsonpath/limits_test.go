package jsonpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nested returns {"x":{"x":...{"x":1}}} depth levels deep, decoded and raw.
func nested(depth int) (any, []byte) {
	var obj any = int64(1)
	for i := 0; i < depth; i++ {
		obj = map[string]any{"x": obj}
	}
	raw := strings.Repeat(`{"x":`, depth) + "1" + strings.Repeat("}", depth)
	return obj, []byte(raw)
}

// TestRecursiveDescentIsBounded is the case that makes client-go run for
// minutes: {..x..x..x} on an object nested 1000 deep does O(n³) work. The
// step budget stops it.
func TestRecursiveDescentIsBounded(t *testing.T) {
	obj, raw := nested(1000)
	p := MustCompile(`{..x..x..x}`)
	for name, run := range map[string]func() error{
		"Eval":          func() error { _, err := p.Eval(obj); return err },
		"EvalJSON":      func() error { _, err := p.Eval(JSON(raw)); return err },
		"ExecuteString": func() error { _, err := p.ExecuteString(obj); return err },
		"ExecuteJSON":   func() error { _, err := p.ExecuteString(JSON(raw)); return err },
	} {
		t.Run(name, func(t *testing.T) {
			var m workMeter
			meter = &m
			start := time.Now()
			err := run()
			elapsed := time.Since(start)
			meter = nil
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrBudgetExceeded), "%v", err)
			var be *BudgetError
			require.True(t, errors.As(err, &be))
			// The steps are asserted; the time is only logged: the
			// machines are shared, and -race slows every step tenfold.
			assert.LessOrEqual(t, m.charged, DefaultMaxSteps)
			assert.LessOrEqual(t, m.work, m.steps)
			t.Logf("%s stopped after %v, %d steps", name, elapsed, m.charged)
		})
	}
}

func TestBudgets(t *testing.T) {
	obj, raw := nested(50)
	cases := []struct {
		expr      string
		opts      Options
		limit     string // "" = no error
		jsonLimit string // on raw JSON, where scanning costs steps too
	}{
		{`{..x}`, Options{}, "", ""},
		{`{..x}`, Options{MaxResults: 50}, "", ""},
		{`{..x}`, Options{MaxResults: 49}, "results", "results"},
		{`{..x}`, Options{MaxSteps: 100}, "steps", "steps"},
		{`{..x}`, Options{MaxSteps: -1, MaxResults: -1}, "", ""},
		{`{.x.x.x}`, Options{MaxSteps: 2}, "steps", "steps"},
		// The result, a map nested 47 deep, is charged what printing it costs (see
		// resultCost): about 6 steps a level decoded, its 330 bytes raw.
		{`{.x.x.x}`, Options{MaxSteps: 40}, "steps", "steps"},
		{`{.x.x.x}`, Options{MaxSteps: 300}, "", ""},
		{`{.x.x.x.x}`, Options{MaxSteps: 300}, "", ""},
		{`{range ..x}{@}{end}`, Options{MaxSteps: 1000}, "steps", "steps"}, // printing is charged
		{`{range ..x}{end}`, Options{MaxSteps: 1000}, "", ""},
		{`{range ..x}{@}{end}`, Options{}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			p, err := CompileWithOptions(c.expr, c.opts)
			require.NoError(t, err)
			check := func(name string, err error) {
				limit := c.limit
				if strings.Contains(name, "JSON") && c.jsonLimit != c.limit {
					limit = c.jsonLimit
				}
				if limit == "" {
					assert.NoError(t, err, name)
					return
				}
				var be *BudgetError
				require.True(t, errors.As(err, &be), "%s: %v", name, err)
				assert.Equal(t, limit, be.Limit, name)
			}
			if p.IsTemplate() {
				_, err := p.ExecuteString(obj)
				check("Execute", err)
				_, err = p.ExecuteString(JSON(raw))
				check("ExecuteJSON", err)
				return
			}
			_, err = p.Eval(obj)
			check("Eval", err)
			_, err = generic(p).Eval(obj)
			check("generic", err)
			_, err = p.Eval(JSON(raw))
			check("EvalJSON", err)
		})
	}
}

// TestFastPathsKeepTheBudget checks that the specialized evaluators
// charge exactly like the generic one: the same expressions fail and
// succeed at the same step limits.
func TestFastPathsKeepTheBudget(t *testing.T) {
	_, obj := fixture(t, "pod")
	exprs := []string{`{.spec.containers[*].image}`, `{.status.conditions[?(@.type=="Ready")].status}`,
		`{.spec.containers[1:].ports[*].containerPort}`, `{.status.conditions[?(@.lastProbeTime)].type}`,
		`{.spec.containers[*].env[?(@.valueFrom)].name}`, `{.metadata.labels.*}`}
	for _, expr := range exprs {
		for steps := 1; steps < 80; steps++ {
			p, err := CompileWithOptions(expr, Options{MaxSteps: steps})
			require.NoError(t, err)
			require.Equal(t, modeLinear, p.mode, expr)
			fast, ferr := p.Eval(obj)
			slow, serr := generic(p).Eval(obj)
			assert.Equal(t, serr, ferr, "%s with %d steps", expr, steps)
			assert.Equal(t, joined(slow), joined(fast), "%s with %d steps", expr, steps)
		}
		for results := 1; results < 6; results++ {
			p, err := CompileWithOptions(expr, Options{MaxResults: results})
			require.NoError(t, err)
			fast, ferr := p.Eval(obj)
			slow, serr := generic(p).Eval(obj)
			assert.Equal(t, serr, ferr, "%s with %d results", expr, results)
			assert.Equal(t, joined(slow), joined(fast), "%s with %d results", expr, results)
			n := 0
			ferr = p.Each(obj, func(Value) bool { n++; return true })
			assert.Equal(t, serr, ferr, "Each %s with %d results", expr, results)
		}
	}
}

// TestDeepData checks that data nested deeper than the evaluator follows
// is an error, not a stack overflow.
func TestDeepData(t *testing.T) {
	check := func(t *testing.T, err error) {
		t.Helper()
		var be *BudgetError
		require.True(t, errors.As(err, &be), "%v", err)
		assert.Equal(t, "depth", be.Limit)
	}
	unlimited := Options{MaxSteps: -1, MaxResults: -1}
	t.Run("decoded", func(t *testing.T) {
		obj, _ := nested(MaxDataDepth + 10)
		_, err := MustCompileWithOptions(t, `{..y}`, unlimited).Eval(obj)
		check(t, err)
		_, err = MustCompileWithOptions(t, `{@}`, unlimited).ExecuteString(obj)
		check(t, err)
		obj, _ = nested(MaxDataDepth - 10)
		_, err = MustCompileWithOptions(t, `{..y}`, unlimited).Eval(obj)
		assert.NoError(t, err)
	})
	t.Run("raw", func(t *testing.T) {
		// Descent scans each nested value again at every level above it,
		// so raw JSON at the real limit is slow to test; the limit is
		// lowered instead.
		lowered := func(expr string) *Path {
			p := MustCompileWithOptions(t, expr, unlimited)
			p.lim.maxDepth = 100
			return p
		}
		_, raw := nested(110)
		_, err := lowered(`{..y}`).Eval(JSON(raw))
		check(t, err)
		_, err = lowered(`{@}`).ExecuteString(JSON(raw))
		check(t, err)
		_, raw = nested(90)
		_, err = lowered(`{..y}`).Eval(JSON(raw))
		assert.NoError(t, err)
		_, err = lowered(`{@}`).ExecuteString(JSON(raw))
		assert.NoError(t, err)
		// Printing scans a value once: it is tested at the real limit.
		_, raw = nested(MaxDataDepth + 10)
		_, err = MustCompileWithOptions(t, `{@}`, unlimited).ExecuteString(JSON(raw))
		check(t, err)
		_, raw = nested(MaxDataDepth - 10)
		_, err = MustCompileWithOptions(t, `{@}`, unlimited).ExecuteString(JSON(raw))
		assert.NoError(t, err)
	})
	t.Run("value", func(t *testing.T) {
		// Values from raw JSON that nest too deep cannot be converted.
		raw := []byte(strings.Repeat("[", MaxDataDepth+1) + strings.Repeat("]", MaxDataDepth+1))
		vs, err := MustCompileWithOptions(t, `{@}`, unlimited).Eval(JSON(raw))
		require.NoError(t, err)
		assert.Nil(t, vs[0].Interface())
		assert.Contains(t, vs[0].String(), "budget exceeded")
	})
}

func MustCompileWithOptions(t *testing.T, expr string, opts Options) *Path {
	t.Helper()
	p, err := CompileWithOptions(expr, opts)
	require.NoError(t, err)
	return p
}

// The steps typical index expressions take on a Pod (the benchmark's 12 KB Pod), which the
// package documentation quotes: fewer than 20 on the decoded Pod, and at most a thousand
// (500 to 750 for these) on its JSON, where scanning costs steps too; a template, as much
// for each of its expressions.
func TestPodIndexSteps(t *testing.T) {
	raw, obj := fixture(t, "pod")
	for _, c := range benchCases {
		p := MustCompile(c.expr)
		steps := func(in any) int {
			var m workMeter
			meter = &m
			defer func() { meter = nil }()
			require.NoError(t, p.Each(in, func(Value) bool { return true }))
			return m.charged
		}
		decoded, onJSON := steps(obj), steps(JSON(raw))
		t.Logf("%-12s %-45s decoded %3d steps, JSON %4d", c.name, c.expr, decoded, onJSON)
		assert.Less(t, decoded, 20, c.name)
		assert.LessOrEqual(t, onJSON, 1000*strings.Count(c.expr, "{"), c.name)
	}
}

// TestListItemSteps measures what doc.go says a path through every item of a List costs
// with the default budget: 3 to 4 steps an item decoded, about 30 for an item of 175 bytes
// of raw JSON, so that the default budget stops near 16,000 items decoded (the results
// limit) and 2,000 raw.
func TestListItemSteps(t *testing.T) {
	const n = 1000
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("pod-%05d", i), "namespace": "default", "labels": map[string]any{"app": "x"}},
			"spec":     map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			"status":   map[string]any{"phase": "Running"},
		}
	}
	doc := map[string]any{"items": items}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	for _, expr := range []string{`{.items[*].metadata.name}`, `{range .items[*]}{.metadata.name}{"\n"}{end}`} {
		p := MustCompileWithOptions(t, expr, Options{MaxSteps: -1, MaxResults: -1})
		steps := func(in any) float64 {
			var m workMeter
			meter = &m
			defer func() { meter = nil }()
			_, err := p.ExecuteString(in)
			require.NoError(t, err)
			return float64(m.charged) / n
		}
		decoded, onJSON := steps(doc), steps(JSON(raw))
		t.Logf("%s: %.1f steps an item decoded, %.1f raw (%d bytes an item)", expr, decoded, onJSON, len(raw)/n)
		assert.InDelta(t, 3.5, decoded, 0.6, expr)
		assert.InDelta(t, 31, onJSON, 5, expr)
		// The default budget and results limit stop it where the doc says.
		_, err := MustCompile(expr).ExecuteString(JSON(raw))
		assert.NoError(t, err, "1,000 raw items fit")
	}
}
