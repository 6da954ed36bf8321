package crcache_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// s53Err describes an error as a caller sees it: its class (errClass), whether it is
// controller-runtime's ErrResourceNotCached, and the text of a namespace refusal.
func s53Err(err error) string {
	if err == nil {
		return "<nil>"
	}
	var notCached *cache.ErrResourceNotCached
	text := err.Error()
	if !strings.Contains(text, "unknown namespace") {
		text = "" // messages differ; only the namespace refusal's is compared
	}
	return fmt.Sprintf("%s | notCached=%v | %s", errClass(err), errors.As(err, &notCached), text)
}

// s53ListShape describes a list as returned: its own TypeMeta and Continue, and each item's
// key and TypeMeta.
func s53ListShape(t *testing.T, l client.ObjectList) string {
	t.Helper()
	gvk := l.GetObjectKind().GroupVersionKind()
	var items []string
	switch l := l.(type) {
	case *corev1.PodList:
		for _, p := range l.Items {
			items = append(items, p.Namespace+"/"+p.Name+" "+p.APIVersion+"/"+p.Kind)
		}
	case *unstructured.UnstructuredList:
		for _, p := range l.Items {
			items = append(items, p.GetNamespace()+"/"+p.GetName()+" "+p.GetAPIVersion()+"/"+p.GetKind())
		}
	case *metav1.PartialObjectMetadataList:
		for _, p := range l.Items {
			items = append(items, p.Namespace+"/"+p.Name+" "+p.APIVersion+"/"+p.Kind)
		}
	case *rbacv1.ClusterRoleList:
		for _, p := range l.Items {
			items = append(items, p.Namespace+"/"+p.Name+" "+p.APIVersion+"/"+p.Kind)
		}
	default:
		t.Fatalf("unexpected list %T", l)
	}
	sort.Strings(items)
	return fmt.Sprintf("list %s continue=%q items=[%s]", gvk, l.GetContinue(), strings.Join(items, "; "))
}

