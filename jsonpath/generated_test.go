package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// genObj is a generated JSON object: its members in order, duplicates
// included (the last one wins).
type genObj struct {
	keys []string
	vals []any
}

// genNum is a generated number, kept as the text it is written with.
type genNum string

var genKeys = []string{"a", "b", "x", "y", "name", "type", "status", "items", "spec", "value", "n", "v",
	"a.b", "a-b", "x.y.z", "app.kubernetes.io/name", "é", "ключ", "日本", "", " sp", "a b", "tab\t", "nl\n",
	`q"q`, "a'b", `a\b`, "&amp;", "\u2028", "1", "-1", "0", "*", "$", "@", "[0]", "true", "null", "{x}", "a,b"}

var genNums = []string{"0", "-0", "1", "-1", "2", "3", "7", "1.0", "1.5", "-2.25", "0.1", "0.0", "-0.0", "5e-324",
	"1e21", "1E21", "1e+21", "1e20", "1e-7", "100e-2", "2.5e3", "12E-1", "1e308", "1.7976931348623157e308",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
	"18446744073709551616", "9007199254740993", "9007199254740992", "123456789012345678901234567890",
	"100000000000000000000", "0.30000000000000004", "1000000", "123456789", "1e6", "1e+06"}

var genStrings = []string{"", "a", "b", "x", "Ready", "True", "1", "1.0", "true", "null", "é", "ключ",
	`say "hi"`, "it's", "line\nbreak", "tab\there", "<b>&amp;</b>", `back\slash`, "\u2028\u2029", "😀",
	"a.b", "[*]", "{.x}", " ", "\x01", "\u007f", "Z", "zz", "-1"}

type objGen struct{ r *rand.Rand }

func (g *objGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// value generates a value nested at most depth levels.
func (g *objGen) value(depth int) any {
	n := g.r.IntN(20)
	if depth <= 0 && n >= 12 {
		n = g.r.IntN(12)
	}
	switch {
	case n < 4:
		return genNum(g.pick(genNums))
	case n < 8:
		return g.pick(genStrings)
	case n < 9:
		return g.r.IntN(2) == 0
	case n < 10:
		return nil
	case n < 12:
		if g.r.IntN(3) == 0 {
			return &genObj{}
		}
		return []any{}
	case n < 16:
		return g.object(depth - 1)
	default:
		l := make([]any, g.r.IntN(5))
		// lists of maps of the same shape, as Kubernetes lists are
		if g.r.IntN(2) == 0 {
			for i := range l {
				l[i] = g.object(depth - 1)
			}
			return l
		}
		for i := range l {
			l[i] = g.value(depth - 1)
		}
		return l
	}
}

func (g *objGen) object(depth int) *genObj {
	o := &genObj{}
	for i := g.r.IntN(6); i >= 0; i-- {
		k := g.pick(genKeys)
		if g.r.IntN(3) == 0 {
			k = g.pick(genKeys[:12])
		}
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, g.value(depth))
	}
	return o
}

// encode writes x as JSON, choosing white space, escapes and duplicate
// members at random (a duplicate is written before the member it
// duplicates: the last one wins).
func (g *objGen) encode(b []byte, x any) []byte {
	ws := func(b []byte) []byte {
		if g.r.IntN(4) == 0 {
			return append(b, g.pick([]string{" ", "\n", "\t", "\r\n  "})...)
		}
		return b
	}
	switch t := x.(type) {
	case *genObj:
		b = append(b, '{')
		b = ws(b)
		first := true
		member := func(k string, v any) {
			if !first {
				b = append(b, ',')
				b = ws(b)
			}
			first = false
			b = g.str(b, k)
			b = ws(b)
			b = append(b, ':')
			b = ws(b)
			b = g.encode(b, v)
			b = ws(b)
		}
		for i, k := range t.keys {
			if g.r.IntN(8) == 0 {
				member(k, g.value(1))
			}
			member(k, t.vals[i])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		b = ws(b)
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
				b = ws(b)
			}
			b = g.encode(b, e)
			b = ws(b)
		}
		return append(b, ']')
	case genNum:
		return append(b, t...)
	case string:
		return g.str(b, t)
	case bool:
		return fmt.Append(b, t)
	case nil:
		return append(b, "null"...)
	}
	panic(fmt.Sprintf("encode %T", x))
}

