package jsonpath

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepShape builds a value nested n deep, decoded and as raw JSON, the
// same value both ways.
type deepShape struct {
	name string
	// open and close are the raw text around each level, leaf its
	// innermost value; wrap builds a level of the decoded value.
	open, close, leaf string
	wrap              func(any) any
}

var deepShapes = []deepShape{
	{"maps", `{"a":`, `}`, `1`, func(x any) any { return map[string]any{"a": x} }},
	{"lists", `[`, `]`, `1`, func(x any) any { return []any{x} }},
	// Keys out of order, so that each level is sorted.
	{"maps of two keys", `{"b":"x","a":`, `}`, `1`, func(x any) any { return map[string]any{"b": "x", "a": x} }},
	{"lists of two", `[1,`, `]`, `1`, func(x any) any { return []any{int64(1), x} }},
	{"maps and lists", `{"z":[{"y":1,"a":`, `}]}`, `{}`, func(x any) any {
		return map[string]any{"z": []any{map[string]any{"y": int64(1), "a": x}}}
	}},
}

// build returns the shape nested n levels deep, decoded and raw, inside
// a document {"a": ...}.
func (s deepShape) build(n int) (obj any, raw []byte) {
	var x any = int64(1)
	if s.leaf == `{}` {
		x = map[string]any{}
	}
	for range n {
		x = s.wrap(x)
	}
	doc := `{"a":` + strings.Repeat(s.open, n) + s.leaf + strings.Repeat(s.close, n) + `}`
	return map[string]any{"a": x}, []byte(doc)
}

// deepWork prints {.a} of the shape nested n deep, from in, and returns
// the output and the work measured where it was done (see meter): of
// Value.String, and of ExecuteString without limits, with its steps.
func deepWork(t *testing.T, in any) (out string, strWork, execWork, execSteps int) {
	t.Helper()
	vs, err := MustCompileWithOptions(t, `{.a}`, Options{MaxSteps: -1, MaxResults: -1}).Eval(in)
	require.NoError(t, err)
	require.Len(t, vs, 1)
	var m workMeter
	meter = &m
	out = vs[0].String()
	meter = nil
	strWork = m.work

	m = workMeter{}
	meter = &m
	p := MustCompileWithOptions(t, `{.a}`, Options{MaxSteps: -1, MaxResults: -1})
	got, err := p.ExecuteString(in)
	meter = nil
	require.NoError(t, err)
	require.Equal(t, out, got, "ExecuteString and Value.String")
	return out, strWork, m.work, m.charged
}

// growsLinearly asserts that a measure taken at depths n and 2n grows at most
// about in proportion (quadratic work grows fourfold).
func growsLinearly(t *testing.T, what string, at1, at2 int) {
	t.Helper()
	assert.LessOrEqual(t, at2, 2*at1+at1/4+8, "%s: %d at depth n, %d at 2n", what, at1, at2)
}

// TestDeepValuesPrintInLinearWork: printing a value nested n deep, from
// raw JSON or decoded, does work in proportion to its size: the work the
// meter measures where it is done (scanning raw JSON, parsing, sorting,
// printing) and the steps charged for it at twice the depth are about
// twice those at the depth. (Printing raw JSON once scanned the rest of
// the value at every level: 8,000 levels took a third of a second.) The
// output is that of encoding/json.
func TestDeepValuesPrintInLinearWork(t *testing.T) {
	const n = 1500
	for _, s := range deepShapes {
		t.Run(s.name, func(t *testing.T) {
			type measures struct{ strWork, execWork, execSteps int }
			var raw, dec [2]measures
			for k, depth := range []int{n, 2 * n} {
				obj, doc := s.build(depth)
				want, err := json.Marshal(obj.(map[string]any)["a"])
				require.NoError(t, err)
				var out string
				out, raw[k].strWork, raw[k].execWork, raw[k].execSteps = deepWork(t, JSON(doc))
				require.Equal(t, string(want), out, "raw")
				out, dec[k].strWork, dec[k].execWork, dec[k].execSteps = deepWork(t, obj)
				require.Equal(t, string(want), out, "decoded")
				for _, m := range []measures{raw[k], dec[k]} {
					assert.LessOrEqual(t, m.execWork, m.execSteps, "work beyond the steps charged")
				}
			}
			t.Logf("raw: %+v; decoded: %+v", raw, dec)
			growsLinearly(t, "raw, String work", raw[0].strWork, raw[1].strWork)
			growsLinearly(t, "raw, ExecuteString work", raw[0].execWork, raw[1].execWork)
			growsLinearly(t, "raw, ExecuteString steps", raw[0].execSteps, raw[1].execSteps)
			growsLinearly(t, "decoded, String work", dec[0].strWork, dec[1].strWork)
			growsLinearly(t, "decoded, ExecuteString work", dec[0].execWork, dec[1].execWork)
			growsLinearly(t, "decoded, ExecuteString steps", dec[0].execSteps, dec[1].execSteps)
		})
	}
}

