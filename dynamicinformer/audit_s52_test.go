package dynamicinformer_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/query"
)

// s52Mode is a storage mode of this front end.
type s52Mode struct {
	name string
	new  func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error)
}

func (m s52Mode) start(t *testing.T, cfg *rest.Config, opts dynamicinformer.Options) *dynamicinformer.Factory {
	return m.startRec(t, cfg, opts).f
}

// startRec starts a factory of the mode whose requests are recorded.
func (m s52Mode) startRec(t *testing.T, cfg *rest.Config, opts dynamicinformer.Options) *fixture {
	t.Helper()
	if cfg == nil {
		cfg = cp.AdminConfig()
	}
	f, rec, log := testsupport.StartFactory(t, cfg, opts, m.new)
	return &fixture{f: f, rec: rec, log: log}
}

var s52Modes = []s52Mode{
	{"unstructured", dynamicinformer.NewFactory},
	{"compact", func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	}},
	{"compact-compressed", func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{Compress: true})
	}},
}

// s52Truth lists every resource of gvrs in ns afresh and returns "resource ns/name" of the
// objects keep accepts, sorted.
func s52Truth(t *testing.T, ns string, gvrs []schema.GroupVersionResource, keep func(u *unstructured.Unstructured) bool) []string {
	t.Helper()
	out := []string{}
	for _, gvr := range gvrs {
		l, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			continue // a resource not served (a CRD deleted) has no objects
		}
		for i := range l.Items {
			if keep(&l.Items[i]) {
				out = append(out, gvr.Resource+"."+gvr.Group+" "+ns+"/"+l.Items[i].GetName())
			}
		}
	}
	slices.Sort(out)
	return out
}

// s52Keys pages through q on ws and returns "resource ns/name" of each result, sorted, and
// the results' versions by resource.
func s52Keys(ctx context.Context, ws *informer.WatchAll[dynamicinformer.Object], q query.Query) ([]string, error) {
	out := []string{}
	for {
		res, err := ws.QueryItems(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			gvr := it.Resource.GVR
			out = append(out, gvr.Resource+"."+gvr.Group+" "+it.Namespace()+"/"+it.Name())
		}
		if res.Continue == "" {
			break
		}
		q.Continue = res.Continue
	}
	slices.Sort(out)
	return out, nil
}

func s52Label(key, value string) func(u *unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool { return u.GetLabels()[key] == value }
}

func s52Widget(group, version, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	}}
	u.SetLabels(labels)
	return u
}

// s52Widgets is a Widget CRD in a group of its own, served at v1, and widgets w0, w1, ...
// in a namespace of their own, labelled team=a.
type s52Widgets struct {
	ns, group string
	crd       *apiextv1.CustomResourceDefinition
	v1, v2    schema.GroupVersionResource
}

