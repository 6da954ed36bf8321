package crcache_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/informer"
)

// TestIndexField: IndexField indexes answer MatchingFields equality as in controller-runtime
// (one or several fields, any namespace or one), for every kind of read, and they survive
// objects changing.
func TestIndexField(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns1, "a", 4, "set", ns1)
	createPods(t, cl, ns2, "b", 3, "set", ns1)
	c := newCache(t, nil, cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: mustSelector(t, "set="+ns1)}}})
	ctx := t.Context()
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "spec.restartPolicy", func(o client.Object) []string {
		return []string{string(o.(*corev1.Pod).Spec.RestartPolicy)}
	}))
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "group", func(o client.Object) []string {
		return []string{o.GetLabels()["group"]}
	}))
	fixed := []string{"a", "b", "c"}
	require.NoError(t, c.IndexField(ctx, &corev1.Namespace{}, "fixed", func(client.Object) []string { return fixed }))
	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))

	list := func(opts ...client.ListOption) []string {
		t.Helper()
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, opts...))
		return podNames(&l)
	}
	assert.ElementsMatch(t, []string{"a-01", "a-03", "b-01"}, list(client.MatchingFields{"spec.restartPolicy": "Never"}))
	assert.Equal(t, []string{"a-01", "a-03"}, list(client.InNamespace(ns1), client.MatchingFields{"spec.restartPolicy": "Never"}))
	assert.ElementsMatch(t, []string{"b-00", "b-02"}, list(client.InNamespace(ns2), client.MatchingFields{"group": "even", "spec.restartPolicy": "Always"}))
	assert.Empty(t, list(client.MatchingFields{"group": "odd", "spec.restartPolicy": "Always"}))
	assert.ElementsMatch(t, []string{"a-00", "a-02", "b-00", "b-02"},
		list(client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("spec.restartPolicy", "Never")}), "!= as a standard selector")
	assert.Empty(t, list(client.MatchingFieldsSelector{Selector: fields.Nothing()}), "fields.Nothing() selects nothing")
	assert.Empty(t, list(client.MatchingFieldsSelector{}), "neither does a MatchingFieldsSelector without selector")

	u := unstructuredPodList()
	require.NoError(t, c.List(ctx, u, client.InNamespace(ns1), client.MatchingFields{"group": "odd"}))
	assert.Equal(t, []string{"a-01", "a-03"}, names(ptrs(u.Items)), "an IndexField index serves unstructured reads of the resource")

	var nss corev1.NamespaceList
	require.NoError(t, c.List(ctx, &nss, client.MatchingFields{"fixed": "b"}))
	assert.NotEmpty(t, nss.Items)
	assert.Equal(t, []string{"a", "b", "c"}, fixed, "the values returned are not modified")

	// A change moves an object between values.
	p := &corev1.Pod{}
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns1, Name: "a-00"}, p))
	p.Labels["group"] = "odd"
	require.NoError(t, cl.Update(ctx, p))
	require.Eventually(t, func() bool {
		return fmt.Sprint(list(client.InNamespace(ns1), client.MatchingFields{"group": "odd"})) == "[a-00 a-01 a-03]"
	}, 10*time.Second, 20*time.Millisecond)
}

