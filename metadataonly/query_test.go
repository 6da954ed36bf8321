package metadataonly_test

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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

const follow = 20 * time.Second

// run queries inf and returns the keys, failing the test on an error.
func run(t *testing.T, inf *metadataonly.Informer, q query.Query) []string {
	t.Helper()
	return testsupport.QueryKeys(t, inf, q)
}

// eventuallyKeys waits until q returns want.
func eventuallyKeys(t *testing.T, inf *metadataonly.Informer, q query.Query, want ...string) {
	t.Helper()
	testsupport.EventuallyQueryKeys(t, follow, inf, q, want...)
}

func conds(cs ...query.Condition) query.Query { return query.Query{Conditions: cs} }

func labeled(name string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// Metadata-only objects: a JSONPath index on a label and the built-in label-key index follow
// adds, updates that move an object between values, and deletes; namespace scope reads one
// namespace; a label selector combines with the indexed conditions.
func TestMetadataQueryFollowsLabels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, other := cp.Namespace(t), cp.Namespace(t)
	// A color of this run only: ConfigMaps of other runs (-count) stay in their namespaces.
	red := "red-" + ns
	cms := cp.Clientset(t).CoreV1()
	for _, c := range []struct {
		ns string
		cm *corev1.ConfigMap
	}{
		{ns, labeled("a", map[string]string{"color": red, "tier": "web"})},
		{ns, labeled("b", map[string]string{"color": "blue", "tier": "db"})},
		{other, labeled("c", map[string]string{"color": red, "tier": "web"})},
	} {
		_, err := cms.ConfigMaps(c.ns).Create(ctx, c.cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, metadataonly.Options{})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"), "before sync")
	waitSync(t, inf)
	require.NoError(t, inf.AddBuiltinIndex(indexfuncs.IndexLabelKey), "after sync")

	isRed := conds(query.Eq("color", red))
	inNS := func(q query.Query) query.Query { q.Namespace = ns; return q }
	both := []string{ns + "/a", other + "/c"}
	sort.Strings(both)
	assert.Equal(t, both, run(t, inf, isRed))
	res, err := inf.Query(ctx, inNS(isRed))
	require.NoError(t, err)
	assert.Equal(t, []string{ns + "/a"}, testsupport.Keys(res.Items))
	assert.Equal(t, 1, res.Plan.Candidates, "namespace scope reads one namespace's entries")
	sel := isRed
	sel.Labels = labels.SelectorFromSet(labels.Set{"tier": "db"})
	assert.Empty(t, run(t, inf, sel))
	sel.Labels = labels.SelectorFromSet(labels.Set{"tier": "web"})
	assert.Equal(t, both, run(t, inf, sel))
	assert.Equal(t, []string{ns + "/a", ns + "/b"}, run(t, inf, inNS(conds(query.Eq(indexfuncs.IndexLabelKey, "tier")))))

	b, err := cms.ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{})
	require.NoError(t, err)
	b.Labels = map[string]string{"color": red}
	_, err = cms.ConfigMaps(ns).Update(ctx, b, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventuallyKeys(t, inf, inNS(isRed), ns+"/a", ns+"/b")
	eventuallyKeys(t, inf, inNS(conds(query.Eq(indexfuncs.IndexLabelKey, "tier"))), ns+"/a")
	_, err = cms.ConfigMaps(ns).Create(ctx, labeled("d", map[string]string{"color": "green"}), metav1.CreateOptions{})
	require.NoError(t, err)
	eventuallyKeys(t, inf, inNS(conds(query.Has("color"), query.NotEq("color", red))), ns+"/d")
	require.NoError(t, cms.ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}))
	eventuallyKeys(t, inf, inNS(isRed), ns+"/b")
}

