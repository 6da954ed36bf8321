package dynamicinformer_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/store/querymodel"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// probeInformer is one storage mode's informer of a resource, behind the calls the probe
// makes of it.
type probeInformer struct {
	mode     string
	metaOnly bool
	query    func(context.Context, query.Query) ([]string, string, error)
	items    func(context.Context, query.Query) ([]string, string, error)
	count    func(context.Context, query.Query) (int, error)
	countBy  func(context.Context, query.Query, string) (map[string]int, error)
	rv       func(ns, name string) (string, bool)
}

// probeOf reads inf in the probe's terms; metaOnly: inf holds metadata only.
func probeOf[T informer.Object](mode string, metaOnly bool, inf *informer.Informer[T]) probeInformer {
	return probeInformer{
		mode:     mode,
		metaOnly: metaOnly,
		query: func(ctx context.Context, q query.Query) ([]string, string, error) {
			res, err := inf.Query(ctx, q)
			keys := []string{}
			for _, o := range res.Items {
				keys = append(keys, o.GetNamespace()+"/"+o.GetName())
			}
			return keys, res.Continue, err
		},
		items: func(ctx context.Context, q query.Query) ([]string, string, error) {
			res, err := inf.QueryItems(ctx, q)
			keys := []string{}
			for _, it := range res.Items {
				keys = append(keys, it.Key())
			}
			return keys, res.Continue, err
		},
		count:   inf.Count,
		countBy: inf.CountBy,
		rv: func(ns, name string) (string, bool) {
			o, err := inf.Get(ns, name)
			if err != nil {
				return "", false
			}
			return o.GetResourceVersion(), true
		},
	}
}

// probeResource is one resource of the probe: how to make its objects, its indexes and the
// model of what the server holds.
type probeResource struct {
	name, prefix string // resource name; prefix of its index names
	path         func(ns string) string
	object       func(ns, name string) map[string]any
	model        *querymodel.Model
	indexes      []string // every index name
	metaIndexes  []string // the indexes on metadata
	where        []string // JSONPath conditions without an index
	infs         []probeInformer
}