// s52NewWidgets installs the CRD and creates n widgets, widget i of spec.size size(i).
func s52NewWidgets(t *testing.T, n int, size func(i int) int64) s52Widgets {
	t.Helper()
	w := s52Widgets{ns: cp.Namespace(t), group: testenv.UniqueName(t) + ".kindex.test"}
	w.crd = cp.InstallCRD(t, testenv.NewCRD(w.group, "Widget", "widgets"))
	w.v1 = schema.GroupVersionResource{Group: w.group, Version: "v1", Resource: "widgets"}
	w.v2 = schema.GroupVersionResource{Group: w.group, Version: "v2", Resource: "widgets"}
	for i := range n {
		_, err := cp.Dynamic(t).Resource(w.v1).Namespace(w.ns).Create(context.Background(), s52Widget(w.group, "v1",
			fmt.Sprint("w", i), map[string]string{"team": "a"}, map[string]any{"size": size(i)}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return w
}

// set starts a factory of mode on the widgets' namespace, whose requests are recorded, and a
// watch-all set of the widgets' group with the named indexes ("team", "size"), synced; the
// set stops with the test.
func (w s52Widgets) set(t *testing.T, mode s52Mode, indexes ...string) (*informer.WatchAll[dynamicinformer.Object], *fixture) {
	t.Helper()
	ctx := context.Background()
	fx := mode.startRec(t, nil, dynamicinformer.Options{Namespace: w.ns})
	ws, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{w.group}})
	require.NoError(t, err)
	t.Cleanup(ws.Stop)
	paths := map[string]string{"team": "{.metadata.labels.team}", "size": "{.spec.size}"}
	for _, name := range indexes {
		require.NoError(t, ws.AddIndex(name, paths[name]))
	}
	require.NoError(t, ws.WaitForSync(ctx))
	return ws, fx
}

// addV2 adds v2 to the CRD as its storage version; v1 stays served if stillV1.
func (w s52Widgets) addV2(t *testing.T, stillV1 bool) {
	t.Helper()
	ctx := context.Background()
	ext := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	cur, err := ext.Get(ctx, w.crd.Name, metav1.GetOptions{})
	require.NoError(t, err)
	v2 := *cur.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage, v2.Served = "v2", true, true
	cur.Spec.Versions[0].Storage, cur.Spec.Versions[0].Served = false, stillV1
	cur.Spec.Versions = append(cur.Spec.Versions, v2)
	_, err = ext.Update(ctx, cur, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// An index added to a watch-all set before a CRD exists applies to its objects once it
// appears; one added after objects exist covers them; a removed index fails queries with
// ErrIndexNotFound and can be added again. A deleted CRD's objects leave the results and
// counts; a CRD created again with another version is found with its new objects only.
// Expectations come from a fresh LIST of the server.
func TestAuditS52WatchAllIndexFollowsCRDLifecycle(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			group := testenv.UniqueName(t) + ".kindex.test"
			cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
			f := mode.start(t, nil, dynamicinformer.Options{Namespace: ns})
			ws, err := f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}, IncludeResources: []string{"configmaps"}})
			require.NoError(t, err)
			defer ws.Stop()
			require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
			require.NoError(t, ws.AddIndex("secret", "{.spec.secretRef.name}"))

			cs := cp.Clientset(t).CoreV1().ConfigMaps(ns)
			for i, team := range []string{"a", "b", "a"} {
				_, err := cs.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm", i), Labels: map[string]string{"team": team}}}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			crd := cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
			widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
			dyn := cp.Dynamic(t).Resource(widgets).Namespace(ns)
			for i, team := range []string{"a", "b", "a", "c"} {
				secret := []string{"db-creds", "db-creds", "other", "db-creds"}[i]
				_, err := dyn.Create(ctx, s52Widget(group, "v1", fmt.Sprint("w", i), map[string]string{"team": team},
					map[string]any{"size": int64(i), "secretRef": map[string]any{"name": secret}}), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			gvrs := []schema.GroupVersionResource{cms, widgets}
			teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, Limit: 2}
			want := s52Truth(t, ns, gvrs, s52Label("team", "a"))
			require.Len(t, want, 4)
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				got, err := s52Keys(ctx, ws, teamA)
				return err == nil && slices.Equal(got, want)
			}, func() string {
				got, err := s52Keys(ctx, ws, teamA)
				return fmt.Sprintf("team=a: %v %v, want %v", got, err, want)
			})
			n, err := ws.Count(ctx, teamA)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)

			wantSecret := s52Truth(t, ns, gvrs, func(u *unstructured.Unstructured) bool {
				v, _, _ := unstructured.NestedString(u.Object, "spec", "secretRef", "name")
				return v == "db-creds"
			})
			got, err := s52Keys(ctx, ws, query.Query{Conditions: []query.Condition{query.Eq("secret", "db-creds")}})
			require.NoError(t, err)
			assert.Equal(t, wantSecret, got)

			// An index added after the objects exist covers them.
			require.NoError(t, ws.AddIndex("size", "{.spec.size}"))
			hasSize := query.Query{Conditions: []query.Condition{query.Has("size")}}
			wantSize := s52Truth(t, ns, gvrs, func(u *unstructured.Unstructured) bool {
				_, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "size")
				return ok
			})
			got, err = s52Keys(ctx, ws, hasSize)
			require.NoError(t, err)
			assert.Equal(t, wantSize, got)
			got, err = s52Keys(ctx, ws, query.Query{Conditions: []query.Condition{query.Ge("size", "2"), query.Eq("team", "a")}})
			require.NoError(t, err)
			assert.Equal(t, s52Truth(t, ns, gvrs, func(u *unstructured.Unstructured) bool {
				v, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
				return v >= 2 && u.GetLabels()["team"] == "a"
			}), got)

			// Removed: a query by it fails with ErrIndexNotFound; added again, it answers.
			require.NoError(t, ws.RemoveIndex("size"))
			_, err = ws.QueryItems(ctx, hasSize)
			assert.ErrorIs(t, err, informer.ErrIndexNotFound)
			_, err = ws.Count(ctx, hasSize)
			assert.ErrorIs(t, err, informer.ErrIndexNotFound)
			assert.ErrorIs(t, ws.RemoveIndex("size"), informer.ErrIndexNotFound)
			require.NoError(t, ws.AddIndex("size", "{.spec.size}"))
			got, err = s52Keys(ctx, ws, hasSize)
			require.NoError(t, err)
			assert.Equal(t, wantSize, got)

			// The CRD deleted: its objects leave the results and the counts.
			cp.DeleteCRD(t, crd.Name)
			want = s52Truth(t, ns, []schema.GroupVersionResource{cms}, s52Label("team", "a"))
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				got, err := s52Keys(ctx, ws, teamA)
				n, cerr := ws.Count(ctx, teamA)
				return err == nil && cerr == nil && slices.Equal(got, want) && n == len(want)
			}, func() string {
				got, err := s52Keys(ctx, ws, teamA)
				return fmt.Sprintf("after delete: %v %v, want %v", got, err, want)
			})
			got, err = s52Keys(ctx, ws, hasSize)
			require.NoError(t, err)
			assert.Empty(t, got)

			// Created again with another version: the new objects only, of the new version.
			crd2 := testenv.NewCRD(group, "Widget", "widgets", "v2")
			cp.InstallCRD(t, crd2)
			widgets2 := schema.GroupVersionResource{Group: group, Version: "v2", Resource: "widgets"}
			_, err = cp.Dynamic(t).Resource(widgets2).Namespace(ns).Create(ctx, s52Widget(group, "v2", "n0", map[string]string{"team": "a"},
				map[string]any{"size": "9"}), metav1.CreateOptions{})
			require.NoError(t, err)
			want = s52Truth(t, ns, []schema.GroupVersionResource{cms, widgets2}, s52Label("team", "a"))
			require.Len(t, want, 3)
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				got, err := s52Keys(ctx, ws, teamA)
				return err == nil && slices.Equal(got, want)
			}, func() string {
				got, err := s52Keys(ctx, ws, teamA)
				return fmt.Sprintf("recreated: %v %v, want %v", got, err, want)
			})
			res, err := ws.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Has("size")}})
			require.NoError(t, err)
			require.Len(t, res.Items, 1)
			assert.Equal(t, widgets2, res.Items[0].Resource.GVR)
			n, err = ws.Count(ctx, teamA)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)
		})
	}
}