// TestDeepRawValuesDecodeInLinearWork: Value.Interface decodes a value of
// raw JSON nested n deep with work in proportion to its size, measured
// where it is done, into what encoding/json decodes.
func TestDeepRawValuesDecodeInLinearWork(t *testing.T) {
	const n = 1500
	for _, s := range deepShapes {
		t.Run(s.name, func(t *testing.T) {
			var work [2]int
			for k, depth := range []int{n, 2 * n} {
				obj, doc := s.build(depth)
				vs, err := MustCompile(`{.a}`).Eval(JSON(doc))
				require.NoError(t, err)
				var m workMeter
				meter = &m
				x := vs[0].Interface()
				meter = nil
				work[k] = m.work
				require.Equal(t, obj.(map[string]any)["a"], x)
			}
			t.Logf("work %v", work)
			assert.Positive(t, work[0], "decoding is measured")
			growsLinearly(t, "Interface work", work[0], work[1])
		})
	}
}

// TestDeepValuesWithTheDefaultBudget: with the default options, printing
// a value nested deep either succeeds or fails with the budget error,
// raw or decoded, at depths up to the limit; what succeeds on one
// succeeds on the other.
func TestDeepValuesWithTheDefaultBudget(t *testing.T) {
	for _, s := range deepShapes {
		for _, depth := range []int{1000, 4000, MaxDataDepth - 10} {
			obj, doc := s.build(depth)
			for name, in := range map[string]any{"raw": JSON(doc), "decoded": obj} {
				var m workMeter
				meter = &m
				_, err := MustCompile(`{.a}`).ExecuteString(in)
				meter = nil
				if err != nil {
					require.True(t, errors.Is(err, ErrBudgetExceeded), "%v", err)
				}
				assert.LessOrEqual(t, m.charged, DefaultMaxSteps, "%s %d %s", s.name, depth, name)
				assert.LessOrEqual(t, m.work, m.steps, "%s %d %s", s.name, depth, name)
				t.Logf("%s nested %d, %s: %d steps, error %v", s.name, depth, name, m.charged, err)
			}
		}
	}
}

// TestDeepValuesMatchClientGo: client-go prints values nested 200 deep as
// kindex does, from decoded objects and raw JSON.
func TestDeepValuesMatchClientGo(t *testing.T) {
	for _, s := range deepShapes {
		obj, doc := s.build(200)
		for _, expr := range []string{`{.a}`, `{@}`} {
			cg, _, err := runClientGo(expr, obj)
			require.NoError(t, err, "%s %s", s.name, expr)
			p := MustCompile(expr)
			got, err := p.ExecuteString(obj)
			require.NoError(t, err)
			assert.Equal(t, cg, got, "%s %s, decoded", s.name, expr)
			got, err = p.ExecuteString(JSON(doc))
			require.NoError(t, err)
			assert.Equal(t, cg, got, "%s %s, raw", s.name, expr)
		}
	}
}

