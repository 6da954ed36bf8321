package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/compact"
	"github.com/kindex/kindex/internal/jsondecode"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/internal/store/querymodel"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// probeMode is one way a cache holds objects: how an object's JSON becomes the stored
// item, and whether it holds more than metadata.
type probeMode struct {
	name     string
	decode   func(data []byte) (any, error)
	metaOnly bool
}

func probeModes(t *testing.T, projected []string) []probeMode {
	t.Helper()
	dec := func(opts compact.Options) func([]byte) (any, error) {
		d, err := compact.NewDecoder(opts)
		if err != nil {
			t.Fatal(err)
		}
		return func(data []byte) (any, error) { return d.DecodeObject(data) }
	}
	return []probeMode{
		{name: "kindex", decode: func(data []byte) (any, error) {
			m, err := jsondecode.Object(data)
			return &unstructured.Unstructured{Object: m}, err
		}},
		{name: "client-go", decode: func(data []byte) (any, error) {
			return runtime.Decode(unstructured.UnstructuredJSONScheme, data)
		}},
		{name: "compact", decode: dec(compact.Options{Spans: true})},
		{name: "compact-nospans", decode: dec(compact.Options{})},
		{name: "compact-projected", decode: dec(compact.Options{Spans: true, Projection: projected})},
		{name: "metadata", metaOnly: true, decode: func(data []byte) (any, error) {
			o := &metav1.PartialObjectMetadata{}
			return o, json.Unmarshal(data, o)
		}},
	}
}

func probeOpts(scope string) store.QueryOptions {
	return store.QueryOptions{
		Scope: scope,
		PathFunc: func(expr string) (store.IndexFunc, error) {
			p, err := jsonpath.Compile(expr)
			if err != nil {
				return nil, err
			}
			return store.IndexFunc(indexfuncs.FromPath(p)), nil
		},
		Labels: func(obj any) map[string]string {
			m, err := meta.Accessor(obj)
			if err != nil {
				panic(err)
			}
			return m.GetLabels()
		},
	}
}

// probeStore is one mode's store, with the model of what it holds.
type probeStore struct {
	mode probeMode
	s    *store.Store
}

// TestQueriesAgreeWithTheModel is a randomized differential test of the store's query
// planner, the JSONPath index functions and kindex's decoders against package querymodel,
// a brute-force reading of package query's documentation: random objects (strings,
// numbers of every form, booleans, nulls, unicode, maps, lists, missing fields), random
// JSONPath indexes and random queries (every operator, AnyOf, labels, namespaces, sort keys
// both ways, pages), in every way a cache holds objects, with each indexed condition also
// asked as a JSONPath condition. Paging is also checked while objects change between pages.
func TestQueriesAgreeWithTheModel(t *testing.T) {
	for _, run := range []probeRun{
		{seed: 0, objects: 150, queries: 80, namespaces: []string{"ns-a", "ns-b", "n"}},
		{seed: 1, objects: 150, queries: 80, namespaces: []string{"ns-a", "ns-b", "n"}},
		// Values shared by hundreds of objects in many namespaces: key lists as trees, split
		// by namespace.
		{seed: 2, objects: 250, queries: 40, namespaces: []string{"a", "b", "c", "d", "e", "f"}, narrow: true},
	} {
		t.Run(fmt.Sprint("seed", run.seed), func(t *testing.T) { probeSeed(t, run) })
	}
}

// probeRun is one run of the randomized test.
type probeRun struct {
	seed       uint64
	objects    int
	queries    int
	namespaces []string
	narrow     bool
}