func (g *objGen) str(b []byte, s string) []byte {
	b = append(b, '"')
	if g.r.IntN(40) == 0 { // a lone or mismatched surrogate, which decodes as U+FFFD
		b = append(b, g.pick([]string{`\ud800`, `\udc00`, `\ud800\u0041`, `\udbff\ud800`, `\ud83d\ude00\ud800`})...)
	}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			if g.r.IntN(3) == 0 {
				b = fmt.Appendf(b, `\u%04X`, r)
			} else {
				b = append(b, '\\', byte(r))
			}
		case r < 0x20:
			switch {
			case r == '\n' && g.r.IntN(2) == 0:
				b = append(b, `\n`...)
			case r == '\t' && g.r.IntN(2) == 0:
				b = append(b, `\t`...)
			default:
				b = fmt.Appendf(b, `\u%04x`, r)
			}
		case g.r.IntN(6) == 0:
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				b = fmt.Appendf(b, `\u%04x\u%04x`, r1, r2)
			} else {
				b = fmt.Appendf(b, `\u%04x`, r)
			}
		case r == '/' && g.r.IntN(2) == 0:
			b = append(b, `\/`...)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// genExtra are paths of a kind the other generators do not write: filters
// with descents, nested filters, filters on numbers written in other ways.
var genExtraFilters = []string{
	`[?(@..x)]`, `[?(@..x==1)]`, `[?(@..name=="a")]`, `[?(@.a[?(@.b)])]`, `[?(@.a[?(@.x==1)].y)]`,
	`[?(@.x[*])]`, `[?(@.*)]`, `[?(@.x==@.y)]`, `[?(@.x<@.y)]`, `[?(@.x>=@.n)]`, `[?(@.v!=@.n)]`,
	`[?(@.x==1.0)]`, `[?(@.x==1)]`, `[?(@.x>=0)]`, `[?(@.x<0)]`, `[?(@.x==-0)]`, `[?(@.x==0.0)]`,
	`[?(@.x==9223372036854775807)]`, `[?(@.x>9223372036854775806)]`, `[?(@.x==9223372036854775808)]`,
	`[?(@.x==1000000000000000000000)]`, `[?(@.x==1000000000000000000000.0)]`, `[?(@.x<-9223372036854775808)]`,
	`[?(@.x=="1")]`, `[?(@.x==true)]`, `[?(@.x!=false)]`, `[?(@.name<"b")]`, `[?(@.name>="a")]`,
	`[?(@.x==9007199254740993)]`, `[?(@.x==9007199254740992)]`, `[?(@.x>0.1)]`, `[?(@==1)]`, `[?(@=="a")]`, `[?(@>=1)]`,
	`[?(@['a.b'])]`, `[?(@['a.b']==1)]`, `[?(@.é)]`, `[?(@['q"q'])]`, `[?(@.x)]`, `[?(!@.x)]`,
}

var genExtraSegs = []string{"[*]", ".*", "..x", "..*", "..name", "[0]", "[-1]", "[1:]", "[:-1]", "[::2]", "[-100:100]",
	"[5:1]", "[1:5:3]", "[-1:]", "[0,0]", "[0,-1,*]", "['a','b']", "['a.b']", "['x','a.b','*']", `["q\"q"]`,
	"['a\\'b']", `['a\\b']`, "[' sp']", "['']", ".a", ".b", ".x", ".y", ".items", ".spec", ".name", ".value", ".a\\.b"}

// extraPath writes a path of genExtraSegs and genExtraFilters.
func (g *objGen) extraPath() string {
	var b strings.Builder
	b.WriteString(g.pick([]string{"", "", "$", "@"}))
	for i := g.r.IntN(4) + 1; i > 0; i-- {
		if g.r.IntN(4) == 0 {
			b.WriteString(g.pick(genExtraFilters))
		} else {
			b.WriteString(g.pick(genExtraSegs))
		}
	}
	s := b.String()
	if s == "" || s == "$" || s == "@" {
		return "@"
	}
	return s
}