// randomJSON writes a random JSON value of about size bytes to b: objects
// (with duplicate and escaped keys, in any order) and arrays, sometimes
// nested deep, strings with escapes, numbers of every form, literals, and
// white space anywhere.
func randomJSON(r *rand.Rand, b *strings.Builder, size int) {
	space := func() {
		if r.IntN(6) == 0 {
			b.WriteString([]string{" ", "\n", "\t ", "\r\n  "}[r.IntN(4)])
		}
	}
	keys := []string{`"a"`, `"b"`, `"a"`, `"\u0061"`, `"k\"q"`, `"<&>"`, `"é"`, `""`, `"zz"`, `"a\\b"`}
	scalars := []string{`1`, `-0`, `1.5e3`, `12345678901234567890`, `1E-7`, `true`, `false`, `null`,
		`"x"`, `"\u2028\t\"\\/"`, `"` + strings.Repeat("s", 40) + `"`, `0.1`, `-9223372036854775808`}
	var value func(size, depth int)
	value = func(size, depth int) {
		space()
		switch {
		case size <= 1 || depth > 3000:
			b.WriteString(scalars[r.IntN(len(scalars))])
		case r.IntN(8) == 0: // a chain nested deep
			n := 1 + r.IntN(size)
			for range n {
				if r.IntN(2) == 0 {
					b.WriteString("[")
				} else {
					b.WriteString(`{"a":`)
				}
			}
			// Close in reverse, which needs the sequence: rebuild it.
			b.WriteString(scalars[r.IntN(len(scalars))])
			s := b.String()
			var closers []byte
			for i, open := len(s)-1, 0; open < n && i >= 0; i-- {
				switch {
				case s[i] == '[':
					closers = append(closers, ']')
					open++
				case strings.HasSuffix(s[:i+1], `{"a":`):
					closers = append(closers, '}')
					open++
					i -= 4
				}
			}
			b.Write(closers)
		case r.IntN(2) == 0:
			b.WriteString("[")
			n := r.IntN(6)
			for i := range n {
				if i > 0 {
					space()
					b.WriteString(",")
				}
				value(size/max(n, 1), depth+1)
			}
			space()
			b.WriteString("]")
		default:
			b.WriteString("{")
			n := r.IntN(6)
			for i := range n {
				if i > 0 {
					space()
					b.WriteString(",")
				}
				space()
				b.WriteString(keys[r.IntN(len(keys))])
				space()
				b.WriteString(":")
				value(size/max(n, 1), depth+1)
			}
			space()
			b.WriteString("}")
		}
		space()
	}
	value(size, 0)
}

// TestRawValuesPrintAsDecoded: maps and lists of raw JSON, of random
// shapes, print and decode as the decoded document's do; with budgets,
// they print the same or fail with the budget error, and the work done
// never exceeds the steps charged.
func TestRawValuesPrintAsDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for i := range 600 {
		var b strings.Builder
		randomJSON(r, &b, []int{4, 30, 200, 3000}[i%4])
		doc := b.String()
		if doc[skipSpace(doc, 0)] != '{' && doc[skipSpace(doc, 0)] != '[' {
			continue
		}
		obj := decode(t, doc)
		want, err := MustCompile(`{@}`).ExecuteString(obj)
		require.NoError(t, err, doc)
		vs, err := MustCompile(`{@}`).Eval(JSON(doc))
		require.NoError(t, err)
		require.Equal(t, want, vs[0].String(), "%.300s", doc)
		require.Equal(t, obj, vs[0].Interface(), "%.300s", doc)
		for _, steps := range []int{1, 10, 100, 1000, 10000} {
			var m workMeter
			meter = &m
			got, err := MustCompileWithOptions(t, `{@}`, Options{MaxSteps: steps}).ExecuteString(JSON(doc))
			meter = nil
			if err != nil {
				require.ErrorIs(t, err, ErrBudgetExceeded)
			} else {
				require.Equal(t, want, got)
			}
			require.LessOrEqual(t, m.work, m.steps, "%d steps, %.300s", steps, doc)
			require.LessOrEqual(t, m.charged, steps)
		}
	}
}

// TestInvalidRawValuesPrintInLinearWork: printing and decoding invalid
// JSON (deep values cut, with stray quotes, brackets and commas) does not
// panic and costs at most a few steps a byte.
func TestInvalidRawValuesPrintInLinearWork(t *testing.T) {
	// A number that runs into a quote or bracket, where a scanner reading
	// on would start the next value inside a string.
	deepMaps := strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3000)
	crafted := []string{
		`[1"x,` + brackets(3000) + `"]`,
		`{"a":1"x,"b":` + deepMaps + `"}`,
		`[1[` + brackets(3000) + `]]`,
		`{"a":1{"b":` + deepMaps + `}}`,
		`[true"` + strings.Repeat(`[1"x,`, 3000) + `]`,
	}
	r := rand.New(rand.NewPCG(9, 2))
	for i := range 400 + len(crafted) {
		var b strings.Builder
		randomJSON(r, &b, 3000)
		doc := []byte(b.String())
		if i >= 400 {
			doc = []byte(crafted[i-400])
		}
		for range r.IntN(5) * min(1, 400-i) {
			k := r.IntN(len(doc))
			switch r.IntN(4) {
			case 0:
				doc = doc[:k]
			default:
				doc = slices.Insert(doc, k, "\"[]{},:1"[r.IntN(8)])
			}
			if len(doc) == 0 {
				doc = []byte("[")
			}
		}
		vs, err := MustCompileWithOptions(t, `{@}`, Options{MaxSteps: -1, MaxResults: -1}).Eval(JSON(doc))
		require.NoError(t, err)
		if len(vs) == 0 {
			continue
		}
		var m workMeter
		meter = &m
		_ = vs[0].String()
		_ = vs[0].Interface()
		meter = nil
		require.LessOrEqual(t, m.work, 4*len(doc)+16, "%d: %.300q", i, doc)
		m = workMeter{}
		meter = &m
		_, err = MustCompileWithOptions(t, `{@}`, Options{MaxSteps: -1, MaxResults: -1}).ExecuteString(JSON(doc))
		meter = nil
		if err != nil {
			require.ErrorIs(t, err, ErrBudgetExceeded, "%d: %.300q", i, doc)
		}
		require.LessOrEqual(t, m.work, m.steps, "%d: %.300q", i, doc)
		require.LessOrEqual(t, m.steps, 8*len(doc)+16, "%d: %.300q", i, doc)
	}
}