// TestS53ErrorsAndListShapes: a cache over two namespaces of three: Get of a missing object
// (typed, unstructured, metadata-only; core, apps and cluster-scoped kinds), of an object in
// a namespace the cache does not cover, of a kind the server does not serve; List into typed,
// unstructured and metadata-only lists with label selectors that match nothing or
// everything, a field selector without an index, a namespace the cache does not cover: the
// errors (class and text) and the lists' shapes (TypeMeta of the list and of its items,
// Continue) of both caches.
func TestS53ErrorsAndListShapes(t *testing.T) {
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "p", 3)
	createPods(t, cl, ns2, "p", 2)
	createPods(t, cl, ns3, "p", 2)
	crName := "s53-" + ns1
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: crName, Labels: map[string]string{"s53": ns1}}}
	require.NoError(t, cl.Create(ctx, role))
	t.Cleanup(func() { _ = cl.Delete(context.Background(), role) })

	u := func(gvk schema.GroupVersionKind) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		return o
	}
	m := func(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
		o := &metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(gvk)
		return o
	}
	deployGVK := appsv1.SchemeGroupVersion.WithKind("Deployment")
	roleGVK := rbacv1.SchemeGroupVersion.WithKind("ClusterRole")
	nopeGVK := schema.GroupVersionKind{Group: "nope.s53.test", Version: "v1", Kind: "Nope"}

	for _, scoped := range []bool{false, true} {
		t.Run(fmt.Sprintf("namespaces=%v", scoped), func(t *testing.T) {
			s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
				opts := cache.Options{}
				if scoped {
					opts.DefaultNamespaces = map[string]cache.Config{ns1: {}, ns2: {}}
				}
				c, err := newFn(cp.AdminConfig(), opts)
				require.NoError(t, err)
				run(t, c)
				require.True(t, c.WaitForCacheSync(ctx))
				out := map[string]any{}
				gets := map[string]struct {
					key client.ObjectKey
					obj func() client.Object
				}{
					"pod missing typed":          {client.ObjectKey{Namespace: ns1, Name: "missing"}, func() client.Object { return &corev1.Pod{} }},
					"pod missing unstructured":   {client.ObjectKey{Namespace: ns1, Name: "missing"}, func() client.Object { return u(podGVK) }},
					"pod missing metadata":       {client.ObjectKey{Namespace: ns1, Name: "missing"}, func() client.Object { return m(podGVK) }},
					"deploy missing typed":       {client.ObjectKey{Namespace: ns2, Name: "missing"}, func() client.Object { return &appsv1.Deployment{} }},
					"deploy missing unstr":       {client.ObjectKey{Namespace: ns2, Name: "missing"}, func() client.Object { return u(deployGVK) }},
					"deploy missing metadata":    {client.ObjectKey{Namespace: ns2, Name: "missing"}, func() client.Object { return m(deployGVK) }},
					"role missing typed":         {client.ObjectKey{Name: "missing-" + crName}, func() client.Object { return &rbacv1.ClusterRole{} }},
					"role missing metadata":      {client.ObjectKey{Name: "missing-" + crName}, func() client.Object { return m(roleGVK) }},
					"role present with ns":       {client.ObjectKey{Namespace: ns1, Name: crName}, func() client.Object { return &rbacv1.ClusterRole{} }},
					"pod other ns typed":         {client.ObjectKey{Namespace: ns3, Name: "p-00"}, func() client.Object { return &corev1.Pod{} }},
					"pod other ns unstructured":  {client.ObjectKey{Namespace: ns3, Name: "p-00"}, func() client.Object { return u(podGVK) }},
					"pod other ns metadata":      {client.ObjectKey{Namespace: ns3, Name: "p-00"}, func() client.Object { return m(podGVK) }},
					"pod no namespace":           {client.ObjectKey{Name: "p-00"}, func() client.Object { return &corev1.Pod{} }},
					"pod present typed":          {client.ObjectKey{Namespace: ns1, Name: "p-01"}, func() client.Object { return &corev1.Pod{} }},
					"pod present metadata":       {client.ObjectKey{Namespace: ns2, Name: "p-01"}, func() client.Object { return m(podGVK) }},
					"kind not served":            {client.ObjectKey{Namespace: ns1, Name: "x"}, func() client.Object { return u(nopeGVK) }},
					"kind not served (metadata)": {client.ObjectKey{Namespace: ns1, Name: "x"}, func() client.Object { return m(nopeGVK) }},
				}
				for name, g := range gets {
					o := g.obj()
					err := c.Get(ctx, g.key, o)
					got := s53Err(err)
					if err == nil {
						got += " " + o.GetObjectKind().GroupVersionKind().String() + " " + o.GetName()
					}
					out["get "+name] = got
				}
				lists := map[string]func() client.ObjectList{
					"typed": func() client.ObjectList { return &corev1.PodList{} }, "unstructured": func() client.ObjectList { return unstructuredPodList() },
					"metadata": func() client.ObjectList { return metadataPodList() },
				}
				listOpts := map[string][]client.ListOption{
					"all":                     {},
					"ns1":                     {client.InNamespace(ns1)},
					"ns3":                     {client.InNamespace(ns3)},
					"nothing":                 {client.MatchingLabelsSelector{Selector: labels.Nothing()}},
					"everything":              {client.MatchingLabelsSelector{Selector: labels.Everything()}},
					"everything ns2":          {client.InNamespace(ns2), client.MatchingLabelsSelector{Selector: labels.Everything()}},
					"no such label":           {client.MatchingLabels{"absent": "x"}},
					"empty labels":            {client.MatchingLabels{}},
					"name field no index":     {client.MatchingFields{"spec.nodeName": "n"}},
					"name field no index ns1": {client.InNamespace(ns1), client.MatchingFields{"spec.restartPolicy": "Never"}},
				}
				for on, lo := range listOpts {
					for kind, newList := range lists {
						l := newList()
						err := c.List(ctx, l, lo...)
						got := s53Err(err)
						if err == nil {
							got += " " + s53ListShape(t, l)
						}
						out["list "+on+" "+kind] = got
					}
				}
				roles := &rbacv1.ClusterRoleList{}
				err = c.List(ctx, roles, client.MatchingLabels{"s53": ns1})
				out["list roles"] = s53Err(err) + " " + s53ListShape(t, roles)
				roles = &rbacv1.ClusterRoleList{}
				err = c.List(ctx, roles, client.MatchingLabels{"s53": ns1}, client.InNamespace(ns3))
				if err == nil && len(roles.Items) == 1 {
					roles.Items = nil // crcache answers the type's objects on purpose (package doc)
				}
				out["list roles in ns"] = s53Err(err) + " " + s53ListShape(t, roles)
				return out
			})
		})
	}
}

