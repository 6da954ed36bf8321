package compact

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/query"
)

// countingMode is a compact Mode whose transform counts the compressed objects it returns.
type countingMode struct {
	*Mode
	compressed, plain atomic.Int64
}

func (m *countingMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	inner := m.Mode.Transform(user)
	return func(obj any) (any, error) {
		out, err := inner(obj)
		if o, ok := out.(*Object); ok {
			if o.Compressed() {
				m.compressed.Add(1)
			} else {
				m.plain.Add(1)
			}
		}
		return out, err
	}
}

// startPodInformer starts a factory of the compact mode with opts (and, compressed, small
// dictionary limits, so that a few pods make the dictionary) on the pods of ns, with the
// test's indexes, and returns its synced informer.
func startPodInformer(t *testing.T, ns string, opts Options) (*informer.Informer[*unstructured.Unstructured], *countingMode) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var cm *countingMode
	f, err := informer.New(cp.AdminConfig(), informer.Options[*unstructured.Unstructured]{Namespace: ns},
		func(cfg *rest.Config, sc storage.Config) (storage.Mode, error) {
			opts.KeepManagedFields = sc.KeepManagedFields
			m, err := New(cfg, opts)
			if err != nil {
				return nil, err
			}
			m.dict = dictLimits{bytes: 1 << 15, samples: 3}
			cm = &countingMode{Mode: m}
			return cm, nil
		})
	require.NoError(t, err)
	require.NoError(t, f.Start(ctx))
	t.Cleanup(func() { cancel(); f.Shutdown() })
	inf, err := f.Informer(ctx, "pods")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	for name, expr := range map[string]string{
		"image": "{.spec.containers[*].image}",
		"node":  "{.spec.nodeName}",
		"grace": "{.spec.terminationGracePeriodSeconds}",
		"tier":  "{.metadata.labels.tier}",
		"note":  "{.metadata.annotations.note}",
	} {
		require.NoError(t, inf.AddIndex(name, expr))
	}
	require.NoError(t, inf.AddBuiltinIndex("namespace"))
	sctx, scancel := context.WithTimeout(ctx, 60*time.Second)
	defer scancel()
	require.NoError(t, inf.WaitForSync(sctx))
	return inf, cm
}

func integrationPod(i int) *corev1.Pod {
	p := newPod(fmt.Sprintf("p-%02d", i), map[string]string{"tier": []string{"web", "db", "cache"}[i%3], "n": fmt.Sprint(i)})
	p.Spec.NodeName = fmt.Sprintf("node-%d", i%4)
	p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(i % 7))
	p.Spec.Containers[0].Image = fmt.Sprintf("ghcr.io/acme/app:v%d", i%5)
	p.Annotations["note"] = strings.Repeat("x", i)
	return p
}