// deepWalks are expressions that walk every level of a deep value:
// recursive descent, with fields, wildcards and filters after it, and a
// chain of wildcards as long as the value is deep (built by chain).
var deepWalks = []string{`{..y}`, `{..*}`, `{.a..a}`, `{..[?(@.x)]}`, `{..[?(@.y==1)].y}`, "chain"}

// chain returns {.a.*.*...}, a wildcard for every level of a value
// nested n deep (two for the shapes that nest a map in a list at each
// level).
func chain(n int) string {
	return `{.a` + strings.Repeat(`.*`, n) + `}`
}

// walkWork evaluates expr on in without limits, with Each, and returns a
// summary of the results (their kinds, and the scalars printed) and the
// work the meter measured, with the steps charged; then with Eval, which
// copies the results from raw JSON (see detach), and returns the work and
// steps of that too.
func walkWork(t *testing.T, expr string, in any) (results string, work, steps, evalWork, evalSteps int) {
	t.Helper()
	p := MustCompileWithOptions(t, expr, Options{MaxSteps: -1, MaxResults: -1, MaxLength: -1})
	var b strings.Builder
	var m workMeter
	meter = &m
	err := p.Each(in, func(v Value) bool {
		b.WriteString(v.Kind().String())
		if v.IsScalar() {
			b.WriteString(":" + v.String())
		}
		b.WriteString(" ")
		return true
	})
	meter = nil
	require.NoError(t, err)
	work, steps = m.work, m.charged
	m = workMeter{}
	meter = &m
	vs, err := p.Eval(in)
	meter = nil
	require.NoError(t, err)
	var e strings.Builder
	var counting workMeter // of counting what printing the results costs: not the walk's
	for _, v := range vs {
		meter = &counting
		m.charged -= resultCost(&v, math.MaxInt, MaxDataDepth) // printing it: not the walk's
		meter = nil
		e.WriteString(v.Kind().String())
		if v.IsScalar() {
			e.WriteString(":" + v.String())
		}
		e.WriteString(" ")
	}
	require.Equal(t, b.String(), e.String(), "Each and Eval")
	return b.String(), work, steps, m.work - counting.work, m.charged
}

// TestDeepWalksTakeLinearWork: recursive descent, wildcards and filters
// over a value nested n deep take work, and steps, in proportion to its
// size, on raw JSON as on the decoded value: at twice the depth, about
// twice as much, apart from what Eval charges for printing the maps and
// lists it returns (see resultCost, which TestResultsPrintWithinTheBudget
// checks). (On raw JSON each level once scanned all the levels
// below it again: 4,000 levels took 3 million steps, the decoded value
// 12,000.) The results are those of the decoded value.
func TestDeepWalksTakeLinearWork(t *testing.T) {
	const n = 1500
	for _, s := range deepShapes {
		for _, expr := range deepWalks {
			t.Run(s.name+"/"+expr, func(t *testing.T) {
				type measures struct{ work, steps, evalWork, evalSteps int }
				var raw, dec [2]measures
				for k, depth := range []int{n, 2 * n} {
					e := expr
					if e == "chain" {
						e = chain(depth * (1 + strings.Count(s.open, "[")))
					}
					obj, doc := s.build(depth)
					want, w, st, ew, est := walkWork(t, e, obj)
					dec[k] = measures{w, st, ew, est}
					got, w, st, ew, est := walkWork(t, e, JSON(doc))
					raw[k] = measures{w, st, ew, est}
					require.Equal(t, want, got, "raw and decoded results")
					for _, m := range []measures{raw[k], dec[k]} {
						assert.LessOrEqual(t, m.work, m.steps, "work beyond the steps charged")
						assert.LessOrEqual(t, m.evalWork, m.evalSteps, "Eval: work beyond the steps charged")
					}
				}
				t.Logf("raw: %+v; decoded: %+v", raw, dec)
				growsLinearly(t, "raw work", raw[0].work, raw[1].work)
				growsLinearly(t, "raw steps", raw[0].steps, raw[1].steps)
				growsLinearly(t, "decoded work", dec[0].work, dec[1].work)
				growsLinearly(t, "decoded steps", dec[0].steps, dec[1].steps)
				growsLinearly(t, "raw Eval work", raw[0].evalWork, raw[1].evalWork)
				growsLinearly(t, "raw Eval steps", raw[0].evalSteps, raw[1].evalSteps)
				growsLinearly(t, "decoded Eval steps", dec[0].evalSteps, dec[1].evalSteps)
			})
		}
	}
}

