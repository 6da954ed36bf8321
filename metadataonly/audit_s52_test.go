package metadataonly_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// s52Page pages through q and returns "resource ns/name" of each result in the set's order.
func s52Page[T informer.Object](ctx context.Context, ws *informer.WatchAll[T], q query.Query) ([]string, error) {
	out := []string{}
	for {
		res, err := ws.QueryItems(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			gvr := it.Resource.GVR
			out = append(out, gvr.Resource+"."+gvr.Group+"/"+gvr.Version+" "+it.Namespace()+"/"+it.Name())
		}
		if res.Continue == "" {
			return out, nil
		}
		q.Continue = res.Continue
	}
}

// A metadata-only watch-all set and a compact one with the same label indexes, the indexes
// added before the CRD exists, answer every query identically (order, pages, counts, the
// resource named) and as a fresh LIST says; the CRD deleted, both drop its objects.
func TestAuditS52MetadataAndCompactWatchAllAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	filter := discovery.Filter{IncludeGroups: []string{group}, IncludeResources: []string{"configmaps", "secrets"}}

	mf := start(t, nil, metadataonly.Options{Namespace: ns}).f
	cf, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Namespace: ns}, dynamicinformer.CompactOptions{})
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	require.NoError(t, cf.Start(cctx))
	t.Cleanup(func() { cancel(); cf.Shutdown() })
	mws, err := mf.WatchAll(ctx, filter)
	require.NoError(t, err)
	defer mws.Stop()
	cws, err := cf.WatchAll(ctx, filter)
	require.NoError(t, err)
	defer cws.Stop()
	idx := map[string]string{"team": "{.metadata.labels.team}", "rank": "{.metadata.labels.rank}",
		"owner": "{.metadata.ownerReferences[*].name}", "note": "{.metadata.annotations.note}",
		"refs": "{.metadata.ownerReferences}", "ann": "{.metadata.annotations}", "labels": "{.metadata.labels}"}
	for name, expr := range idx {
		require.NoError(t, mws.AddIndex(name, expr))
		require.NoError(t, cws.AddIndex(name, expr))
	}

	crd := cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	teams := []string{"a", "b", "a-x", ""}
	meta := func(i int) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: fmt.Sprintf("o%02d", i), Labels: map[string]string{"rank": fmt.Sprint((i * 5) % 9)}}
		if teams[i%4] != "" {
			m.Labels["team"] = teams[i%4]
		}
		if i%3 == 0 {
			m.Annotations = map[string]string{"note": fmt.Sprint("n", i%2)}
		}
		if i%4 == 1 {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "boss", UID: "u1"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: fmt.Sprint("boss", i%2), UID: "u2"}}
		}
		return m
	}
	for i := range 10 {
		_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(i)}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = cp.Clientset(t).CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: meta(i + 1)}, metav1.CreateOptions{})
		require.NoError(t, err)
		w := widget(group, "x")
		m := meta(i + 2)
		w.SetName(m.Name)
		w.SetLabels(m.Labels)
		w.SetAnnotations(m.Annotations)
		w.SetOwnerReferences(m.OwnerReferences)
		_, err = cp.Dynamic(t).Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	gvrs := []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"}, widgets}
	// Ground truth: a fresh LIST of every resource.
	truth := func(keep func(metav1.Object) bool) []string {
		out := []string{}
		for _, gvr := range gvrs {
			l, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range l.Items {
				if keep(&l.Items[i]) {
					out = append(out, gvr.Resource+"."+gvr.Group+"/"+gvr.Version+" "+ns+"/"+l.Items[i].GetName())
				}
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	type tc struct {
		q    query.Query
		keep func(metav1.Object) bool
	}
	hasPrefix := func(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
	owns := func(o metav1.Object, name string) bool {
		for _, r := range o.GetOwnerReferences() {
			if r.Name == name {
				return true
			}
		}
		return false
	}
	cases := []tc{
		{query.Query{Conditions: []query.Condition{query.Eq("team", "a")}}, func(o metav1.Object) bool { return o.GetLabels()["team"] == "a" }},
		{query.Query{Conditions: []query.Condition{query.HasPrefix("team", "a")}, SortBy: "rank"}, func(o metav1.Object) bool { return hasPrefix(o.GetLabels()["team"], "a") }},
		{query.Query{Conditions: []query.Condition{query.HasNot("team"), query.Has("rank")}, SortBy: "rank", Descending: true}, func(o metav1.Object) bool { _, ok := o.GetLabels()["team"]; return !ok }},
		{query.Query{AnyOf: [][]query.Condition{{query.Eq("owner", "boss1")}, {query.Eq("note", "n0"), query.Ge("rank", "4")}}},
			func(o metav1.Object) bool {
				return owns(o, "boss1") || o.GetAnnotations()["note"] == "n0" && o.GetLabels()["rank"] >= "4"
			}},
		{query.Query{Conditions: []query.Condition{query.Eq("owner", "boss"), query.OneOf("rank", "0", "1", "5", "6")}}, func(o metav1.Object) bool {
			return owns(o, "boss") && slices.Contains([]string{"0", "1", "5", "6"}, o.GetLabels()["rank"])
		}},
		{query.Query{Conditions: []query.Condition{query.Has("refs"), query.HasNot("ann")}, SortBy: "labels"},
			func(o metav1.Object) bool { return len(o.GetOwnerReferences()) > 0 && len(o.GetAnnotations()) == 0 }},
		{query.Query{AnyOf: [][]query.Condition{{query.Has("ann")}, {query.Eq("team", "b")}}, SortBy: "note", Descending: true},
			func(o metav1.Object) bool { return len(o.GetAnnotations()) > 0 || o.GetLabels()["team"] == "b" }},
	}
	// Both sets have caught up with the server.
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		want := truth(func(o metav1.Object) bool { return o.GetLabels()["rank"] != "" })
		for _, ws := range []func() ([]string, error){
			func() ([]string, error) {
				return s52Page(ctx, mws, query.Query{Conditions: []query.Condition{query.Has("rank")}})
			},
			func() ([]string, error) {
				return s52Page(ctx, cws, query.Query{Conditions: []query.Condition{query.Has("rank")}})
			},
		} {
			got, err := ws()
			if err != nil || !slices.Equal(sorted(got), want) {
				return false
			}
		}
		return true
	}, func() string { return "the sets did not catch up" })
	for i, c := range cases {
		want := truth(c.keep)
		require.NotEmpty(t, want, "case %d", i)
		for _, limit := range []int{0, 1, 4} {
			q := c.q
			q.Limit = limit
			mg, err := s52Page(ctx, mws, q)
			require.NoError(t, err, "case %d", i)
			cg, err := s52Page(ctx, cws, q)
			require.NoError(t, err, "case %d", i)
			assert.Equal(t, cg, mg, "case %d limit %d: metadata vs compact", i, limit)
			assert.Equal(t, want, sorted(mg), "case %d limit %d", i, limit)
		}
		mn, err := mws.Count(ctx, c.q)
		require.NoError(t, err)
		cn, err := cws.Count(ctx, c.q)
		require.NoError(t, err)
		assert.Equal(t, len(want), mn, "case %d", i)
		assert.Equal(t, len(want), cn, "case %d", i)
	}

	// Sizes, a label selector and a JSONPath condition, as a fresh LIST says.
	all := truth(func(metav1.Object) bool { return true })
	sel, err := labels.Parse("team in (a,b),rank!=0")
	require.NoError(t, err)
	bySel := truth(func(o metav1.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) })
	byWhere := truth(func(o metav1.Object) bool { return o.GetLabels()["rank"] != "" && o.GetAnnotations()["note"] == "n1" })
	for _, ws := range []interface {
		Count(context.Context, query.Query) (int, error)
	}{mws, cws} {
		n, err := ws.Count(ctx, query.Query{})
		require.NoError(t, err)
		assert.Equal(t, len(all), n, "every object")
		n, err = ws.Count(ctx, query.Query{Labels: sel, Scan: true})
		require.NoError(t, err)
		assert.Equal(t, len(bySel), n, "selector")
	}
	for _, q := range []query.Query{
		{Labels: sel, Scan: true, Limit: 3},
		{Conditions: []query.Condition{query.Has("rank"), query.Where("{.metadata.annotations.note}", query.Equal, "n1")}, Limit: 2},
	} {
		mg, err := s52Page(ctx, mws, q)
		require.NoError(t, err)
		cg, err := s52Page(ctx, cws, q)
		require.NoError(t, err)
		assert.Equal(t, cg, mg)
		if q.Labels != nil {
			assert.Equal(t, bySel, sorted(mg))
		} else {
			assert.Equal(t, byWhere, sorted(mg))
		}
	}

	cp.DeleteCRD(t, crd.Name)
	gvrs = gvrs[:2]
	want := truth(func(o metav1.Object) bool { return o.GetLabels()["team"] == "a" })
	for _, ws := range []interface {
		Count(context.Context, query.Query) (int, error)
	}{mws, cws} {
		testenv.Eventually(t, 30*time.Second, func() bool {
			n, err := ws.Count(ctx, cases[0].q)
			return err == nil && n == len(want)
		}, "count after the CRD's deletion")
	}
	mg, err := s52Page(ctx, mws, cases[0].q)
	require.NoError(t, err)
	cg, err := s52Page(ctx, cws, cases[0].q)
	require.NoError(t, err)
	assert.Equal(t, want, sorted(mg))
	assert.Equal(t, cg, mg)
}
