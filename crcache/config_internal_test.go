package crcache

import (
	"testing"
	"time"

	"github.com/kindex/kindex/query"
	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// TestPlanFor checks how controller-runtime's options become shards, without a server.
func TestPlanFor(t *testing.T) {
	podGVK := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	nodeGVK := schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	namespaced := &meta.RESTMapping{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Scope: meta.RESTScopeNamespace}
	clusterScoped := &meta.RESTMapping{Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Scope: meta.RESTScopeRoot}
	sel := func(s string) labels.Selector { return labels.SelectorFromSet(labels.Set{"k": s}) }
	yes := true
	type shard struct{ ns, list, label, field string }
	tests := []struct {
		name     string
		opts     cache.Options
		byObject map[schema.GroupVersionKind]cache.ByObject
		gvk      schema.GroupVersionKind
		want     []shard
	}{
		{"nothing", cache.Options{}, nil, podGVK, []shard{{"", "", "", ""}}},
		{"global selectors", cache.Options{DefaultLabelSelector: sel("g"), DefaultFieldSelector: fields.OneTermEqualSelector("spec.nodeName", "n")}, nil, podGVK,
			[]shard{{"", "", "k=g", "spec.nodeName=n"}}},
		{"type-level wins", cache.Options{DefaultLabelSelector: sel("g")}, map[schema.GroupVersionKind]cache.ByObject{podGVK: {Label: sel("t")}}, podGVK,
			[]shard{{"", "", "k=t", ""}}},
		{"namespace field selector pins the list namespace", cache.Options{DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", "a")}, nil, podGVK,
			[]shard{{"", "a", "", "metadata.namespace=a"}}},
		{"DefaultNamespaces", cache.Options{DefaultNamespaces: map[string]cache.Config{"b": {}, "a": {LabelSelector: sel("a")}}, DefaultLabelSelector: sel("g")}, nil, podGVK,
			[]shard{{"a", "a", "k=a", ""}, {"b", "b", "k=g", ""}}},
		{"AllNamespaces excludes the others", cache.Options{DefaultNamespaces: map[string]cache.Config{"": {}, "b": {}, "a": {}}}, nil, podGVK,
			[]shard{{"", "", "", "metadata.namespace!=a,metadata.namespace!=b"}, {"a", "a", "", ""}, {"b", "b", "", ""}}},
		{"ByObject namespaces replace DefaultNamespaces", cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}},
			map[schema.GroupVersionKind]cache.ByObject{podGVK: {Namespaces: map[string]cache.Config{"c": {}}}}, podGVK, []shard{{"c", "c", "", ""}}},
		{"empty ByObject namespaces mean all", cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}},
			map[schema.GroupVersionKind]cache.ByObject{podGVK: {Namespaces: map[string]cache.Config{}}}, podGVK, []shard{{"", "", "", ""}}},
		{"namespace config over type-level over DefaultNamespaces", cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {LabelSelector: sel("dn")}}},
			map[schema.GroupVersionKind]cache.ByObject{podGVK: {Label: sel("t"), Namespaces: map[string]cache.Config{"a": {}, "b": {LabelSelector: sel("b")}}}}, podGVK,
			[]shard{{"a", "a", "k=t", ""}, {"b", "b", "k=b", ""}}},
		{"cluster-scoped ignores namespaces", cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}, DefaultLabelSelector: sel("g")}, nil, nodeGVK,
			[]shard{{"", "", "k=g", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cache{opts: tt.opts, byObject: tt.byObject}
			mapping := namespaced
			if tt.gvk == nodeGVK {
				mapping = clusterScoped
			}
			p := c.planFor(tt.gvk, mapping)
			var got []shard
			for _, s := range p.shards {
				got = append(got, shard{s.namespace, s.listNamespace, s.label, s.field})
			}
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("routing", func(t *testing.T) {
		c := &Cache{opts: cache.Options{DefaultNamespaces: map[string]cache.Config{"": {}, "a": {}}}}
		p := c.planFor(podGVK, namespaced)
		assert.Equal(t, "a", p.shards[p.shardFor("a")].namespace)
		assert.Equal(t, "", p.shards[p.shardFor("zzz")].namespace)
		c = &Cache{opts: cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}}}
		assert.Equal(t, -1, c.planFor(podGVK, namespaced).shardFor("zzz"))
	})
	t.Run("sync periods", func(t *testing.T) {
		d := func(v time.Duration) *time.Duration { return &v }
		for _, tc := range []struct {
			name     string
			opts     cache.Options
			byObject map[schema.GroupVersionKind]cache.ByObject
			want     time.Duration
		}{
			{"the cache's", cache.Options{}, nil, 10 * time.Hour},
			{"ByObject's over the cache's", cache.Options{}, map[schema.GroupVersionKind]cache.ByObject{podGVK: {SyncPeriod: d(time.Minute)}}, time.Minute},
			{"another type's does not apply", cache.Options{}, map[schema.GroupVersionKind]cache.ByObject{nodeGVK: {SyncPeriod: d(time.Minute)}}, 10 * time.Hour},
			{"the shortest namespace's", cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {SyncPeriod: d(time.Hour)}, "b": {SyncPeriod: d(2 * time.Minute)}, "c": {}}},
				map[schema.GroupVersionKind]cache.ByObject{podGVK: {SyncPeriod: d(3 * time.Hour)}}, 2 * time.Minute},
			{"none in one namespace leaves the others'", cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {SyncPeriod: d(0)}, "b": {SyncPeriod: d(5 * time.Minute)}}}, nil, 5 * time.Minute},
			{"none anywhere", cache.Options{}, map[schema.GroupVersionKind]cache.ByObject{podGVK: {SyncPeriod: d(0)}}, 0},
		} {
			c := &Cache{opts: tc.opts, byObject: tc.byObject, resync: 10 * time.Hour}
			assert.Equal(t, tc.want, c.planFor(podGVK, namespaced).resync(), tc.name)
		}
	})
	t.Run("deep copy and transforms", func(t *testing.T) {
		mark := func(in any) (any, error) { return in, nil }
		c := &Cache{opts: cache.Options{DefaultUnsafeDisableDeepCopy: &yes, DefaultTransform: mark}}
		p := c.planFor(podGVK, namespaced)
		assert.True(t, p.shards[0].noCopy)
		assert.NotNil(t, p.shards[0].transform)
		assert.True(t, p.hasTransform())

		c = &Cache{opts: cache.Options{DefaultTransform: cache.TransformStripManagedFields()}}
		p = c.planFor(podGVK, namespaced)
		assert.Nil(t, p.shards[0].transform,
			"TransformStripManagedFields is skipped: kindex cuts managedFields from the bytes")
		assert.False(t, p.keepManagedFields())
		assert.True(t, (&Cache{}).planFor(podGVK, namespaced).keepManagedFields(),
			"kept by default, as in controller-runtime")

		// One namespace strips them, another does not: the resource, stored once, keeps them.
		c = &Cache{opts: cache.Options{DefaultNamespaces: map[string]cache.Config{
			"a": {Transform: cache.TransformStripManagedFields()},
			"b": {},
		}}}
		assert.True(t, c.planFor(podGVK, namespaced).keepManagedFields())
		c.opts.DefaultTransform = cache.TransformStripManagedFields()
		assert.False(t, c.planFor(podGVK, namespaced).keepManagedFields())

		// A project's own function of the same name is the project's code: it runs.
		c = &Cache{opts: cache.Options{DefaultTransform: TransformStripManagedFields()}}
		assert.NotNil(t, c.planFor(podGVK, namespaced).shards[0].transform, "a look-alike runs")
		assert.True(t, isStripManagedFields(inlinedStrip()), "controller-runtime's, inlined into a caller")
	})
}