// TestGeneratedObjectsMatch generates objects (CRD-like nesting, odd keys,
// numbers written every way JSON allows, strings with quotes, newlines and
// HTML, empty maps and lists, nulls) and writes each as raw JSON with
// random white space, escapes and duplicate members, then evaluates
// generated expressions on it: kindex on the raw document (plain and
// indexed) must give what it gives on its decoding, by every entry point;
// and where client-go (with AllowMissingKeys, as kubectl runs it) succeeds
// on the decoding, kindex must print the same or differ as doc.go says.
// JSONPATH_GEN_CASES and JSONPATH_GEN_SEED run more or other cases.
func TestGeneratedObjectsMatch(t *testing.T) {
	objects, perObject, seed := 60, 40, uint64(3)
	fmt.Sscan(os.Getenv("JSONPATH_GEN_CASES"), &objects)
	fmt.Sscan(os.Getenv("JSONPATH_GEN_SEED"), &seed)
	g := &objGen{r: rand.New(rand.NewPCG(seed, 5))}
	pg := &probeGen{r: rand.New(rand.NewPCG(seed, 6))}
	st := &probeStats{docKinds: map[string]int{}}
	for i := 0; i < objects; i++ {
		var root any = g.object(4)
		if i%10 == 0 {
			root = g.value(3) // a document of any type
		}
		raw := g.encode(nil, root)
		if i%3 == 0 {
			raw = append(append([]byte(" \n\t"), raw...), "\r\n "...)
		}
		var obj, objF any
		if err := k8sjson.Unmarshal(raw, &obj); err != nil {
			continue // a number beyond float64
		}
		if err := json.Unmarshal(raw, &objF); err != nil {
			continue
		}
		for j := 0; j < perObject; j++ {
			var expr string
			switch n := g.r.IntN(10); {
			case n < 4:
				expr = "{" + pg.path(obj) + "}"
			case n < 6:
				expr = pg.template(obj, 0)
			case n < 8:
				expr = "{" + g.extraPath() + "}"
			default:
				expr = "{range " + g.extraPath() + "}[{" + g.extraPath() + "}]{end}"
			}
			genOne(t, st, expr, obj, objF, raw)
		}
	}
	t.Logf("%d cases: kindex rejects %d; client-go fails to parse %d, fails %d times, panics %d times; compared %d outputs (%d non-empty): %d differences documented (%v), %d not",
		st.cases, st.kxReject, st.cgParse, st.cgErr, st.cgPanic, st.compared, st.nonEmpty, st.documented, st.docKinds, st.mismatch)
	for _, f := range st.failures {
		t.Error(f)
	}
	if st.nonEmpty < st.compared/4 {
		t.Errorf("too few meaningful comparisons: %d compared, %d non-empty", st.compared, st.nonEmpty)
	}
}

