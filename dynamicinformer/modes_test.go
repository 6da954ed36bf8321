package dynamicinformer_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// TestQueriesAgreeAcrossStorageModes runs the same indexes and queries over the same
// ConfigMaps in every storage mode (unstructured on kindex's decoder, unstructured on
// client-go's, compact, compact projected to its indexes' fields, and metadata-only for the
// metadata-based ones), through adds, updates and deletes, and requires every mode to give
// the answer a model of the ConfigMaps computes: query results, zero-decode items (with a
// field read by JSONPath and a typed decode), counts and counts per value. The queries use
// every operator, OR (AnyOf), prefixes and sort keys in both directions, and existence on a
// list-valued field (ownerReferences) in its indexed and its filter form.
func TestQueriesAgreeAcrossStorageModes(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	model := map[string]cmModel{}
	for i := range 12 {
		m := cmModel{color: []string{"red", "green"}[i%2], size: fmt.Sprint(i % 5), tier: []string{"a", "b", "c"}[i%3], owned: i%3 == 0}
		name := fmt.Sprintf("cm-%02d", i)
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": m.tier}},
			Data:       map[string]string{"color": m.color, "size": m.size},
		}
		if m.owned { // no garbage collector runs here: a made-up owner is harmless
			cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "uid-owner"}}
		}
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
		model[ns+"/"+name] = m
	}

	opts := dynamicinformer.Options{Namespace: ns}
	factories := map[string]func() (*dynamicinformer.Factory, error){
		"kindex": func() (*dynamicinformer.Factory, error) { return dynamicinformer.NewFactory(cp.AdminConfig(), opts) },
		"client-go": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewClientGoFactory(cp.AdminConfig(), opts)
		},
		"compact": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), opts, dynamicinformer.CompactOptions{})
		},
		// Projected to the fields its indexes read: the same answers.
		"compact-projected": func() (*dynamicinformer.Factory, error) {
			popts := opts
			popts.Indexes = map[string]string{"color": "{.data.color}", "size": "{.data.size}", "tier": "{.metadata.labels.tier}",
				"owners": ownersPath}
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), popts, dynamicinformer.CompactOptions{ProjectIndexes: true})
		},
	}
	queries := []query.Query{
		conds(query.Eq("color", "red")),
		conds(query.Gt("size", "2")),
		conds(query.Eq("color", "green"), query.Le("size", "1")),
		conds(query.Eq("tier", "b"), query.NotEq("color", "red")),
		{Conditions: []query.Condition{query.Has("color")}, Labels: labels.SelectorFromSet(labels.Set{"tier": "a"})},
		{Conditions: []query.Condition{query.Where("{.data.size}", query.Equal, "3")}, Scan: true},
		{Conditions: []query.Condition{query.Has("tier")}, Limit: 5},
		// OR of AND groups, prefixes, sort keys.
		{AnyOf: [][]query.Condition{{query.Eq("color", "red"), query.Gt("size", "2")}, {query.Eq("tier", "c")}}},
		{Conditions: []query.Condition{query.NotEq("size", "0")}, AnyOf: [][]query.Condition{{query.HasPrefix("color", "gr")}, {query.Eq("size", "4")}}},
		conds(query.HasPrefix("color", "gr")),
		{Conditions: []query.Condition{query.Has("color")}, SortBy: "size"},
		{Conditions: []query.Condition{query.Has("color")}, SortBy: "size", Descending: true, Limit: 4},
		{Conditions: []query.Condition{query.Has("color")}, SortBy: "tier", Descending: true},
		{Conditions: []query.Condition{query.Eq("color", "green")}, SortBy: "tier"},
		// A list-valued field is present: the indexed and the filter form agree.
		conds(query.Has("owners")),
		{Conditions: []query.Condition{query.Where(ownersPath, query.Exists)}, Scan: true},
		{Conditions: []query.Condition{query.HasNot("owners")}, Scan: true},
		{Conditions: []query.Condition{query.Where(ownersPath, query.NotExists)}, Scan: true},
	}
	labelQueries := []query.Query{conds(query.Eq("tier", "b")), conds(query.Has("tier")), {Conditions: []query.Condition{query.HasNot("tier")}, Scan: true},
		conds(query.Has("owners")), {Conditions: []query.Condition{query.Where(ownersPath, query.Exists)}, Scan: true},
		{Conditions: []query.Condition{query.HasNot("owners")}, Scan: true}, {Conditions: []query.Condition{query.Has("tier")}, SortBy: "tier", Descending: true}}

	infs := map[string]*dynamicinformer.Informer{}
	for name, newFactory := range factories {
		f, err := newFactory()
		require.NoError(t, err, name)
		fctx, cancel := context.WithCancel(ctx)
		t.Cleanup(func() { cancel(); f.Shutdown() })
		require.NoError(t, f.Start(fctx))
		inf, err := f.Informer(ctx, "configmaps")
		require.NoError(t, err, name)
		t.Cleanup(inf.Release)
		require.NoError(t, inf.AddIndex("color", "{.data.color}"))
		require.NoError(t, inf.AddIndex("size", "{.data.size}"))
		require.NoError(t, inf.AddIndex("tier", "{.metadata.labels.tier}"))
		require.NoError(t, inf.AddIndex("owners", ownersPath))
		require.NoError(t, inf.WaitForSync(ctx), name)
		infs[name] = inf
	}
	mf, err := metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{Namespace: ns})
	require.NoError(t, err)
	mctx, mcancel := context.WithCancel(ctx)
	t.Cleanup(func() { mcancel(); mf.Shutdown() })
	require.NoError(t, mf.Start(mctx))
	minf, err := mf.Informer(ctx, "configmaps")
	require.NoError(t, err)
	t.Cleanup(minf.Release)
	require.NoError(t, minf.AddIndex("tier", "{.metadata.labels.tier}"))
	require.NoError(t, minf.AddIndex("owners", ownersPath))
	require.NoError(t, minf.WaitForSync(ctx))

	sizePath := jsonpath.MustCompile("{.data.size}")
	// answers is what a mode says, in one comparable string: query keys, item keys with a
	// field read by JSONPath and by a typed decode, the count and the counts per color.
	answers := func(inf *dynamicinformer.Informer, q query.Query) string {
		keys := run(t, inf, q)
		res, err := inf.QueryItems(ctx, q)
		require.NoError(t, err)
		var items []string
		for _, it := range res.Items {
			vs, err := it.Eval(sizePath)
			require.NoError(t, err)
			var cm corev1.ConfigMap
			require.NoError(t, it.DecodeInto(&cm))
			items = append(items, fmt.Sprintf("%s size=%v typed=%s/%s:%s", it.Key(), vs, cm.Namespace, cm.Name, cm.Data["size"]))
		}
		q.Limit = 0
		n, err := inf.Count(ctx, q)
		require.NoError(t, err)
		by, err := inf.CountBy(ctx, q, "color")
		require.NoError(t, err)
		return fmt.Sprint(keys, items, n, by)
	}
	agree := func(step string) {
		t.Helper()
		for _, q := range queries {
			want := modelAnswers(model, q)
			for name, inf := range infs {
				testenv.Eventually(t, follow, func() bool { return answers(inf, q) == want },
					"%s: %s answers %v with\n%s\nwant\n%s", step, name, q.Conditions, answers(inf, q), want)
			}
		}
		for _, q := range labelQueries {
			want := modelKeys(model, q)
			testenv.Eventually(t, follow, func() bool {
				res, err := minf.Query(ctx, q)
				if err != nil {
					return false
				}
				got := []string{}
				for _, o := range res.Items {
					got = append(got, o.GetNamespace()+"/"+o.GetName())
				}
				return fmt.Sprint(got) == fmt.Sprint(want)
			}, "%s: metadata-only %v differs from %v", step, q.Conditions, want)
		}
	}
	agree("after sync")

	// Updates that move objects between values, a label change and deletes.
	for i := range 12 {
		name := fmt.Sprintf("cm-%02d", i)
		switch i % 4 {
		case 0:
			require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}))
			delete(model, ns+"/"+name)
		case 1:
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			cm.Data["color"], cm.Data["size"] = "red", "4"
			delete(cm.Labels, "tier")
			_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			require.NoError(t, err)
			model[ns+"/"+name] = cmModel{color: "red", size: "4", owned: model[ns+"/"+name].owned}
		}
	}
	agree("after changes")
}