// TestRandomQueriesAgreeWithTheModel creates random ConfigMaps and Widgets (a CRD that
// keeps unknown fields: strings, numbers in every form a client may write, booleans,
// nulls, unicode in several normalization forms, maps, lists, missing fields) in two
// namespaces, registers random JSONPath indexes, and asks random queries of every storage
// mode (unstructured on kindex's decoder and on client-go's, compact with and without
// compression, compact projected to the indexes, metadata-only for metadata indexes):
// every operator, AnyOf, label selectors, namespaces, sort keys both ways, every page,
// QueryItems, Count and CountBy, each indexed condition also as a JSONPath condition. Each
// answer must be the one package querymodel computes from the objects as the server
// returned them, by package query's documented meanings; pages are also read while
// objects change between them.
func TestRandomQueriesAgreeWithTheModel(t *testing.T) {
	ctx := context.Background()
	const seed = 4
	g := querymodel.NewGen(seed)
	namespaces := []string{cp.Namespace(t), cp.Namespace(t)}
	slices.Sort(namespaces)
	group, _, _ := installWidgets(t)
	marker := map[string]string{"probe": testenv.UniqueName(t)}
	rc := cp.Clientset(t).CoreV1().RESTClient()

	cms := &probeResource{name: "configmaps", prefix: "cm.", model: querymodel.New(),
		path:   func(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" },
		object: func(ns, name string) map[string]any { return g.ConfigMap(ns, name, marker) }}
	widgets := &probeResource{name: "widgets." + group, prefix: "wd.", model: querymodel.New(),
		path:   func(ns string) string { return "/apis/" + group + "/v1/namespaces/" + ns + "/widgets" },
		object: func(ns, name string) map[string]any { return g.Widget(group+"/v1", ns, name, marker) }}
	resources := []*probeResource{cms, widgets}
	specKeys := querymodel.SpecKeys
	factoryIndexes := map[string]string{}
	for _, r := range resources {
		for i := range 9 {
			var p querymodel.Path
			switch {
			case i%3 == 0:
				p = g.MetaPath()
			case r == cms:
				p = g.SpecPath("data", []string{"a", "b", "c", "x", "x.y", "1", "k"})
			default:
				p = g.SpecPath("spec", specKeys)
			}
			name := fmt.Sprint(r.prefix, "i", i)
			r.model.Indexes[name] = p
			r.model.Paths[p.String()] = p
			r.indexes = append(r.indexes, name)
			if i%3 == 0 {
				r.metaIndexes = append(r.metaIndexes, name)
			}
			factoryIndexes[name] = p.String()
		}
		for i := range 3 {
			var p querymodel.Path
			if r == cms {
				p = g.SpecPath("data", []string{"a", "x", "x.y"})
			} else {
				p = g.SpecPath("spec", []string{"a", "b", "x", "x.y", "k"})
			}
			r.model.Paths[p.String()] = p
			r.where = append(r.where, p.String())
			// The projected mode keeps what its indexes read: the JSONPath conditions'
			// fields are kept by an index of their own.
			factoryIndexes[fmt.Sprint(r.prefix, "w", i)] = p.String()
		}
		// A second name for an index's expression: both share one index.
		alias := r.prefix + "alias"
		r.model.Indexes[alias] = r.model.Indexes[r.indexes[1]]
		r.indexes = append(r.indexes, alias)
		factoryIndexes[alias] = r.model.Indexes[alias].String()
	}

	// The objects, as the server returns them.
	send := func(r *probeResource, verb, ns, name string, obj map[string]any) {
		t.Helper()
		var req *rest.Request
		switch verb {
		case "POST":
			req = rc.Post().AbsPath(r.path(ns)).Body(querymodel.Marshal(obj))
		case "PUT":
			req = rc.Put().AbsPath(r.path(ns), name).Body(querymodel.Marshal(obj))
		case "DELETE":
			req = rc.Delete().AbsPath(r.path(ns), name)
		}
		raw, err := req.SetHeader("Accept", "application/json").SetHeader("Content-Type", "application/json").Do(ctx).Raw()
		require.NoError(t, err, "%s %s/%s: %s", verb, ns, name, raw)
		if verb == "DELETE" {
			r.model.Delete(ns + "/" + name)
			return
		}
		// Every storage mode leaves managedFields out.
		doc, err := querymodel.Decode(raw)
		require.NoError(t, err)
		delete(doc.(map[string]any)["metadata"].(map[string]any), "managedFields")
		_, err = r.model.Put(querymodel.Marshal(doc))
		require.NoError(t, err)
	}
	for _, r := range resources {
		n := 60
		if r == widgets {
			n = 110
		}
		for i := range n {
			ns := namespaces[i%2]
			send(r, "POST", ns, fmt.Sprintf("o%03d", i), r.object(ns, fmt.Sprintf("o%03d", i)))
		}
	}

	// Every storage mode, on every namespace, for the marked objects.
	selector := informer.WithLabelSelector("probe=" + marker["probe"])
	factories := map[string]func() (*dynamicinformer.Factory, error){
		"kindex": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewFactory(cp.AdminConfig(), dynamicinformer.Options{})
		},
		"client-go": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewClientGoFactory(cp.AdminConfig(), dynamicinformer.Options{})
		},
		"compact": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{}, dynamicinformer.CompactOptions{})
		},
		"compact-compressed": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{}, dynamicinformer.CompactOptions{Compress: true})
		},
		"compact-projected": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Indexes: factoryIndexes},
				dynamicinformer.CompactOptions{ProjectIndexes: true})
		},
	}
	for _, mode := range slices.Sorted(maps.Keys(factories)) {
		f, err := factories[mode]()
		require.NoError(t, err, mode)
		fctx, cancel := context.WithCancel(ctx)
		t.Cleanup(func() { cancel(); f.Shutdown() })
		require.NoError(t, f.Start(fctx))
		for _, r := range resources {
			inf, err := f.Informer(ctx, r.name, selector)
			require.NoError(t, err, mode)
			t.Cleanup(inf.Release)
			for _, name := range r.indexes {
				require.NoError(t, inf.AddIndex(name, r.model.Indexes[name].String()), mode)
			}
			require.NoError(t, inf.WaitForSync(ctx), mode)
			r.infs = append(r.infs, probeOf(mode, false, inf))
		}
	}
	mf, err := metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{})
	require.NoError(t, err)
	mctx, mcancel := context.WithCancel(ctx)
	t.Cleanup(func() { mcancel(); mf.Shutdown() })
	require.NoError(t, mf.Start(mctx))
	for _, r := range resources {
		minf, err := mf.Informer(ctx, r.name, selector)
		require.NoError(t, err)
		t.Cleanup(minf.Release)
		for _, name := range r.metaIndexes {
			require.NoError(t, minf.AddIndex(name, r.model.Indexes[name].String()))
		}
		require.NoError(t, minf.WaitForSync(ctx))
		r.infs = append(r.infs, probeOf("metadata-only", true, minf))
	}

	// caughtUp waits until every informer of r holds what the server returned last.
	caughtUp := func(r *probeResource, keys []string) {
		t.Helper()
		for _, inf := range r.infs {
			testenv.Eventually(t, follow, func() bool {
				for _, k := range keys {
					ns, name, _ := strings.Cut(k, "/")
					rv, ok := inf.rv(ns, name)
					o := r.model.Objects[k]
					if o == nil && ok || o != nil && rv != resourceVersion(o) {
						return false
					}
				}
				return true
			}, "%s of %s does not hold what the server returned for %v", inf.mode, r.name, keys)
		}
	}
	for _, r := range resources {
		caughtUp(r, slices.Collect(maps.Keys(r.model.Objects)))
	}

	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if failures++; failures <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, r := range resources {
		opts := querymodel.QueryOptions{Indexes: r.indexes, Paths: r.where, Namespaces: append(slices.Clone(namespaces), "none"), LabelKeys: []string{"tier", "app", "x.io/y"}}
		metaOpts := querymodel.QueryOptions{Indexes: r.metaIndexes, Namespaces: opts.Namespaces, LabelKeys: opts.LabelKeys}
		for n := range 100 {
			q, qm := g.Query(r.model, opts), g.Query(r.model, metaOpts)
			for _, inf := range r.infs {
				qq := q
				if inf.metaOnly {
					qq = qm
				}
				if msg := probeAnswers(ctx, inf, r.model, qq); msg != "" {
					fail("%s %s: %s:\n%s", r.name, inf.mode, querymodel.Describe(qq), msg)
				}
				if w, ok := r.model.WhereForm(qq); ok {
					if msg := probeAnswers(ctx, inf, r.model, w); msg != "" {
						fail("%s %s: %s (indexed conditions as JSONPath):\n%s", r.name, inf.mode, querymodel.Describe(w), msg)
					}
				}
			}
			if n%20 != 19 {
				continue
			}
			// Pages while objects change between them: after each page, an update, a
			// delete and a create, applied by every informer before the next page.
			pq := q
			pq.Limit, pq.Scan = 1+g.R.IntN(5), true
			if r.model.Check(pq) != querymodel.OK {
				continue
			}
			cursors := make([]*querymodel.SortKey, len(r.infs))
			tokens := make([]string, len(r.infs))
			done := make([]bool, len(r.infs))
			// At most 12 pages: objects created ahead of the cursor may keep it going.
			for step := 0; step < 12 && slices.Contains(done, false); step++ {
				all := r.model.Results(pq)
				for i, inf := range r.infs {
					if done[i] || inf.metaOnly {
						done[i] = true
						continue
					}
					var want []string
					for _, k := range all {
						if cursors[i] == nil || querymodel.CompareKeys(pq, r.model.Key(r.model.Objects[k], pq), *cursors[i]) > 0 {
							want = append(want, k)
						}
					}
					more := len(want) > pq.Limit
					want = want[:min(len(want), pq.Limit)]
					page := pq
					page.Continue = tokens[i]
					got, next, err := inf.query(ctx, page)
					require.NoError(t, err)
					if !slices.Equal(got, want) || (next != "") != more {
						fail("%s %s: page %d of %s after %+v: got %q (more: %v), want %q (more: %v)%s", r.name, inf.mode, step,
							querymodel.Describe(pq), cursors[i], got, next != "", want, more, r.model.Explain(pq, got, want))
						done[i] = true
						continue
					}
					if len(want) > 0 {
						k := r.model.Key(r.model.Objects[want[len(want)-1]], pq)
						cursors[i] = &k
					}
					tokens[i], done[i] = next, next == ""
				}
				keys := slices.Sorted(maps.Keys(r.model.Objects))
				upd, del := keys[g.R.IntN(len(keys))], keys[g.R.IntN(len(keys))]
				ns, name, _ := strings.Cut(upd, "/")
				o := r.object(ns, name)
				o["metadata"].(map[string]any)["resourceVersion"] = resourceVersion(r.model.Objects[upd])
				send(r, "PUT", ns, name, o)
				changed := []string{upd}
				if del != upd {
					ns, name, _ := strings.Cut(del, "/")
					send(r, "DELETE", ns, name, nil)
					changed = append(changed, del)
				}
				ns = namespaces[g.R.IntN(2)]
				name = fmt.Sprintf("p%02d-%02d", n, step)
				send(r, "POST", ns, name, r.object(ns, name))
				caughtUp(r, append(changed, ns+"/"+name))
			}
		}
	}
	if failures > 20 {
		t.Errorf("... and %d more", failures-20)
	}
}

