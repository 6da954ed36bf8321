package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Benchmarks of evaluation on the Pod fixture, decoded and as compact raw
// JSON (as an API server sends it). bench/ compares with client-go.
//
//	go test -run '^$' -bench . -benchmem ./jsonpath/

var benchCases = []struct{ name, expr string }{
	{"nodeName", `{.spec.nodeName}`},
	{"metadataName", `{.metadata.name}`},
	{"images", `{.spec.containers[*].image}`},
	{"readyFilter", `{.status.conditions[?(@.type=="Ready")].status}`},
	{"dottedLabel", `{.metadata.labels['app.kubernetes.io/name']}`},
	{"labels", `{.metadata.labels.*}`},
	{"template", `{.metadata.namespace}/{.metadata.name}`},
}

var benchSink int

// BenchmarkBuildSpans is what keeping a document's spans costs once (the Pod of BenchmarkEval).
func BenchmarkBuildSpans(b *testing.B) {
	raw, _ := fixture(b, "pod")
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		b.Fatal(err)
	}
	var buf Spans
	b.SetBytes(int64(compact.Len()))
	for b.Loop() {
		buf = BuildSpans(buf[:0], compact.Bytes(), 0)
	}
	b.ReportMetric(float64(len(buf)/2), "spans")
}

func BenchmarkEval(b *testing.B) {
	raw, obj := fixture(b, "pod")
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		b.Fatal(err)
	}
	var doc any = JSON(compact.Bytes()) // converted once: a slice in an interface is allocated
	count := func(v Value) bool { benchSink += int(v.Kind()); return true }
	for _, c := range benchCases {
		p := MustCompile(c.expr)
		b.Run(c.name+"/Each", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Each(obj, count); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/AppendEval", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]Value, 0, 8)
			for b.Loop() {
				var err error
				if buf, err = p.AppendEval(buf[:0], obj); err != nil || len(buf) == 0 {
					b.Fatal(buf, err)
				}
			}
		})
		b.Run(c.name+"/EachJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Each(doc, count); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/EvalIndexedJSON", func(b *testing.B) {
			b.ReportAllocs()
			var ix any = IndexedJSON{Doc: compact.Bytes(), Spans: BuildSpans(nil, compact.Bytes(), 0)}
			for b.Loop() {
				if vs, err := p.Eval(ix); err != nil || len(vs) == 0 {
					b.Fatal(vs, err)
				}
			}
		})
		b.Run(c.name+"/EvalJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if vs, err := p.Eval(doc); err != nil || len(vs) == 0 {
					b.Fatal(vs, err)
				}
			}
		})
	}
}

// BenchmarkDeepPrint prints a value nested deep (see deepShapes), from raw
// JSON and decoded, without a budget (Value.String) and with the default
// one (ExecuteString, which fails with the budget error when the printing
// costs more): printing takes time in proportion to the output.
//
//	go test -run '^$' -bench DeepPrint -benchmem ./jsonpath/
func BenchmarkDeepPrint(b *testing.B) {
	for _, s := range deepShapes[:2] {
		for _, depth := range []int{1000, 8000} {
			obj, doc := s.build(depth)
			for _, in := range []struct {
				name string
				doc  any
			}{{"raw", JSON(doc)}, {"decoded", obj}} {
				name := s.name + "/" + strconv.Itoa(depth) + "/" + in.name
				vs, err := MustCompile(`{.a}`).Eval(in.doc)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(name+"/String", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						benchSink += len(vs[0].String())
					}
				})
				p := MustCompile(`{.a}`)
				b.Run(name+"/ExecuteString", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						out, _ := p.ExecuteString(in.doc)
						benchSink += len(out)
					}
				})
			}
		}
	}
}

// BenchmarkBuildExtents is the scan that printing or decoding a map or list
// of raw JSON starts with (see buildExtents): arrays nested 9,990 deep
// (an extent every 2 bytes), 100 of them nested 5,000 deep side by side,
// and 100,000 empty arrays (none kept).
//
//	go test -run '^$' -bench BuildExtents -benchmem ./jsonpath/
func BenchmarkBuildExtents(b *testing.B) {
	for _, c := range []struct{ name, doc string }{
		{"deep", brackets(MaxDataDepth - 10)},
		{"wideAndDeep", "[" + strings.Repeat(brackets(5000)+",", 100) + "[]]"},
		{"wide", "[" + strings.Repeat("[],", 100000) + "[]]"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			var ext []extent
			for b.Loop() {
				ext, _ = buildExtents(c.doc, nil)
			}
			if len(ext) > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ext)), "ns/extent")
			}
		})
	}
}

