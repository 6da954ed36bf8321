package dynamicinformer_test

import (
	"context"
	"fmt"
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
// label-based ones), through adds, updates and deletes, and requires identical answers.
func TestQueriesAgreeAcrossStorageModes(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	for i := range 12 {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i), Labels: map[string]string{"tier": []string{"a", "b", "c"}[i%3]}},
			Data:       map[string]string{"color": []string{"red", "green"}[i%2], "size": fmt.Sprint(i % 5)},
		}
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
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
			popts.Indexes = map[string]string{"color": "{.data.color}", "size": "{.data.size}", "tier": "{.metadata.labels.tier}"}
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
	}
	labelQueries := []query.Query{conds(query.Eq("tier", "b")), conds(query.Has("tier")), {Conditions: []query.Condition{query.HasNot("tier")}, Scan: true}}

	var infs []*dynamicinformer.Informer
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
		require.NoError(t, inf.WaitForSync(ctx), name)
		infs = append(infs, inf)
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
	require.NoError(t, minf.WaitForSync(ctx))

	agree := func(step string) {
		t.Helper()
		for _, q := range queries {
			want := run(t, infs[0], q)
			for _, inf := range infs[1:] {
				testenv.Eventually(t, follow, func() bool { return fmt.Sprint(run(t, inf, q)) == fmt.Sprint(want) },
					"%s: %v differs between modes", step, q.Conditions)
			}
		}
		for _, q := range labelQueries {
			want := run(t, infs[0], q)
			testenv.Eventually(t, follow, func() bool {
				res, err := minf.Query(q)
				if err != nil {
					return false
				}
				var got []string
				for _, o := range res.Items {
					got = append(got, o.GetNamespace()+"/"+o.GetName())
				}
				if got == nil {
					got = []string{}
				}
				return fmt.Sprint(got) == fmt.Sprint(want)
			}, "%s: metadata-only %v differs", step, q.Conditions)
		}
	}
	agree("after sync")

	// Updates that move objects between values, a label change and deletes.
	for i := range 12 {
		name := fmt.Sprintf("cm-%02d", i)
		switch i % 4 {
		case 0:
			require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}))
		case 1:
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			cm.Data["color"], cm.Data["size"] = "red", "4"
			delete(cm.Labels, "tier")
			_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
	}
	// Wait until the first informer has seen every change, then require the others to agree.
	testenv.Eventually(t, follow, func() bool { return len(run(t, infs[0], conds(query.Has("color")))) == 9 }, "deletes seen")
	testenv.Eventually(t, follow, func() bool { return len(run(t, infs[0], conds(query.HasNot("tier"), query.Has("color")))) == 3 }, "updates seen")
	agree("after changes")
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
	res, err := inf.Query(conds(query.Eq("color", "red")))
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
	_, err = inf.Query(query.Query{Conditions: []query.Condition{query.Where("{.data.secret}", query.Equal, "not kept")}, Scan: true})
	require.ErrorIs(t, err, dynamicinformer.ErrNotProjected)
	// What is kept can be indexed and queried again, and metadata always.
	require.NoError(t, inf.AddIndex("color-again", "{.data.color}"))
	require.NoError(t, inf.AddIndex("tier", "{.metadata.labels.tier}"))
	res, err = inf.Query(query.Query{Conditions: []query.Condition{query.Where("{.data.color}", query.Equal, "green")}, Scan: true})
	require.NoError(t, err)
	assert.Len(t, res.Items, 2)
}