// A CRD whose storage version moves to v2, v1 no longer served: the set's results are never
// duplicated across versions, and end in the new version with the server's objects.
func TestAuditS52WatchAllServedVersionChangeNoDuplicates(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			w := s52NewWidgets(t, 5, func(i int) int64 { return int64(i) })
			ns, group, crd, v1 := w.ns, w.group, w.crd, w.v1
			ws, _ := w.set(t, mode, "team")
			teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, Limit: 2}
			want := s52Truth(t, ns, []schema.GroupVersionResource{v1}, s52Label("team", "a"))
			got, err := s52Keys(ctx, ws, teamA)
			require.NoError(t, err)
			require.Equal(t, want, got)

			// Add v2 as storage; v1 is no longer served below.
			w.addV2(t, true)
			ext := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
			v2 := w.v2
			// Poll while the set moves: never a duplicate, never a key the server lacks.
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				got, err := s52Keys(ctx, ws, teamA)
				if err == nil {
					require.Equal(t, slices.Compact(slices.Clone(got)), got, "duplicates")
					n, cerr := ws.Count(ctx, teamA)
					if cerr == nil {
						require.LessOrEqual(t, n, len(want), "count %d over %d", n, len(want))
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			cur, err := ext.Get(ctx, crd.Name, metav1.GetOptions{})
			require.NoError(t, err)
			cur.Spec.Versions[0].Served = false
			_, err = ext.Update(ctx, cur, metav1.UpdateOptions{})
			require.NoError(t, err)
			_, err = cp.Dynamic(t).Resource(v2).Namespace(ns).Create(ctx, s52Widget(group, "v2", "x",
				map[string]string{"team": "a"}, map[string]any{"size": int64(9)}), metav1.CreateOptions{})
			require.NoError(t, err)
			want = s52Truth(t, ns, []schema.GroupVersionResource{v2}, s52Label("team", "a"))
			require.Len(t, want, 6)
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				res, err := ws.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("team", "a")}})
				if err != nil || len(res.Items) != len(want) {
					return false
				}
				for _, it := range res.Items {
					if it.Resource.GVR != v2 {
						return false
					}
				}
				got, err := s52Keys(ctx, ws, teamA)
				return err == nil && slices.Equal(got, want)
			}, func() string {
				got, err := s52Keys(ctx, ws, teamA)
				return fmt.Sprintf("moved: %v %v, want %v", got, err, want)
			})
			n, err := ws.Count(ctx, teamA)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)
			assert.Len(t, ws.Informers(), 1)
		})
	}
}

var _ = apiextv1.Established

// s52Obj is what the model of a query needs of an object.
type s52Obj struct {
	key    string
	labels map[string]string
	size   *int64
	hasMap bool // a map or list in the "shape" index
}