// TransformStripManagedFields is a look-alike of controller-runtime's that does more.
func TransformStripManagedFields() toolscache.TransformFunc {
	return func(in any) (any, error) { return in, nil }
}

// inlinedStrip calls controller-runtime's where the compiler may inline it.
func inlinedStrip() toolscache.TransformFunc { return cache.TransformStripManagedFields() }

func TestContinueTokens(t *testing.T) {
	q := query.Query{Namespace: "ns", Scan: true}
	const source = "crcache instance /v1, Kind=Pod 1.0"
	for _, key := range []string{"ns/name", "name", "a-b/c"} {
		got, err := decodeContinue(q, source, encodeContinue(q, source, key))
		assert.NoError(t, err)
		assert.Equal(t, key, got)
	}
	for _, bad := range []string{"!", "bm9wZQ", encodeContinue(q, source, "x")[:4]} {
		_, err := decodeContinue(q, source, bad)
		assert.ErrorIs(t, err, ErrContinueExpired, bad)
		assert.ErrorIs(t, err, query.ErrInvalidContinue, bad)
		assert.True(t, apierrors.IsResourceExpired(err), "%s: %v", bad, err)
	}
	for _, other := range []string{"crcache other /v1, Kind=Pod 1.0", "crcache instance /v1, Kind=Pod 1.1", "crcache instance /v1, Kind=Pod 2.0"} {
		_, err := decodeContinue(q, other, encodeContinue(q, source, "x"))
		assert.ErrorIs(t, err, ErrContinueExpired, other)
	}
	// (namespace, name) order, not the order of the keys as strings.
	assert.Negative(t, compareKeys("a/x", "a-b/a"))
	assert.Negative(t, compareKeys("node-1", "a/x"))
	assert.Zero(t, compareKeys("a/x", "a/x"))
}