// TestS53ReaderFailOnMissingInformer: with ReaderFailOnMissingInformer, a read before any
// informer, after GetInformer, and after RemoveInformer; an informer removed is stopped and
// takes no handler; a handler removed twice; a registration's HasSynced; in a cache over
// namespaces too.
func TestS53ReaderFailOnMissingInformer(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "p", 2)
	createPods(t, cl, ns2, "p", 2)
	for _, scoped := range []bool{false, true} {
		t.Run(fmt.Sprintf("namespaces=%v", scoped), func(t *testing.T) {
			s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
				opts := cache.Options{ReaderFailOnMissingInformer: true}
				if scoped {
					opts.DefaultNamespaces = map[string]cache.Config{ns1: {}}
				}
				c, err := newFn(cp.AdminConfig(), opts)
				require.NoError(t, err)
				run(t, c)
				require.True(t, c.WaitForCacheSync(ctx))
				out := map[string]any{}
				key := client.ObjectKey{Namespace: ns1, Name: "p-00"}
				other := client.ObjectKey{Namespace: ns2, Name: "p-00"}
				out["get before"] = s53Err(c.Get(ctx, key, &corev1.Pod{}))
				out["get other ns before"] = s53Err(c.Get(ctx, other, &corev1.Pod{}))
				out["list before"] = s53Err(c.List(ctx, &corev1.PodList{}))
				out["list ns before"] = s53Err(c.List(ctx, &corev1.PodList{}, client.InNamespace(ns1)))
				inf, err := c.GetInformer(ctx, &corev1.Pod{})
				require.NoError(t, err)
				out["informer synced"] = inf.HasSynced()
				out["informer stopped"] = inf.IsStopped()
				var mu sync.Mutex
				seen := map[string]bool{}
				h := toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
					mu.Lock()
					defer mu.Unlock()
					seen[o.(client.Object).GetNamespace()+"/"+o.(client.Object).GetName()] = true
				}}
				reg, err := inf.AddEventHandler(h)
				require.NoError(t, err)
				require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
				mu.Lock()
				out["handler saw"] = slices.Sorted(func(yield func(string) bool) {
					for k := range seen {
						if !yield(k) {
							return
						}
					}
				})
				mu.Unlock()
				out["get after informer"] = s53Err(c.Get(ctx, key, &corev1.Pod{}))
				out["get other ns after informer"] = s53Err(c.Get(ctx, other, &corev1.Pod{}))
				out["remove handler"] = s53Err(inf.RemoveEventHandler(reg))
				out["remove handler again"] = s53Err(inf.RemoveEventHandler(reg))
				require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
				require.Eventually(t, inf.IsStopped, 10*time.Second, 10*time.Millisecond)
				_, err = inf.AddEventHandler(h)
				out["add handler after remove"] = err != nil
				out["get after remove"] = s53Err(c.Get(ctx, key, &corev1.Pod{}))
				out["get other ns after remove"] = s53Err(c.Get(ctx, other, &corev1.Pod{}))
				out["list after remove"] = s53Err(c.List(ctx, &corev1.PodList{}, client.InNamespace(ns1)))
				inf2, err := c.GetInformer(ctx, &corev1.Pod{})
				require.NoError(t, err)
				out["new informer stopped"] = inf2.IsStopped()
				out["get after new informer"] = s53Err(c.Get(ctx, key, &corev1.Pod{}))
				return out
			})
		})
	}
}