func genOne(t *testing.T, st *probeStats, expr string, obj, objF any, raw []byte) {
	st.cases++
	p, err := Compile(expr)
	if err != nil {
		st.kxReject++
		if c := runCG(expr, obj, true); c.err == nil && !rejectedOnPurpose.MatchString(err.Error()) {
			st.fail("%s: kindex rejects it (%v); client-go prints %q; on %s", expr, err, c.out, raw)
		}
		return
	}
	got, err := p.ExecuteString(obj)
	if err != nil {
		st.internal++
		st.fail("%s: %v; on %s", expr, err, raw)
		return
	}
	// (2) The raw document, plain and indexed, by every entry point; the
	// generic evaluator; the object projected on Fields.
	want := evalObj(p, obj)
	mvs, _ := p.Eval(obj)
	if g := evalObj(generic(p), obj); g != want {
		st.internal++
		st.fail("%s: generic evaluator %+v, specialized %+v; on %s", expr, g, want, raw)
	}
	if pr := evalObj(p, projectFields(obj, p.Fields())); pr != want {
		st.internal++
		st.fail("%s: on the object projected on %q %+v, on the object %+v; on %s", expr, p.Fields(), pr, want, raw)
	}
	var each []Value
	if err := p.Each(obj, func(v Value) bool { each = append(each, v); return true }); (err != nil) != want.err || joined(each) != want.values {
		st.internal++
		st.fail("%s: Each %q, %v; Eval %q; on %s", expr, joined(each), err, want.values, raw)
	}
	if !p.IsTemplate() {
		avs, aerr := p.AppendEval(make([]Value, 1, 2), obj)
		if joined(avs[1:]) != want.values || (aerr != nil) != want.err {
			st.internal++
			st.fail("%s: AppendEval %q, Eval %q; on %s", expr, joined(avs[1:]), want.values, raw)
		}
	}
	for _, in := range []any{JSON(raw), IndexedJSON{Doc: raw, Spans: BuildSpans(nil, raw, 0)}, IndexedJSON{Doc: raw, Spans: BuildSpans(nil, raw, 8)}, IndexedJSON{Doc: raw, Spans: BuildSpans(nil, raw, 128)}} {
		vs, err := p.Eval(in)
		text, terr := p.ExecuteString(in)
		var js bytes.Buffer
		jerr := p.ExecuteJSON(&js, in)
		var each []Value
		eerr := p.Each(in, func(v Value) bool { each = append(each, v.Clone()); return true })
		// Each stops when its function returns false.
		var first []Value
		_ = p.Each(in, func(v Value) bool { first = append(first, v.Clone()); return len(first) < 2 })
		if len(mvs) > 0 && err == nil && joined(first) != joined(mvs[:min(2, len(mvs))]) {
			st.internal++
			st.fail("%s (%T): Each stopped after 2 values gives %q; on %s", expr, in, joined(first), raw)
		}
		o := outcome{joined(vs), err != nil, text, terr != nil, js.String(), jerr != nil}
		if errors.Is(err, ErrBudgetExceeded) || errors.Is(terr, ErrBudgetExceeded) || errors.Is(jerr, ErrBudgetExceeded) {
			continue
		}
		if err == nil && !reflect.DeepEqual(interfaces(vs), interfaces(mvs)) {
			st.internal++
			st.fail("%s (%T): Interface of the values %#v, of the decoded ones %#v; on %s", expr, in, interfaces(vs), interfaces(mvs), raw)
		}
		if o != want || joined(each) != want.values || (eerr != nil) != want.err {
			st.internal++
			st.fail("%s (%T):\nraw     %+v (Each %q)\ndecoded %+v\non %s", expr, in, o, joined(each), want, raw)
		}
	}
	// Values of Eval on raw JSON do not refer to it.
	if doc := slices.Clone(raw); true {
		vs, err := p.Eval(JSON(doc))
		before := joined(vs)
		for i := range doc {
			doc[i] = ' '
		}
		if after := joined(vs); err == nil && after != before {
			st.internal++
			st.fail("%s: values of Eval change with the document: %q, then %q; on %s", expr, before, after, raw)
		}
	}
	// (1) client-go, on the decoding with int64 and with float64 numbers.
	for i, o := range []any{obj, objF} {
		mine := got
		if i == 1 {
			if mine, err = p.ExecuteString(objF); err != nil {
				st.internal++
				st.fail("%s (float64 numbers): %v; on %s", expr, err, raw)
				continue
			}
		}
		c := runCG(expr, o, true)
		switch {
		case c.panic:
			st.cgPanic++
			continue
		case c.parse:
			st.cgParse++
			return
		case c.err != nil:
			st.cgErr++
			continue
		}
		st.compared++
		if mine != "" {
			st.nonEmpty++
		}
		same, mine, want, unordered := sameAsClientGo(t, p, expr, o, c, mine)
		if same {
			if want != c.out {
				st.documented++
				st.docKinds["null prints as null where it is the current node"]++
				continue
			}
			// The same output as JSON (kubectl -o jsonpath-as-json).
			if !unordered && !strings.Contains(mine, "null") && documentedDiff(expr, mine, want, c, false) == "" {
				var js bytes.Buffer
				err := p.ExecuteJSON(&js, o)
				if cgj, cgErr := clientGoOutput(expr, o, true); cgErr == nil && (err != nil || js.String() != cgj) {
					st.mismatch++
					st.fail("%s ExecuteJSON:\nkindex    %q, %v\nclient-go %q\non %s", expr, js.String(), err, cgj, raw)
				}
			}
			continue
		}
		if st.explained(p, expr, o, c, mine, want) {
			continue
		}
		st.mismatch++
		decoding := "int64"
		if i == 1 {
			decoding = "float64"
		}
		st.fail("%s (%s numbers):\nkindex    %q\nclient-go %q\non %s", expr, decoding, mine, want, raw)
	}
}

// A genSchema is the type of a field of a CRD-like object: a scalar type,
// an object with fields, or a list of one type. Objects of a schema let
// filters compare values of one type, which client-go supports.
type genSchema struct {
	kind   byte // 's'tring, 'i'nt, 'f'loat, 'b'ool, 'o'bject, 'l'ist
	fields []string
	sub    []*genSchema // of fields
	elem   *genSchema   // of a list
}