// TestFieldSelectors: ParseFields' operators on IndexField, IndexJSONPath and plain JSONPath
// fields, with limits and pages.
func TestFieldSelectors(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for i := range 6 {
		p := newPod(ns, fmt.Sprintf("p-%d", i), map[string]string{"tier": []string{"web", "db", "cache"}[i%3]}, func(p *corev1.Pod) {
			p.Spec.TerminationGracePeriodSeconds = ptr(int64(i * 10))
			if i%2 == 0 {
				p.Spec.NodeName = fmt.Sprintf("node-%d", i)
			}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Image: fmt.Sprintf("side:%d", i%2)})
		})
		require.NoError(t, cl.Create(ctx, p))
	}
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	require.NoError(t, c.IndexJSONPath(ctx, &corev1.Pod{}, "prio", "{.spec.terminationGracePeriodSeconds}"))
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "tier", func(o client.Object) []string { return []string{o.GetLabels()["tier"]} }))
	assert.Error(t, c.IndexJSONPath(ctx, &corev1.Pod{}, "bad", "{.spec["), "an expression that does not compile")

	tests := []struct {
		sel  string
		want []string
	}{
		{"prio>20", []string{"p-3", "p-4", "p-5"}},
		{"prio>=20,prio<40", []string{"p-2", "p-3"}},
		{"prio<=0", []string{"p-0"}},
		{"tier in (web,db)", []string{"p-0", "p-1", "p-3", "p-4"}},
		{"tier notin (web,db)", []string{"p-2", "p-5"}},
		{"tier!=web,prio>10", []string{"p-2", "p-4", "p-5"}},
		{"spec.nodeName", []string{"p-0", "p-2", "p-4"}},
		{"!spec.nodeName", []string{"p-1", "p-3", "p-5"}},
		{"spec.nodeName=node-2", []string{"p-2"}},
		{"spec.nodeName!=node-2", []string{"p-0", "p-1", "p-3", "p-4", "p-5"}},
		{".spec.containers[*].image=side:1", []string{"p-1", "p-3", "p-5"}},
		{`{.spec.containers[?(@.name=="sidecar")].image} in (side:0)`, []string{"p-0", "p-2", "p-4"}},
		{"metadata.labels['tier']=cache", []string{"p-2", "p-5"}},
		{"metadata.name=p-4", []string{"p-4"}},
		{"spec.terminationGracePeriodSeconds>30,tier=db", []string{"p-4"}},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			sel := client.MatchingFieldsSelector{Selector: crcache.MustParseFields(tt.sel)}
			var l corev1.PodList
			require.NoError(t, c.List(ctx, &l, sel))
			assert.Equal(t, tt.want, podNames(&l))
			m := metadataPodList()
			require.NoError(t, c.List(ctx, m, crcache.MustParseFields(tt.sel)), "a FieldSelector is a list option")
			assert.Equal(t, tt.want, names(ptrs(m.Items)), "metadata reads of a cached resource share its indexes")
			// Page by one: the same objects.
			var paged []string
			token := ""
			for range 10 {
				var page corev1.PodList
				require.NoError(t, c.List(ctx, &page, sel, client.Limit(1), client.Continue(token)))
				paged = append(paged, podNames(&page)...)
				if token = page.Continue; token == "" {
					break
				}
			}
			assert.Equal(t, tt.want, paged)
		})
	}

	t.Run("the same new path from concurrent lists", func(t *testing.T) {
		errs := make(chan error, 8)
		counts := make(chan int, 8)
		for range 8 {
			go func() {
				var l corev1.PodList
				errs <- c.List(ctx, &l, crcache.MustParseFields("spec.schedulerName=default-scheduler"))
				counts <- len(l.Items)
			}()
		}
		for range 8 {
			require.NoError(t, <-errs)
			assert.Equal(t, 6, <-counts)
		}
	})
	t.Run("errors", func(t *testing.T) {
		var l corev1.PodList
		err := c.List(ctx, &l, client.MatchingFieldsSelector{Selector: crcache.MustParseFields("{.spec[}=x")})
		assert.ErrorIs(t, err, crcache.ErrInvalidFieldSelector)
		err = c.List(ctx, &l, client.MatchingFields{"spec[": "x"})
		assert.Error(t, err)
		// A plain selector names an index, as in controller-runtime: a misspelt or unindexed
		// name is an error, not a query that matches nothing.
		for _, f := range []string{"tierr", "spec.nodeName"} {
			err = c.List(ctx, &l, client.MatchingFields{f: "x"})
			assert.ErrorIs(t, err, crcache.ErrInvalidFieldSelector, f)
			assert.ErrorContains(t, err, "field:"+f, f)
		}
		require.NoError(t, c.List(ctx, &l, client.MatchingFields{"tier": "db"}), "an IndexField name")
		assert.Equal(t, []string{"p-1", "p-4"}, podNames(&l))
		// Wrapped in another selector, a FieldSelector's ranges are refused, never dropped:
		// the list is not answered as if a condition were not there.
		for _, wrapped := range []fields.Selector{
			fields.AndSelectors(crcache.MustParseFields("prio>=20")),
			fields.AndSelectors(crcache.MustParseFields("prio<=20"), fields.OneTermNotEqualSelector("tier", "zzz")),
		} {
			err = c.List(ctx, &l, client.MatchingFieldsSelector{Selector: wrapped})
			assert.ErrorIs(t, err, crcache.ErrInvalidFieldSelector, "%s", wrapped)
		}
	})
	t.Run("selectors on many paths index a bounded number", func(t *testing.T) {
		podGVK := corev1.SchemeGroupVersion.WithKind("Pod")
		before := crcache.SelectorIndexes(c, podGVK)
		for i := range crcache.MaxSelectorIndexes + 8 {
			var l corev1.PodList
			sel := crcache.MustParseFields(fmt.Sprintf("metadata.labels['req-%d'],tier=db", i))
			require.NoError(t, c.List(ctx, &l, sel))
			assert.Empty(t, l.Items, "no Pod has label req-%d", i)
		}
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, crcache.MustParseFields("!metadata.labels['req-99'],metadata.labels['tier']=db")))
		assert.Equal(t, []string{"p-1", "p-4"}, podNames(&l), "a path beyond the bound is evaluated on each object")
		assert.Equal(t, crcache.MaxSelectorIndexes, crcache.SelectorIndexes(c, podGVK), "from %d before", before)
	})
	t.Run("metadata-only informer", func(t *testing.T) {
		require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s1", Labels: map[string]string{"k": "v"}}}))
		require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s2"}}))
		m := &metav1.PartialObjectMetadataList{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		require.NoError(t, c.List(ctx, m, client.MatchingFieldsSelector{Selector: crcache.MustParseFields("metadata.labels.k")}))
		assert.Equal(t, []string{"s1"}, names(ptrs(m.Items)))
		err := c.List(ctx, m, client.MatchingFields{"type": "Opaque"})
		assert.ErrorIs(t, err, crcache.ErrInvalidFieldSelector, "metadata-only objects have no such field: an error, not an empty list")
	})
}

