// Package querymodel is a brute-force model of package query's documented semantics, for
// differential tests of kindex's caches: random objects, JSONPath expressions and queries
// (gen.go), and the answers the documentation gives for them, computed object by object
// without any index. It shares no code with the store, the JSONPath evaluator or the
// query planner: its JSONPath subset is evaluated here on JSON it decodes itself, and its
// numbers are compared with math/big.
package querymodel

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/query"
)

// Decode reads JSON into the JSON model Kubernetes' decoders produce: objects as
// map[string]any, arrays as []any, integers that fit an int64 as int64, other numbers as
// float64.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return convert(v)
}

func convert(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, err
		}
		return f, nil
	case map[string]any:
		for k, x := range t {
			c, err := convert(x)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
	case []any:
		for i, x := range t {
			c, err := convert(x)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
	}
	return v, nil
}

// SegKind is the kind of one path segment.
type SegKind int

// The segments of the JSONPath subset the model evaluates (package jsonpath's meanings).
const (
	// Field: .key, or ['key'] (Quoted): a quoted key with dots is the key when the map
	// has it, else its parts read one after the other.
	Field SegKind = iota
	// Wildcard: [*] or .*: the elements of a list, the values of a map in key order.
	Wildcard
	// Index: [n], n < 0 counting from the end; lists only.
	Index
	// Slice: [start:end:step] of a list, bounds clamped, negative ones from the end.
	Slice
	// Union: ['a','b']: every a, then every b.
	Union
	// Descent: ..key: the key of the current value and of every map and list below it,
	// in pre-order.
	Descent
	// Filter: [?(@.key op literal)] on the elements of a list: numbers compare by value,
	// strings bytewise; values of other kinds, or of different kinds, are never equal
	// and never ordered; a missing operand matches nothing.
	Filter
)

// Seg is one segment of a path.
type Seg struct {
	Kind   SegKind
	Key    string   // Field, Descent, Filter
	Keys   []string // Union
	Quoted bool     // Field written ['key']
	Star   bool     // Wildcard written .* rather than [*]
	N      int      // Index
	Start  *int     // Slice
	End    *int     // Slice
	Step   int      // Slice (0: not written)
	Op     string   // Filter: == != < <= > >=
	Lit    any      // Filter: a string, an int64 or a float64
}

// Path is a JSONPath expression of the subset: a path, or a template of text and paths.
type Path struct {
	Segs []Seg
	// Template, when set, makes the expression a template: text and {path} actions, whose
	// output is the one value (none when empty).
	Template []Part
}

// Part is a piece of a template: text, or a path whose values print separated by spaces.
type Part struct {
	Text string
	Path *Path
}

