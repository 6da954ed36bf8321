package jsonpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileCase is an expression and an object built to make evaluation
// expensive, decoded (obj) or raw (raw), or both.
type hostileCase struct {
	name string
	expr string
	obj  any
	raw  []byte
}

// hostileInput is one form of a hostile case's object: "decoded", "raw", or "indexed" (the
// raw JSON with its spans, see IndexedJSON).
type hostileInput struct {
	kind string
	obj  any
}

// inputs returns the forms the case has.
func (c hostileCase) inputs() []hostileInput {
	var ins []hostileInput
	if c.obj != nil {
		ins = append(ins, hostileInput{"decoded", c.obj})
	}
	if c.raw != nil {
		ins = append(ins, hostileInput{"raw", JSON(c.raw)},
			hostileInput{"indexed", IndexedJSON{Doc: c.raw, Spans: BuildSpans(nil, c.raw, 0)}})
	}
	return ins
}

// unionOf returns a union of n zeros: [0,0,...].
func unionOf(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

// keyMap returns a map of n keys k0, k1, ... with integer values, decoded
// and as JSON.
func keyMap(n int) (map[string]any, string) {
	m := make(map[string]any, n)
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		k := "k" + strconv.Itoa(i)
		m[k] = int64(i)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", k, i)
	}
	b.WriteByte('}')
	return m, b.String()
}