func s52Objects(t *testing.T, ns string, gvrs []schema.GroupVersionResource) []s52Obj {
	t.Helper()
	var out []s52Obj
	for _, gvr := range gvrs {
		l, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		for _, u := range l.Items {
			o := s52Obj{key: gvr.Resource + "." + gvr.Group + " " + ns + "/" + u.GetName(), labels: u.GetLabels()}
			if v, ok, _ := unstructured.NestedInt64(u.Object, "spec", "size"); ok {
				o.size = &v
			}
			if _, ok := u.Object["data"]; ok {
				o.hasMap = true
			}
			if _, ok, _ := unstructured.NestedSlice(u.Object, "spec", "ports"); ok {
				o.hasMap = true
			}
			out = append(out, o)
		}
	}
	return out
}

// Across resources: OR groups, prefix, existence on map and list values, sort keys, and
// paging with Limit and Continue while objects change (objects present throughout are
// neither repeated nor skipped); a token of another query or another set is refused;
// counts agree with a fresh LIST.
func TestAuditS52WatchAllQueriesAcrossResources(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			group := testenv.UniqueName(t) + ".kindex.test"
			cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
			widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
			cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
			gvrs := []schema.GroupVersionResource{cms, widgets}
			dyn := cp.Dynamic(t).Resource(widgets).Namespace(ns)
			cs := cp.Clientset(t).CoreV1().ConfigMaps(ns)
			teams := []string{"a", "b", "c"}
			tiers := []string{"gold-1", "gold-2", "silver", "bronze"}
			mkWidget := func(i int) {
				spec := map[string]any{"size": int64((i * 7) % 11)}
				if i%2 == 0 {
					spec["ports"] = []any{int64(80), int64(443)}
				}
				_, err := dyn.Create(ctx, s52Widget(group, "v1", fmt.Sprintf("w%02d", i),
					map[string]string{"team": teams[i%3], "tier": tiers[i%4]}, spec), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			mkCM := func(i int) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%02d", i),
					Labels: map[string]string{"team": teams[(i+1)%3], "tier": tiers[(i+2)%4]}}}
				if i%3 == 0 {
					cm.Data = map[string]string{"k": "v"}
				}
				_, err := cs.Create(ctx, cm, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			for i := range 12 {
				mkWidget(i)
				mkCM(i)
			}
			f := mode.start(t, nil, dynamicinformer.Options{Namespace: ns})
			ws, err := f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}, IncludeResources: []string{"configmaps"}})
			require.NoError(t, err)
			defer ws.Stop()
			for name, expr := range map[string]string{"team": "{.metadata.labels.team}", "tier": "{.metadata.labels.tier}",
				"size": "{.spec.size}", "shape": "{.spec.ports}", "data": "{.data}"} {
				require.NoError(t, ws.AddIndex(name, expr))
			}
			require.NoError(t, ws.WaitForSync(ctx))

			type tc struct {
				name string
				q    query.Query
				keep func(o s52Obj) bool
			}
			cases := []tc{
				{"or", query.Query{AnyOf: [][]query.Condition{{query.Eq("team", "a")}, {query.HasPrefix("tier", "gold")}}},
					func(o s52Obj) bool {
						return o.labels["team"] == "a" || len(o.labels["tier"]) >= 4 && o.labels["tier"][:4] == "gold"
					}},
				{"prefix-and", query.Query{Conditions: []query.Condition{query.HasPrefix("tier", "gold-"), query.NotEq("team", "b")}},
					func(o s52Obj) bool {
						return len(o.labels["tier"]) >= 5 && o.labels["tier"][:5] == "gold-" && o.labels["team"] != "b"
					}},
				{"exists-list", query.Query{Conditions: []query.Condition{query.Has("shape")}},
					func(o s52Obj) bool { return o.hasMap && o.size != nil }},
				{"exists-map", query.Query{Conditions: []query.Condition{query.Has("data")}},
					func(o s52Obj) bool { return o.hasMap && o.size == nil }},
				{"numeric", query.Query{Conditions: []query.Condition{query.Gt("size", "4")}, AnyOf: [][]query.Condition{{query.Eq("team", "a")}, {query.Eq("team", "c")}}},
					func(o s52Obj) bool {
						return o.size != nil && *o.size > 4 && (o.labels["team"] == "a" || o.labels["team"] == "c")
					}},
			}
			for _, c := range cases {
				want := []string{}
				for _, o := range s52Objects(t, ns, gvrs) {
					if c.keep(o) {
						want = append(want, o.key)
					}
				}
				slices.Sort(want)
				for _, limit := range []int{0, 1, 3} {
					q := c.q
					q.Limit = limit
					got, err := s52Keys(ctx, ws, q)
					require.NoError(t, err, c.name)
					assert.Equal(t, want, got, "%s limit %d", c.name, limit)
				}
				n, err := ws.Count(ctx, c.q)
				require.NoError(t, err, c.name)
				assert.Equal(t, len(want), n, "count %s", c.name)
			}

			// Sorted by size (descending), pages of 3, while objects change: those present
			// throughout are each seen once.
			q := query.Query{Conditions: []query.Condition{query.Has("team")}, SortBy: "size", Descending: true, Limit: 3}
			before := s52Objects(t, ns, gvrs)
			page, err := ws.QueryItems(ctx, q)
			require.NoError(t, err)
			require.NotEmpty(t, page.Continue)
			seen := map[string]int{}
			var order []string
			add := func(res query.Result[informer.ResourceItem[dynamicinformer.Object]]) {
				for _, it := range res.Items {
					k := it.Resource.GVR.Resource + "." + it.Resource.GVR.Group + " " + it.Namespace() + "/" + it.Name()
					seen[k]++
					order = append(order, k)
				}
			}
			add(page)
			// Tokens of another query and of another set are refused.
			other := query.Query{Conditions: []query.Condition{query.Has("tier")}, SortBy: "size", Descending: true, Limit: 3, Continue: page.Continue}
			_, err = ws.QueryItems(ctx, other)
			assert.ErrorIs(t, err, informer.ErrInvalidContinue)
			ws2, err := f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}})
			require.NoError(t, err)
			defer ws2.Stop()
			require.NoError(t, ws2.AddIndex("team", "{.metadata.labels.team}"))
			require.NoError(t, ws2.AddIndex("size", "{.spec.size}"))
			require.NoError(t, ws2.WaitForSync(ctx))
			q2 := q
			q2.Continue = page.Continue
			_, err = ws2.QueryItems(ctx, q2)
			assert.ErrorIs(t, err, informer.ErrInvalidContinue)

			deleted := map[string]bool{}
			step := 0
			for q.Continue = page.Continue; q.Continue != ""; q.Continue = page.Continue {
				// Between pages: delete one object of each resource not yet seen, add one.
				step++
				name := fmt.Sprintf("w%02d", 12-step)
				if step <= 3 {
					require.NoError(t, dyn.Delete(ctx, name, metav1.DeleteOptions{}))
					deleted[widgets.Resource+"."+widgets.Group+" "+ns+"/"+name] = true
					cname := fmt.Sprintf("c%02d", step-1)
					require.NoError(t, cs.Delete(ctx, cname, metav1.DeleteOptions{}))
					deleted[cms.Resource+"."+cms.Group+" "+ns+"/"+cname] = true
					mkWidget(20 + step)
					mkCM(20 + step)
				}
				page, err = ws.QueryItems(ctx, q)
				require.NoError(t, err)
				add(page)
			}
			for _, o := range before {
				if deleted[o.key] {
					assert.LessOrEqual(t, seen[o.key], 1, "%s", o.key)
					continue
				}
				assert.Equal(t, 1, seen[o.key], "present throughout: %s (order %v)", o.key, order)
			}
			for k, n := range seen {
				assert.Equal(t, 1, n, "repeated: %s", k)
			}

			// Counts agree with a fresh LIST once the set has caught up.
			testenv.EventuallyWith(t, 20*time.Second, func() bool {
				for _, c := range cases {
					want := 0
					for _, o := range s52Objects(t, ns, gvrs) {
						if c.keep(o) {
							want++
						}
					}
					n, err := ws.Count(ctx, c.q)
					if err != nil || n != want {
						return false
					}
				}
				return true
			}, func() string { return "counts disagree with a fresh LIST" })
		})
	}
}

