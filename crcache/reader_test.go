package crcache_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/query"
)

var (
	podGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	podListGVK = schema.GroupVersionKind{Version: "v1", Kind: "PodList"}
)

func unstructuredPod() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(podGVK)
	return u
}

func unstructuredPodList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(podListGVK)
	return l
}

func metadataPod() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(podGVK)
	return m
}

func metadataPodList() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(podListGVK)
	return l
}

// TestGet reads one object typed, unstructured and metadata-only, each a copy the caller
// owns.
func TestGet(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	created := createPods(t, cl, ns, "p", 3)
	c := startCache(t, nil, cache.Options{})
	key := client.ObjectKeyFromObject(created[1])

	t.Run("typed", func(t *testing.T) {
		var got corev1.Pod
		require.NoError(t, c.Get(t.Context(), key, &got))
		assert.Equal(t, created[1].UID, got.UID)
		assert.Equal(t, created[1].ResourceVersion, got.ResourceVersion)
		assert.Equal(t, corev1.RestartPolicyNever, got.Spec.RestartPolicy)
		assert.Equal(t, created[1].Spec.Containers, got.Spec.Containers)
		assert.Equal(t, podGVK, got.GroupVersionKind())
		want := created[1].DeepCopy()
		want.SetGroupVersionKind(podGVK)
		assert.Equal(t, want, &got, "the object the server returned, managedFields included, as in controller-runtime")

		got.Labels["i"] = "changed"
		got.Spec.Containers[0].Image = "changed"
		var again corev1.Pod
		require.NoError(t, c.Get(t.Context(), key, &again))
		assert.Equal(t, "1", again.Labels["i"], "a read is the caller's copy")
		assert.Equal(t, "nginx:1.27", again.Spec.Containers[0].Image)
	})
	t.Run("typed into a used struct", func(t *testing.T) {
		got := newPod("x", "y", map[string]string{"stale": "yes"}, func(p *corev1.Pod) { p.Spec.NodeName = "stale" })
		require.NoError(t, c.Get(t.Context(), key, got))
		assert.Equal(t, created[1].Name, got.Name)
		assert.NotContains(t, got.Labels, "stale")
		assert.Empty(t, got.Spec.NodeName, "fields the object lacks are reset")
	})
	t.Run("unstructured", func(t *testing.T) {
		got := unstructuredPod()
		require.NoError(t, c.Get(t.Context(), key, got))
		assert.Equal(t, created[1].UID, got.GetUID())
		policy, _, _ := unstructured.NestedString(got.Object, "spec", "restartPolicy")
		assert.Equal(t, "Never", policy)
		assert.Equal(t, podGVK, got.GroupVersionKind())
	})
	t.Run("metadata", func(t *testing.T) {
		got := metadataPod()
		require.NoError(t, c.Get(t.Context(), key, got))
		assert.Equal(t, created[1].UID, got.UID)
		assert.Equal(t, created[1].Labels, got.Labels)
		assert.Equal(t, podGVK, got.GroupVersionKind())
	})
	t.Run("not found", func(t *testing.T) {
		for _, out := range []client.Object{&corev1.Pod{}, unstructuredPod(), metadataPod()} {
			err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "missing"}, out)
			assert.True(t, apierrors.IsNotFound(err), "%T: %v", out, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.Equal(t, "Pod", status.Status().Details.Kind, "the kind, as controller-runtime's cache says it")
		}
	})
	t.Run("cluster-scoped, namespace ignored", func(t *testing.T) {
		var got corev1.Namespace
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "anything", Name: ns}, &got))
		assert.Equal(t, ns, got.Name)
	})
}

