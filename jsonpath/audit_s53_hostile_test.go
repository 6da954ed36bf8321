package jsonpath

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// hgen writes random JSON text directly (so that duplicates, escapes and
// number spellings are whatever it picks) and random expressions over the
// same keys.
type hgen struct{ r *rand.Rand }

var hKeys = []string{"a", "b", "c", "x", "a.b", "b.c", "a\\b", "k\x00", "é", "", "1", "-1", "*", "a b", "@", "a'b", "a\"b", "ab"}

var hNums = []string{"0", "-0", "0.0", "-0.0", "1", "1.0", "1e0", "10e-1", "-1", "2", "1.5", "1e2", "100", "1E+2",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"1e19", "1e308", "4.9e-324", "1e-400", "0e999", "123456789012345678901234", "0.1", "3", "1.00000000000000000001"}

var hStrs = []string{"", "a", "b", "1", "1.0", "0", "-0", "true", "null", "a.b", "é", "\x00", "\u2028", "x\"y", "\\"}

func (g *hgen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// k picks a key, the common ones most of the time.
func (g *hgen) k() string {
	if g.r.IntN(3) > 0 {
		return g.pick(hKeys[:4])
	}
	return g.pick(hKeys)
}

func (g *hgen) key(b []byte, k string) []byte {
	b = append(b, '"')
	for _, r := range k {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = fmt.Appendf(b, `\u%04x`, r)
		case g.r.IntN(5) == 0 && r < 0x10000:
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}

func (g *hgen) value(b []byte, depth int) []byte {
	n := g.r.IntN(10)
	if depth <= 0 {
		n = g.r.IntN(5)
	}
	switch n {
	case 0, 1:
		return append(b, g.pick(hNums)...)
	case 2:
		return g.key(b, g.pick(hStrs))
	case 3:
		return append(b, g.pick([]string{"true", "false", "null"})...)
	case 4:
		return append(b, g.pick([]string{"{}", "[]", "[ ]", "{ }"})...)
	case 5, 6, 7:
		b = append(b, '{')
		for i := g.r.IntN(5); i >= 0; i-- {
			b = g.key(b, g.k())
			b = append(b, ':')
			b = g.value(b, depth-1)
			if i > 0 {
				b = append(b, ',')
			}
		}
		return append(b, '}')
	default:
		b = append(b, '[')
		for i := g.r.IntN(5); i >= 0; i-- {
			b = g.value(b, depth-1)
			if i > 0 {
				b = append(b, ',', ' ')
			}
		}
		return append(b, ']')
	}
}

func (g *hgen) name() string {
	k := g.k()
	switch {
	case simpleName(k):
		return "." + k
	case g.r.IntN(2) == 0:
		return "[" + strconv.Quote(k) + "]"
	}
	return "['" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\x00`).Replace(k) + "']"
}

func (g *hgen) lit() string {
	switch g.r.IntN(3) {
	case 0:
		return g.pick([]string{"0", "-0", "1", "1.0", "-1", "2", "1.5", "100", "0.0", "9223372036854775807", "-9223372036854775808", "99999999999999999999"})
	case 1:
		return strconv.Quote(g.pick(hStrs))
	}
	return g.pick([]string{"true", "false", "@.b", "@.a", "@", "@[0]"})
}

func (g *hgen) path(depth int) string {
	var sb strings.Builder
	for i := g.r.IntN(4) + 1; i > 0; i-- {
		switch g.r.IntN(14) {
		case 0, 1, 2, 3:
			sb.WriteString(g.name())
		case 4:
			sb.WriteString(g.pick([]string{".*", "[*]"}))
		case 5:
			fmt.Fprintf(&sb, "[%d]", g.r.IntN(5)-2)
		case 6:
			sb.WriteString(g.pick([]string{"[::2]", "[1:]", "[-1:]", "[:-1]", "[0:1000000000000000000]", "[-1000000000000000000:]", "[1:0]", "[::3]", "[-2:-1]", "[5:]"}))
		case 7:
			k := g.k()
			if simpleName(k) {
				sb.WriteString(".." + k)
			} else {
				sb.WriteString("..['" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\x00`).Replace(k) + "']")
			}
		case 8:
			sb.WriteString(g.pick([]string{"..*", "..[0]", "..[*]"}))
		case 9, 10:
			if depth > 0 {
				op := g.pick([]string{"", "==", "!=", "<", "<=", ">", ">="})
				left := "@" + g.path(depth-1)
				if op == "" {
					fmt.Fprintf(&sb, "[?(%s)]", left)
				} else {
					fmt.Fprintf(&sb, "[?(%s%s%s)]", left, op, g.lit())
				}
			} else {
				sb.WriteString(g.name())
			}
		case 11:
			sb.WriteString("[" + g.pick([]string{"0,1", "'a','b'", "-1,0", "'a',0", "*,0", "0:1,1"}) + "]")
		default:
			sb.WriteString(g.name())
		}
	}
	return sb.String()
}

func (g *hgen) expr() string {
	switch g.r.IntN(9) {
	case 6:
		return "{range " + g.path(1) + "," + g.lit() + "}({$" + g.path(1) + "}|{@})\n{end}"
	case 7:
		return "{" + g.lit() + "," + g.path(1) + "}-{range $" + g.path(2) + "}{range @" + g.path(1) + "}{end}{@}{end}"
	case 8:
		return "{" + g.path(2) + "[?(@" + g.path(1) + g.pick([]string{"==", "!=", "<", ">="}) + "@" + g.path(1) + ")]}"
	case 0:
		return "{range " + g.path(1) + "}[{@}]{end}"
	case 1:
		return "{" + g.path(2) + "," + g.path(1) + "}"
	case 2:
		return "{range " + g.path(1) + "}{range " + g.path(1) + "}<{@}>{end};{end}"
	}
	return "{" + g.path(2) + "}"
}