// A user allowed every resource of the set but one: the set parks that one (its status and
// WaitForSyncOrPark say Forbidden), and queries and counts still answer for the others, as
// a fresh LIST as the admin says.
func TestAuditS52WatchAllForbiddenMemberParks(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			group := testenv.UniqueName(t) + ".kindex.test"
			cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
			widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
			cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
			secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
			for i := range 3 {
				lbl := map[string]string{"team": []string{"a", "b"}[i%2]}
				_, err := cp.Dynamic(t).Resource(widgets).Namespace(ns).Create(ctx, s52Widget(group, "v1", fmt.Sprint("w", i), lbl, map[string]any{}), metav1.CreateOptions{})
				require.NoError(t, err)
				_, err = cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i), Labels: lbl}}, metav1.CreateOptions{})
				require.NoError(t, err)
				_, err = cp.Clientset(t).CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("s", i), Labels: lbl}}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			user, cfg, err := cp.NewUser()
			require.NoError(t, err)
			cp.Grant(t, user, ns,
				rule("configmaps", "get", "list", "watch"),
				rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}})
			fx := mode.startRec(t, cfg, dynamicinformer.Options{Namespace: ns})
			ws, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}, IncludeResources: []string{"configmaps", "secrets"}})
			require.NoError(t, err)
			defer ws.Stop()
			require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			err = ws.WaitForSyncOrPark(wctx)
			var se *informer.SyncError
			require.ErrorAs(t, err, &se)
			assert.ErrorIs(t, err, informer.ErrParked)
			assert.Equal(t, map[string]informer.Reason{"secrets": informer.ReasonForbidden}, se.Reasons())
			inf, ok := ws.Informer(secrets.GroupResource())
			require.True(t, ok)
			assert.Equal(t, informer.ReasonForbidden, inf.Status().Reason)
			assert.Equal(t, informer.PhaseParked, inf.Status().Phase)

			teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, Limit: 1}
			want := s52Truth(t, ns, []schema.GroupVersionResource{cms, widgets}, s52Label("team", "a"))
			require.Len(t, want, 4)
			got, err := s52Keys(ctx, ws, teamA)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			n, err := ws.Count(ctx, teamA)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)

			// Parked, it does not retry the list in a loop.
			path := "/api/v1/namespaces/" + ns + "/secrets"
			lists, _ := fx.rec.Count(path)
			assert.Never(t, func() bool { l, _ := fx.rec.Count(path); return l > lists+1 }, 3*time.Second, 100*time.Millisecond,
				"lists of the forbidden resource")

			// Granted: it joins the answers.
			cp.Grant(t, user, ns, rule("secrets", "get", "list", "watch"))
			want = s52Truth(t, ns, []schema.GroupVersionResource{cms, widgets, secrets}, s52Label("team", "a"))
			require.Len(t, want, 6)
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				got, err := s52Keys(ctx, ws, teamA)
				return err == nil && slices.Equal(got, want)
			}, func() string {
				got, err := s52Keys(ctx, ws, teamA)
				return fmt.Sprintf("granted: %v %v, want %v", got, err, want)
			})
			n, err = ws.Count(ctx, teamA)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)
		})
	}
}