// TestList covers namespaces, label selectors, the three kinds and the order of results.
func TestList(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns1, "a", 4, "set", ns1)
	createPods(t, cl, ns2, "b", 3, "set", ns1)
	c := startCache(t, nil, cache.Options{})
	ctx := t.Context()

	tests := []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"namespace", []client.ListOption{client.InNamespace(ns1)}, []string{"a-00", "a-01", "a-02", "a-03"}},
		{"labels in one namespace", []client.ListOption{client.InNamespace(ns2), client.MatchingLabels{"group": "odd"}}, []string{"b-01"}},
		{"labels across namespaces", []client.ListOption{client.MatchingLabels{"i": "1", "set": ns1}}, []string{"a-01", "b-01"}},
		{"label selector with set", []client.ListOption{client.InNamespace(ns1), client.MatchingLabelsSelector{Selector: mustSelector(t, "i in (0,3)")}}, []string{"a-00", "a-03"}},
		{"nothing matches", []client.ListOption{client.InNamespace(ns1), client.MatchingLabels{"i": "9"}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var typed corev1.PodList
			require.NoError(t, c.List(ctx, &typed, tt.opts...))
			assert.ElementsMatch(t, tt.want, podNames(&typed))
			for _, p := range typed.Items {
				assert.Equal(t, podGVK, p.GroupVersionKind(), "items carry their GVK")
			}
			u := unstructuredPodList()
			require.NoError(t, c.List(ctx, u, tt.opts...))
			assert.Equal(t, podNames(&typed), names(ptrs(u.Items)))
			m := metadataPodList()
			require.NoError(t, c.List(ctx, m, tt.opts...))
			assert.Equal(t, podNames(&typed), names(ptrs(m.Items)))
			assert.Equal(t, "continue-not-supported", typed.Continue,
				"an unlimited list says it has no pages, as controller-runtime's cache does")
			err := c.List(ctx, &typed, append(tt.opts, client.Continue(typed.Continue))...)
			assert.EqualError(t, err, "continue list option is not supported by the cache")
		})
	}

	t.Run("every namespace, in namespace then name order", func(t *testing.T) {
		var all corev1.PodList
		require.NoError(t, c.List(ctx, &all, client.MatchingLabels{"group": "even", "set": ns1}))
		want := []string{"a-00", "a-02", "b-00", "b-02"}
		if ns2 < ns1 {
			want = []string{"b-00", "b-02", "a-00", "a-02"}
		}
		assert.Equal(t, want, podNames(&all))
	})
	t.Run("cluster-scoped", func(t *testing.T) {
		var nss corev1.NamespaceList
		require.NoError(t, c.List(ctx, &nss))
		assert.Contains(t, names(ptrs(nss.Items)), ns1)
	})
	t.Run("an unstructured list set to the item kind", func(t *testing.T) {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(podGVK) // "Pod", not "PodList": controller-runtime lists Pods
		require.NoError(t, c.List(ctx, u, client.InNamespace(ns1)))
		assert.Equal(t, []string{"a-00", "a-01", "a-02", "a-03"}, names(ptrs(u.Items)))
	})
}