// Numeric comparisons on a label of custom resources cached as metadata, paging over a set
// that changes between pages, and the index emptied when the CRD is deleted.
func TestMetadataQueryCustomResourcesPagingAndCRDRemoval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	crd := cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	dyn := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	create := func(name string, size int) {
		t.Helper()
		w := widget(group, name)
		w.SetLabels(map[string]string{"size": fmt.Sprint(size)})
		_, err := dyn.Create(ctx, w, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := 1; i <= 6; i++ {
		create(fmt.Sprint("w", i), i)
	}
	fx := start(t, nil, metadataonly.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "widgets."+group)
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	require.NoError(t, inf.AddIndex("size", "{.metadata.labels.size}"))
	assert.Equal(t, []string{ns + "/w1", ns + "/w2"}, run(t, inf, conds(query.Lt("size", "3"))))
	assert.Equal(t, []string{ns + "/w3", ns + "/w4"}, run(t, inf, conds(query.Ge("size", "3"), query.Le("size", "4"))))

	w1, err := dyn.Get(ctx, "w1", metav1.GetOptions{})
	require.NoError(t, err)
	w1.SetLabels(map[string]string{"size": "10"})
	_, err = dyn.Update(ctx, w1, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventuallyKeys(t, inf, conds(query.Gt("size", "9")), ns+"/w1")
	assert.Equal(t, []string{ns + "/w2"}, run(t, inf, conds(query.Lt("size", "3"))))

	// Pages of two: w1 w2 | (w2 deleted behind the cursor, w3 deleted ahead, w35 added) ...
	q := query.Query{Conditions: []query.Condition{query.Has("size")}, Limit: 2}
	page, err := inf.Query(ctx, q)
	require.NoError(t, err)
	got := testsupport.Keys(page.Items)
	require.NoError(t, dyn.Delete(ctx, "w2", metav1.DeleteOptions{}))
	require.NoError(t, dyn.Delete(ctx, "w3", metav1.DeleteOptions{}))
	create("w35", 35)
	eventuallyKeys(t, inf, conds(query.Has("size")), ns+"/w1", ns+"/w35", ns+"/w4", ns+"/w5", ns+"/w6")
	for q.Continue = page.Continue; q.Continue != ""; q.Continue = page.Continue {
		page, err = inf.Query(ctx, q)
		require.NoError(t, err)
		got = append(got, testsupport.Keys(page.Items)...)
	}
	assert.Equal(t, []string{ns + "/w1", ns + "/w2", ns + "/w35", ns + "/w4", ns + "/w5", ns + "/w6"}, got)

	cp.DeleteCRD(t, crd.Name)
	testenv.Eventually(t, follow, func() bool { return inf.Status().Phase == informer.PhaseParked }, "parked")
	st, err := inf.IndexStats("size")
	require.NoError(t, err)
	assert.Zero(t, st.Entries, "the index is empty")
	assert.Empty(t, run(t, inf, conds(query.Has("size"))))
}

func ownerRef(o metav1.Object, apiVersion, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID()}
}

// The garbage-collector use case: a metadata-only factory watches every resource of
// interest in a namespace through WatchAll. A ConfigMap owned by a custom resource and a
// Secret owned by that ConfigMap are found as dependents; deleting the custom resource (no
// garbage collector runs here) leaves the ConfigMap an orphan and the Secret not; an owner
// whose resource is not cached is unknown, never an orphan.
func TestMetadataDependentsAndOrphansWithWatchAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	ws := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	cr, err := ws.Create(ctx, widget(group, "owner"), metav1.CreateOptions{})
	require.NoError(t, err)
	core := cp.Clientset(t).CoreV1()
	cm := labeled("owned", nil)
	cm.OwnerReferences = []metav1.OwnerReference{ownerRef(cr, group+"/v1", "Widget")}
	cm, err = core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{ownerRef(cm, "v1", "ConfigMap")}}}
	_, err = core.Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
	require.NoError(t, err)
	stray := labeled("stray", nil)
	stray.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: types.UID("0b5e3c1e-0000-4000-8000-000000000002")}}
	_, err = core.ConfigMaps(ns).Create(ctx, stray, metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, metadataonly.Options{Namespace: ns, OwnerIndex: true})
	wa, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"configmaps", "secrets", "widgets." + group}})
	require.NoError(t, err)
	defer wa.Stop()
	require.Len(t, wa.Informers(), 3)
	wctx, cancel := context.WithTimeout(ctx, follow)
	defer cancel()
	require.NoError(t, wa.WaitForSync(wctx))

	names := func(ds []informer.Dependent[metadataonly.Object]) []string {
		out := []string{}
		for _, d := range ds {
			out = append(out, d.Resource.GVR.Resource+" "+d.Object.Namespace+"/"+d.Object.Name)
		}
		return out
	}
	ds, err := fx.f.Dependents(ctx, cr.GetUID())
	require.NoError(t, err)
	assert.Equal(t, []string{"configmaps " + ns + "/owned"}, names(ds))
	ds, err = fx.f.Dependents(ctx, cm.UID)
	require.NoError(t, err)
	assert.Equal(t, []string{"secrets " + ns + "/owned"}, names(ds))

	orphans, err := fx.f.Orphans(ctx)
	require.NoError(t, err)
	require.Len(t, orphans, 1, "%v", orphans)
	assert.Equal(t, "stray", orphans[0].Object.Name)
	assert.False(t, orphans[0].Orphaned())
	require.Len(t, orphans[0].Unknown, 1)
	assert.True(t, errors.Is(orphans[0].Unknown[0].Err, informer.ErrOwnerNotCached), "%v", orphans[0].Unknown[0].Err)

	require.NoError(t, ws.Delete(ctx, "owner", metav1.DeleteOptions{}))
	var states map[string]bool
	testenv.EventuallyWith(t, follow, func() bool {
		orphans, err = fx.f.Orphans(ctx)
		require.NoError(t, err)
		states = map[string]bool{}
		for _, o := range orphans {
			states[o.Resource.GVR.Resource+"/"+o.Object.Name] = o.Orphaned()
		}
		return len(states) == 2 && states["configmaps/owned"]
	}, func() string { return fmt.Sprintf("orphans: %v", states) })
	assert.Equal(t, map[string]bool{"configmaps/owned": true, "configmaps/stray": false}, states, "the Secret's owner still exists")
	ds, err = fx.f.Dependents(ctx, cr.GetUID())
	require.NoError(t, err)
	assert.Equal(t, []string{"configmaps " + ns + "/owned"}, names(ds), "dependents of a deleted owner are still found")
}

// The server sends metadata as protobuf without kind and apiVersion: objects listed and
// watched carry the resource's anyway, so that a JSONPath index on {.kind} or {.apiVersion}
// reads them (TestJSONListedObjectsHaveTheirKind: as JSON from a server without protobuf).
func TestMetadataObjectsOfBuiltinResourcesHaveTheirKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, labeled("listed", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	fx := start(t, nil, metadataonly.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("kind", "{.kind}"))
	require.NoError(t, inf.AddIndex("apiVersion", "{.apiVersion}"))
	waitSync(t, inf)
	_, err = cms.Create(ctx, labeled("watched", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	both := []string{ns + "/listed", ns + "/watched"}
	eventuallyKeys(t, inf, conds(query.Eq("kind", "ConfigMap")), both...)
	assert.Equal(t, both, run(t, inf, conds(query.Eq("apiVersion", "v1"))))
	for _, o := range must(inf.List(nil)) {
		assert.Equal(t, corev1.SchemeGroupVersion.WithKind("ConfigMap"), o.GroupVersionKind(), o.GetName())
	}
}