// hostileCases are the attacks on the budget the package once let
// through, each of which ran for seconds to minutes, and others of the
// same kinds.
func hostileCases() []hostileCase {
	var cs []hostileCase
	// A filter probe stops after one value or two, but visiting a map's
	// members sorts its keys first: unions multiply the probes.
	m10k, j10k := keyMap(10000)
	m110k, j110k := keyMap(110000) // about 1.5 MB of JSON
	for _, f := range []string{"[?(@.*)]", "[?(@..*)]", "[?(@.*==1)]"} {
		expr := "{.c" + unionOf(100) + unionOf(100) + f + "}"
		cs = append(cs,
			hostileCase{"probe " + f + " 10k keys", expr, map[string]any{"c": []any{[]any{[]any{m10k}}}}, []byte(`{"c":[[[` + j10k + `]]]}`)},
			hostileCase{"probe " + f + " 110k keys", expr, map[string]any{"c": []any{[]any{[]any{m110k}}}}, []byte(`{"c":[[[` + j110k + `]]]}`)})
	}
	m100k, j100k := keyMap(100000)
	cs = append(cs, hostileCase{"wildcard on 100k keys", "{.m.*}", map[string]any{"m": m100k}, []byte(`{"m":` + j100k + `}`)})
	cs = append(cs, hostileCase{"printing 100k keys", "{.m}", map[string]any{"m": m100k}, []byte(`{"m":` + j100k + `}`)})
	cs = append(cs, hostileCase{"printing 10k keys, 100 times", "{.c" + unionOf(100) + "}", map[string]any{"c": []any{m10k}}, []byte(`{"c":[` + j10k + `]}`)})
	cs = append(cs, hostileCase{"descent over 100k keys", "{..*}", map[string]any{"m": m100k}, []byte(`{"m":` + j100k + `}`)})

	// On raw JSON, each level of a walk scans the object it looks into:
	// 2,000 levels over 1.4 MB.
	deep := strings.Repeat(`{"a":`, 2000) + `"` + strings.Repeat("x", 1400000) + `"` + strings.Repeat("}", 2000)
	cs = append(cs, hostileCase{"raw walk 2000 levels deep", "{" + strings.Repeat(".a", 2000) + "}", nil, []byte(deep)})
	cs = append(cs, hostileCase{"raw walk 2000 levels deep, in a filter", "{.z[?(@" + strings.Repeat(".a", 1900) + ")]}", nil, []byte(`{"z":[` + deep + `]}`)})

	// A key that nearly occurs at every byte of the rest of its object,
	// searched for a duplicate.
	xs := strings.Repeat("x", 40)
	cs = append(cs, hostileCase{"raw lookup, near misses", "{.c" + unionOf(100) + "['" + xs + "']}", nil,
		[]byte(`{"c":[{"` + xs + `":1,"b":"` + strings.Repeat("x", 1000000) + `"}]}`)})

	// Arrays of small elements: every element is parsed.
	dense := "[" + strings.Repeat("0,", 700000) + "0]"
	cs = append(cs, hostileCase{"raw array of 700k numbers", "{.a[*]}", nil, []byte(`{"a":` + dense + `}`)})
	cs = append(cs, hostileCase{"raw array of 700k numbers, last", "{.a[-1]}", nil, []byte(`{"a":` + dense + `}`)})

	// Work proportional to the size of a value, repeated by unions.
	big := strings.Repeat("1", 1000000)
	bigStr := strings.Repeat("s", 1000000)
	cs = append(cs,
		hostileCase{"number of 1M digits, 10k times", "{.c" + unionOf(100) + unionOf(100) + "}",
			map[string]any{"c": []any{[]any{json.Number(big)}}}, []byte(`{"c":[[` + big + `]]}`)},
		hostileCase{"number of 1M digits in filters", "{.c" + unionOf(100) + unionOf(100) + "[?(@>1)]}",
			map[string]any{"c": []any{[]any{[]any{json.Number(big)}}}}, []byte(`{"c":[[[` + big + `]]]}`)},
		hostileCase{"comparing strings of 1 MB", "{.c" + unionOf(100) + unionOf(100) + "[?(@.a==@.b)]}",
			map[string]any{"c": []any{[]any{[]any{map[string]any{"a": bigStr, "b": strings.Clone(bigStr)}}}}},
			[]byte(`{"c":[[[{"a":"` + bigStr + `","b":"` + bigStr + `"}]]]}`)},
		hostileCase{"the root string of 1 MB, 1000 times", "{" + strings.TrimSuffix(strings.Repeat("@,", 1000), ",") + "}",
			bigStr, []byte(`"` + bigStr + `"`)},
		hostileCase{"printing a string of 1 MB, 1000 times", strings.Repeat("{@}", 1000), bigStr, []byte(`"` + bigStr + `"`)},
		hostileCase{"number of 1M digits, 10k times, missing field", "{.c" + unionOf(100) + unionOf(100) + ".x}",
			map[string]any{"c": []any{[]any{json.Number(big)}}}, nil},
		hostileCase{"printing a decoded string of 16 MB of control characters in a list", "{.a}",
			map[string]any{"a": []any{strings.Repeat("\x01", 16<<20)}}, nil},
		hostileCase{"printing a decoded key of 16 MB of control characters", "{@}",
			map[string]any{strings.Repeat("\x01", 16<<20): int64(1)}, nil},
		hostileCase{"ranges printing 10k keys", "{range .c" + unionOf(100) + "}{@}{@}{@}{end}",
			map[string]any{"c": []any{m10k}}, []byte(`{"c":[` + j10k + `]}`)},
	)

	// Ranges nested in ranges over unions of @, with bodies that print nothing: each level
	// multiplies the passes (60^5 here) though no value is visited or printed.
	cs = append(cs,
		hostileCase{"nested ranges over @, 5 levels of 60", nestedRanges(5, 60), map[string]any{"a": int64(1)}, []byte(`{"a":1}`)},
		hostileCase{"nested ranges over @, 16 levels of 2", nestedRanges(16, 2), "x", []byte(`"x"`)},
	)

	// Scanning text made only of brackets, the scanner's worst case, in
	// a single member or element.
	cs = append(cs,
		hostileCase{"raw member of 8 MB of brackets", "{.b}", nil, []byte(`{"a":` + brackets(4<<20) + `,"b":1}`)},
		hostileCase{"raw element of 8 MB of empty arrays", "{[1]}", nil, []byte("[[" + strings.Repeat("[],", (8<<20)/3) + "[]],1]")})

	// Printing data nested 9,990 deep (encoding/json decodes up to
	// 10,000): the recursion grows the goroutine stack.
	var deepMap, deepList any = int64(1), int64(1)
	for i := 0; i < MaxDataDepth-10; i++ {
		deepMap, deepList = map[string]any{"a": deepMap}, []any{deepList}
	}
	cs = append(cs,
		hostileCase{"printing maps nested 9990 deep, descent", "{..a}", deepMap, nil},
		hostileCase{"printing maps nested 9990 deep, 8 times", strings.Repeat("{@}", 8), deepMap, nil},
		hostileCase{"printing lists nested 9990 deep, 8 times", strings.Repeat("{@}", 8), deepList, nil})
	// The same as raw JSON, where printing a value nested deep once
	// scanned the rest of it at every level; and arrays nested 5,000 deep
	// side by side, 8 MB of them.
	deepRawMap := strings.Repeat(`{"a":`, MaxDataDepth-10) + "1" + strings.Repeat("}", MaxDataDepth-10)
	deepRawList := brackets(MaxDataDepth - 10)
	cs = append(cs,
		hostileCase{"printing raw maps nested 9990 deep, 8 times", strings.Repeat("{@}", 8), nil, []byte(deepRawMap)},
		hostileCase{"printing raw lists nested 9990 deep, 8 times", strings.Repeat("{@}", 8), nil, []byte(deepRawList)},
		hostileCase{"printing 8 MB of arrays nested 5000 deep", "{@}", nil,
			[]byte("[" + strings.Repeat(brackets(5000)+",", (8<<20)/10000) + "[]]")})

	// Results of Eval printed (String) or decoded (Interface) after it: a raw map of 25,000
	// keys in random order, whose printing sorts them, and a raw list of the smallest
	// elements, each of which printing and decoding read and make a value of.
	perm := rand.New(rand.NewSource(1)).Perm(25000)
	var randomKeys strings.Builder
	for _, k := range perm {
		fmt.Fprintf(&randomKeys, `,"%x":1`, k)
	}
	cs = append(cs,
		hostileCase{"a raw map of 25k keys in random order, printed", "{.m}", nil, []byte(`{"m":{` + randomKeys.String()[1:] + `}}`)},
		hostileCase{"a raw list of 110k numbers, decoded", "{.m}", nil, []byte(`{"m":[` + strings.Repeat("1,", 110000) + `1]}`)})

	// Eval counting what printing a decoded map it returns costs: the keys of a map of
	// 500,000 (about 8 MB as JSON) were all read before the budget was checked.
	m500k, _ := keyMap(500000)
	cs = append(cs, hostileCase{"a decoded map of 500k keys, returned", "{.m}", map[string]any{"m": m500k}, nil})

	// A string that printing escapes to six times its length, returned by Eval.
	cs = append(cs, hostileCase{"a decoded string of 1M <s in a list, returned", "{.a}",
		map[string]any{"a": []any{strings.Repeat("<", 1000000)}}, nil})

	// A {range} collects its items before the first pass: a slice grown by append,
	// 16 bytes a decoded item and 80 a raw one, copied as it grows.
	items := make([]any, 100000)
	for i := range items {
		items[i] = int64(1)
	}
	cs = append(cs,
		hostileCase{"a range over a decoded list of 100k items", "{range .m[*]}{end}", map[string]any{"m": items}, nil},
		hostileCase{"a range over a raw list of 15k numbers", "{range .m[*]}{end}", nil, []byte(`{"m":[` + strings.Repeat("1,", 15000) + `1]}`)})
	return cs
}