// TestListLimitContinue pages through a list: every page is complete, the token works, and
// an object present throughout is returned exactly once while others come and go.
func TestListLimitContinue(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	createPods(t, cl, ns, "p", 7)
	c := startCache(t, nil, cache.Options{})
	ctx := t.Context()

	t.Run("pages", func(t *testing.T) {
		var got []string
		var remaining []int64
		token := ""
		for range 10 {
			var page corev1.PodList
			require.NoError(t, c.List(ctx, &page, client.InNamespace(ns), client.Limit(3), client.Continue(token)))
			got = append(got, podNames(&page)...)
			if page.RemainingItemCount != nil {
				remaining = append(remaining, *page.RemainingItemCount)
			}
			if token = page.Continue; token == "" {
				break
			}
			assert.Len(t, page.Items, 3)
		}
		assert.Equal(t, []string{"p-00", "p-01", "p-02", "p-03", "p-04", "p-05", "p-06"}, got)
		assert.Equal(t, []int64{4, 1}, remaining)
	})
	t.Run("limit applies after the label selector", func(t *testing.T) {
		var page corev1.PodList
		require.NoError(t, c.List(ctx, &page, client.InNamespace(ns), client.MatchingLabels{"group": "odd"}, client.Limit(2)))
		assert.Equal(t, []string{"p-01", "p-03"}, podNames(&page))
		require.NotEmpty(t, page.Continue)
		var next corev1.PodList
		require.NoError(t, c.List(ctx, &next, client.InNamespace(ns), client.MatchingLabels{"group": "odd"}, client.Limit(2), client.Continue(page.Continue)))
		assert.Equal(t, []string{"p-05"}, podNames(&next))
		assert.Empty(t, next.Continue)
	})
	t.Run("changes between pages", func(t *testing.T) {
		var first corev1.PodList
		require.NoError(t, c.List(ctx, &first, client.InNamespace(ns), client.Limit(3)))
		require.Equal(t, []string{"p-00", "p-01", "p-02"}, podNames(&first))
		// Delete one already returned and one not yet; add one behind the cursor and one ahead.
		require.NoError(t, cl.Delete(ctx, newPod(ns, "p-01", nil)))
		require.NoError(t, cl.Delete(ctx, newPod(ns, "p-04", nil)))
		require.NoError(t, cl.Create(ctx, newPod(ns, "p-00a", nil)))
		require.NoError(t, cl.Create(ctx, newPod(ns, "p-05a", nil)))
		testenv.Eventually(t, 10*time.Second, func() bool {
			var l corev1.PodList
			return c.List(ctx, &l, client.InNamespace(ns)) == nil && len(l.Items) == 7 && !contains(podNames(&l), "p-04")
		}, "cache did not see the changes")
		var rest corev1.PodList
		require.NoError(t, c.List(ctx, &rest, client.InNamespace(ns), client.Continue(first.Continue)))
		assert.Equal(t, []string{"p-03", "p-05", "p-05a", "p-06"}, podNames(&rest))
	})
	t.Run("unstructured and metadata pages", func(t *testing.T) {
		u := unstructuredPodList()
		require.NoError(t, c.List(ctx, u, client.InNamespace(ns), client.Limit(2)))
		assert.Len(t, u.Items, 2)
		assert.NotEmpty(t, u.GetContinue())
		m := metadataPodList()
		require.NoError(t, c.List(ctx, m, client.InNamespace(ns), client.Limit(2), client.Continue(u.GetContinue())))
		assert.Len(t, m.Items, 2)
		assert.Greater(t, m.Items[0].Name, u.Items[1].GetName(), "a token works across kinds of the same resource")
	})
	t.Run("bad token", func(t *testing.T) {
		var l corev1.PodList
		err := c.List(ctx, &l, client.InNamespace(ns), client.Continue("not-a-token"))
		require.Error(t, err)
		assert.ErrorIs(t, err, query.ErrInvalidQuery)
	})
}

// TestContinueTokenOfAnotherList: a continue token is accepted by the cache that issued it,
// for the list it was issued for, while the informers that answered it run; any other use
// is a 410 Expired (ErrContinueExpired), as the API server answers a token it cannot
// continue, instead of a page of another list.
func TestContinueTokenOfAnotherList(t *testing.T) {
	ns := cp.Namespace(t)
	createPods(t, adminClient(t), ns, "p", 4)
	ctx := t.Context()
	c1 := startCache(t, nil, cache.Options{})
	c2 := startCache(t, nil, cache.Options{})
	page := func(c *crcache.Cache, token string, opts ...client.ListOption) (*corev1.PodList, error) {
		var l corev1.PodList
		err := c.List(ctx, &l, append([]client.ListOption{client.InNamespace(ns), client.Limit(2), client.Continue(token)}, opts...)...)
		return &l, err
	}
	expired := func(err error, msg string) {
		t.Helper()
		require.Error(t, err, msg)
		assert.True(t, apierrors.IsResourceExpired(err), "%s: %v", msg, err)
		assert.ErrorIs(t, err, crcache.ErrContinueExpired, msg)
	}

	first, err := page(c1, "")
	require.NoError(t, err)
	require.Equal(t, []string{"p-00", "p-01"}, podNames(first))
	_, err = page(c2, first.Continue)
	expired(err, "another cache, the same list")
	next, err := page(c1, first.Continue)
	require.NoError(t, err)
	assert.Equal(t, []string{"p-02", "p-03"}, podNames(next), "the cache that issued it")
	var cms corev1.ConfigMapList
	expired(c1.List(ctx, &cms, client.InNamespace(ns), client.Limit(2), client.Continue(first.Continue)), "another resource")
	_, err = page(c1, first.Continue, client.MatchingLabels{"group": "even"})
	expired(err, "another selection")

	require.NoError(t, c1.RemoveInformer(ctx, &corev1.Pod{}))
	_, err = page(c1, first.Continue)
	expired(err, "a token of an informer since removed")
	again, err := page(c1, "")
	require.NoError(t, err)
	next, err = page(c1, again.Continue)
	require.NoError(t, err)
	assert.Equal(t, []string{"p-02", "p-03"}, podNames(next), "the new informer's tokens")
}