// Paging a set across a CRD's move to another version (v2 stored and served, v1 no longer
// served) between pages: the objects present throughout are each seen once, those of the
// later pages named with the new version. A deleted CRD's member leaves the set and sends no
// more requests for it.
func TestAuditS52WatchAllPagingAcrossVersionMoveAndCRDGone(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			w := s52NewWidgets(t, 9, func(i int) int64 { return int64(9 - i) })
			ns, group, crd, v2 := w.ns, w.group, w.crd, w.v2
			ws, fx := w.set(t, mode, "team", "size")
			for _, sortBy := range []string{"", "size"} {
				q := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, SortBy: sortBy, Limit: 4}
				page, err := ws.QueryItems(ctx, q)
				require.NoError(t, err)
				require.NotEmpty(t, page.Continue)
				seen := map[string]int{}
				for _, it := range page.Items {
					seen[it.Name()]++
				}
				if sortBy == "" {
					w.addV2(t, false)
					testenv.Eventually(t, 30*time.Second, func() bool {
						inf, ok := ws.Informer(v2.GroupResource())
						return ok && inf.Status().Key.GVR == v2 && inf.HasSynced()
					}, "moved to v2")
				}
				for q.Continue = page.Continue; q.Continue != ""; q.Continue = page.Continue {
					page, err = ws.QueryItems(ctx, q)
					require.NoError(t, err, "sort %q", sortBy)
					for _, it := range page.Items {
						seen[it.Name()]++
						assert.Equal(t, v2, it.Resource.GVR)
					}
				}
				want := map[string]int{}
				for _, n := range s52Truth(t, ns, []schema.GroupVersionResource{v2}, s52Label("team", "a")) {
					want[n[strings.LastIndex(n, "/")+1:]] = 1
				}
				assert.Equal(t, want, seen, "sort %q", sortBy)
			}

			cp.DeleteCRD(t, crd.Name)
			testenv.Eventually(t, 30*time.Second, func() bool {
				_, ok := ws.Informer(v2.GroupResource())
				return !ok
			}, "left the set")
			n, err := ws.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("team", "a")}})
			require.NoError(t, err)
			assert.Zero(t, n)
			path := "/apis/" + group + "/"
			before := len(fx.rec.Requests(path))
			assert.Never(t, func() bool { return len(fx.rec.Requests(path)) > before+1 }, 3*time.Second, 100*time.Millisecond,
				"requests for a deleted CRD's resource")
		})
	}
}