// TestDeepWalksWithTheDefaultBudget: with the default options, a walk
// over a value nested deep costs on raw JSON a few times its steps on the
// decoded value (reading members from text is charged, and so is keeping
// them), not a multiple growing with the depth: when the decoded value
// takes at most a fifth of the default budget, the raw JSON succeeds too,
// with the same results. What fails, fails with the budget error.
func TestDeepWalksWithTheDefaultBudget(t *testing.T) {
	for _, s := range deepShapes {
		for _, expr := range deepWalks[:len(deepWalks)-1] {
			for _, depth := range []int{1000, 4000, MaxDataDepth - 10} {
				obj, doc := s.build(depth)
				p := MustCompile(expr)
				var res [2]string
				var steps [2]int
				var errs [2]error
				for k, in := range []any{obj, JSON(doc)} {
					var b strings.Builder
					var m workMeter
					meter = &m
					errs[k] = p.Each(in, func(v Value) bool {
						b.WriteString(v.Kind().String() + " ")
						return true
					})
					meter = nil
					res[k], steps[k] = b.String(), m.charged
					assert.LessOrEqual(t, m.charged, DefaultMaxSteps)
					assert.LessOrEqual(t, m.work, m.steps)
					if errs[k] != nil {
						require.ErrorIs(t, errs[k], ErrBudgetExceeded)
					}
				}
				t.Logf("%s %s nested %d: decoded %d steps (%v), raw %d steps (%v)", s.name, expr, depth, steps[0], errs[0], steps[1], errs[1])
				if errs[0] == nil && steps[0] <= DefaultMaxSteps/5 {
					if errs[1] != nil {
						t.Errorf("%s %s nested %d: raw fails where decoded succeeds", s.name, expr, depth)
						continue
					}
					require.Equal(t, res[0], res[1])
					assert.LessOrEqual(t, steps[1], 5*steps[0]+64, "%s %s nested %d", s.name, expr, depth)
				}
			}
		}
	}
}

// TestDeepWalksOnInvalidJSON: walks over invalid JSON (random values with
// bytes cut or inserted, where the extents recorded may not match what a
// scan of a member reads) do not panic, and charge all their work.
func TestDeepWalksOnInvalidJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 11))
	exprs := []string{`{..a}`, `{..*}`, `{..[?(@.a)]}`, `{.a.*.*.*}`, `{..[0]}`, `{range ..*}{.a}{end}`}
	for i := range 80 {
		var b strings.Builder
		randomJSON(r, &b, 3000)
		doc := []byte(b.String())
		for range 1 + r.IntN(4) {
			k := r.IntN(len(doc))
			if r.IntN(4) == 0 {
				doc = doc[:k]
			} else {
				doc = slices.Insert(doc, k, "\"[]{},:1"[r.IntN(8)])
			}
			if len(doc) == 0 {
				doc = []byte("[")
			}
		}
		for _, expr := range exprs {
			var m workMeter
			meter = &m
			_, err1 := MustCompileWithOptions(t, expr, Options{MaxSteps: -1, MaxResults: -1}).Eval(JSON(doc))
			_, err2 := MustCompileWithOptions(t, expr, Options{MaxSteps: 2000}).ExecuteString(JSON(doc))
			meter = nil
			for _, err := range []error{err1, err2} {
				if err != nil {
					require.ErrorIs(t, err, ErrBudgetExceeded, "%d %s: %.300q", i, expr, doc)
				}
			}
			require.LessOrEqual(t, m.work, m.steps, "%d %s: %.300q", i, expr, doc)
		}
	}
}