// String is the expression in kubectl's syntax, braces included.
func (p Path) String() string {
	if p.Template != nil {
		var b strings.Builder
		for _, part := range p.Template {
			if part.Path != nil {
				b.WriteString(part.Path.String())
			} else {
				b.WriteString(part.Text)
			}
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteByte('{')
	for _, s := range p.Segs {
		switch s.Kind {
		case Field:
			if s.Quoted {
				b.WriteString("['" + quoteKey(s.Key) + "']")
			} else {
				b.WriteString("." + s.Key)
			}
		case Wildcard:
			if s.Star {
				b.WriteString(".*")
			} else {
				b.WriteString("[*]")
			}
		case Index:
			fmt.Fprintf(&b, "[%d]", s.N)
		case Slice:
			b.WriteByte('[')
			if s.Start != nil {
				fmt.Fprint(&b, *s.Start)
			}
			b.WriteByte(':')
			if s.End != nil {
				fmt.Fprint(&b, *s.End)
			}
			if s.Step != 0 {
				fmt.Fprintf(&b, ":%d", s.Step)
			}
			b.WriteByte(']')
		case Union:
			b.WriteByte('[')
			for i, k := range s.Keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString("'" + quoteKey(k) + "'")
			}
			b.WriteByte(']')
		case Descent:
			b.WriteString(".." + s.Key)
		case Filter:
			lit := ""
			switch l := s.Lit.(type) {
			case string:
				lit = "'" + quoteKey(l) + "'"
			case int64:
				lit = strconv.FormatInt(l, 10)
			case float64:
				lit = strconv.FormatFloat(l, 'f', -1, 64)
				if !strings.Contains(lit, ".") {
					lit += ".0"
				}
			}
			fmt.Fprintf(&b, "[?(@.%s%s%s)]", s.Key, s.Op, lit)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// quoteKey escapes a key for a single-quoted JSONPath string.
func quoteKey(k string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(k)
}

// Values returns what an index on p holds for doc: the canonical text of each scalar it
// selects (strings as they are, integers in decimal, floats as strconv 'g' -1 writes them,
// booleans), each once, plus query.NonScalar if it selects a map or a list; null and
// missing fields give nothing. A template gives its output, if not empty. The result is
// sorted.
func (p Path) Values(doc any) []string {
	if p.Template != nil {
		var b strings.Builder
		for _, part := range p.Template {
			if part.Path == nil {
				b.WriteString(part.Text)
				continue
			}
			for i, v := range part.Path.eval(doc) {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(text(v))
			}
		}
		if b.Len() == 0 {
			return []string{}
		}
		return []string{b.String()}
	}
	set := map[string]bool{}
	for _, v := range p.eval(doc) {
		switch v.(type) {
		case nil:
		case map[string]any, []any:
			set[query.NonScalar] = true
		default:
			set[text(v)] = true
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// text prints a value as kubectl does: strings as they are, numbers and booleans as Go
// prints them, null as null, maps and lists as encoding/json writes them.
func text(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// eval returns the values p selects from doc, in order.
func (p Path) eval(doc any) []any {
	cur := []any{doc}
	for _, s := range p.Segs {
		var next []any
		if s.Kind == Union {
			for _, k := range s.Keys {
				for _, v := range cur {
					next = append(next, step(v, Seg{Kind: Field, Key: k, Quoted: true})...)
				}
			}
		} else {
			for _, v := range cur {
				next = append(next, step(v, s)...)
			}
		}
		cur = next
	}
	return cur
}

func step(v any, s Seg) []any {
	switch s.Kind {
	case Field:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if x, ok := m[s.Key]; ok {
			return []any{x}
		}
		if !s.Quoted || !strings.Contains(s.Key, ".") {
			return nil
		}
		var cur any = m
		for _, part := range strings.Split(s.Key, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			if cur, ok = m[part]; !ok {
				return nil
			}
		}
		return []any{cur}
	case Wildcard:
		switch t := v.(type) {
		case []any:
			return t
		case map[string]any:
			out := make([]any, 0, len(t))
			for _, k := range slices.Sorted(maps.Keys(t)) {
				out = append(out, t[k])
			}
			return out
		}
	case Index:
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		i := s.N
		if i < 0 {
			i += len(l)
		}
		if i < 0 || i >= len(l) {
			return nil
		}
		return []any{l[i]}
	case Slice:
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		clamp := func(p *int, def int) int {
			if p == nil {
				return def
			}
			i := *p
			if i < 0 {
				i += len(l)
			}
			return max(0, min(i, len(l)))
		}
		start, end, by := clamp(s.Start, 0), clamp(s.End, len(l)), max(s.Step, 1)
		var out []any
		for i := start; i < end; i += by {
			out = append(out, l[i])
		}
		return out
	case Descent:
		var out []any
		var walk func(x any)
		walk = func(x any) {
			switch t := x.(type) {
			case map[string]any:
				if y, ok := t[s.Key]; ok {
					out = append(out, y)
				}
				for _, k := range slices.Sorted(maps.Keys(t)) {
					walk(t[k])
				}
			case []any:
				for _, y := range t {
					walk(y)
				}
			}
		}
		walk(v)
		return out
	case Filter:
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		var out []any
		for _, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if x, ok := m[s.Key]; ok && filterHolds(x, s.Op, s.Lit) {
				out = append(out, e)
			}
		}
		return out
	}
	return nil
}

// filterHolds applies a filter's comparison to a value and a literal.
func filterHolds(x any, op string, lit any) bool {
	c, ordered, equal := 0, false, false
	switch l := lit.(type) {
	case string:
		if s, ok := x.(string); ok {
			c, ordered = strings.Compare(s, l), true
			equal = c == 0
		}
	default:
		a, okA := exact(x)
		b, _ := exact(l)
		if okA {
			c, ordered = a.Cmp(b), true
			equal = c == 0
		}
	}
	switch op {
	case "==":
		return equal
	case "!=":
		return !equal
	case "<":
		return ordered && c < 0
	case "<=":
		return ordered && c <= 0
	case ">":
		return ordered && c > 0
	}
	return ordered && c >= 0
}

// exact returns a JSON number exactly.
func exact(x any) (*big.Float, bool) {
	switch t := x.(type) {
	case int64:
		return new(big.Float).SetInt64(t), true
	case float64:
		return new(big.Float).SetFloat64(t), true
	}
	return nil, false
}

// Number reads s as package query documents a number: a decimal integer that fits an
// int64 (exact), or what strconv.ParseFloat accepts as a finite float64 that is not the
// rounding to zero of a nonzero number. The value is returned exactly.
func Number(s string) (*big.Float, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return new(big.Float).SetInt64(i), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	if f == 0 {
		exact, _, err := big.ParseFloat(s, 0, 4096, big.ToNearestEven)
		if err == nil && exact.Sign() != 0 {
			return nil, false // too small: rounds to 0
		}
	}
	return new(big.Float).SetFloat64(f), true
}

// Object is one object of the model.
type Object struct {
	Namespace, Name string
	Labels          map[string]string
	Doc             any
}

// Key is the object's cache key.
func (o *Object) Key() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Model is a set of objects and the index names registered on them.
type Model struct {
	Objects map[string]*Object
	Indexes map[string]Path
	// Paths are the JSONPath conditions' expressions the model can evaluate, by text.
	Paths map[string]Path
}

// New returns an empty model.
func New() *Model {
	return &Model{Objects: map[string]*Object{}, Indexes: map[string]Path{}, Paths: map[string]Path{}}
}

// Put adds or replaces an object from its JSON (as the cache holds it).
func (m *Model) Put(data []byte) (*Object, error) {
	doc, err := Decode(data)
	if err != nil {
		return nil, err
	}
	md, _ := doc.(map[string]any)["metadata"].(map[string]any)
	o := &Object{Doc: doc, Labels: map[string]string{}}
	o.Namespace, _ = md["namespace"].(string)
	o.Name, _ = md["name"].(string)
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			o.Labels[k], _ = v.(string)
		}
	}
	m.Objects[o.Key()] = o
	return o, nil
}

// Delete removes an object.
func (m *Model) Delete(key string) { delete(m.Objects, key) }

// Outcome is the kind of outcome the model expects of a query.
type Outcome int

// Outcomes.
const (
	OK Outcome = iota
	Invalid
	ScanRequired
)

// Check says whether package query's rules accept q: Invalid for a malformed condition
// (see query.Condition.Validate: values, bounds, NonScalar), a negative Limit, an empty
// AnyOf group or Descending without SortBy; ScanRequired when Scan is not set and q (one
// of its AnyOf groups, with Conditions) has no positive indexed condition.
func (m *Model) Check(q query.Query) Outcome {
	if q.Limit < 0 || q.Descending && q.SortBy == "" {
		return Invalid
	}
	all := slices.Clone(q.Conditions)
	for _, g := range q.AnyOf {
		if len(g) == 0 {
			return Invalid
		}
		all = append(all, g...)
	}
	for _, c := range all {
		if !validCondition(c) {
			return Invalid
		}
		if _, known := m.Paths[c.Path]; c.Path != "" && !known {
			return Invalid // the generator's paths compile; other text does not
		}
	}
	if q.Scan {
		return OK
	}
	positive := func(cs []query.Condition) bool {
		return slices.ContainsFunc(cs, func(c query.Condition) bool {
			return c.Index != "" && c.Op != query.NotEqual && c.Op != query.NotExists
		})
	}
	if len(q.AnyOf) == 0 {
		if !positive(q.Conditions) {
			return ScanRequired
		}
		return OK
	}
	for _, g := range q.AnyOf {
		if !positive(q.Conditions) && !positive(g) {
			return ScanRequired
		}
	}
	return OK
}

func validCondition(c query.Condition) bool {
	if (c.Index == "") == (c.Path == "") {
		return false
	}
	switch c.Op {
	case query.Exists, query.NotExists:
		return len(c.Values) == 0
	case query.In:
		return len(c.Values) > 0 && !slices.Contains(c.Values, query.NonScalar)
	case query.Equal, query.NotEqual, query.Prefix:
		return len(c.Values) == 1 && c.Values[0] != query.NonScalar
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		if len(c.Values) != 1 {
			return false
		}
		_, ok := Number(c.Values[0])
		return ok
	}
	return false
}

// Values returns the values of an index name or of a JSONPath condition's expression.
func (m *Model) values(o *Object, c query.Condition) []string {
	if c.Index != "" {
		return m.Indexes[c.Index].Values(o.Doc)
	}
	p, ok := m.Paths[c.Path]
	if !ok {
		panic("querymodel: unknown path " + c.Path)
	}
	return p.Values(o.Doc)
}

// Match reports whether the values satisfy c, as package query defines each operator.
func Match(c query.Condition, vs []string) bool {
	scalars := slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return v == query.NonScalar })
	switch c.Op {
	case query.Equal:
		return slices.Contains(scalars, c.Values[0])
	case query.In:
		return slices.ContainsFunc(scalars, func(v string) bool { return slices.Contains(c.Values, v) })
	case query.NotEqual:
		return !slices.Contains(scalars, c.Values[0])
	case query.Exists:
		return len(vs) > 0
	case query.NotExists:
		return len(vs) == 0
	case query.Prefix:
		return slices.ContainsFunc(scalars, func(v string) bool { return strings.HasPrefix(v, c.Values[0]) })
	}
	bound, ok := Number(c.Values[0])
	if !ok {
		return false
	}
	return slices.ContainsFunc(scalars, func(v string) bool {
		n, ok := Number(v)
		if !ok {
			return false
		}
		r := n.Cmp(bound)
		switch c.Op {
		case query.LessThan:
			return r < 0
		case query.LessOrEqual:
			return r <= 0
		case query.GreaterThan:
			return r > 0
		}
		return r >= 0
	})
}

// Matches reports whether o satisfies q's namespace, labels, conditions and AnyOf.
func (m *Model) Matches(o *Object, q query.Query) bool {
	if q.Namespace != "" && o.Namespace != q.Namespace {
		return false
	}
	if q.Labels != nil && !q.Labels.Matches(labels.Set(o.Labels)) {
		return false
	}
	all := func(cs []query.Condition) bool {
		for _, c := range cs {
			if !Match(c, m.values(o, c)) {
				return false
			}
		}
		return true
	}
	if !all(q.Conditions) {
		return false
	}
	return len(q.AnyOf) == 0 || slices.ContainsFunc(q.AnyOf, all)
}

// SortKey is where an object sits in a query's order.
type SortKey struct {
	Has       bool
	Value     string
	Namespace string
	Name      string
}

// rank orders kinds of values: numbers, then NonScalar, then other strings.
func rank(v string) (int, *big.Float) {
	if n, ok := Number(v); ok {
		return 0, n
	}
	if v == query.NonScalar {
		return 1, nil
	}
	return 2, nil
}

// CompareValues orders two values of a sort index as package query documents: numbers
// numerically (equal numbers written differently by their text) and before the others,
// NonScalar after the numbers and before every other string, strings bytewise.
func CompareValues(a, b string) int {
	ra, na := rank(a)
	rb, nb := rank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	if ra == 0 {
		if c := na.Cmp(nb); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

// Key returns o's position in the order of q (SortBy, Descending).
func (m *Model) Key(o *Object, q query.Query) SortKey {
	k := SortKey{Namespace: o.Namespace, Name: o.Name}
	if q.SortBy == "" {
		return k
	}
	for _, v := range m.Indexes[q.SortBy].Values(o.Doc) {
		c := 0
		if k.Has {
			c = CompareValues(v, k.Value)
		}
		if !k.Has || q.Descending && c > 0 || !q.Descending && c < 0 {
			k.Has, k.Value = true, v
		}
	}
	return k
}

// CompareKeys orders positions in q's order: by value (reversed with Descending), objects
// without a value last in both directions, ties in (namespace, name) order.
func CompareKeys(q query.Query, a, b SortKey) int {
	if q.SortBy != "" {
		switch {
		case a.Has != b.Has:
			if a.Has {
				return -1
			}
			return 1
		case a.Has:
			c := CompareValues(a.Value, b.Value)
			if q.Descending {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// Results returns the keys of every object matching q, in q's order (Limit and Continue
// ignored).
func (m *Model) Results(q query.Query) []string {
	var hits []*Object
	for _, o := range m.Objects {
		if m.Matches(o, q) {
			hits = append(hits, o)
		}
	}
	slices.SortFunc(hits, func(a, b *Object) int { return CompareKeys(q, m.Key(a, q), m.Key(b, q)) })
	out := make([]string, len(hits))
	for i, o := range hits {
		out[i] = o.Key()
	}
	return out
}

// CountBy returns, for each value of the index, how many objects matching q have it (each
// object once per distinct value; NonScalar is not counted).
func (m *Model) CountBy(q query.Query, index string) map[string]int {
	out := map[string]int{}
	for _, o := range m.Objects {
		if !m.Matches(o, q) {
			continue
		}
		for _, v := range m.Indexes[index].Values(o.Doc) {
			if v != query.NonScalar {
				out[v]++
			}
		}
	}
	return out
}

// Explain describes how got and want (keys in a query's order) differ: the values, for
// q's indexes and JSONPath conditions, of the objects in one and not the other, or else of
// the first two out of order.
func (m *Model) Explain(q query.Query, got, want []string) string {
	diff := map[string]bool{}
	for _, k := range got {
		if !slices.Contains(want, k) {
			diff[k] = true
		}
	}
	for _, k := range want {
		if !slices.Contains(got, k) {
			diff[k] = true
		}
	}
	if len(diff) == 0 {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				diff[got[i]], diff[want[i]] = true, true
				break
			}
		}
	}
	conds := slices.Concat(append([][]query.Condition{q.Conditions}, q.AnyOf...)...)
	if q.SortBy != "" {
		conds = append(conds, query.Condition{Index: q.SortBy})
	}
	s := ""
	for _, k := range slices.Sorted(maps.Keys(diff)) {
		o := m.Objects[k]
		if o == nil {
			s += "\n  " + k + ": gone"
			continue
		}
		s += "\n  " + k + ":"
		seen := map[string]bool{}
		for _, c := range conds {
			subject := c.Index + c.Path
			if !seen[subject] {
				seen[subject] = true
				s += fmt.Sprintf(" %s=%q", subject, m.values(o, c))
			}
		}
	}
	return s
}
