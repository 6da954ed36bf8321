package informer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/query"
)

// auditPool are index values: numbers in many spellings, texts that look like numbers,
// booleans and null as text, the empty string, unicode in two forms, long values, values
// with "/" and ",", and query.NonScalar.
var auditPool = []string{
	"", "0", "-0", "0.0", "-0.0", "1", "1.0", "1e0", "1e3", "1E3", "1000", "10", "+10", " 10", "10 ", "2", "07",
	"9007199254740992", "9007199254740993", "9007199254740992.0", "18446744073709551616", "18446744073709551617",
	"-9223372036854775808", "9223372036854775807", "9223372036854775808", "0x10", "0x1p3", "1_0", ".5", "5.", "-.5",
	"1e-400", "1e999", "-1e999", "4.9e-324", "NaN", "Inf", "-Inf", "+Inf", "true", "false", "null", "-", "+", ".",
	"a", "A", "ab", "a/b", "a,b", "a b", "\u00e9", "e\u0301", "\u65e5\u672c", "\U0001F600", "\u0000x",
	strings.Repeat("x", 300), strings.Repeat("x", 300) + "y", query.NonScalar,
}

// auditObj is what the oracle knows of a cached object: its key and each index's values.
type auditObj struct {
	ns, name string
	vals     map[string][]string
	tier     string
	// failed names the indexes whose function failed on the object: it matches no NotEq
	// or HasNot condition on them.
	failed map[string]bool
	// fraw is annotation f's list, of which the "f" index function in use makes values.
	fraw []string
}

func (o auditObj) key() string {
	if o.ns == "" {
		return o.name
	}
	return o.ns + "/" + o.name
}

// auditKeys returns the cache keys of objs, in order.
func auditKeys(objs []obj) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, objKey(o))
	}
	return out
}

// auditNumber reads a value as a number for the oracle: what query.ParseNumber accepts.
func auditNumber(s string) (query.Number, bool) {
	n, err := query.ParseNumber(s)
	return n, err == nil
}

// auditMatch evaluates c on an object's values, as package query defines each operator.
func auditMatch(c query.Condition, vals []string) bool {
	switch c.Op {
	case query.NotEqual:
		return !slices.Contains(vals, c.Values[0])
	case query.NotExists:
		return len(vals) == 0
	case query.Exists:
		return len(vals) > 0
	}
	for _, v := range vals {
		if v == query.NonScalar {
			continue
		}
		switch c.Op {
		case query.Equal, query.In:
			if slices.Contains(c.Values, v) {
				return true
			}
		case query.Prefix:
			if strings.HasPrefix(v, c.Values[0]) {
				return true
			}
		default:
			n, ok := auditNumber(v)
			if !ok {
				continue
			}
			b, _ := auditNumber(c.Values[0])
			r := n.Compare(b)
			if c.Op == query.LessThan && r < 0 || c.Op == query.LessOrEqual && r <= 0 ||
				c.Op == query.GreaterThan && r > 0 || c.Op == query.GreaterOrEqual && r >= 0 {
				return true
			}
		}
	}
	return false
}

// auditPaths are the JSONPath expressions of the path indexes, for their Where forms.
var auditPaths = map[string]string{
	"s":    "{.metadata.annotations.s}",
	"tier": "{.metadata.labels.tier}",
	"m":    "{.metadata.labels}",
	"fin":  "{.metadata.finalizers[*]}",
}

// auditSubject returns which index a condition reads (by name or by its path).
func auditSubject(c query.Condition) string {
	if c.Index != "" {
		return c.Index
	}
	for name, p := range auditPaths {
		if p == c.Path {
			return name
		}
	}
	panic("unknown path " + c.Path)
}

func auditMatches(q query.Query, o auditObj) bool {
	if q.Namespace != "" && o.ns != q.Namespace {
		return false
	}
	if q.Labels != nil && !q.Labels.Matches(labels.Set(o.labels())) {
		return false
	}
	for _, c := range q.Conditions {
		if !o.match(c) {
			return false
		}
	}
	if len(q.AnyOf) == 0 {
		return true
	}
	for _, g := range q.AnyOf {
		all := true
		for _, c := range g {
			all = all && o.match(c)
		}
		if all {
			return true
		}
	}
	return false
}

func (o auditObj) match(c query.Condition) bool {
	s := auditSubject(c)
	if o.failed[s] && !c.Op.Positive() {
		return false
	}
	return auditMatch(c, o.vals[s])
}