// A CRD deleted and created again at once, before discovery need notice, at the same version
// and then as a cluster-scoped one: the set's results and counts hold the new objects only,
// as a fresh LIST says, named with the new resource.
func TestAuditS52WatchAllCRDRecreatedQuickly(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			ns := cp.Namespace(t)
			group := testenv.UniqueName(t) + ".kindex.test"
			team := "t-" + ns
			crd := cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
			gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
			for i := range 4 {
				_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, s52Widget(group, "v1", fmt.Sprint("old", i),
					map[string]string{"team": team}, map[string]any{}), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			f := mode.start(t, nil, dynamicinformer.Options{})
			ws, err := f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}})
			require.NoError(t, err)
			defer ws.Stop()
			require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
			require.NoError(t, ws.WaitForSync(ctx))
			q := query.Query{Conditions: []query.Condition{query.Eq("team", team)}, Limit: 3}
			keys := func() []string {
				res, err := s52Keys(ctx, ws, q)
				if err != nil {
					return []string{err.Error()}
				}
				return res
			}
			truth := func(namespace string) []string {
				l, err := cp.Dynamic(t).Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: "team=" + team})
				require.NoError(t, err)
				out := []string{}
				for _, u := range l.Items {
					out = append(out, gvr.Resource+"."+gvr.Group+" "+u.GetNamespace()+"/"+u.GetName())
				}
				slices.Sort(out)
				return out
			}
			require.Equal(t, truth(ns), keys())
			ext := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
			recreate := func(next *apiextv1.CustomResourceDefinition) {
				require.NoError(t, ext.Delete(ctx, crd.Name, metav1.DeleteOptions{}))
				testenv.Eventually(t, 30*time.Second, func() bool {
					_, err := ext.Get(ctx, crd.Name, metav1.GetOptions{})
					return err != nil
				}, "CRD gone")
				_, err := ext.Create(ctx, next, metav1.CreateOptions{})
				require.NoError(t, err)
				testenv.Eventually(t, 30*time.Second, func() bool {
					_, err := cp.Dynamic(t).Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
					return err == nil
				}, "served again")
			}
			recreate(testenv.NewCRD(group, "Widget", "widgets"))
			for i := range 2 {
				u := s52Widget(group, "v1", fmt.Sprint("new", i), map[string]string{"team": team}, map[string]any{})
				testenv.Eventually(t, 10*time.Second, func() bool {
					_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, u.DeepCopy(), metav1.CreateOptions{})
					return err == nil
				}, "create")
			}
			want := truth(ns)
			require.Len(t, want, 2)
			testenv.EventuallyWith(t, 30*time.Second, func() bool { return slices.Equal(keys(), want) },
				func() string { return fmt.Sprintf("recreated: %v, want %v", keys(), want) })
			n, err := ws.Count(ctx, q)
			require.NoError(t, err)
			assert.Equal(t, 2, n)

			cluster := testenv.NewCRD(group, "Widget", "widgets")
			cluster.Spec.Scope = apiextv1.ClusterScoped
			recreate(cluster)
			u := s52Widget(group, "v1", "cl-"+ns, map[string]string{"team": team}, map[string]any{})
			testenv.Eventually(t, 10*time.Second, func() bool {
				_, err := cp.Dynamic(t).Resource(gvr).Create(ctx, u.DeepCopy(), metav1.CreateOptions{})
				return err == nil
			}, "create cluster-scoped")
			want = truth("")
			require.Len(t, want, 1)
			testenv.EventuallyWith(t, 30*time.Second, func() bool { return slices.Equal(keys(), want) },
				func() string { return fmt.Sprintf("cluster-scoped: %v, want %v", keys(), want) })
			res, err := ws.QueryItems(ctx, q)
			require.NoError(t, err)
			require.Len(t, res.Items, 1)
			assert.False(t, res.Items[0].Resource.Namespaced)
			n, err = ws.Count(ctx, q)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
		})
	}
}