// TestAuditS53RawMatchesDecoded evaluates generated expressions on
// generated documents, decoded and raw (plain, and indexed with spans of
// every value), and requires the same results.
func TestAuditS53RawMatchesDecoded(t *testing.T) {
	iters := 3000
	if s := os.Getenv("AUDIT_ITERS"); s != "" {
		iters, _ = strconv.Atoi(s)
	}
	seed := uint64(53)
	if s := os.Getenv("AUDIT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	g := &hgen{r: rand.New(rand.NewPCG(seed, 1))}
	opts := Options{MaxSteps: -1, MaxResults: -1}
	fails, compared, nonEmpty := 0, 0, 0
	for it := 0; it < iters && fails < 10; it++ {
		raw := g.value(nil, 4)
		var obj any
		if err := k8sjson.Unmarshal(raw, &obj); err != nil {
			continue // 1e400 and the like
		}
		spans := BuildSpans(nil, JSON(raw), 1)
		for k := 0; k < 10; k++ {
			e := g.expr()
			p, err := CompileWithOptions(e, opts)
			if err != nil {
				continue
			}
			if q, err := CompileWithOptions(p.String(), opts); err != nil || q.String() != p.String() {
				t.Errorf("%q: String %q does not round-trip: %v", e, p.String(), err)
				fails++
				continue
			}
			want, werr := p.ExecuteString(obj)
			if compared++; werr == nil && want != "" {
				nonEmpty++
			}
			for name, src := range map[string]any{"JSON": JSON(raw), "Indexed": IndexedJSON{Doc: raw, Spans: spans}} {
				got, gerr := p.ExecuteString(src)
				if (werr == nil) != (gerr == nil) || got != want {
					if errors.Is(werr, ErrUnsupportedType) && errors.Is(gerr, ErrUnsupportedType) {
						continue
					}
					t.Errorf("%s on %s:\n %s: %q (%v)\n decoded: %q (%v)", e, raw, name, got, gerr, want, werr)
					fails++
				}
			}
			{ // Eval, Each and the generic evaluator, on the decoding and the raw forms
				wv, werr := p.Eval(obj)
				gv, gerr := generic(p).Eval(obj)
				var ev []Value
				eerr := p.Each(obj, func(v Value) bool { ev = append(ev, v); return true })
				if (werr == nil) != (gerr == nil) || joined(gv) != joined(wv) || (werr == nil) != (eerr == nil) || joined(ev) != joined(wv) {
					t.Errorf("Eval %s on %s:\n generic: %s (%v)\n Each: %s (%v)\n Eval: %s (%v)", e, raw, joined(gv), gerr, joined(ev), eerr, joined(wv), werr)
					fails++
				}
				for name, src := range map[string]any{"JSON": JSON(raw), "Indexed": IndexedJSON{Doc: raw, Spans: spans}} {
					gv, gerr := p.Eval(src)
					if (werr == nil) != (gerr == nil) || joined(gv) != joined(wv) {
						t.Errorf("Eval %s on %s:\n %s: %s (%v)\n decoded: %s (%v)", e, raw, name, joined(gv), gerr, joined(wv), werr)
						fails++
					} else if gi, wi := interfaces(gv), interfaces(wv); !reflect.DeepEqual(gi, wi) {
						t.Errorf("Interface of %s on %s:\n %s: %#v\n decoded: %#v", e, raw, name, gi, wi)
						fails++
					}
				}
				var wj, gj bytes.Buffer
				werr = p.ExecuteJSON(&wj, obj)
				gerr = p.ExecuteJSON(&gj, JSON(raw))
				if (werr == nil) != (gerr == nil) || wj.String() != gj.String() {
					t.Errorf("ExecuteJSON %s on %s:\n raw: %s (%v)\n decoded: %s (%v)", e, raw, gj.String(), gerr, wj.String(), werr)
					fails++
				}
			}
		}
	}
	// The comparisons mean something only if many outputs are not empty.
	if nonEmpty < compared/10 {
		t.Errorf("too few meaningful comparisons: %d of %d outputs non-empty", nonEmpty, compared)
	}
	t.Logf("%d expressions compared, %d with a non-empty output", compared, nonEmpty)
}

// TestAuditS53ConcurrentEvaluations runs the same compiled paths from
// several goroutines on decoded, raw and indexed documents: every result is
// the one a lone evaluation gives.
func TestAuditS53ConcurrentEvaluations(t *testing.T) {
	g := &hgen{r: rand.New(rand.NewPCG(99, 1))}
	type job struct {
		p    *Path
		in   any
		want string
	}
	var jobs []job
	for len(jobs) < 300 {
		raw := g.value(nil, 4)
		var obj any
		if k8sjson.Unmarshal(raw, &obj) != nil {
			continue
		}
		p, err := Compile(g.expr())
		if err != nil {
			continue
		}
		for _, in := range []any{obj, JSON(raw), IndexedJSON{Doc: raw, Spans: BuildSpans(nil, JSON(raw), 1)}} {
			want, err := p.ExecuteString(in)
			if err != nil {
				continue
			}
			jobs = append(jobs, job{p, in, want})
		}
	}
	done := make(chan string, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			msg := ""
			for k := 0; k < 20 && msg == ""; k++ {
				for i := range jobs {
					j := jobs[(i*7+w*13+k)%len(jobs)]
					got, err := j.p.ExecuteString(j.in)
					if err != nil || got != j.want {
						msg = fmt.Sprintf("%s on %T: %q (%v), want %q", j.p, j.in, got, err, j.want)
						break
					}
				}
			}
			done <- msg
		}(w)
	}
	for w := 0; w < 8; w++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