// TestS53WaitForCacheSyncCanceled: WaitForCacheSync with a canceled context before Start,
// and with an informer that cannot sync (a kind whose list is refused) after it.
func TestS53WaitForCacheSyncCanceled(t *testing.T) {
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c, err := newFn(cp.AdminConfig(), cache.Options{})
		require.NoError(t, err)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		out := map[string]any{}
		out["before start"] = c.WaitForCacheSync(canceled)
		_, err = c.GetInformer(canceled, &corev1.ConfigMap{})
		out["informer before start"] = s53Err(err)
		out["get before start"] = s53Err(c.Get(canceled, client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{}))
		run(t, c)
		require.True(t, c.WaitForCacheSync(t.Context()))
		_, err = c.GetInformer(canceled, &corev1.Secret{}, cache.BlockUntilSynced(false))
		out["informer no block"] = s53Err(err)
		err = c.Get(canceled, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &corev1.Endpoints{})
		out["first get canceled: timeout"] = apierrors.IsTimeout(err)
		var ep corev1.Endpoints
		err = c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &ep)
		out["get after canceled get"] = s53Err(err) + " " + ep.Name
		out["wait after canceled get"] = c.WaitForCacheSync(t.Context())
		return out
	})
}

// TestS53IndexFieldValues: IndexField functions that return a value twice, an empty value,
// no value, several values; fields registered before Start and after the informer synced;
// MatchingFields with two fields, with a namespace, with a label selector.
func TestS53IndexFieldValues(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "p", 4)
	createPods(t, cl, ns2, "p", 3)
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c, err := newFn(cp.AdminConfig(), cache.Options{})
		require.NoError(t, err)
		require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "dup", func(o client.Object) []string {
			g := o.GetLabels()["group"]
			return []string{g, g, "any"}
		}))
		require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "empty", func(o client.Object) []string {
			if o.GetLabels()["i"] == "0" {
				return []string{""}
			}
			if o.GetLabels()["i"] == "1" {
				return nil
			}
			return []string{"x"}
		}))
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		var all corev1.PodList
		require.NoError(t, c.List(ctx, &all))
		require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "late", func(o client.Object) []string {
			return []string{o.GetNamespace() + "." + o.GetLabels()["i"]}
		}))
		out := map[string]any{}
		opts := map[string][]client.ListOption{
			"dup even":             {client.MatchingFields{"dup": "even"}},
			"dup any":              {client.MatchingFields{"dup": "any"}},
			"dup any ns2":          {client.InNamespace(ns2), client.MatchingFields{"dup": "any"}},
			"dup any odd label":    {client.MatchingFields{"dup": "any"}, client.MatchingLabels{"group": "odd"}},
			"empty value":          {client.MatchingFields{"empty": ""}},
			"empty x":              {client.MatchingFields{"empty": "x"}},
			"two fields":           {client.MatchingFields{"dup": "odd", "empty": "x"}},
			"two fields none":      {client.MatchingFields{"dup": "nope", "empty": "x"}},
			"late":                 {client.MatchingFields{"late": ns1 + ".2"}},
			"late other namespace": {client.InNamespace(ns2), client.MatchingFields{"late": ns1 + ".2"}},
		}
		for name, o := range opts {
			var l corev1.PodList
			err := c.List(ctx, &l, o...)
			var keys []string
			for _, p := range l.Items {
				if p.Namespace == ns1 || p.Namespace == ns2 {
					keys = append(keys, p.Namespace+"/"+p.Name)
				}
			}
			sort.Strings(keys)
			out["list "+name] = s53Err(err) + " " + strings.Join(keys, ",")
		}
		return out
	})
}

