package querymodel

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kindex/kindex/query"
)

// Gen makes random objects, paths and queries from a seeded source.
type Gen struct {
	R *rand.Rand
	// Narrow makes scalars few and common, so that values are shared by many objects.
	Narrow bool
}

// NewGen returns a generator seeded with seed.
func NewGen(seed uint64) *Gen { return &Gen{R: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func pick[T any](g *Gen, xs []T) T { return xs[g.R.IntN(len(xs))] }

// SpecKeys are the keys of maps in generated objects and paths: plain, dotted (read as a
// key, or as its parts when a map lacks it), unicode in two normalization forms, a digit,
// characters JSON encoders escape, quotes, the empty key.
var SpecKeys = []string{"a", "b", "c", "x", "x.y", "y", "\u00fc", "u\u0308", "1", "k", "v", "<&>", "k\u2028", `q"'\`, ""}

var specKeys = SpecKeys

// dataKeys are the keys of ConfigMap data (ConfigMap keys are [-._a-zA-Z0-9]+).
var dataKeys = []string{"a", "b", "c", "x", "x.y", "1", "k"}

// strs are string values: empty, cases, unicode (NFC and NFD forms, combining marks,
// astral), HTML characters and line separators (which encoders escape), and strings
// that look like numbers in every way ParseFloat and ParseInt differ.
var strs = []string{
	"", "a", "A", "b", "ab", "abc", "a b", " a", "Z", "~",
	"\u00e9", "e\u0301", "\u00c5", "A\u030a", "\u212b", "\u65e5\u672c", "\U0001F600", "\u03a9", "\u2126",
	"<&>", "a\u2028b", "tab\there", "q\"uote", `back\slash`, "\u0000nul",
	"0", "7", "07", "7.0", "-0", "-0.0", "+7", ".5", "5.", "1e3", "1E3", "1e+3", "1e-400", "-1e-400", "1e999", "-1e999",
	"NaN", "Inf", "-Inf", "+Inf", "Infinity", "0x1p3", "0x10", "1_000", " 7", "7 ",
	"9007199254740993", "9007199254740992.0", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"-9223372036854775809", "1e+21", "18446744073709551616", "0.1", "1.5", "-2.5", "true", "null", "1e-07", "4.9e-324",
}

// nums are JSON number texts, as a client may send them (the API server rewrites them in
// its own form: 1.0 becomes 1, 1e3 1000, -0.0 -0).
var nums = []string{
	"0", "1", "-1", "7", "42", "1000", "-0", "-0.0", "0.0", "1.0", "7.0", "1e3", "1E3", "1.5e3", "1e21", "1e-7", "0.1", "0.5",
	"-0.5", "1.5", "-2.5", "9007199254740992", "9007199254740993", "-9007199254740993", "9223372036854775807",
	"-9223372036854775808", "9223372036854775808", "18446744073709551616", "1e300", "123456789.125", "4.9e-324",
}

// labelValues are valid label values, some that look like numbers.
var labelValues = []string{"", "a", "b", "A", "ab", "7", "07", "7.0", "1e3", "0x1p3", "1.5", "1e-400", "z-9", "a.b", "a_b"}

// Scalar returns a random JSON scalar: a string, a number (as json.Number, so that its
// text goes to the wire as written), a boolean or null.
func (g *Gen) Scalar() any {
	if g.Narrow {
		return pick(g, []any{"", "a", "ab", json.Number("1"), "1.0", json.Number("-0.0"), true, nil})
	}
	switch g.R.IntN(10) {
	case 0, 1, 2, 3:
		return pick(g, strs)
	case 4, 5, 6:
		return json.Number(pick(g, nums))
	case 7:
		return g.R.IntN(2) == 0
	case 8:
		return nil
	}
	return json.Number(fmt.Sprint(g.R.IntN(20) - 5))
}

// Value returns a random JSON value: mostly scalars, some maps and lists.
func (g *Gen) Value(depth int) any {
	switch n := g.R.IntN(10); {
	case n < 6 || depth >= 3:
		return g.Scalar()
	case n < 8:
		return g.Map(depth+1, specKeys)
	}
	l := make([]any, g.R.IntN(5))
	for i := range l {
		if g.R.IntN(2) == 0 {
			l[i] = g.Scalar()
		} else {
			l[i] = g.Element(depth + 1)
		}
	}
	return l
}

// Element returns a map as a list of them holds, for filters on k.
func (g *Gen) Element(depth int) map[string]any {
	m := map[string]any{}
	if g.R.IntN(4) != 0 {
		m["k"] = pick(g, []any{"v", "w", json.Number("7"), "7", json.Number("7.0"), nil})
	}
	for range g.R.IntN(3) {
		m[pick(g, specKeys)] = g.Value(depth + 1)
	}
	return m
}

// Map returns a map with random keys of keys.
func (g *Gen) Map(depth int, keys []string) map[string]any {
	m := map[string]any{}
	for _, k := range keys {
		if g.R.IntN(5) < 2 {
			m[k] = g.Value(depth)
		}
	}
	return m
}

// Metadata returns metadata with random labels and annotations (and a marker label all
// generated objects carry, for an informer's selector).
func (g *Gen) Metadata(ns, name string, marker map[string]string) map[string]any {
	l := map[string]any{}
	for k, v := range marker {
		l[k] = v
	}
	for _, k := range []string{"tier", "app", "x.io/y"} {
		if g.R.IntN(3) != 0 {
			l[k] = pick(g, labelValues)
		}
	}
	a := map[string]any{}
	for _, k := range []string{"note", "x.io/n"} {
		if g.R.IntN(2) == 0 {
			a[k] = pick(g, strs)
		}
	}
	// Empty maps are left out, as the API server leaves them out of metadata.
	md := map[string]any{"namespace": ns, "name": name}
	if len(l) > 0 {
		md["labels"] = l
	}
	if len(a) > 0 {
		md["annotations"] = a
	}
	return md
}

// Widget returns an object of a kind whose schema preserves unknown fields: anything
// under spec.
func (g *Gen) Widget(apiVersion, ns, name string, marker map[string]string) map[string]any {
	return map[string]any{"apiVersion": apiVersion, "kind": "Widget", "metadata": g.Metadata(ns, name, marker),
		"spec": g.Map(0, specKeys)}
}

// ConfigMap returns a ConfigMap with random data (strings only).
func (g *Gen) ConfigMap(ns, name string, marker map[string]string) map[string]any {
	d := map[string]any{}
	for _, k := range dataKeys {
		if g.R.IntN(3) != 0 {
			d[k] = pick(g, strs)
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": g.Metadata(ns, name, marker), "data": d}
}

func (g *Gen) field(keys []string) Seg {
	k := pick(g, keys)
	quoted := k == "" || strings.ContainsAny(k, ".<&\u2028\"'\\1") || g.R.IntN(4) == 0
	return Seg{Kind: Field, Key: k, Quoted: quoted}
}

// SpecPath returns a random path under root (spec or data): fields, wildcards, indexes,
// slices, unions, recursive descent and filters; now and then a template of two paths.
func (g *Gen) SpecPath(root string, keys []string) Path {
	if g.R.IntN(10) == 0 {
		a, b := g.specPath(root, keys), g.specPath(root, keys)
		sep := pick(g, []string{"/", "-", " ", ""})
		parts := []Part{{Path: &a}, {Text: sep}, {Path: &b}}
		if g.R.IntN(2) == 0 {
			parts = append([]Part{{Text: "x="}}, parts...)
		}
		return Path{Template: parts}
	}
	return g.specPath(root, keys)
}

func (g *Gen) specPath(root string, keys []string) Path {
	if g.R.IntN(20) == 0 {
		// Read from the whole object, not metadata: metadata-only objects of built-in
		// resources have no apiVersion and kind.
		return Path{Segs: []Seg{{Kind: Field, Key: pick(g, []string{"kind", "apiVersion"})}}}
	}
	p := Path{Segs: []Seg{{Kind: Field, Key: root}, g.field(keys)}}
	if g.R.IntN(12) == 0 {
		p.Segs = []Seg{{Kind: Field, Key: root}, {Kind: Descent, Key: pick(g, []string{"k", "a", "x"})}}
	}
	for range g.R.IntN(3) {
		switch g.R.IntN(9) {
		case 0, 1:
			p.Segs = append(p.Segs, g.field(keys))
		case 2:
			p.Segs = append(p.Segs, Seg{Kind: Wildcard, Star: g.R.IntN(2) == 0})
		case 3:
			p.Segs = append(p.Segs, Seg{Kind: Index, N: g.R.IntN(5) - 2})
		case 4:
			lit := pick(g, []any{"v", "w", "7", int64(7), float64(7), 7.5, int64(9007199254740993), ""})
			op := pick(g, []string{"==", "==", "!=", "<", "<=", ">", ">="})
			p.Segs = append(p.Segs, Seg{Kind: Filter, Key: "k", Op: op, Lit: lit})
			if g.R.IntN(2) == 0 {
				p.Segs = append(p.Segs, g.field(keys))
			}
		case 5:
			p.Segs = append(p.Segs, Seg{Kind: Wildcard}, g.field(keys))
		case 6:
			sl := Seg{Kind: Slice}
			if g.R.IntN(2) == 0 {
				n := g.R.IntN(5) - 2
				sl.Start = &n
			}
			if g.R.IntN(2) == 0 {
				n := g.R.IntN(6) - 2
				sl.End = &n
			}
			if g.R.IntN(3) == 0 {
				sl.Step = 1 + g.R.IntN(2)
			}
			p.Segs = append(p.Segs, sl)
		case 7:
			p.Segs = append(p.Segs, Seg{Kind: Union, Keys: []string{pick(g, keys), pick(g, keys)}})
		case 8:
			p.Segs = append(p.Segs, Seg{Kind: Descent, Key: pick(g, []string{"k", "a", "x"})})
		}
	}
	return p
}

// MetaPath returns a path into metadata, which every storage mode (metadata-only
// included) holds.
func (g *Gen) MetaPath() Path {
	md := Seg{Kind: Field, Key: "metadata"}
	switch g.R.IntN(8) {
	case 6:
		return Path{Segs: []Seg{md, {Kind: Field, Key: pick(g, []string{"uid", "generation", "creationTimestamp", "managedFields", "resourceVersion"})}}}
	case 0:
		return Path{Segs: []Seg{md, {Kind: Field, Key: "labels"}, {Kind: Field, Key: pick(g, []string{"tier", "app"})}}}
	case 1:
		return Path{Segs: []Seg{md, {Kind: Field, Key: "labels"}, {Kind: Field, Key: "x.io/y", Quoted: true}}}
	case 2:
		return Path{Segs: []Seg{md, {Kind: Field, Key: "labels"}, {Kind: Wildcard, Star: g.R.IntN(2) == 0}}}
	case 3:
		return Path{Segs: []Seg{md, {Kind: Field, Key: "annotations"}, {Kind: Field, Key: pick(g, []string{"note", "x.io/n"}), Quoted: true}}}
	case 4:
		return Path{Segs: []Seg{md, {Kind: Field, Key: pick(g, []string{"name", "namespace"})}}}
	}
	return Path{Segs: []Seg{md, {Kind: Field, Key: "labels"}}}
}

// QueryOptions says what a random query may use.
type QueryOptions struct {
	// Indexes are the index names conditions and SortBy may name.
	Indexes []string
	// Paths are the expressions JSONPath conditions may use (registered in the model).
	Paths []string
	// Namespaces a query may be limited to.
	Namespaces []string
	// LabelKeys are label keys a selector may test.
	LabelKeys []string
}

// observed returns the values the model's objects have for an index name or a path.
func (g *Gen) observed(m *Model, c query.Condition) []string {
	var out []string
	for _, o := range m.Objects {
		for _, v := range m.values(o, c) {
			if v != query.NonScalar {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// bounds are numeric bounds, valid and not.
var bounds = []string{"0", "-0", "7", "6.5", "7.0", "-1", "1e3", "999.99", "0.1", "1e-7", "9007199254740992", "9007199254740993",
	"9007199254740992.0", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e21", "1e300", "0x1p3",
	"1_000", "4.9e-324", "1e-400", "1e999", "NaN", "Inf", "abc", "", " 7"}

// Condition returns a random condition on an index or a JSONPath expression.
func (g *Gen) Condition(m *Model, o QueryOptions) query.Condition {
	var c query.Condition
	if len(o.Paths) > 0 && g.R.IntN(4) == 0 {
		c.Path = pick(g, o.Paths)
	} else {
		c.Index = pick(g, o.Indexes)
	}
	if g.R.IntN(60) == 0 {
		return g.malformed(c)
	}
	ops := []query.Op{query.Equal, query.In, query.NotEqual, query.Exists, query.NotExists, query.LessThan, query.LessOrEqual,
		query.GreaterThan, query.GreaterOrEqual, query.Prefix}
	c.Op = pick(g, ops)
	seen := g.observed(m, c)
	value := func() string {
		switch {
		case g.R.IntN(40) == 0:
			return query.NonScalar
		case len(seen) > 0 && g.R.IntN(4) != 0:
			return pick(g, seen)
		}
		return pick(g, strs)
	}
	switch c.Op {
	case query.Equal, query.NotEqual:
		c.Values = []string{value()}
	case query.In:
		for range 1 + g.R.IntN(3) {
			c.Values = append(c.Values, value())
		}
	case query.Prefix:
		v := value()
		if v != query.NonScalar {
			v = v[:g.R.IntN(len(v)+1)] // bytes: may cut a character
		}
		c.Values = []string{v}
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		if len(seen) > 0 && g.R.IntN(2) == 0 {
			c.Values = []string{pick(g, seen)}
		} else {
			c.Values = []string{pick(g, bounds)}
		}
	}
	return c
}

// malformed returns a condition Validate refuses, based on c's subject.
func (g *Gen) malformed(c query.Condition) query.Condition {
	switch g.R.IntN(7) {
	case 0:
		c.Values = []string{"a"} // no Op
	case 1:
		c.Op, c.Values = query.Exists, []string{"a"}
	case 2:
		c.Op, c.Values = query.Equal, []string{"a", "b"}
	case 3:
		c.Op, c.Values = query.In, nil
	case 4:
		c.Op, c.Index, c.Path = query.Exists, "i0", "{.spec.a}"
	case 5:
		c.Op, c.Index, c.Path = query.Exists, "", ""
	default:
		c.Op, c.Index, c.Path = query.Exists, "", "{.spec["
	}
	return c
}

// Query returns a random query: conditions, AnyOf groups, a label selector, a namespace,
// a sort key in either direction and a limit.
func (g *Gen) Query(m *Model, o QueryOptions) query.Query {
	var q query.Query
	for range g.R.IntN(3) + g.R.IntN(2) {
		q.Conditions = append(q.Conditions, g.Condition(m, o))
	}
	if g.R.IntN(4) == 0 {
		for range 1 + g.R.IntN(3) {
			var grp []query.Condition
			for range 1 + g.R.IntN(2) {
				grp = append(grp, g.Condition(m, o))
			}
			q.AnyOf = append(q.AnyOf, grp)
		}
	}
	if len(o.LabelKeys) > 0 && g.R.IntN(5) == 0 {
		q.Labels = g.Selector(o.LabelKeys)
	}
	if len(o.Namespaces) > 0 && g.R.IntN(3) == 0 {
		q.Namespace = pick(g, o.Namespaces)
	}
	switch n := g.R.IntN(40); {
	case n < 20:
		q.SortBy = pick(g, o.Indexes)
		q.Descending = g.R.IntN(2) == 0
	case n == 20:
		q.Descending = true // without SortBy: invalid
	}
	if g.R.IntN(2) == 0 {
		q.Limit = 1 + g.R.IntN(7)
	}
	switch g.R.IntN(80) {
	case 0:
		q.Limit = -1 // invalid
	case 1:
		q.AnyOf = append(q.AnyOf, nil) // an empty group: invalid
	}
	// Mostly queries that run; some that must be refused for want of Scan.
	q.Scan = g.R.IntN(5) != 0
	return q
}

// Selector returns a random label selector on keys.
func (g *Gen) Selector(keys []string) labels.Selector {
	sel := labels.NewSelector()
	for range 1 + g.R.IntN(2) {
		k := pick(g, keys)
		var r *labels.Requirement
		var err error
		switch g.R.IntN(5) {
		case 0:
			r, err = labels.NewRequirement(k, selection.Exists, nil)
		case 1:
			r, err = labels.NewRequirement(k, selection.DoesNotExist, nil)
		case 2:
			r, err = labels.NewRequirement(k, selection.Equals, []string{pick(g, labelValues)})
		case 3:
			r, err = labels.NewRequirement(k, selection.NotEquals, []string{pick(g, labelValues)})
		default:
			r, err = labels.NewRequirement(k, selection.In, []string{pick(g, labelValues), pick(g, labelValues)})
		}
		if err != nil {
			panic(err)
		}
		sel = sel.Add(*r)
	}
	return sel
}

// Marshal writes v as JSON (json.Number as written, strings with encoding/json's escapes).
func Marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