// measure evaluates p on in every way and returns the first error, with
// the meter's readings.
func measure(p *Path, in any) (err error, m workMeter) {
	meter = &m
	defer func() { meter = nil }()
	if p.IsTemplate() {
		_, err = p.ExecuteString(in)
		if e := p.ExecuteJSON(io.Discard, in); err == nil {
			err = e
		}
		return err, m
	}
	_, err = p.Eval(in)
	if e := p.Each(in, func(Value) bool { return true }); err == nil {
		err = e
	}
	if _, e := p.ExecuteString(in); err == nil {
		err = e
	}
	if e := p.ExecuteJSON(io.Discard, in); err == nil {
		err = e
	}
	return err, m
}

// TestHostileInputsAreBounded checks that each attack either completes or
// stops with a budget error, within the steps of its budget, and that the
// work done (measured where it is done) does not exceed the steps
// charged: with the default budget, every evaluation ends within
// milliseconds. Times are logged, not asserted.
func TestHostileInputsAreBounded(t *testing.T) {
	checkBounded(t, hostileCases())
}

// checkBounded evaluates each case's expression on each form of its object in every way
// (measure) and checks that it completes or stops with the budget error, within the steps
// of its budget, and that the work measured where it is done does not exceed the steps
// charged.
func checkBounded(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		p, err := Compile(c.expr)
		require.NoError(t, err, c.name)
		for _, in := range c.inputs() {
			t.Run(c.name+"/"+in.kind, func(t *testing.T) {
				start, cpu := time.Now(), cpuTime()
				err, m := measure(p, in.obj)
				elapsed, cpu := time.Since(start), cpuTime()-cpu
				if err != nil {
					require.True(t, errors.Is(err, ErrBudgetExceeded), "%v", err)
				}
				evals := 4 // Eval, Each, ExecuteString, ExecuteJSON
				if p.IsTemplate() {
					evals = 2
				}
				assert.LessOrEqual(t, m.charged, evals*DefaultMaxSteps, "steps charged")
				assert.LessOrEqual(t, m.work, m.steps+evals*(1+len(c.raw)/scanBytesPerStep), "work beyond the steps charged")
				t.Logf("%s/%s: %d evaluations in %v (%v of CPU, %.0f ns a step): %d steps charged, %d of work, error: %v",
					c.name, in.kind, evals, elapsed, cpu, float64(cpu)/float64(max(m.steps, 1)), m.charged, m.work, err)
			})
		}
	}
}