// BenchmarkDeepDescent walks every level of maps nested deep (see
// deepShapes) with recursive descent, from raw JSON and decoded, without
// a budget (Each): the time is in proportion to the depth, raw or
// decoded.
//
//	go test -run '^$' -bench DeepDescent -benchmem ./jsonpath/
func BenchmarkDeepDescent(b *testing.B) {
	for _, expr := range []string{`{..y}`, `{..*}`} {
		p, err := CompileWithOptions(expr, Options{MaxSteps: -1, MaxResults: -1})
		if err != nil {
			b.Fatal(err)
		}
		for _, depth := range []int{1000, 4000} {
			obj, doc := deepShapes[0].build(depth)
			for _, in := range []struct {
				name string
				doc  any
			}{{"raw", JSON(doc)}, {"decoded", obj}} {
				b.Run(expr+"/"+strconv.Itoa(depth)+"/"+in.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if err := p.Each(in.doc, func(v Value) bool { benchSink++; return true }); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkHostile times every attack of hostileCases (hostile_test.go) with each way of
// evaluating that applies, in CPU time per evaluation (cpu-ns/op, which counts the garbage
// collector's work too); EvalPrint also prints and decodes each result of Eval (String and
// Interface), which the budget bounds too (see resultCost). With the default budget each must stay well within 10 ms:
//
//	go test -run '^$' -bench Hostile -benchtime 20x ./jsonpath/
func BenchmarkHostile(b *testing.B) {
	benchHostile(b, hostileCases(), "")
}

// benchHostile times each case whose name contains only ("" for all) on each form of its
// object, in each way of evalWays, in CPU time per evaluation.
func benchHostile(b *testing.B, cases []hostileCase, only string) {
	for _, c := range cases {
		if !strings.Contains(c.name, only) {
			continue
		}
		p, err := Compile(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		for _, in := range c.inputs() {
			ways := evalWays(p, in.obj)
			for _, way := range slices.Sorted(maps.Keys(ways)) {
				f := ways[way]
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

// evalWays returns the ways of evaluating p on in: ExecuteString, ExecuteJSON and, for a
// path, Eval, Each, and Eval with its results printed and decoded (EvalPrint).
func evalWays(p *Path, in any) map[string]func() error {
	ways := map[string]func() error{
		"ExecuteString": func() error { _, err := p.ExecuteString(in); return err },
		"ExecuteJSON":   func() error { return p.ExecuteJSON(io.Discard, in) },
	}
	if !p.IsTemplate() {
		ways["Eval"] = func() error { _, err := p.Eval(in); return err }
		ways["Each"] = func() error { return p.Each(in, func(Value) bool { return true }) }
		ways["EvalPrint"] = func() error { // the results printed and decoded too
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

// BenchmarkSlowNumbers measures strconv.ParseFloat on the numbers it converts the exact,
// slow way, against what slowNumCost charges for them: numbers of 21 significant digits
// just off the halfway point between two float64s (no fast path can round them), at
// decimal exponents from 1 to ±340, and the subnormal 4.9406564584124654e-324. The
// ns/step metric must stay under about 150 (see budget.go).
//
//	go test -run '^$' -bench SlowNumbers ./jsonpath/
func BenchmarkSlowNumbers(b *testing.B) {
	var texts []string
	for _, e2 := range []int{70, 370, 670, 970, 1020, -70, -370, -670, -970, -1060} {
		// (2^53+1)·2^(e2-53): halfway between two float64s (exact in 4,000 bits).
		odd := new(big.Float).SetPrec(4000).SetInt(new(big.Int).SetUint64(1<<53 + 1))
		half := new(big.Float).SetPrec(4000).SetMantExp(odd, e2-53)
		m, e, _ := strings.Cut(half.Text('e', 25), "e")
		exp, err := strconv.Atoi(e)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, strings.Replace(m, ".", "", 1)[:20]+"1e"+strconv.Itoa(exp-20))
	}
	texts = append(texts, "4.9406564584124654e-324", "615313260187962136346339e165")
	for _, s := range texts {
		steps := numCost(s)
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				f, _ := strconv.ParseFloat(s, 64)
				benchSink += int(f)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/step")
		})
	}
}
