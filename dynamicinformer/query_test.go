package dynamicinformer_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/query"
)

const follow = 20 * time.Second

// run queries inf and returns the keys, failing the test on an error.
func run(t *testing.T, inf *dynamicinformer.Informer, q query.Query) []string {
	t.Helper()
	return testsupport.QueryKeys(t, inf, q)
}

// eventuallyKeys waits until q returns want.
func eventuallyKeys(t *testing.T, inf *dynamicinformer.Informer, q query.Query, want ...string) {
	t.Helper()
	testsupport.EventuallyQueryKeys(t, follow, inf, q, want...)
}

func conds(cs ...query.Condition) query.Query { return query.Query{Conditions: cs} }

func configMap(name, color string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Data: map[string]string{"color": color}}
}

// A JSONPath index on ConfigMap data, registered before the informer synced (the initial
// state arrives as a watch-list stream), follows adds, updates that move an object to another
// value, and deletes; namespace scope reads only that namespace; label selectors combine.
func TestQueryConfigMapDataFollowsChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, other := cp.Namespace(t), cp.Namespace(t)
	// A color of this run only: ConfigMaps of other runs (-count) stay in their namespaces.
	red := "red-" + ns
	cms := cp.Clientset(t).CoreV1()
	web, db := map[string]string{"tier": "web"}, map[string]string{"tier": "db"}
	for _, c := range []struct {
		ns string
		cm *corev1.ConfigMap
	}{{ns, configMap("a", red, web)}, {ns, configMap("b", "blue", db)}, {other, configMap("c", red, web)}} {
		_, err := cms.ConfigMaps(c.ns).Create(ctx, c.cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, dynamicinformer.Options{})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("color", "{.data.color}"))
	waitSync(t, inf)

	isRed := conds(query.Eq("color", red))
	inNS := func(q query.Query) query.Query { q.Namespace = ns; return q }
	both := []string{ns + "/a", other + "/c"}
	sort.Strings(both)
	assert.Equal(t, both, run(t, inf, isRed), "every namespace, in (namespace, name) order")
	assert.Equal(t, []string{ns + "/a"}, run(t, inf, inNS(isRed)))
	res, err := inf.Query(ctx, inNS(isRed))
	require.NoError(t, err)
	assert.Equal(t, 1, res.Plan.Candidates, "the other namespace's red ConfigMap is never visited")
	webOnly := isRed
	webOnly.Labels = labels.SelectorFromSet(web)
	assert.Equal(t, both, run(t, inf, webOnly))
	webOnly.Labels = labels.SelectorFromSet(db)
	assert.Empty(t, run(t, inf, webOnly))

	// Update: b moves from blue to red.
	_, err = cms.ConfigMaps(ns).Update(ctx, configMap("b", red, db), metav1.UpdateOptions{})
	require.NoError(t, err)
	eventuallyKeys(t, inf, inNS(isRed), ns+"/a", ns+"/b")
	assert.Empty(t, run(t, inf, inNS(conds(query.Eq("color", "blue")))))
	// Add and delete.
	_, err = cms.ConfigMaps(ns).Create(ctx, configMap("d", "green", web), metav1.CreateOptions{})
	require.NoError(t, err)
	eventuallyKeys(t, inf, inNS(conds(query.OneOf("color", "green", "blue"))), ns+"/d")
	require.NoError(t, cms.ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}))
	eventuallyKeys(t, inf, inNS(isRed), ns+"/b")
	eventuallyKeys(t, inf, inNS(conds(query.Has("color"), query.NotEq("color", red))), ns+"/d")

	st, err := inf.IndexStats("color")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Entries, 3)
	assert.Equal(t, "{.data.color}", st.Definition)
	assert.Zero(t, st.Errors)

	// A map is present (Exists), with nothing to compare; indexed and filter forms agree.
	require.NoError(t, inf.AddIndex("data", "{.data}"))
	st, err = inf.IndexStats("data")
	require.NoError(t, err)
	assert.Zero(t, st.Errors)
	assert.Equal(t, []string{ns + "/b", ns + "/d"}, run(t, inf, inNS(conds(query.Has("data")))))
	assert.Equal(t, []string{ns + "/b", ns + "/d"}, run(t, inf, query.Query{Namespace: ns, Scan: true,
		Conditions: []query.Condition{query.Where("{.data}", query.Exists)}}))
	assert.Empty(t, run(t, inf, query.Query{Namespace: ns, Scan: true, Conditions: []query.Condition{query.HasNot("data")}}))
	assert.Equal(t, []string{ns + "/b", ns + "/d"}, run(t, inf, query.Query{Namespace: ns, Scan: true}))
}