// While a CRD moves to another version (v2 added and stored, v1 still served), the set's
// answers keep the resource's objects: the count of "team=a" never drops below what the
// server holds throughout. They vanished (a count of 0) until the new version's member had
// synced, for as long as its initial list took.
func TestAuditS52WatchAllQueriesDuringVersionMove(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			w := s52NewWidgets(t, 100, func(i int) int64 { return int64(i) })
			ns, v1, v2 := w.ns, w.v1, w.v2
			ws, fx := w.set(t, mode, "team")
			f := fx.f
			teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}}
			want := len(s52Truth(t, ns, []schema.GroupVersionResource{v1}, s52Label("team", "a")))
			require.Equal(t, 100, want)

			w.addV2(t, true)

			moved := func() bool {
				inf, ok := ws.Informer(v2.GroupResource())
				return ok && inf.Status().Key.GVR == v2 && inf.HasSynced()
			}
			counts := map[int]int{}
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			deadline := time.After(30 * time.Second)
			for done := false; !done; {
				done = moved() // one more round after the move
				n, err := ws.Count(ctx, teamA)
				require.NoError(t, err)
				counts[n]++
				res, err := ws.QueryItems(ctx, query.Query{Conditions: teamA.Conditions, Limit: 7})
				require.NoError(t, err)
				require.Len(t, res.Items, 7, "a page during the move")
				select {
				case <-tick.C:
				case <-deadline:
					t.Fatalf("no move to v2: %v", counts)
				}
			}
			assert.Equal(t, map[int]int{want: counts[want]}, counts, "counts of team=a seen during the move")
			res, err := ws.QueryItems(ctx, query.Query{Conditions: teamA.Conditions, Limit: 1})
			require.NoError(t, err)
			require.Len(t, res.Items, 1)
			assert.Equal(t, v2, res.Items[0].Resource.GVR, "once moved, the new version is read")
			// The old version's informer, kept for the queries during the move, is released.
			testenv.EventuallyWith(t, 10*time.Second, func() bool {
				for _, st := range f.Statuses() {
					if st.Key.GVR == v1 {
						return false
					}
				}
				return true
			}, func() string { return fmt.Sprintf("v1 informer still held: %v", f.Statuses()) })
		})
	}
}

// Paging a set while one of its CRDs is deleted between pages and another is created: the
// pages go on without error, the objects of the resources present throughout are each seen
// once; a token of a set with the same filter in a factory of another namespace is refused.
func TestAuditS52WatchAllPagingWhileMembersComeAndGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	gadgets := cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	for _, plural := range []string{"gadgets", "widgets"} {
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
		for i := range 5 {
			u := s52Widget(group, "v1", fmt.Sprint(plural[:1], i), map[string]string{"team": "a"}, map[string]any{})
			u.SetKind(map[string]string{"gadgets": "Gadget", "widgets": "Widget"}[plural])
			_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
	for i := range 5 {
		_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i),
			Labels: map[string]string{"team": "a"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	filter := discovery.Filter{IncludeGroups: []string{group}, IncludeResources: []string{"configmaps"}}
	f := s52Modes[0].start(t, nil, dynamicinformer.Options{Namespace: ns})
	ws, err := f.WatchAll(ctx, filter)
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
	require.NoError(t, ws.WaitForSync(ctx))
	q := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, Limit: 3}
	page, err := ws.QueryItems(ctx, q)
	require.NoError(t, err)
	require.NotEmpty(t, page.Continue)

	other := s52Modes[0].start(t, nil, dynamicinformer.Options{})
	ows, err := other.WatchAll(ctx, filter)
	require.NoError(t, err)
	defer ows.Stop()
	require.NoError(t, ows.AddIndex("team", "{.metadata.labels.team}"))
	oq := q
	oq.Continue = page.Continue
	_, err = ows.QueryItems(ctx, oq)
	assert.ErrorIs(t, err, informer.ErrInvalidContinue, "a token of a set over another namespace")

	seen := map[string]int{}
	add := func(res query.Result[informer.ResourceItem[dynamicinformer.Object]]) {
		for _, it := range res.Items {
			seen[it.Resource.GVR.Resource+" "+it.Name()]++
		}
	}
	add(page)
	// configmaps sort first: the first page is theirs. Gadgets go, sprockets come.
	cp.DeleteCRD(t, gadgets.Name)
	cp.InstallCRD(t, testenv.NewCRD(group, "Sprocket", "sprockets"))
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, gone := ws.Informer(schema.GroupResource{Group: group, Resource: "gadgets"})
		_, joined := ws.Informer(schema.GroupResource{Group: group, Resource: "sprockets"})
		return !gone && joined
	}, "members follow the CRDs")
	for q.Continue = page.Continue; q.Continue != ""; q.Continue = page.Continue {
		page, err = ws.QueryItems(ctx, q)
		require.NoError(t, err)
		add(page)
	}
	for i := range 5 {
		assert.Equal(t, 1, seen[fmt.Sprint("configmaps c", i)], "c%d", i)
		assert.Equal(t, 1, seen[fmt.Sprint("widgets w", i)], "w%d", i)
		assert.Zero(t, seen[fmt.Sprint("gadgets g", i)], "g%d of a deleted CRD", i)
	}
}