// s53Holder is what a handler holds of each object, with the event sequences client-go
// allows checked: an add of an object it does not hold, an update or a delete of one it
// holds.
type s53Holder struct {
	mu     sync.Mutex
	held   map[string]string // key -> resourceVersion
	faults []string
}

func (h *s53Holder) handler() toolscache.ResourceEventHandler {
	key := func(o any) (string, string) {
		if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		m := o.(client.Object)
		return m.GetNamespace() + "/" + m.GetName(), m.GetResourceVersion()
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			h.mu.Lock()
			defer h.mu.Unlock()
			k, rv := key(o)
			if _, ok := h.held[k]; ok {
				h.faults = append(h.faults, "add of held "+k)
			}
			h.held[k] = rv
		},
		UpdateFunc: func(o, n any) {
			h.mu.Lock()
			defer h.mu.Unlock()
			k, rv := key(n)
			if _, ok := h.held[k]; !ok {
				h.faults = append(h.faults, "update of unheld "+k)
			}
			h.held[k] = rv
		},
		DeleteFunc: func(o any) {
			h.mu.Lock()
			defer h.mu.Unlock()
			k, _ := key(o)
			if _, ok := h.held[k]; !ok {
				h.faults = append(h.faults, "delete of unheld "+k)
			}
			delete(h.held, k)
		},
	}
}

func (h *s53Holder) snapshot() (map[string]string, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.held))
	for k, v := range h.held {
		out[k] = v
	}
	return out, slices.Clone(h.faults)
}

// TestS53MetadataHandlerAcrossTheMoveUnderChurn: a metadata-only informer's handler, while
// Pods are created, relabelled in and out of the cache's label selector, and deleted, and
// a typed read moves the metadata reads to the whole objects' informer: the handler gets
// only the event sequences client-go allows, and ends up holding exactly the selected
// objects at the server's resourceVersions, as the same handler on controller-runtime's
// cache does.
func TestS53MetadataHandlerAcrossTheMoveUnderChurn(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 30, "sel", "in")
	sel, err := labels.Parse("sel=in")
	require.NoError(t, err)
	opts := cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {LabelSelector: sel}}}
	kx := newCache(t, nil, opts)
	run(t, kx)
	crc, err := cache.New(cp.AdminConfig(), opts)
	require.NoError(t, err)
	run(t, crc)
	require.True(t, kx.WaitForCacheSync(ctx))
	require.True(t, crc.WaitForCacheSync(ctx))

	holders := map[string]*s53Holder{}
	for name, c := range map[string]cache.Cache{"crcache": kx, "controller-runtime": crc} {
		inf, err := c.GetInformer(ctx, metadataPod())
		require.NoError(t, err)
		h := &s53Holder{held: map[string]string{}}
		reg, err := inf.AddEventHandler(h.handler())
		require.NoError(t, err)
		require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
		holders[name] = h
	}

	churnDone, firstRound := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(churnDone)
		for round := range 6 {
			if round == 1 {
				close(firstRound)
			}
			for i := range 30 {
				name := fmt.Sprintf("p-%02d", i)
				switch (i + round) % 5 {
				case 0:
					_ = cl.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, client.GracePeriodSeconds(0))
				case 1:
					_ = cl.Create(context.Background(), newPod(ns, name, map[string]string{"sel": "in"}))
				default:
					var p corev1.Pod
					if cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &p) == nil {
						if p.Labels == nil {
							p.Labels = map[string]string{}
						}
						if p.Labels["sel"] == "in" && (i+round)%5 == 2 {
							p.Labels["sel"] = "out"
						} else {
							p.Labels["sel"] = "in"
						}
						p.Labels["round"] = fmt.Sprint(round)
						_ = cl.Update(context.Background(), &p)
					}
				}
			}
		}
	}()
	// The typed read, in the middle of the churn: the metadata reads move.
	<-firstRound
	var typed corev1.PodList
	require.NoError(t, kx.List(ctx, &typed, client.InNamespace(ns)))
	require.NoError(t, crc.List(ctx, &typed, client.InNamespace(ns)))
	<-churnDone

	want := func() map[string]string {
		var l corev1.PodList
		require.NoError(t, cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{"sel": "in"}))
		out := map[string]string{}
		for _, p := range l.Items {
			out[p.Namespace+"/"+p.Name] = p.ResourceVersion
		}
		return out
	}()
	for name, h := range holders {
		require.Eventually(t, func() bool {
			got, _ := h.snapshot()
			return fmt.Sprint(got) == fmt.Sprint(want)
		}, 20*time.Second, 20*time.Millisecond, "%s: the handler does not hold the selected objects", name)
		_, faults := h.snapshot()
		require.Empty(t, faults, "%s: event sequences client-go does not give", name)
	}
}