var (
	genInts   = []string{"0", "-0", "1", "-1", "2", "7", "9223372036854775807", "-9223372036854775808", "9007199254740993", "1000000", "123456789"}
	genFloats = []string{"1.0", "1.5", "-2.25", "0.1", "0.0", "-0.0", "1e21", "2.5e3", "1e-7", "100e-2", "9223372036854775808", "1e20", "7.0"}
	genLits   = map[byte][]string{
		's': {`"a"`, `"Ready"`, `"1"`, `""`, `'it\'s'`, `"say \"hi\""`, `"é"`, `"zz"`, `"<b>&amp;</b>"`, `"line\nbreak"`},
		'i': {"0", "1", "-1", "2", "7", "9223372036854775807", "-9223372036854775808", "9007199254740992", "1000000"},
		'f': {"1.0", "1.5", "-2.25", "0.1", "0.0", "2500.0", "1000000000000000000000.0", "7.0", "0.0000001"},
		'b': {"true", "false"},
	}
	genOps = []string{"==", "!=", "<", "<=", ">", ">="}
)

func (g *objGen) schema(depth int) *genSchema {
	n := g.r.IntN(10)
	if depth <= 0 {
		n = g.r.IntN(5)
	}
	switch {
	case n < 5:
		return &genSchema{kind: "ssifb"[n]}
	case n < 8:
		s := &genSchema{kind: 'o'}
		for i := g.r.IntN(4) + 1; i > 0; i-- {
			k := g.pick(genKeys)
			if g.r.IntN(2) == 0 {
				k = g.pick(genKeys[:12])
			}
			if slices.Contains(s.fields, k) {
				continue
			}
			s.fields = append(s.fields, k)
			s.sub = append(s.sub, g.schema(depth-1))
		}
		return s
	default:
		return &genSchema{kind: 'l', elem: g.schema(depth - 1)}
	}
}

// instance generates a value of schema s, fields missing or null at times.
func (g *objGen) instance(s *genSchema) any {
	switch s.kind {
	case 's':
		return g.pick(genStrings)
	case 'i':
		return genNum(g.pick(genInts))
	case 'f':
		return genNum(g.pick(genFloats))
	case 'b':
		return g.r.IntN(2) == 0
	case 'o':
		o := &genObj{}
		for i, k := range s.fields {
			switch n := g.r.IntN(12); {
			case n == 0:
				continue
			case n == 1:
				o.keys, o.vals = append(o.keys, k), append(o.vals, nil)
			default:
				o.keys, o.vals = append(o.keys, k), append(o.vals, g.instance(s.sub[i]))
			}
		}
		return o
	}
	l := make([]any, g.r.IntN(5))
	for i := range l {
		l[i] = g.instance(s.elem)
	}
	return l
}