// cmModel is what the test knows of one ConfigMap: its color and size data, tier label
// ("" for none) and whether it has ownerReferences.
type cmModel struct {
	color, size, tier string
	owned             bool
}

// ownersPath reads a list of objects: an index holds query.NonScalar for it.
const ownersPath = "{.metadata.ownerReferences}"

func (m cmModel) values(index string) []string {
	if index == "owners" {
		if m.owned {
			return []string{query.NonScalar}
		}
		return nil
	}
	v := map[string]string{"color": m.color, "size": m.size, "tier": m.tier}[index]
	if v == "" {
		return nil
	}
	return []string{v}
}

// modelKeys evaluates q on the model by brute force, with package query's meanings.
func modelKeys(model map[string]cmModel, q query.Query) []string {
	keys := []string{}
	for _, key := range slices.Sorted(maps.Keys(model)) {
		m := model[key]
		ok := q.Labels == nil || q.Labels.Matches(labels.Set(map[string]string{"tier": m.tier}))
		all := func(cs []query.Condition) bool {
			for _, c := range cs {
				vs := m.values(c.Index)
				switch c.Path {
				case "{.data.size}":
					vs = m.values("size")
				case ownersPath:
					vs = m.values("owners")
				}
				if !modelMatch(c, vs) {
					return false
				}
			}
			return true
		}
		ok = ok && all(q.Conditions) && (len(q.AnyOf) == 0 || slices.ContainsFunc(q.AnyOf, all))
		if ok {
			keys = append(keys, key)
		}
	}
	if q.SortBy != "" {
		// By the value (numbers numerically, before other values; all of them single
		// values here), those without one last, ties in key order in both directions.
		slices.SortStableFunc(keys, func(a, b string) int {
			va, vb := model[a].values(q.SortBy), model[b].values(q.SortBy)
			switch {
			case len(va) == 0 || len(vb) == 0:
				return len(vb) - len(va)
			case q.Descending:
				return cmpValue(vb[0], va[0])
			}
			return cmpValue(va[0], vb[0])
		})
	}
	if q.Limit > 0 && len(keys) > q.Limit {
		keys = keys[:q.Limit]
	}
	return keys
}