// TestS53ByObjectNamespacesOverDefaults: ByObject Namespaces replace DefaultNamespaces for
// their type (reads of the type's other namespaces are refused, the default namespaces stay
// readable for other types), with a namespace's own label selector and transform.
func TestS53ByObjectNamespacesOverDefaults(t *testing.T) {
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, ns := range []string{ns1, ns2, ns3} {
		createPods(t, cl, ns, "p", 3)
		for i := range 2 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"i": fmt.Sprint(i)}}}
			require.NoError(t, cl.Create(ctx, cm))
		}
	}
	odd, err := labels.Parse("group=odd")
	require.NoError(t, err)
	mark := func(o any) (any, error) {
		if m, ok := o.(client.Object); ok {
			a := m.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["s53"] = "marked"
			m.SetAnnotations(a)
		}
		return o, nil
	}
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c, err := newFn(cp.AdminConfig(), cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}},
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {
				Namespaces: map[string]cache.Config{ns2: {}, ns3: {LabelSelector: odd, Transform: mark}},
			}},
		})
		require.NoError(t, err)
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		out := map[string]any{}
		for _, ns := range []string{ns1, ns2, ns3} {
			for _, name := range []string{"p-00", "p-01"} {
				var p corev1.Pod
				err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)
				out[fmt.Sprintf("get pod %s %s", ns[len(ns)-4:], name)] = strings.ReplaceAll(s53Err(err), ns, "NS") + " " + p.Annotations["s53"]
			}
			var cm corev1.ConfigMap
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-1"}, &cm)
			out["get cm "+ns[len(ns)-4:]] = strings.ReplaceAll(s53Err(err), ns, "NS") + " " + cm.Name
			var pl corev1.PodList
			err = c.List(ctx, &pl, client.InNamespace(ns))
			out["list pods "+ns[len(ns)-4:]] = strings.ReplaceAll(s53Err(err), ns, "NS") + " " + strings.Join(s52Keys(t, &pl), ",")
		}
		var pl corev1.PodList
		err = c.List(ctx, &pl)
		out["list pods all"] = s53Err(err) + " " + strings.Join(s52Keys(t, &pl), ",")
		ml := metadataPodList()
		err = c.List(ctx, ml)
		out["list pod metadata all"] = s53Err(err) + " " + strings.Join(s52Keys(t, ml), ",")
		var cml corev1.ConfigMapList
		err = c.List(ctx, &cml)
		var cms []string
		for _, k := range s52Keys(t, &cml) {
			if strings.HasPrefix(k, ns1+"/") || strings.HasPrefix(k, ns2+"/") || strings.HasPrefix(k, ns3+"/") {
				cms = append(cms, k)
			}
		}
		out["list cms all"] = s53Err(err) + " " + strings.Join(cms, ",")
		return out
	})
}