// TestReadErrors: a cancelled context, a read before Start, ReaderFailOnMissingInformer, an
// unknown kind.
func TestReadErrors(t *testing.T) {
	ns := cp.Namespace(t)
	ctx := t.Context()

	t.Run("cancelled context while the informer syncs", func(t *testing.T) {
		c := startCache(t, nil, cache.Options{})
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		var l corev1.PodList
		err := c.List(cancelled, &l, client.InNamespace(ns))
		require.Error(t, err)
		assert.True(t, apierrors.IsTimeout(err), "%v", err)
		assert.ErrorIs(t, err, context.Canceled)
		_, err = c.GetInformer(cancelled, &corev1.ConfigMap{})
		assert.True(t, apierrors.IsTimeout(err), "%v", err)
	})
	t.Run("before Start", func(t *testing.T) {
		c := newCache(t, nil, cache.Options{})
		var notStarted *cache.ErrCacheNotStarted
		assert.ErrorAs(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &corev1.Pod{}), &notStarted)
		assert.ErrorAs(t, c.List(ctx, &corev1.PodList{}), &notStarted)
		assert.False(t, c.WaitForCacheSync(cancelledContext(ctx)))
	})
	t.Run("ReaderFailOnMissingInformer", func(t *testing.T) {
		c := startCache(t, nil, cache.Options{ReaderFailOnMissingInformer: true})
		var notCached *cache.ErrResourceNotCached
		assert.ErrorAs(t, c.List(ctx, &corev1.ServiceList{}), &notCached)
		assert.ErrorAs(t, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &corev1.Service{}), &notCached)
		m := &metav1.PartialObjectMetadataList{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		assert.ErrorAs(t, c.List(ctx, m), &notCached)

		_, err := c.GetInformer(ctx, &corev1.Service{})
		require.NoError(t, err)
		var svc corev1.Service
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &svc))
		assert.Equal(t, "kubernetes", svc.Name)
		// The resource is cached: the same data read another way needs no informer of its own.
		require.NoError(t, c.List(ctx, m))
		assert.Contains(t, names(ptrs(m.Items)), "kubernetes")
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		require.NoError(t, c.List(ctx, u, client.InNamespace("default")))
		assert.Contains(t, names(ptrs(u.Items)), "kubernetes")
	})
	t.Run("unknown kind", func(t *testing.T) {
		c := startCache(t, nil, cache.Options{})
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "nope.example.com", Version: "v1", Kind: "GhostList"})
		err := c.List(ctx, u)
		require.Error(t, err)
		assert.True(t, apimeta.IsNoMatchError(err), "%v", err)
	})
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	require.NoError(t, err)
	return sel
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func cancelledContext(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	cancel()
	return ctx
}

// TestEndedContextReadsASyncedCache: once synced, reads come from memory: a context that has
// ended fails none of them (a reconcile during shutdown reads the cache as
// controller-runtime's lets it), while a read that has to wait for a sync does fail.
func TestEndedContextReadsASyncedCache(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	c := startCache(t, nil, cache.Options{})
	_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)

	ended, cancel := context.WithCancel(ctx)
	cancel()
	for range 50 {
		var got corev1.ConfigMap
		require.NoError(t, c.Get(ended, client.ObjectKey{Namespace: ns, Name: "cm"}, &got))
		var l corev1.ConfigMapList
		require.NoError(t, c.List(ended, &l, client.InNamespace(ns)))
		require.Len(t, l.Items, 1)
		_, err := c.GetInformer(ended, &corev1.ConfigMap{})
		require.NoError(t, err)
	}
	var s corev1.SecretList
	err = c.List(ended, &s)
	assert.True(t, apierrors.IsTimeout(err), "an informer that has to sync first: %v", err)
}