func ptr[T any](v T) *T { return &v }

// Index names belong to an informer, as in controller-runtime, which has one informer per
// kind of read: the same name registered for typed, unstructured and metadata-only reads of
// a type with three functions is three indexes, each answering the lists of its own kind,
// though the three reads share one kindex informer. Within one informer a name is
// registered once, and the same JSONPath index through two reads is one index.
func TestIndexFieldPerInformer(t *testing.T) {
	ns := cp.Namespace(t)
	createPods(t, adminClient(t), ns, "p", 4)
	c := newCache(t, nil, cache.Options{})
	ctx := t.Context()
	byGroup := func(o client.Object) []string { return []string{o.GetLabels()["group"]} }
	byIndex := func(o client.Object) []string { return []string{o.GetLabels()["i"]} }
	byName := func(o client.Object) []string { return []string{o.GetName()} }
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "idx", byGroup))
	require.NoError(t, c.IndexField(ctx, unstructuredPod(), "idx", byIndex), "before Start")
	assert.ErrorIs(t, c.IndexField(ctx, &corev1.Pod{}, "idx", byName), informer.ErrIndexConflict, "twice on one informer")
	require.NoError(t, c.IndexJSONPath(ctx, &corev1.Pod{}, "node", "{.spec.nodeName}"))
	require.NoError(t, c.IndexJSONPath(ctx, unstructuredPod(), "node", "{.spec.nodeName}"), "the same JSONPath index is the same index")
	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))
	require.NoError(t, c.IndexField(ctx, metadataPod(), "idx", byName), "once the shared informer runs")

	lists := func() {
		t.Helper()
		var typed corev1.PodList
		require.NoError(t, c.List(ctx, &typed, client.InNamespace(ns), client.MatchingFields{"idx": "odd"}))
		assert.Equal(t, []string{"p-01", "p-03"}, podNames(&typed), "typed reads use the typed index")
		u := unstructuredPodList()
		require.NoError(t, c.List(ctx, u, client.InNamespace(ns), client.MatchingFields{"idx": "2"}))
		assert.Equal(t, []string{"p-02"}, names(ptrs(u.Items)), "unstructured reads use theirs")
		m := metadataPodList()
		require.NoError(t, c.List(ctx, m, client.InNamespace(ns), client.MatchingFields{"idx": "p-03"}))
		assert.Equal(t, []string{"p-03"}, names(ptrs(m.Items)), "metadata reads use theirs")
	}
	lists()
	require.Len(t, c.Statuses(), 1, "one kindex informer for the three reads")

	// Without the typed informer, the others keep their indexes; a typed informer started
	// again registers the name again.
	require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "idx", byGroup))
	lists()
}