func resourceVersion(o *querymodel.Object) string {
	rv, _ := o.Doc.(map[string]any)["metadata"].(map[string]any)["resourceVersion"].(string)
	return rv
}

// probeAnswers asks q of one informer (every page of Query and of QueryItems, Count and
// CountBy) and returns how the answers differ from the model's ("" if they do not).
func probeAnswers(ctx context.Context, inf probeInformer, model *querymodel.Model, q query.Query) string {
	want := model.Check(q)
	for _, ask := range []struct {
		name string
		fn   func(context.Context, query.Query) ([]string, string, error)
	}{{"Query", inf.query}, {"QueryItems", inf.items}} {
		var got []string
		page := q
		var err error
		for range 1000 {
			var keys []string
			var next string
			if keys, next, err = ask.fn(ctx, page); err != nil {
				break
			}
			if q.Limit > 0 && len(keys) > page.Limit {
				return fmt.Sprintf("%s: a page of %d for a limit of %d", ask.name, len(keys), page.Limit)
			}
			got = append(got, keys...)
			if next == "" {
				break
			}
			page.Continue = next
			// Limit may change from page to page.
			page.Limit = max(1, q.Limit+len(got)%3-1)
		}
		if msg := probeOutcome(want, err); msg != "" {
			return ask.name + ": " + msg
		}
		if err == nil && !slices.Equal(got, model.Results(q)) {
			exp := model.Results(q)
			return fmt.Sprintf("%s:\n got %q\nwant %q%s", ask.name, got, exp, model.Explain(q, got, exp))
		}
	}
	// Count and CountBy ignore order and pages, and need no Scan without any condition.
	cq := q
	cq.SortBy, cq.Descending, cq.Limit = "", false, 0
	cwant := model.Check(cq)
	if len(cq.Conditions) == 0 && len(cq.AnyOf) == 0 && cq.Labels == nil && cwant == querymodel.ScanRequired {
		cwant = querymodel.OK
	}
	n, err := inf.count(ctx, cq)
	if msg := probeOutcome(cwant, err); msg != "" {
		return "Count: " + msg
	}
	if err == nil && n != len(model.Results(cq)) {
		return fmt.Sprintf("Count %d, want %d", n, len(model.Results(cq)))
	}
	for _, c := range q.Conditions {
		if c.Index == "" {
			continue
		}
		by, err := inf.countBy(ctx, cq, c.Index)
		if msg := probeOutcome(cwant, err); msg != "" {
			return "CountBy: " + msg
		}
		if err == nil && !maps.Equal(by, model.CountBy(cq, c.Index)) {
			return fmt.Sprintf("CountBy %s: %v, want %v", c.Index, by, model.CountBy(cq, c.Index))
		}
		break
	}
	return ""
}

func probeOutcome(want querymodel.Outcome, err error) string {
	if msg := querymodel.CheckOutcome(want, err); msg != "" {
		return msg
	}
	if apierrors.IsNotFound(err) { // never right, whatever the model wants
		return fmt.Sprintf("error %v", err)
	}
	return ""
}