func probeSeed(t *testing.T, run probeRun) {
	ctx := context.Background()
	seed := run.seed
	g := querymodel.NewGen(seed)
	g.Narrow = run.narrow
	model := querymodel.New()
	namespaces := run.namespaces

	// Indexes: paths into spec (anything) and metadata (every mode has it).
	var indexes, metaIndexes, exprs []string
	for i := range 10 {
		var p querymodel.Path
		if i%3 == 0 {
			p = g.MetaPath()
		} else {
			p = g.SpecPath("spec", querymodel.SpecKeys)
		}
		name := fmt.Sprint("i", i)
		model.Indexes[name] = p
		model.Paths[p.String()] = p
		indexes = append(indexes, name)
		exprs = append(exprs, p.String())
		if i%3 == 0 {
			metaIndexes = append(metaIndexes, name)
		}
	}
	// Plus JSONPath conditions that no index has.
	var wherePaths []string
	for range 4 {
		p := g.SpecPath("spec", []string{"a", "b", "x", "x.y", "k"})
		model.Paths[p.String()] = p
		wherePaths = append(wherePaths, p.String())
		exprs = append(exprs, p.String())
	}

	var stores []probeStore
	// Half the indexes are registered before the objects come, half after (backfilled),
	// in the slots of indexes removed meanwhile.
	addIndexes := func(odd int) {
		for _, ps := range stores {
			for i, name := range indexes {
				if ps.mode.metaOnly && !slices.Contains(metaIndexes, name) || i%2 != odd {
					continue
				}
				p := jsonpath.MustCompile(model.Indexes[name].String())
				if err := ps.s.AddIndex(name, store.IndexFunc(indexfuncs.FromPath(p))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, m := range probeModes(t, exprs) {
		s := store.New(store.Options{})
		stores = append(stores, probeStore{mode: m, s: s})
		if err := s.AddIndex("gone", func(any) ([]string, error) { return []string{"x"}, nil }); err != nil {
			t.Fatal(err)
		}
	}
	addIndexes(0)
	put := func(data []byte) {
		t.Helper()
		o, err := model.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range stores {
			item, err := ps.mode.decode(data)
			if err != nil {
				t.Fatalf("%s: %v", ps.mode.name, err)
			}
			if err := ps.s.Add(item); err != nil {
				t.Fatal(err)
			}
		}
		_ = o
	}
	del := func(key string) {
		model.Delete(key)
		for _, ps := range stores {
			ns, name := splitKey(key)
			if err := ps.s.Delete(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	object := func(ns, name string) []byte {
		data := querymodel.Marshal(g.Widget("example.com/v1", ns, name, nil))
		if g.R.IntN(2) == 0 {
			// As the API server writes it back: numbers in its own form.
			doc, err := querymodel.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			data = querymodel.Marshal(doc)
		}
		if g.R.IntN(2) == 0 {
			// As other writers may: without escaping what encoding/json escapes.
			data = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&", `\u2028`, "\u2028").Replace(string(data)))
		}
		return data
	}
	for i := range run.objects {
		ns := namespaces[i%len(namespaces)]
		put(object(ns, fmt.Sprintf("w%03d", i)))
	}
	for _, ps := range stores {
		if _, err := ps.s.RemoveIndex("gone"); err != nil {
			t.Fatal(err)
		}
	}
	addIndexes(1)

	opts := querymodel.QueryOptions{Indexes: indexes, Paths: wherePaths, Namespaces: append(slices.Clone(namespaces), "none"), LabelKeys: []string{"tier", "app", "x.io/y"}}
	metaOpts := querymodel.QueryOptions{Indexes: metaIndexes, Namespaces: opts.Namespaces, LabelKeys: opts.LabelKeys}
	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		failures++
		if failures <= 20 {
			t.Errorf(format, args...)
		}
	}
	for n := range run.queries {
		q := g.Query(model, opts)
		qm := g.Query(model, metaOpts)
		for _, ps := range stores {
			qq := q
			if ps.mode.metaOnly {
				qq = qm
			}
			if msg := checkQuery(ctx, ps, model, qq, fmt.Sprint(seed, "/", n)); msg != "" {
				fail("%s: query %s:\n%s", ps.mode.name, querymodel.Describe(qq), msg)
			}
			if w, ok := model.WhereForm(qq); ok {
				if msg := checkQuery(ctx, ps, model, w, fmt.Sprint(seed, "/", n)); msg != "" {
					fail("%s: query (indexed conditions as JSONPath) %s:\n%s", ps.mode.name, querymodel.Describe(w), msg)
				}
			}
		}
		if n%5 == 4 {
			// The same query page by page while objects change between pages.
			pq := q
			pq.Limit = 1 + g.R.IntN(4)
			pq.Scan = true
			if model.Check(pq) == querymodel.OK {
				if msg := checkChangingPages(ctx, stores, model, pq, fmt.Sprint(seed, "/", n), func() {
					for range 3 {
						keys := slices.Sorted(maps.Keys(model.Objects))
						k := keys[g.R.IntN(len(keys))]
						ns, name := splitKey(k)
						switch g.R.IntN(3) {
						case 0:
							del(k)
						case 1:
							put(object(ns, name))
						default:
							put(object(ns, fmt.Sprintf("p%03d-%d", n, g.R.IntN(1000))))
						}
					}
				}); msg != "" {
					fail("paging while objects change, query %s:\n%s", querymodel.Describe(pq), msg)
				}
			}
		}
		if n%10 == 9 {
			// Change a few objects: replace, delete, add.
			keys := slices.Sorted(maps.Keys(model.Objects))
			for range 5 {
				k := keys[g.R.IntN(len(keys))]
				ns, name := splitKey(k)
				if _, ok := model.Objects[k]; !ok {
					continue
				}
				if g.R.IntN(3) == 0 {
					del(k)
				} else {
					put(object(ns, name))
				}
			}
			put(object(namespaces[g.R.IntN(len(namespaces))], fmt.Sprintf("new%03d", n)))
		}
	}
	if failures > 20 {
		t.Errorf("... and %d more", failures-20)
	}
}

func splitKey(k string) (string, string) {
	for i := range len(k) {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// checkQuery runs q (every page), Count and CountBy, and returns what disagrees with the
// model ("" if nothing).
func checkQuery(ctx context.Context, ps probeStore, model *querymodel.Model, q query.Query, scope string) string {
	opts := probeOpts(scope)
	want := model.Check(q)
	var got []string
	page := q
	var err error
	for range 1000 {
		var items []store.Item
		var next string
		items, next, _, err = ps.s.Query(ctx, page, opts)
		if err != nil {
			break
		}
		if q.Limit > 0 && len(items) > page.Limit {
			return fmt.Sprintf("page of %d, limit %d", len(items), page.Limit)
		}
		for _, it := range items {
			got = append(got, it.Key)
		}
		if next == "" {
			break
		}
		if len(items) == 0 {
			return "an empty page with a continue token"
		}
		page.Continue = next
		// Limit may change from page to page.
		page.Limit = max(1, q.Limit+len(got)%3-1)
	}
	if msg := querymodel.CheckOutcome(want, err); msg != "" {
		return "query: " + msg
	}
	// The check made before a query reads any store (a watch-all set's, before it asks its
	// members) gives the outcome the query gives.
	if msg := querymodel.CheckOutcome(want, store.Validate(q, opts)); msg != "" {
		return "validate: " + msg
	}
	if err == nil {
		if exp := model.Results(q); !slices.Equal(got, exp) {
			return fmt.Sprintf("results\n got %s\nwant %s%s", short(got), short(exp), model.Explain(q, got, exp))
		}
	}
	// Count and CountBy ignore the order and the page; they need no Scan without any
	// condition, being answered from sizes.
	cq := q
	cq.SortBy, cq.Descending, cq.Limit = "", false, 0
	cwant := model.Check(cq)
	if len(cq.Conditions) == 0 && len(cq.AnyOf) == 0 && cq.Labels == nil && cwant == querymodel.ScanRequired {
		cwant = querymodel.OK
	}
	n, _, err := ps.s.Count(ctx, cq, opts)
	if msg := querymodel.CheckOutcome(cwant, err); msg != "" {
		return "count: " + msg
	}
	if msg := querymodel.CheckOutcome(cwant, store.ValidateCount(q, opts)); msg != "" {
		return "validate count: " + msg
	}
	if err == nil && n != len(model.Results(cq)) {
		return fmt.Sprintf("count %d, want %d", n, len(model.Results(cq)))
	}
	// Counts by the first index of the mode (a metadata path) and by the index q sorts by
	// or its first condition names, whose values may be lists, maps and numbers.
	var by []string
	for _, name := range slices.Sorted(maps.Keys(model.Indexes)) {
		if _, err := ps.s.IndexStats(name); err == nil {
			by = append(by, name)
			break
		}
	}
	named := q.SortBy
	if named == "" && len(q.Conditions) > 0 {
		named = q.Conditions[0].Index
	}
	if _, err := ps.s.IndexStats(named); named != "" && err == nil && !slices.Contains(by, named) {
		by = append(by, named)
	}
	for _, name := range by {
		counts, err := ps.s.CountBy(ctx, cq, name, opts)
		if msg := querymodel.CheckOutcome(cwant, err); msg != "" {
			return "count by " + name + ": " + msg
		}
		if err == nil && !maps.Equal(counts, model.CountBy(cq, name)) {
			return fmt.Sprintf("count by %s: %v, want %v", name, counts, model.CountBy(cq, name))
		}
	}
	return ""
}

// short prints a list of keys, cut to its first 12.
func short(keys []string) string {
	if len(keys) > 12 {
		return fmt.Sprintf("%q ... (%d)", keys[:12], len(keys))
	}
	return fmt.Sprintf("%q", keys)
}

// checkChangingPages pages through q in every store in step, calling change between pages,
// and checks each page against package query's definition: the first Limit matches, in the
// current content, after the position of the last result returned (its sort value and key
// when it was returned), with a continue token exactly when more matches follow.
func checkChangingPages(ctx context.Context, stores []probeStore, model *querymodel.Model, q query.Query, scope string, change func()) string {
	type pager struct {
		ps     probeStore
		next   string
		cursor *querymodel.SortKey
		done   bool
	}
	var pagers []*pager
	for _, ps := range stores {
		if ps.mode.metaOnly {
			continue
		}
		pagers = append(pagers, &pager{ps: ps})
	}
	opts := probeOpts(scope)
	// At most 40 pages: objects created ahead of the cursor may keep it going.
	for step := 0; step < 40; step++ {
		all := model.Results(q)
		active := 0
		for _, p := range pagers {
			if p.done {
				continue
			}
			active++
			var want []string
			for _, k := range all {
				if p.cursor == nil || querymodel.CompareKeys(q, model.Key(model.Objects[k], q), *p.cursor) > 0 {
					want = append(want, k)
				}
			}
			more := len(want) > q.Limit
			if more {
				want = want[:q.Limit]
			}
			page := q
			page.Continue = p.next
			items, next, _, err := p.ps.s.Query(ctx, page, opts)
			if err != nil {
				return fmt.Sprintf("%s: page %d: %v", p.ps.mode.name, step, err)
			}
			got := make([]string, len(items))
			for i, it := range items {
				got[i] = it.Key
			}
			if !slices.Equal(got, want) || (next != "") != more {
				return fmt.Sprintf("%s: page %d after %+v: got %q (more: %v), want %q (more: %v)%s", p.ps.mode.name, step, p.cursor,
					got, next != "", want, more, model.Explain(q, got, want))
			}
			if len(want) > 0 {
				k := model.Key(model.Objects[want[len(want)-1]], q)
				p.cursor = &k
			}
			p.next, p.done = next, next == ""
		}
		if active == 0 {
			return ""
		}
		change()
	}
	return ""
}