// key spells a key as a field, or as a quoted key.
func (g *objGen) key(k string) string {
	if g.r.IntN(4) != 0 && k != "" && !strings.ContainsAny(k, "\"'\\") {
		var b strings.Builder
		b.WriteByte('.')
		for _, c := range k {
			if strings.ContainsRune(" \t\n.,[]$@{}*()=!<>", c) {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return "['" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(k) + "']"
}

// typedPath writes a path through schema s, with filters comparing values
// of one type.
func (g *objGen) typedPath(s *genSchema, depth int) string {
	var b strings.Builder
	for i := g.r.IntN(5) + 1; i > 0; i-- {
		switch s.kind {
		case 'o':
			if g.r.IntN(10) == 0 {
				b.WriteString(g.pick([]string{".*", "..*", "[*]"}))
				return b.String()
			}
			j := g.r.IntN(len(s.fields))
			if g.r.IntN(8) == 0 {
				b.WriteString(".." + strings.TrimPrefix(g.key(s.fields[j]), "."))
				return b.String()
			}
			b.WriteString(g.key(s.fields[j]))
			s = s.sub[j]
		case 'l':
			switch n := g.r.IntN(10); {
			case n < 3:
				b.WriteString("[*]")
			case n < 4:
				fmt.Fprintf(&b, "[%d]", g.r.IntN(8)-4)
			case n < 5:
				b.WriteString(g.pick([]string{"[1:]", "[:-1]", "[::2]", "[-2:]", "[-9:9]", "[3:1]", "[0:4:3]", "[0,-1]", "[1,1,0]", "[0:1,*]"}))
			default:
				if depth < 2 {
					b.WriteString(g.typedFilter(s.elem, depth+1))
				} else {
					b.WriteString("[*]")
				}
			}
			s = s.elem
		default:
			return b.String()
		}
	}
	return b.String()
}

// typedFilter writes a filter for the items of schema s.
func (g *objGen) typedFilter(s *genSchema, depth int) string {
	// a scalar field of the item (@ itself for a list of scalars)
	path, t := "@", s
	if s.kind == 'o' {
		j := g.r.IntN(len(s.fields))
		path, t = "@"+g.key(s.fields[j]), s.sub[j]
		if t.kind == 'o' && len(t.fields) > 0 && g.r.IntN(2) == 0 {
			k := g.r.IntN(len(t.fields))
			path, t = path+g.key(t.fields[k]), t.sub[k]
		}
		if t.kind == 'l' && g.r.IntN(2) == 0 {
			// a nested filter as an existence test
			return "[?(" + path + g.typedFilter(t.elem, depth+1) + ")]"
		}
		if g.r.IntN(8) == 0 {
			return "[?(@.." + strings.TrimPrefix(g.key(s.fields[j]), ".") + ")]"
		}
	}
	lits, ok := genLits[t.kind]
	if !ok || g.r.IntN(6) == 0 {
		return "[?(" + path + ")]"
	}
	op := g.pick(genOps)
	if t.kind == 'b' {
		op = g.pick(genOps[:2])
	}
	if s.kind == 'o' && g.r.IntN(5) == 0 {
		// two fields of one type
		for j := range s.fields {
			if s.sub[j].kind == t.kind && "@"+g.key(s.fields[j]) != path {
				return "[?(" + path + op + "@" + g.key(s.fields[j]) + ")]"
			}
		}
	}
	if g.r.IntN(4) == 0 {
		return "[?(" + g.pick(lits) + op + path + ")]"
	}
	return "[?(" + path + op + g.pick(lits) + ")]"
}

// TestGeneratedTypedObjectsMatch is TestGeneratedObjectsMatch on objects
// of a schema (every field of one type, as in a CRD), with filters that
// compare values of one type: where client-go succeeds far more often.
func TestGeneratedTypedObjectsMatch(t *testing.T) {
	schemas, perSchema, seed := 60, 60, uint64(4)
	fmt.Sscan(os.Getenv("JSONPATH_GEN_CASES"), &schemas)
	fmt.Sscan(os.Getenv("JSONPATH_GEN_SEED"), &seed)
	g := &objGen{r: rand.New(rand.NewPCG(seed, 7))}
	st := &probeStats{docKinds: map[string]int{}}
	for i := 0; i < schemas; i++ {
		s := g.schema(5)
		if s.kind != 'o' {
			s = &genSchema{kind: 'o', fields: []string{"spec", "items"}, sub: []*genSchema{s, {kind: 'l', elem: s}}}
		}
		for j := 0; j < perSchema; j++ {
			if j%6 == 0 {
				continue
			}
			raw := g.encode(nil, g.instance(s))
			var obj, objF any
			if k8sjson.Unmarshal(raw, &obj) != nil || json.Unmarshal(raw, &objF) != nil {
				continue
			}
			var expr string
			switch n := g.r.IntN(10); {
			case n < 6:
				expr = "{" + g.typedPath(s, 0) + "}"
			case n < 7:
				expr = "{" + g.typedPath(s, 0) + "," + g.typedPath(s, 0) + "}"
			case n < 8:
				expr = "{" + g.typedPath(s, 0) + "}/{" + g.typedPath(s, 0) + "}"
			default:
				// a range over items, and paths in the item (or the object, with $)
				rp := g.typedPath(s, 0)
				expr = "{range " + rp + "}[{" + g.typedPath(s, 0) + "}]{end}"
				if p, err := Compile("{" + rp + "}"); err == nil {
					if vs, err := p.Eval(obj); err == nil && len(vs) > 0 && vs[0].Kind() == KindMap {
						expr = "{range " + rp + "}<{@" + g.guidedKey(vs[0].Interface()) + "}>{\"\\n\"}{end}"
					}
				}
			}
			genOne(t, st, expr, obj, objF, raw)
		}
	}
	t.Logf("%d cases: kindex rejects %d; client-go fails to parse %d, fails %d times, panics %d times; compared %d outputs (%d non-empty): %d differences documented (%v), %d not",
		st.cases, st.kxReject, st.cgParse, st.cgErr, st.cgPanic, st.compared, st.nonEmpty, st.documented, st.docKinds, st.mismatch)
	for _, f := range st.failures {
		t.Error(f)
	}
	if st.nonEmpty < st.compared/4 {
		t.Errorf("too few meaningful comparisons: %d compared, %d non-empty", st.compared, st.nonEmpty)
	}
}

// guidedKey writes a field of a map, or "".
func (g *objGen) guidedKey(x any) string {
	m, ok := x.(map[string]any)
	if !ok || len(m) == 0 {
		return ""
	}
	return g.key(g.pick(sortedKeys(m)))
}

func interfaces(vs []Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v.Interface()
	}
	return out
}