// Numeric comparisons on a custom resource's {.spec.size} follow updates and deletes; a
// JSONPath condition filters indexed candidates or scans; when the CRD is deleted the
// informer parks, drops its objects and the index is empty, though still registered.
func TestQueryCustomResourceSizesAndCRDRemoval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, crd, gvr := installWidgets(t)
	dyn := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	for i := 1; i <= 6; i++ {
		_, err := dyn.Create(ctx, widget(group, fmt.Sprint("w", i), int64(i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "widgets."+group)
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	require.NoError(t, inf.AddIndex("size", "{.spec.size}"), "after sync: backfilled")

	assert.Equal(t, []string{ns + "/w1", ns + "/w2"}, run(t, inf, conds(query.Lt("size", "3"))))
	assert.Equal(t, []string{ns + "/w5", ns + "/w6"}, run(t, inf, conds(query.Ge("size", "5"))))
	assert.Equal(t, []string{ns + "/w3", ns + "/w4"}, run(t, inf, conds(query.Gt("size", "2"), query.Le("size", "4"))))

	w1, err := dyn.Get(ctx, "w1", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(w1.Object, int64(10), "spec", "size"))
	_, err = dyn.Update(ctx, w1, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventuallyKeys(t, inf, conds(query.Gt("size", "9")), ns+"/w1")
	assert.Equal(t, []string{ns + "/w2"}, run(t, inf, conds(query.Lt("size", "3"))))

	filtered, err := inf.Query(ctx, conds(query.Ge("size", "5"), query.Where("{.metadata.name}", query.NotEqual, "w5")))
	require.NoError(t, err)
	assert.Equal(t, []string{ns + "/w1", ns + "/w6"}, testsupport.Keys(filtered.Items))
	assert.Equal(t, "size>=5", filtered.Plan.Driver)
	_, err = inf.Query(ctx, conds(query.Where("{.spec.size}", query.GreaterThan, "4")))
	assert.ErrorIs(t, err, query.ErrScanRequired)
	scan, err := inf.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.spec.size}", query.GreaterThan, "4")}})
	require.NoError(t, err)
	assert.Equal(t, []string{ns + "/w1", ns + "/w5", ns + "/w6"}, testsupport.Keys(scan.Items))
	assert.Equal(t, "scan", scan.Plan.Driver)

	require.NoError(t, dyn.Delete(ctx, "w2", metav1.DeleteOptions{}))
	eventuallyKeys(t, inf, conds(query.Lt("size", "3")))

	cp.DeleteCRD(t, crd.Name)
	testenv.Eventually(t, follow, func() bool { return inf.Status().Phase == informer.PhaseParked }, "parked")
	st, err := inf.IndexStats("size")
	require.NoError(t, err)
	assert.Zero(t, st.Entries, "the index is empty")
	assert.Zero(t, st.Values)
	assert.Empty(t, run(t, inf, conds(query.Has("size"))))
	assert.Equal(t, []string{"size"}, inf.IndexNames(), "and still registered for a resume")
}

// Pages of a limit follow a set that changes between them: each object present throughout
// is returned exactly once, in order; an object added after the cursor appears, one deleted
// before it was reached does not.
func TestQueryPagingOverAChangingSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	for i := range 9 {
		_, err := cms.Create(ctx, configMap(fmt.Sprintf("p%d", i), "x", nil), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("color", "{.data.color}"))
	waitSync(t, inf)

	q := query.Query{Namespace: ns, Conditions: []query.Condition{query.Eq("color", "x")}, Limit: 3}
	page, err := inf.Query(ctx, q)
	require.NoError(t, err)
	got := testsupport.Keys(page.Items)
	assert.Equal(t, []string{ns + "/p0", ns + "/p1", ns + "/p2"}, got)
	require.NotEmpty(t, page.Continue)

	// Behind the cursor: p1a added, p0 deleted. Ahead: p4 deleted, p5a added.
	_, err = cms.Create(ctx, configMap("p1a", "x", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cms.Create(ctx, configMap("p5a", "x", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, cms.Delete(ctx, "p0", metav1.DeleteOptions{}))
	require.NoError(t, cms.Delete(ctx, "p4", metav1.DeleteOptions{}))
	eventuallyKeys(t, inf, query.Query{Namespace: ns, Conditions: []query.Condition{query.OneOf("color", "x")}},
		ns+"/p1", ns+"/p1a", ns+"/p2", ns+"/p3", ns+"/p5", ns+"/p5a", ns+"/p6", ns+"/p7", ns+"/p8")

	for q.Continue = page.Continue; q.Continue != ""; q.Continue = page.Continue {
		page, err = inf.Query(ctx, q)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(page.Items), 3)
		got = append(got, testsupport.Keys(page.Items)...)
	}
	assert.Equal(t, []string{ns + "/p0", ns + "/p1", ns + "/p2", ns + "/p3", ns + "/p5", ns + "/p5a", ns + "/p6", ns + "/p7", ns + "/p8"}, got)
}

func ownerRef(o metav1.Object, apiVersion, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID()}
}

func dependentKeys(ds []informer.Dependent[dynamicinformer.Object]) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Resource.GVR.Resource+" "+d.Object.GetNamespace()+"/"+d.Object.GetName())
	}
	return out
}