// TestCompressedInformerMatchesUncompressed: against a real apiserver, an informer that
// compresses its objects and one that does not hold the same objects (byte for byte, and
// the same decoded objects) through the initial list, creates, updates and deletes, and
// answer every index query, count and label selection the same way; most of the compressed
// informer's objects are compressed.
func TestCompressedInformerMatchesUncompressed(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	pods := cp.Clientset(t).CoreV1().Pods(ns)
	for i := range 30 {
		_, err := pods.Create(ctx, integrationPod(i), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	plainInf, _ := startPodInformer(t, ns, Options{StreamList: true})
	zInf, zMode := startPodInformer(t, ns, Options{StreamList: true, Compress: true})

	serverRVs := func() map[string]string {
		l, err := pods.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		out := map[string]string{}
		for _, p := range l.Items {
			out[p.Name] = p.ResourceVersion
		}
		return out
	}
	rvs := func(inf *informer.Informer[*unstructured.Unstructured]) map[string]string {
		items, err := inf.ListItems(ns)
		require.NoError(t, err)
		out := map[string]string{}
		for _, it := range items {
			out[it.Name()] = it.ResourceVersion()
		}
		return out
	}
	same := func(stage string) {
		t.Helper()
		want := serverRVs()
		for _, inf := range []*informer.Informer[*unstructured.Unstructured]{plainInf, zInf} {
			testenv.EventuallyWith(t, 30*time.Second, func() bool { return maps.Equal(want, rvs(inf)) },
				func() string { return fmt.Sprintf("%s: cache %v, server %v", stage, rvs(inf), want) })
		}
		assertSameCaches(t, ns, plainInf, zInf, stage)
	}
	same("initial list")
	assert.Greater(t, zMode.compressed.Load(), int64(25), "past the 3 samples, the listed pods are compressed")

	// Through the watch: updates (index values and labels move), deletes, creates.
	before := zMode.compressed.Load()
	for i := range 10 {
		p, err := pods.Get(ctx, fmt.Sprintf("p-%02d", i), metav1.GetOptions{})
		require.NoError(t, err)
		p.Labels["tier"] = "moved"
		p.Annotations["note"] = "updated " + fmt.Sprint(i)
		p.Spec.Containers[0].Image = "ghcr.io/acme/app:v9" // image is mutable
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	for i := 10; i < 15; i++ {
		require.NoError(t, pods.Delete(ctx, fmt.Sprintf("p-%02d", i), metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}))
	}
	for i := 30; i < 35; i++ {
		_, err := pods.Create(ctx, integrationPod(i), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	same("after updates, deletes and creates")
	assert.GreaterOrEqual(t, zMode.compressed.Load()-before, int64(15), "watched objects are compressed")
}

// assertSameCaches compares two informers of the same pods: items byte for byte, decoded
// objects, and the answers to queries on every index.
func assertSameCaches(t *testing.T, ns string, a, b *informer.Informer[*unstructured.Unstructured], stage string) {
	t.Helper()
	ctx := context.Background()
	ai, err := a.ListItems(ns)
	require.NoError(t, err)
	bi, err := b.ListItems(ns)
	require.NoError(t, err)
	require.Equal(t, len(ai), len(bi), stage)
	byKey := func(x, y informer.Item[*unstructured.Unstructured]) int { return strings.Compare(x.Key(), y.Key()) }
	slices.SortFunc(ai, byKey)
	slices.SortFunc(bi, byKey)
	for i := range ai {
		require.Equal(t, ai[i].Key(), bi[i].Key(), stage)
		require.Equal(t, string(ai[i].Raw()), string(bi[i].Raw()), "%s: %s", stage, ai[i].Key())
		ao, err := a.Get(ns, ai[i].Name())
		require.NoError(t, err)
		bo, err := b.Get(ns, bi[i].Name())
		require.NoError(t, err)
		require.Equal(t, ao, bo, "%s: %s", stage, ai[i].Key())
		var ap, bp corev1.Pod
		require.NoError(t, ai[i].DecodeInto(&ap))
		require.NoError(t, bi[i].DecodeInto(&bp))
		require.Equal(t, ap, bp, stage)
	}
	tier := func(v string) labels.Selector { return labels.SelectorFromSet(labels.Set{"tier": v}) }
	queries := []query.Query{
		{Conditions: []query.Condition{query.Eq("image", "ghcr.io/acme/app:v1")}},
		{Conditions: []query.Condition{query.Eq("image", "ghcr.io/acme/app:v9")}},
		{Conditions: []query.Condition{query.OneOf("node", "node-1", "node-3")}},
		{Conditions: []query.Condition{query.Gt("grace", "3")}},
		{Conditions: []query.Condition{query.Le("grace", "2"), query.Eq("tier", "web")}},
		{Conditions: []query.Condition{query.Eq("tier", "moved")}},
		{Conditions: []query.Condition{query.HasPrefix("note", "updated")}},
		{Conditions: []query.Condition{query.Has("node")}, Labels: tier("db")},
		{Conditions: []query.Condition{query.Where("{.spec.containers[1].image}", query.Equal, "fluent/fluent-bit:3.1.9")}, Scan: true},
		{Conditions: []query.Condition{query.Eq("namespace", ns)}, SortBy: "grace", Limit: 7},
		{Namespace: ns, Conditions: []query.Condition{query.NotEq("tier", "web")}, Scan: true},
	}
	empty := 0
	for _, q := range queries {
		ar, err := a.Query(ctx, q)
		require.NoError(t, err, "%s: %v", stage, q.Conditions)
		br, err := b.Query(ctx, q)
		require.NoError(t, err, "%s: %v", stage, q.Conditions)
		require.Equal(t, namesOf(ar.Items), namesOf(br.Items), "%s: %v", stage, q.Conditions)
		if len(ar.Items) == 0 {
			empty++
		}
		an, err := a.Count(ctx, q)
		require.NoError(t, err)
		bn, err := b.Count(ctx, q)
		require.NoError(t, err)
		require.Equal(t, an, bn, "%s: %v", stage, q.Conditions)
	}
	// Before the updates, the three queries of updated values find nothing.
	assert.LessOrEqual(t, empty, 3, "%s: queries that find nothing", stage)
	for _, index := range []string{"image", "node", "tier", "grace"} {
		q := query.Query{Conditions: []query.Condition{query.Has(index)}}
		ac, err := a.CountBy(ctx, q, index)
		require.NoError(t, err)
		bc, err := b.CountBy(ctx, q, index)
		require.NoError(t, err)
		require.Equal(t, ac, bc, "%s: by %s", stage, index)
	}
	al, err := a.List(tier("cache"))
	require.NoError(t, err)
	bl, err := b.List(tier("cache"))
	require.NoError(t, err)
	require.ElementsMatch(t, namesOf(al), namesOf(bl), stage) // List is not ordered
}

func namesOf(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetName()
	}
	return out
}