// TestS53NestedTypeMetaByContentType: a StatefulSet read typed (Get, List, a handler, a
// transform) and unstructured with the rest.Config's content type left empty (controller-runtime reads
// client-go's types as protobuf) and set to JSON: its volumeClaimTemplates' TypeMeta is as
// controller-runtime's cache has it.
func TestS53NestedTypeMetaByContentType(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	zero := int32(0)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sts"}, Spec: appsv1.StatefulSetSpec{
		Replicas: &zero, ServiceName: "svc", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sts"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sts"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
	require.NoError(t, cl.Create(ctx, sts))
	for _, ct := range []string{"", "application/json"} {
		t.Run("content-type="+ct, func(t *testing.T) {
			s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
				cfg := cp.AdminConfig()
				cfg.ContentType = ct
				var mu sync.Mutex
				var transformed, handled metav1.TypeMeta
				c, err := newFn(cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}},
					ByObject: map[client.Object]cache.ByObject{&appsv1.StatefulSet{}: {Transform: func(o any) (any, error) {
						if s, ok := o.(*appsv1.StatefulSet); ok && len(s.Spec.VolumeClaimTemplates) > 0 {
							mu.Lock()
							transformed = s.Spec.VolumeClaimTemplates[0].TypeMeta
							mu.Unlock()
						}
						return o, nil
					}}}})
				require.NoError(t, err)
				inf, err := c.GetInformer(ctx, &appsv1.StatefulSet{})
				require.NoError(t, err)
				reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
					mu.Lock()
					defer mu.Unlock()
					handled = o.(*appsv1.StatefulSet).Spec.VolumeClaimTemplates[0].TypeMeta
				}})
				require.NoError(t, err)
				run(t, c)
				require.True(t, c.WaitForCacheSync(ctx))
				require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
				out := map[string]any{}
				var got appsv1.StatefulSet
				require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(sts), &got))
				out["get"] = got.Spec.VolumeClaimTemplates[0].TypeMeta
				out["get kind"] = got.TypeMeta
				var l appsv1.StatefulSetList
				require.NoError(t, c.List(ctx, &l))
				require.Len(t, l.Items, 1)
				out["list"] = l.Items[0].Spec.VolumeClaimTemplates[0].TypeMeta
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
				require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(sts), u))
				vcts, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumeClaimTemplates")
				require.Len(t, vcts, 1)
				vct := vcts[0].(map[string]any)
				out["get unstructured"] = fmt.Sprint(vct["apiVersion"], " ", vct["kind"])
				mu.Lock()
				defer mu.Unlock()
				out["transform"] = transformed
				out["handler"] = handled
				return out
			})
		})
	}
}

// TestS53TransformInputs: what a transform gets, by Go type and TypeMeta, from a typed
// informer and from a metadata-only one, for objects of the initial list and of watch
// events.
func TestS53TransformInputs(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 1)
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-0"}}))
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		var mu sync.Mutex
		seen := map[string]any{}
		record := func(in any) (any, error) {
			o, ok := in.(client.Object)
			if ok && o.GetNamespace() == ns {
				mu.Lock()
				seen[fmt.Sprintf("%T %s", in, o.GetName())] = o.GetObjectKind().GroupVersionKind().String()
				mu.Unlock()
			}
			return in, nil
		}
		c, err := newFn(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: record})
		require.NoError(t, err)
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		require.NoError(t, c.List(ctx, metadataPodList()))
		require.NoError(t, c.List(ctx, &corev1.ConfigMapList{}))
		createPods(t, cl, ns, "q", 1)
		require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-1"}}))
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) >= 4
		}, 10*time.Second, 10*time.Millisecond)
		t.Cleanup(func() {
			_ = cl.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "q-00"}})
			_ = cl.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-1"}})
		})
		// Each cache runs once: the second must not see the first's objects as created.
		require.NoError(t, cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "q-00"}}, client.GracePeriodSeconds(0)))
		require.NoError(t, cl.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-1"}}))
		mu.Lock()
		defer mu.Unlock()
		out := map[string]any{}
		for k, v := range seen {
			out[k] = v
		}
		return out
	})
}