// nestedRanges returns levels ranges nested in each other, each over a union of width @s,
// with no text: {range @,@}{range @,@}{end}{end} for (2, 2).
func nestedRanges(levels, width int) string {
	union := strings.TrimSuffix(strings.Repeat("@,", width), ",")
	return strings.Repeat("{range "+union+"}", levels) + strings.Repeat("{end}", levels)
}

// A {range} nested in another runs once per pass of the outer one: its items are collected
// into a slice kept from one run to the next, not into a new one each time, which made
// nested ranges over unions allocate about 13 MB an evaluation on raw JSON (170 bytes a
// step), work the budget does not see and a program with a large heap pays for again in
// garbage collection.
func TestNestedRangesReuseTheirItems(t *testing.T) {
	p, err := Compile(nestedRanges(5, 60))
	require.NoError(t, err)
	for _, in := range []any{map[string]any{"a": int64(1)}, JSON(`{"a":1}`)} {
		allocs := testing.AllocsPerRun(5, func() {
			_, err := p.ExecuteString(in)
			require.ErrorIs(t, err, ErrBudgetExceeded)
		})
		// One slice per level of nesting, grown a few times, and the output: tens, where
		// a slice per execution of a block made thousands.
		assert.Less(t, allocs, 200.0, "%T", in)
	}
	// The items are right: each level's body sees its own range's values.
	p, err = Compile(`{range .a[*]}{@}:{range .b[*]}{@}{end};{end}`)
	require.NoError(t, err)
	for _, in := range []any{map[string]any{"a": []any{int64(1), int64(2)}, "b": []any{"x", "y"}},
		JSON(`{"a":[1,2],"b":["x","y"]}`)} {
		out, err := p.ExecuteString(in)
		require.NoError(t, err)
		assert.Equal(t, "1:;2:;", out, "@ is the outer item inside: .b of a number is nothing")
	}
	p, err = Compile(`{range .a[*]}{.n}({range .c[*]}{@},{end}){end}|{range .a[*]}{.n}{end}`)
	require.NoError(t, err)
	for _, in := range []any{
		map[string]any{"a": []any{map[string]any{"n": "p", "c": []any{int64(1), int64(2)}}, map[string]any{"n": "q", "c": []any{int64(3)}}}},
		JSON(`{"a":[{"n":"p","c":[1,2]},{"n":"q","c":[3]}]}`)} {
		out, err := p.ExecuteString(in)
		require.NoError(t, err)
		assert.Equal(t, "p(1,2,)q(3,)|pq", out)
	}
}

// TestLargeOutputsAllocateLittleMoreThanThemselves prints values of megabytes (a long
// string, a decoded map of many keys, raw JSON, a string escaped six times its length) and
// checks the bytes allocated against the output's length: the output grows by doubling
// (append's quarters allocated and copied about five times its size), is not copied again
// by ExecuteString, and a print cut by the budget makes no room past what the budget pays
// for; the extents of a raw value nested deep are bounded by the budget too.
func TestLargeOutputsAllocateLittleMoreThanThemselves(t *testing.T) {
	strs := make([]any, 200000)
	for i := range strs {
		strs[i] = fmt.Sprintf("s%06d", i)
	}
	nums := "[" + strings.Repeat("123456789,", 300000) + "0]"
	unlimited := Options{MaxSteps: -1, MaxResults: -1}
	cases := []struct {
		name  string
		expr  string
		in    any
		opts  Options
		bound float64 // bytes allocated per byte of output
	}{
		// Doubling allocates less than twice the last buffer, which is less than twice the
		// output.
		{"a long string", "{.a}", map[string]any{"a": []any{strings.Repeat("x", 3<<20)}}, unlimited, 4.2},
		{"a decoded list", "{.a}", map[string]any{"a": strs}, unlimited, 4.2},
		{"a raw list", "{.a}", JSON(`{"a":` + nums + `}`), unlimited, 4.2},
		// Cut by the budget: its last buffer ends about where the budget does.
		{"a string cut by the budget", "{.a}", map[string]any{"a": []any{strings.Repeat("\x01", 16<<20)}}, Options{}, 3},
		{"raw arrays nested deep, cut by the budget", "{@}", JSON("[" + strings.Repeat(brackets(5000)+",", 400) + "[]]"), Options{}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := CompileWithOptions(c.expr, c.opts)
			require.NoError(t, err)
			var out string
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err = p.ExecuteString(c.in)
			runtime.ReadMemStats(&after)
			size := len(out)
			if err != nil {
				require.ErrorIs(t, err, ErrBudgetExceeded)
				size = DefaultMaxSteps * textBytesPerStep // what the budget pays for
			} else {
				require.Greater(t, size, 1<<20)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("output %d bytes, %d allocated (%.2fx)", size, allocated, float64(allocated)/float64(size))
			assert.LessOrEqual(t, float64(allocated), c.bound*float64(size))
		})
	}
}