// cmpValue orders two index values as a sort key does.
func cmpValue(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(x, y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func modelMatch(c query.Condition, vs []string) bool {
	switch c.Op {
	case query.Prefix:
		return slices.ContainsFunc(vs, func(v string) bool { return strings.HasPrefix(v, c.Values[0]) })
	case query.Equal:
		return slices.Contains(vs, c.Values[0])
	case query.NotEqual:
		return !slices.Contains(vs, c.Values[0])
	case query.Exists:
		return len(vs) > 0
	case query.NotExists:
		return len(vs) == 0
	}
	bound, _ := strconv.Atoi(c.Values[0])
	for _, v := range vs {
		n, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		switch {
		case c.Op == query.LessThan && n < bound, c.Op == query.LessOrEqual && n <= bound,
			c.Op == query.GreaterThan && n > bound, c.Op == query.GreaterOrEqual && n >= bound:
			return true
		}
	}
	return false
}

// modelAnswers is answers computed from the model.
func modelAnswers(model map[string]cmModel, q query.Query) string {
	keys := modelKeys(model, q)
	var items []string
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		items = append(items, fmt.Sprintf("%s size=[%s] typed=%s/%s:%s", k, model[k].size, ns, name, model[k].size))
	}
	q.Limit = 0
	all := modelKeys(model, q)
	by := map[string]int{}
	for _, k := range all {
		by[model[k].color]++
	}
	return fmt.Sprint(keys, items, len(all), by)
}

// TestCompactProjectionToIndexes: with Options.Indexes and ProjectIndexes, every informer
// starts with the indexes and keeps only the fields they read; an index or a query on a
// dropped field is refused (ErrNotProjected) rather than finding nothing.
func TestCompactProjectionToIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	for i := range 4 {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"tier": "a"}},
			Data:       map[string]string{"color": []string{"red", "green"}[i%2], "size": fmt.Sprint(i), "secret": "not kept"},
		}
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Indexes: map[string]string{"bad": "{.data.x"}},
		dynamicinformer.CompactOptions{ProjectIndexes: true})
	require.ErrorIs(t, err, informer.ErrInvalidIndex)
	var se *jsonpath.SyntaxError
	require.ErrorAs(t, err, &se, "the syntax error is kept: %v", err)

	f, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(),
		dynamicinformer.Options{Namespace: ns, Indexes: map[string]string{"color": "{.data.color}"}},
		dynamicinformer.CompactOptions{ProjectIndexes: true})
	require.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { cancel(); f.Shutdown() })
	require.NoError(t, f.Start(fctx))
	inf, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.WaitForSync(ctx))

	// The index is there without AddIndex, and answers.
	res, err := inf.Query(ctx, conds(query.Eq("color", "red")))
	require.NoError(t, err)
	var names []string
	for _, o := range res.Items {
		names = append(names, o.GetName())
	}
	assert.Equal(t, []string{"cm-0", "cm-2"}, names)
	stats, err := inf.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, 2, stats.Values)
	require.Error(t, inf.RemoveIndex("color"), "a factory index is not the reference's to remove")

	// Only the indexed field is kept; metadata stays whole.
	got, err := inf.Get(ns, "cm-1")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"color": "green"}, got.Object["data"])
	assert.Equal(t, "a", got.GetLabels()["tier"])
	assert.NotEmpty(t, got.GetUID())

	// Fields the projection dropped are refused, not silently empty.
	err = inf.AddIndex("size", "{.data.size}")
	require.ErrorIs(t, err, dynamicinformer.ErrNotProjected)
	require.ErrorIs(t, err, informer.ErrInvalidIndex)
	assert.Contains(t, err.Error(), ".data.size")
	_, err = inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Where("{.data.secret}", query.Equal, "not kept")}, Scan: true})
	require.ErrorIs(t, err, dynamicinformer.ErrNotProjected)
	// What is kept can be indexed and queried again, and metadata always.
	require.NoError(t, inf.AddIndex("color-again", "{.data.color}"))
	require.NoError(t, inf.AddIndex("tier", "{.metadata.labels.tier}"))
	res, err = inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Where("{.data.color}", query.Equal, "green")}, Scan: true})
	require.NoError(t, err)
	assert.Len(t, res.Items, 2)
}