// The owner index on unstructured informers: a ConfigMap owned by a custom resource, a
// Secret owned by that ConfigMap. Deleting the custom resource (no garbage collector runs)
// leaves the ConfigMap an orphan; an owner whose resource is served but not cached is
// unknown, not dangling.
func TestDependentsAndOrphansUnstructured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, _, gvr := installWidgets(t)
	ws := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	cr, err := ws.Create(ctx, widget(group, "owner", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	core := cp.Clientset(t).CoreV1()
	cm := configMap("owned", "x", nil)
	cm.OwnerReferences = []metav1.OwnerReference{ownerRef(cr, group+"/v1", "Widget")}
	cm, err = core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{ownerRef(cm, "v1", "ConfigMap")}}}
	_, err = core.Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
	require.NoError(t, err)
	stray := configMap("stray", "x", nil)
	stray.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: types.UID("0b5e3c1e-0000-4000-8000-000000000001")}}
	_, err = core.ConfigMaps(ns).Create(ctx, stray, metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	for _, r := range []string{"widgets." + group, "configmaps", "secrets"} {
		inf, err := fx.f.Informer(ctx, r)
		require.NoError(t, err)
		defer inf.Release()
	}
	wctx, cancel := context.WithTimeout(ctx, follow)
	defer cancel()
	require.NoError(t, fx.f.WaitForSync(wctx))

	ds, err := fx.f.Dependents(ctx, cr.GetUID())
	require.NoError(t, err)
	assert.Equal(t, []string{"configmaps " + ns + "/owned"}, dependentKeys(ds))
	ds, err = fx.f.Dependents(ctx, cm.UID)
	require.NoError(t, err)
	assert.Equal(t, []string{"secrets " + ns + "/owned"}, dependentKeys(ds))

	orphans, err := fx.f.Orphans(ctx)
	require.NoError(t, err)
	require.Len(t, orphans, 1, "%v", orphans)
	assert.Equal(t, "stray", orphans[0].Object.GetName())
	assert.False(t, orphans[0].Orphaned(), "deployments are not cached: unknown")
	require.Len(t, orphans[0].Unknown, 1)
	assert.True(t, errors.Is(orphans[0].Unknown[0].Err, informer.ErrOwnerNotCached), "%v", orphans[0].Unknown[0].Err)

	require.NoError(t, ws.Delete(ctx, "owner", metav1.DeleteOptions{}))
	var states map[string]bool
	testenv.EventuallyWith(t, follow, func() bool {
		orphans, err = fx.f.Orphans(ctx)
		require.NoError(t, err)
		states = map[string]bool{}
		for _, o := range orphans {
			states[o.Resource.GVR.Resource+"/"+o.Object.GetName()] = o.Orphaned()
		}
		return len(states) == 2 && states["configmaps/owned"]
	}, func() string { return fmt.Sprintf("orphans: %v", states) })
	assert.Equal(t, map[string]bool{"configmaps/owned": true, "configmaps/stray": false}, states, "the Secret's owner still exists")
	for _, o := range orphans {
		if o.Object.GetName() == "owned" {
			assert.Equal(t, []metav1.OwnerReference{ownerRef(cr, group+"/v1", "Widget")}, o.Dangling)
		}
	}
}