// TestCollectingIsCharged: a {range} collects its items, and a union the values it applies
// its branches to, into a slice that append grows; past 32 KB each growth allocates a
// large object and copies the nodes into it, which is charged (see growBytesPerStep).
// Collecting the items of a decoded list of 100,000 allocated 5.5 MB, at a step an item,
// and took 7 ms, where the garbage collector's work grows with the heap. Bound by the
// bytes allocated before the budget stops it: about 2.6 MB now.
func TestCollectingIsCharged(t *testing.T) {
	items := make([]any, 100000)
	for i := range items {
		items[i] = int64(1)
	}
	// On raw JSON, the elements of the list read for the {range} are collected and grown
	// too: a range over 15,000 raw numbers allocated 6 MB before that was charged.
	raw := JSON(`{"m":[` + strings.Repeat("1,", len(items)-1) + `1]}`)
	for _, obj := range []any{map[string]any{"m": items}, raw} {
		for _, expr := range []string{`{range .m[*]}{end}`, `{.m[*]['x','y']}`} {
			p := MustCompile(expr)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := p.ExecuteString(obj)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrBudgetExceeded, expr)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s on %T: %d bytes allocated", expr, obj, allocated)
			assert.Less(t, allocated, uint64(48*DefaultMaxSteps), "%s on %T", expr, obj)
		}
	}
}

// A nil callback or writer is refused at the call, never a panic or a silent no-op.
func TestNilArguments(t *testing.T) {
	p := MustCompile("{.a}")
	for _, in := range []any{map[string]any{"a": int64(1)}, JSON(`{"a":1}`)} {
		assert.ErrorIs(t, p.Each(in, nil), ErrNilArgument)
		assert.ErrorIs(t, p.Execute(nil, in), ErrNilArgument)
		assert.ErrorIs(t, p.ExecuteJSON(nil, in), ErrNilArgument)
	}
}

// A Path that Compile did not make, nil or the zero value, evaluates to ErrNotCompiled and
// describes itself as empty, never a panic or an ErrInternal.
func TestUncompiledPath(t *testing.T) {
	for name, p := range map[string]*Path{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, "", p.String())
			assert.False(t, p.IsTemplate())
			assert.False(t, p.SingleValued())
			assert.Nil(t, p.Fields())
			for _, in := range []any{map[string]any{"a": int64(1)}, nil, JSON(`{"a":1}`), IndexedJSON{Doc: JSON(`{"a":1}`)}, testSource{Doc: JSON(`{"a":1}`)}} {
				_, err := p.Eval(in)
				assert.ErrorIs(t, err, ErrNotCompiled)
				dst := make([]Value, 1, 4)
				out, err := p.AppendEval(dst, in)
				assert.ErrorIs(t, err, ErrNotCompiled)
				assert.Equal(t, dst, out)
				assert.ErrorIs(t, p.Each(in, func(Value) bool { return true }), ErrNotCompiled)
				var b strings.Builder
				assert.ErrorIs(t, p.Execute(&b, in), ErrNotCompiled)
				assert.ErrorIs(t, p.ExecuteJSON(&b, in), ErrNotCompiled)
				assert.Empty(t, b.String())
				s, err := p.ExecuteString(in)
				assert.ErrorIs(t, err, ErrNotCompiled)
				assert.Empty(t, s)
			}
		})
	}
}