// An empty value on a JSONPath stands for an empty field too, as in the API server's field
// selectors (Kubernetes' JSON leaves empty strings out): "spec.nodeName=" selects the Pods
// not scheduled, "spec.nodeName!=" the others, and the cache answers as the server does. An
// IndexField function's values are taken as they are, as in controller-runtime.
func TestFieldSelectorEmptyValues(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	require.NoError(t, cl.Create(ctx, newPod(ns, "s-0", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n1" })))
	require.NoError(t, cl.Create(ctx, newPod(ns, "s-1", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n2" })))
	c := newCache(t, nil, cache.Options{})
	require.NoError(t, c.IndexJSONPath(ctx, &corev1.Pod{}, "node", "{.spec.nodeName}"))
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "scheduledTo", func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}))
	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))

	server := func(sel string) []string {
		t.Helper()
		var l corev1.PodList
		require.NoError(t, cl.List(ctx, &l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: fields.ParseSelectorOrDie(sel)}))
		return podNames(&l)
	}
	cached := func(sel fields.Selector, opts ...client.ListOption) []string {
		t.Helper()
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, append([]client.ListOption{client.InNamespace(ns), client.MatchingFieldsSelector{Selector: sel}}, opts...)...))
		return podNames(&l)
	}
	for _, sel := range []string{"spec.nodeName=", "spec.nodeName==", "spec.nodeName!=", "spec.nodeName=n1", "spec.nodeName!=n1", "spec.nodeName=,spec.restartPolicy=Never"} {
		want := server(sel)
		assert.Equal(t, want, cached(crcache.MustParseFields(sel)), "%s: as the server answers", sel)
	}
	assert.Equal(t, []string{"p-00", "p-01", "p-02"}, server("spec.nodeName="))
	assert.Equal(t, []string{"s-0", "s-1"}, server("spec.nodeName!="))
	assert.Equal(t, []string{"p-00", "p-01", "p-02", "s-0"}, cached(crcache.MustParseFields("spec.nodeName in (,n1)")))
	assert.Equal(t, []string{"s-1"}, cached(crcache.MustParseFields("spec.nodeName notin (,n1)")))
	assert.Equal(t, []string{"p-00", "p-01", "p-02"}, cached(fields.ParseSelectorOrDie("node=")), "an IndexJSONPath index")
	assert.Equal(t, []string{"s-0", "s-1"}, cached(fields.ParseSelectorOrDie("node!=")))
	assert.Equal(t, []string{"p-00", "p-01"}, cached(crcache.MustParseFields("spec.nodeName="), client.Limit(2)))
	assert.Empty(t, cached(fields.ParseSelectorOrDie("scheduledTo=")), "an IndexField function's values as they are")

	var l corev1.PodList
	err := c.List(ctx, &l, crcache.MustParseFields("a=,b=,c=,d=,e="))
	assert.ErrorIs(t, err, crcache.ErrInvalidFieldSelector, "alternatives are bounded")
}