func (o auditObj) labels() map[string]string {
	if o.tier == "" {
		return nil
	}
	return map[string]string{"tier": o.tier}
}

// auditClass orders values: numbers, then NonScalar, then other text.
func auditClass(v string) int {
	if _, ok := auditNumber(v); ok {
		return 0
	}
	if v == query.NonScalar {
		return 1
	}
	return 2
}

// auditCompareValues is SortBy's order of values (package query, Query.SortBy), written
// from that doc rather than taken from internal/store/querymodel (CompareValues), so that
// this oracle and the store's model check each other.
func auditCompareValues(a, b string) int {
	if c := cmp.Compare(auditClass(a), auditClass(b)); c != 0 {
		return c
	}
	if auditClass(a) == 0 {
		x, _ := auditNumber(a)
		y, _ := auditNumber(b)
		if c := x.Compare(y); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

// auditSortValue is the value an object sorts by: its smallest (largest with Descending).
func auditSortValue(vals []string, desc bool) (string, bool) {
	if len(vals) == 0 {
		return "", false
	}
	if desc {
		return slices.MaxFunc(vals, auditCompareValues), true
	}
	return slices.MinFunc(vals, auditCompareValues), true
}

// auditPos is an object's place in a query's order.
type auditPos struct {
	has      bool
	v        string
	ns, name string
}

func auditPosOf(q query.Query, o auditObj) auditPos {
	p := auditPos{ns: o.ns, name: o.name}
	if q.SortBy != "" {
		p.v, p.has = auditSortValue(o.vals[q.SortBy], q.Descending)
	}
	return p
}

func auditComparePos(q query.Query, a, b auditPos) int {
	if q.SortBy != "" {
		switch {
		case a.has && !b.has:
			return -1
		case !a.has && b.has:
			return 1
		case a.has:
			c := auditCompareValues(a.v, b.v)
			if q.Descending {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
	}
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// auditResults are the keys the oracle says q selects, in q's order, after cursor.
func auditResults(q query.Query, objs map[string]auditObj, cursor *auditPos) []string {
	var hits []auditObj
	for _, o := range objs {
		if auditMatches(q, o) && (cursor == nil || auditComparePos(q, auditPosOf(q, o), *cursor) > 0) {
			hits = append(hits, o)
		}
	}
	slices.SortFunc(hits, func(a, b auditObj) int { return auditComparePos(q, auditPosOf(q, a), auditPosOf(q, b)) })
	out := []string{}
	for _, o := range hits {
		out = append(out, o.key())
	}
	return out
}

func auditCountBy(q query.Query, objs map[string]auditObj, index string) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		if !auditMatches(q, o) {
			continue
		}
		for _, v := range o.vals[index] {
			if v != query.NonScalar {
				out[v]++
			}
		}
	}
	return out
}

// auditEnv is a fake server with an informer of each kind (objects as they are; objects
// decoded on read, as the compact mode does) and the oracle's view of the objects.
type auditEnv struct {
	t    *testing.T
	r    *rand.Rand
	srv  *fakeServer
	infs map[string]*Informer[obj]
	envs map[string]*env
	// namespaces are the objects' namespaces ("" for a cluster-scoped resource).
	namespaces []string
	// narrow makes values few, each shared by many objects.
	narrow bool
	objs   map[string]auditObj
	n      int
	// prefixed says that index "f" is auditPrefixedValues, not auditFuncValues.
	prefixed bool
}

// auditFuncValues is the "f" index function: the JSON list in annotation "f".
func auditFuncValues(o any) ([]string, error) {
	return jsonListIn(o.(obj).Annotations, "f")
}

// jsonListIn decodes the JSON list of strings in annotations[key]; nil if there is none.
func jsonListIn(annotations map[string]string, key string) ([]string, error) {
	s, ok := annotations[key]
	if !ok {
		return nil, nil
	}
	var vals []string
	if err := json.Unmarshal([]byte(s), &vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// auditFailingValues is the "g" index function: the JSON list in annotation "g", with an
// error when annotation "gerr" is set, a panic when "gpanic" is.
func auditFailingValues(o any) ([]string, error) {
	m := o.(obj)
	if _, ok := m.Annotations["gpanic"]; ok {
		panic("audit")
	}
	vals, err := jsonListIn(m.Annotations, "g")
	if err != nil {
		return nil, err
	}
	if _, ok := m.Annotations["gerr"]; ok {
		return vals, errors.New("audit")
	}
	return vals, nil
}

// auditItemValues is the "h" index function: auditFuncValues's, read from an Item.
func auditItemValues(it Item[obj]) ([]string, error) {
	return jsonListIn(it.Annotations(), "f")
}

// auditPrefixedValues is another "f" index function: auditFuncValues's values prefixed.
func auditPrefixedValues(o any) ([]string, error) {
	vals, err := auditFuncValues(o)
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, "p:"+v)
	}
	return out, err
}

// fValues are the values index "f" gives for annotation f's list.
func (a *auditEnv) fValues(raw []string) []string {
	if raw == nil {
		return nil
	}
	out := slices.Clone(raw)
	if a.prefixed {
		for i, v := range out {
			out[i] = "p:" + v
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// redefine removes index "f" and "s" from both informers, changes objects, and registers
// "f" again with the other function and "s" with the same expression.
func (a *auditEnv) redefine() {
	for _, inf := range a.infs {
		require.NoError(a.t, inf.RemoveIndex("f"))
		require.NoError(a.t, inf.RemoveIndex("s"))
	}
	a.change()
	a.prefixed = !a.prefixed
	fn := auditFuncValues
	if a.prefixed {
		fn = auditPrefixedValues
	}
	for _, inf := range a.infs {
		require.NoError(a.t, inf.AddIndexFunc("f", fn))
		require.NoError(a.t, inf.AddIndex("s", auditPaths["s"]))
	}
	for k, o := range a.objs {
		if o.fraw != nil {
			o.vals["f"] = a.fValues(o.fraw)
		}
		a.objs[k] = o
	}
}

func newAuditEnv(t *testing.T, seed uint64, namespaces []string, objects int, narrow bool) *auditEnv {
	a := &auditEnv{t: t, r: rand.New(rand.NewPCG(seed, 11)), infs: map[string]*Informer[obj]{}, envs: map[string]*env{},
		objs: map[string]auditObj{}, namespaces: namespaces, narrow: narrow}
	plain := newEnv(t, Options[obj]{})
	a.srv = plain.mode.server(widgets.GVR)
	decoding := newFakeMode()
	decoding.decodes = true
	decoding.servers[widgets.GVR] = a.srv
	dec := newEnvMode(t, decoding, Options[obj]{}, hooks{})
	for i := range objects {
		a.put(a.namespace(), fmt.Sprintf("o%03d", i))
	}
	a.envs = map[string]*env{"plain": plain, "decoding": dec}
	for name := range a.envs {
		a.start(name)
	}
	a.wait()
	return a
}

// start acquires the informer of env name and registers the indexes.
func (a *auditEnv) start(name string) {
	t := a.t
	inf, err := a.envs[name].f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.WaitForSync(context.Background()))
	fn := auditFuncValues
	if a.prefixed {
		fn = auditPrefixedValues
	}
	require.NoError(t, inf.AddIndexFunc("f", fn))
	require.NoError(t, inf.AddIndexFunc("g", auditFailingValues))
	require.NoError(t, inf.AddItemIndexFunc("h", auditItemValues))
	for idx, p := range auditPaths {
		require.NoError(t, inf.AddIndex(idx, p))
	}
	a.infs[name] = inf
}

// restart releases both informers and starts them again: new caches, listed again.
func (a *auditEnv) restart() {
	for name, inf := range a.infs {
		inf.Release()
		a.start(name)
	}
	a.wait()
}

func (a *auditEnv) namespace() string { return a.namespaces[a.r.IntN(len(a.namespaces))] }

func (a *auditEnv) value() string {
	if a.narrow {
		return []string{"", "1", "1.0", "a"}[a.r.IntN(4)]
	}
	return auditPool[a.r.IntN(len(auditPool))]
}

// put adds or replaces an object with random values, on the server and in the oracle.
func (a *auditEnv) put(ns, name string) {
	o := newObj(ns, name, nil)
	vals := map[string][]string{}
	var fraw []string
	if a.r.IntN(4) > 0 {
		var f []string
		for range a.r.IntN(5) {
			if len(f) > 0 && a.r.IntN(4) == 0 {
				f = append(f, f[a.r.IntN(len(f))]) // a repeat
			} else {
				f = append(f, a.value())
			}
		}
		b, _ := json.Marshal(f)
		o.Annotations = map[string]string{"f": string(b)}
		if f == nil {
			f = []string{}
		}
		fraw = f
		if len(f) > 0 {
			vals["f"] = a.fValues(f)
			vals["h"] = slices.Compact(slices.Sorted(slices.Values(f)))
		}
	}
	if a.r.IntN(3) > 0 {
		if o.Annotations == nil {
			o.Annotations = map[string]string{}
		}
		s := a.value()
		o.Annotations["s"] = s
		vals["s"] = []string{s}
	}
	failed := map[string]bool{}
	if a.r.IntN(2) == 0 {
		if o.Annotations == nil {
			o.Annotations = map[string]string{}
		}
		var g []string
		for range a.r.IntN(3) {
			g = append(g, a.value())
		}
		b, _ := json.Marshal(g)
		o.Annotations["g"] = string(b)
		vals["g"] = slices.Compact(slices.Sorted(slices.Values(g)))
		switch a.r.IntN(4) {
		case 0:
			o.Annotations["gerr"] = ""
			failed["g"] = true
		case 1:
			o.Annotations["gpanic"] = ""
			failed["g"] = true
			delete(vals, "g")
		}
	}
	if len(vals["g"]) == 0 {
		delete(vals, "g")
	}
	tier := ""
	if a.r.IntN(2) == 0 {
		tier = []string{"web", "db", "1", "1.0"}[a.r.IntN(4)]
		o.Labels = map[string]string{"tier": tier}
		vals["tier"] = []string{tier}
		vals["m"] = []string{query.NonScalar}
	}
	o.Finalizers = nil
	for range a.r.IntN(4) {
		o.Finalizers = append(o.Finalizers, []string{"x", "x/y", "7", "7.0", "-0", "0", ""}[a.r.IntN(7)])
	}
	if len(o.Finalizers) > 0 {
		vals["fin"] = slices.Compact(slices.Sorted(slices.Values(o.Finalizers)))
	}
	key := objKey(o)
	if _, ok := a.objs[key]; ok {
		a.srv.update(o)
	} else {
		a.srv.add(o)
	}
	a.objs[key] = auditObj{ns: ns, name: name, vals: vals, tier: tier, failed: failed, fraw: fraw}
}

func (a *auditEnv) del(key string) {
	o := a.objs[key]
	a.srv.remove(newObj(o.ns, o.name, nil))
	delete(a.objs, key)
}

// change replaces, deletes or adds a few objects.
func (a *auditEnv) change() {
	keys := slices.Sorted(maps.Keys(a.objs))
	for range 3 + len(keys)/20 {
		k := keys[a.r.IntN(len(keys))]
		o, ok := a.objs[k]
		switch {
		case !ok:
		case a.r.IntN(3) == 0:
			a.del(k)
		case a.r.IntN(2) == 0:
			a.put(o.ns, o.name)
		default:
			a.n++
			a.put(a.namespace(), fmt.Sprintf("n%03d", a.n))
		}
	}
	a.wait()
}

// wait waits until both informers hold what the server holds.
func (a *auditEnv) wait() {
	a.srv.mu.Lock()
	want := map[string]string{}
	for k, o := range a.srv.objs {
		want[k] = o.ResourceVersion
	}
	a.srv.mu.Unlock()
	for _, inf := range a.infs {
		eventually(a.t, func() bool {
			items, err := inf.ListItems("")
			if err != nil || len(items) != len(want) {
				return false
			}
			for _, it := range items {
				if want[it.Key()] != it.ResourceVersion() {
					return false
				}
			}
			return true
		}, "informer catches up")
	}
}

// condition returns a random condition on an index, or on a path index's expression.
func (a *auditEnv) condition() query.Condition {
	subjects := []string{"f", "f", "g", "h", "s", "s", "tier", "m", "fin"}
	idx := subjects[a.r.IntN(len(subjects))]
	var c query.Condition
	if auditPaths[idx] != "" && a.r.IntN(4) == 0 {
		c.Path = auditPaths[idx]
	} else {
		c.Index = idx
	}
	ops := []query.Op{query.Equal, query.In, query.NotEqual, query.Exists, query.NotExists, query.LessThan,
		query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual, query.Prefix}
	c.Op = ops[a.r.IntN(len(ops))]
	value := func() string {
		for {
			if v := a.value(); v != query.NonScalar {
				if a.r.IntN(3) == 0 && c.Op == query.Prefix && len(v) > 0 {
					v = v[:a.r.IntN(len(v))]
				}
				return v
			}
		}
	}
	switch c.Op {
	case query.Exists, query.NotExists:
	case query.In:
		for range 1 + a.r.IntN(3) {
			c.Values = append(c.Values, value())
		}
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		for {
			v := value()
			if _, ok := auditNumber(v); ok {
				c.Values = []string{v}
				break
			}
		}
	default:
		c.Values = []string{value()}
	}
	return c
}

func (a *auditEnv) query() query.Query {
	var q query.Query
	for range a.r.IntN(4) {
		q.Conditions = append(q.Conditions, a.condition())
	}
	if a.r.IntN(4) == 0 {
		for range 1 + a.r.IntN(3) {
			var g []query.Condition
			for range 1 + a.r.IntN(2) {
				g = append(g, a.condition())
			}
			q.AnyOf = append(q.AnyOf, g)
		}
	}
	if a.r.IntN(6) == 0 {
		q.Labels = labels.SelectorFromSet(labels.Set{"tier": "web"})
	}
	if a.r.IntN(3) == 0 {
		q.Namespace = []string{"a", "a-b", "b", "zz"}[a.r.IntN(4)]
		if a.namespaces[0] == "" && a.r.IntN(2) == 0 {
			q.Namespace = "" // every namespace
		}
	}
	if a.r.IntN(2) == 0 {
		q.SortBy = []string{"f", "g", "h", "s", "tier", "m", "fin"}[a.r.IntN(7)]
		q.Descending = a.r.IntN(2) == 0
	}
	if a.r.IntN(2) == 0 {
		q.Limit = 1 + a.r.IntN(6)
	}
	q.Scan = true
	return q
}

// whereForm is q with the conditions on path indexes asked as JSONPath conditions.
func whereForm(q query.Query) query.Query {
	conv := func(cs []query.Condition) []query.Condition {
		out := slices.Clone(cs)
		for i, c := range out {
			if p, ok := auditPaths[c.Index]; ok {
				out[i].Index, out[i].Path = "", p
			}
		}
		return out
	}
	w := q
	w.Conditions, w.AnyOf, w.Scan = conv(q.Conditions), nil, true
	for _, g := range q.AnyOf {
		w.AnyOf = append(w.AnyOf, conv(g))
	}
	return w
}

func describeAudit(q query.Query) string {
	s := fmt.Sprintf("%q any%q ns=%q sort=%q desc=%v limit=%d", q.Conditions, q.AnyOf, q.Namespace, q.SortBy, q.Descending, q.Limit)
	if q.Labels != nil {
		s += " labels=" + q.Labels.String()
	}
	return s
}

// pages runs q page by page on inf (Query and QueryItems in step) and returns every key.
func (a *auditEnv) pages(inf *Informer[obj], q query.Query, want []string) ([]string, error) {
	ctx := context.Background()
	var got []string
	for range 1000 {
		res, err := inf.Query(ctx, q)
		if err != nil {
			return got, err
		}
		items, err := inf.QueryItems(ctx, q)
		if err != nil {
			return got, err
		}
		keys := auditKeys(res.Items)
		var ikeys []string
		for _, it := range items.Items {
			ikeys = append(ikeys, it.Key())
		}
		if !slices.Equal(keys, ikeys) || res.Continue != items.Continue {
			return got, fmt.Errorf("Query %q (next %q), QueryItems %q (next %q)", keys, res.Continue, ikeys, items.Continue)
		}
		if q.Limit > 0 && len(keys) > q.Limit {
			return got, fmt.Errorf("page of %d, limit %d", len(keys), q.Limit)
		}
		matched := len(want) - len(got) // the matches from this page on
		if strings.HasPrefix(res.Plan.Driver, "order(") {
			matched = len(keys)
			if res.Continue != "" {
				matched++
			}
		}
		if res.Plan.Matched != matched || items.Plan != res.Plan {
			return got, fmt.Errorf("page %q after %d: plan %+v (items %+v), want Matched %d", keys, len(got), res.Plan, items.Plan, matched)
		}
		got = append(got, keys...)
		if res.Continue == "" {
			return got, nil
		}
		if len(keys) == 0 {
			return got, fmt.Errorf("an empty page with a continue token")
		}
		q.Continue = res.Continue
	}
	return got, fmt.Errorf("too many pages")
}

// check compares every answer of both informers for q with the oracle.
func (a *auditEnv) check(q query.Query) {
	t := a.t
	t.Helper()
	ctx := context.Background()
	want := auditResults(q, a.objs, nil)
	for name, inf := range a.infs {
		for form, qq := range map[string]query.Query{"indexed": q, "where": whereForm(q)} {
			got, err := a.pages(inf, qq, want)
			if err != nil {
				t.Errorf("%s %s %s: %v", name, form, describeAudit(qq), err)
				continue
			}
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s %s %s:\n got %q\nwant %q", name, form, describeAudit(qq), got, want)
			}
			n, err := inf.Count(ctx, qq)
			if err != nil || n != len(want) {
				t.Errorf("%s %s count %s: %d, %v; want %d", name, form, describeAudit(qq), n, err, len(want))
			}
		}
		for _, by := range []string{"f", "g", "h", "s", "tier", "m", "fin"} {
			counts, err := inf.CountBy(ctx, q, by)
			require.NoError(t, err)
			if w := auditCountBy(q, a.objs, by); !maps.Equal(counts, w) {
				t.Errorf("%s count by %s %s: %v, want %v", name, by, describeAudit(q), counts, w)
			}
		}
	}
}

// checkEqualities checks the queries and counts answered from one value's entries (one
// equality, nothing else), for values of every index in every namespace, with and without
// a limit.
func (a *auditEnv) checkEqualities() {
	values := []string{"", "1", "1.0", "a", "x/y", "7", "web", "p:1", "p:a"}
	for _, idx := range []string{"f", "g", "h", "s", "tier", "fin"} {
		for _, v := range values {
			for _, ns := range append([]string{""}, a.namespaces...) {
				q := query.Query{Namespace: ns, Conditions: []query.Condition{query.Eq(idx, v)}}
				a.check(q)
				q.Limit = 1 + a.r.IntN(70)
				a.check(q)
			}
		}
	}
}

// checkChanging pages through q on each informer while objects change between pages: each
// page holds the first Limit matches after the last result returned, in the current content.
func (a *auditEnv) checkChanging(q query.Query) {
	t := a.t
	t.Helper()
	type pager struct {
		inf    *Informer[obj]
		next   string
		cursor *auditPos
		done   bool
	}
	var pagers []*pager
	names := slices.Sorted(maps.Keys(a.infs))
	for _, name := range names {
		pagers = append(pagers, &pager{inf: a.infs[name]})
	}
	for step := 0; step < 30; step++ {
		active := 0
		for _, p := range pagers {
			if p.done {
				continue
			}
			active++
			want := auditResults(q, a.objs, p.cursor)
			more := len(want) > q.Limit
			if more {
				want = want[:q.Limit]
			}
			page := q
			page.Continue = p.next
			res, err := p.inf.Query(context.Background(), page)
			require.NoError(t, err)
			got := auditKeys(res.Items)
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) || (res.Continue != "") != more {
				t.Errorf("changing pages %s, step %d after %+v: got %q (more %v), want %q (more %v)", describeAudit(q), step,
					p.cursor, got, res.Continue != "", want, more)
				return
			}
			if len(want) > 0 {
				pos := auditPosOf(q, a.objs[want[len(want)-1]])
				p.cursor = &pos
			}
			p.next, p.done = res.Continue, res.Continue == ""
		}
		if active == 0 {
			return
		}
		switch step % 4 {
		case 1:
			a.redefine()
		case 3:
			a.restart()
			for i, name := range names {
				pagers[i].inf = a.infs[name]
			}
		default:
			a.change()
		}
	}
}

// TestQueryAuditAgreesWithAnOracle is a randomized differential test of Query, QueryItems,
// Count and CountBy on informers that keep objects as they are and that decode them on
// read, against an oracle that evaluates each condition on the object's values: an index
// function's values (numbers in many spellings, repeats, "", NonScalar, unicode, long
// values), path indexes and their JSONPath forms, every operator, AnyOf, labels,
// namespaces whose keys sort apart from their names ("a", "a-b"), sort keys both ways,
// pages, and pages while objects change.
func TestQueryAuditAgreesWithAnOracle(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			namespaces, objects, narrow := []string{"a", "a-b", "b"}, 60, false
			switch seed {
			case 4:
				namespaces = []string{""} // a cluster-scoped resource
			case 5:
				// Values shared by more objects than a list keeps before it is a tree.
				objects, narrow = 300, true
			}
			a := newAuditEnv(t, seed, namespaces, objects, narrow)
			for n := range 150 {
				q := a.query()
				a.check(q)
				if t.Failed() {
					return
				}
				if n%10 == 9 {
					a.change()
				}
				if n%75 == 0 {
					a.checkEqualities()
				}
				if n%25 == 24 {
					a.redefine()
				}
				if n%15 == 14 {
					pq := q
					pq.Limit = 1 + a.r.IntN(4)
					a.checkChanging(pq)
				}
			}
		})
	}
}
