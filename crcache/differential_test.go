package crcache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
)

// TestSameAnswersAsControllerRuntime runs the same reads, informer calls and error cases on
// controller-runtime's cache and on crcache, over the same objects and options, and compares
// what they answer: objects (typed, unstructured, metadata-only, their kinds), list metadata,
// errors, handler and transform inputs. Only what crcache documents as its own differs, and
// is left out here (order of lists, Limit with Continue, selectors beyond equality).
func TestSameAnswersAsControllerRuntime(t *testing.T) {
	ns1, ns2, other := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, ns := range []string{ns1, ns2, other} {
		createPods(t, cl, ns, "p", 3, "set", ns1)
		require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Labels: map[string]string{"set": ns1}}, Data: map[string]string{"k": "v"}}))
		require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", Labels: map[string]string{"set": ns1}}, StringData: map[string]string{"k": "v"}}))
	}

	probe := func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		out := map[string]string{}
		put := func(k string, v any) {
			switch x := v.(type) {
			case error:
				v = errClass(x)
				if x != nil {
					out[k+" (message)"] = x.Error()
				}
			case string:
			default:
				b, err := json.Marshal(x)
				require.NoError(t, err)
				v = string(b)
			}
			out[k] = v.(string)
		}
		var mu sync.Mutex
		transformed := map[string]bool{}
		seen := func(in any) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			kind := "?"
			if o, ok := in.(runtime.Object); ok {
				kind = o.GetObjectKind().GroupVersionKind().Kind
			}
			transformed[fmt.Sprintf("%T kind=%q", in, kind)] = true
			return in, nil
		}
		c, err := newFn(cp.AdminConfig(), cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}},
			DefaultTransform:  seen,
		})
		require.NoError(t, err)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Start(runCtx) }()
		defer func() {
			cancel()
			require.NoError(t, <-done)
		}()
		require.True(t, c.WaitForCacheSync(ctx))

		key := client.ObjectKey{Namespace: ns1, Name: "p-01"}
		var p corev1.Pod
		put("get typed", c.Get(ctx, key, &p))
		put("get typed object", &p)
		u := unstructuredPod()
		put("get unstructured", c.Get(ctx, key, u))
		put("get unstructured object", u.Object)
		m := metadataPod()
		put("get metadata", c.Get(ctx, key, m))
		put("get metadata object", m)
		var shared corev1.Pod
		put("get shared", c.Get(ctx, key, &shared, client.UnsafeDisableDeepCopy))
		shared.SetGroupVersionKind(schema.GroupVersionKind{}) // crcache sets it, controller-runtime leaves it empty
		put("get shared", &shared)

		for name, obj := range map[string]client.Object{"typed": &corev1.Pod{}, "unstructured": unstructuredPod(), "metadata": metadataPod()} {
			put("get missing "+name, c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: "missing"}, obj))
			put("get other namespace "+name, c.Get(ctx, client.ObjectKey{Namespace: other, Name: "p-00"}, obj))
		}
		put("get no namespace", c.Get(ctx, client.ObjectKey{Name: "p-00"}, &corev1.Pod{}))
		var nsObj corev1.Namespace
		put("get cluster-scoped with namespace", c.Get(ctx, client.ObjectKey{Namespace: ns1, Name: other}, &nsObj))
		put("get cluster-scoped name", nsObj.Name)

		sel := []client.ListOption{client.MatchingLabels{"set": ns1}}
		var tl corev1.PodList
		put("list typed", c.List(ctx, &tl, sel...))
		put("list typed items", sortedJSON(t, tl.Items))
		tl.Items = nil
		put("list typed meta", tl)
		ul := unstructuredPodList()
		put("list unstructured", c.List(ctx, ul, sel...))
		put("list unstructured items", sortedJSON(t, ul.Items))
		ul.Items = nil
		if rv, _, _ := unstructured.NestedString(ul.Object, "metadata", "resourceVersion"); rv == "" {
			unstructured.RemoveNestedField(ul.Object, "metadata", "resourceVersion")
		}
		put("list unstructured meta", ul.Object)
		ml := metadataPodList()
		put("list metadata", c.List(ctx, ml, sel...))
		put("list metadata items", sortedJSON(t, ml.Items))
		ml.Items = nil
		put("list metadata meta", ml)
		put("list other namespace", c.List(ctx, &tl, client.InNamespace(other)))
		var one corev1.PodList
		put("list namespace", c.List(ctx, &one, client.InNamespace(ns2), client.MatchingLabels{"group": "odd"}))
		put("list namespace names", sorted(podNames(&one)...))
		var cms corev1.ConfigMapList
		put("list configmaps", c.List(ctx, &cms, client.MatchingLabels{"set": ns1}))
		put("list configmaps items", sortedJSON(t, cms.Items))

		secrets := &metav1.PartialObjectMetadataList{}
		secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		put("list metadata-only", c.List(ctx, secrets, client.MatchingLabels{"set": ns1}))
		put("list metadata-only items", sortedJSON(t, secrets.Items))
		secret := &metav1.PartialObjectMetadata{}
		secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		put("get metadata-only", c.Get(ctx, client.ObjectKey{Namespace: ns2, Name: "s"}, secret))
		put("get metadata-only object", secret)

		put("index", c.IndexField(ctx, &corev1.Pod{}, "group", func(o client.Object) []string { return []string{o.GetLabels()["group"]} }))
		var byField corev1.PodList
		put("list by field", c.List(ctx, &byField, client.MatchingFields{"group": "even"}, client.InNamespace(ns1)))
		put("list by field names", sorted(podNames(&byField)...))
		put("list by unknown field", c.List(ctx, &byField, client.MatchingFields{"nope": "x"}))
		put("list by two fields, one unknown", c.List(ctx, &byField, client.MatchingFields{"group": "even", "nope": "x"}))

		for name, obj := range map[string]client.Object{"typed": &corev1.Pod{}, "unstructured": unstructuredPod(), "metadata": metadataPod()} {
			inf, err := c.GetInformer(ctx, obj)
			put("informer "+name, err)
			var hmu sync.Mutex
			var got []string
			reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{AddFunc: func(o any, initial bool) {
				hmu.Lock()
				defer hmu.Unlock()
				r := o.(runtime.Object)
				got = append(got, fmt.Sprintf("%T kind=%q initial=%v", o, r.GetObjectKind().GroupVersionKind().Kind, initial))
			}})
			put("handler "+name, err)
			require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
			hmu.Lock()
			slices.Sort(got)
			put("handler "+name+" adds", slices.Compact(got))
			hmu.Unlock()
			put("informer synced "+name, fmt.Sprint(inf.HasSynced(), inf.IsStopped()))
		}
		_, err = c.GetInformerForKind(ctx, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		put("informer for kind", err)
		_, err = c.GetInformer(ctx, &notInScheme{})
		put("informer not in scheme", err)
		ghost := &unstructured.UnstructuredList{}
		ghost.SetGroupVersionKind(schema.GroupVersionKind{Group: "nope.example.com", Version: "v1", Kind: "GhostList"})
		put("list unknown kind", c.List(ctx, ghost))
		put("start again", c.Start(ctx))
		put("remove informer", c.RemoveInformer(ctx, &corev1.Secret{}))

		mu.Lock()
		put("transform inputs", slices.Sorted(func(yield func(string) bool) {
			for k := range transformed {
				if !yield(k) {
					return
				}
			}
		}))
		mu.Unlock()
		return out
	}

	cr := probe(t, cache.New)
	kx := probe(t, crcache.New)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range cr {
			if !yield(k) {
				return
			}
		}
	})
	// What crcache documents or words differently: a typed transform sees one input per
	// object whatever reads it (one informer for typed, unstructured and metadata reads) with
	// its kind set; errors say more.
	differ := map[string]bool{
		"transform inputs": true,
	}
	for _, k := range keys {
		if differ[k] || strings.HasSuffix(k, " (message)") {
			continue
		}
		assert.Equal(t, cr[k], kx[k], "%s", k)
	}
	assert.Equal(t, len(cr), len(kx))
	for _, k := range []string{"get missing typed (message)", "get other namespace typed (message)", "get no namespace (message)", "list other namespace (message)"} {
		assert.Equal(t, cr[k], kx[k], "%s", k)
	}
	for k := range kx {
		_, ok := cr[k]
		assert.True(t, ok, "crcache answered %s, controller-runtime did not", k)
	}
}

// errClass describes an error by what callers test of it.
func errClass(err error) string {
	if err == nil {
		return "<nil>"
	}
	var parts []string
	if status, ok := err.(apierrors.APIStatus); ok || apierrors.IsNotFound(err) {
		if ok {
			s := status.Status()
			parts = append(parts, fmt.Sprintf("status %d %s %+v", s.Code, s.Reason, s.Details))
		}
	}
	for name, is := range map[string]func(error) bool{"NotFound": apierrors.IsNotFound, "Timeout": apierrors.IsTimeout,
		"NotRegistered": runtime.IsNotRegisteredError, "NoMatch": apimeta.IsNoMatchError} {
		if is(err) {
			parts = append(parts, name)
		}
	}
	sort.Strings(parts)
	return "error: " + strings.Join(parts, ",")
}

// sortedJSON encodes the items of a list in (namespace, name) order.
func sortedJSON[T any](t *testing.T, items []T) string {
	out := make([]string, 0, len(items))
	for i := range items {
		b, err := json.Marshal(&items[i])
		require.NoError(t, err)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// recorder records what a handler is given, per object, as text.
type recorder struct {
	mu  sync.Mutex
	got map[string][]string
}

func describe(o any) string {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		return "tombstone(" + describe(t.Obj) + ")"
	}
	r, ok := o.(client.Object)
	if !ok {
		return fmt.Sprintf("%T", o)
	}
	return fmt.Sprintf("%T kind=%q %s labels=%v", o, r.GetObjectKind().GroupVersionKind().Kind, r.GetName(), r.GetLabels())
}

func (r *recorder) add(name, ev string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[name] = append(r.got[name], ev)
}

func (r *recorder) handler(ns string) toolscache.ResourceEventHandler {
	keep := func(o any) (string, bool) {
		if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		c, ok := o.(client.Object)
		return c.GetName(), ok && c.GetNamespace() == ns
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) {
			if name, ok := keep(o); ok {
				r.add(name, fmt.Sprintf("add initial=%v %s", initial, describe(o)))
			}
		},
		UpdateFunc: func(o, n any) {
			if name, ok := keep(n); ok {
				r.add(name, fmt.Sprintf("update %s -> %s", describe(o), describe(n)))
			}
		},
		DeleteFunc: func(o any) {
			if name, ok := keep(o); ok {
				r.add(name, "delete "+describe(o))
			}
		},
	}
}

// TestSameEventsAsControllerRuntime: handlers of typed, unstructured and metadata-only
// informers (one of a resource read only as metadata), on controller-runtime's cache and on
// crcache side by side, are given the same adds, updates and deletes, with the same objects.
func TestSameEventsAsControllerRuntime(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", Labels: map[string]string{"v": "0"}}}))
	secret := func() *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		return m
	}
	kinds := map[string]func() client.Object{
		"typed":           func() client.Object { return &corev1.Pod{} },
		"unstructured":    func() client.Object { return unstructuredPod() },
		"metadata":        func() client.Object { return metadataPod() },
		"metadata-secret": func() client.Object { return secret() },
	}
	recs := map[string]map[string]*recorder{}
	for name, newFn := range map[string]cache.NewCacheFunc{"controller-runtime": cache.New, "crcache": crcache.New} {
		c, err := newFn(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		require.NoError(t, err)
		run(t, c)
		recs[name] = map[string]*recorder{}
		for kind, obj := range kinds {
			inf, err := c.GetInformer(ctx, obj())
			require.NoError(t, err)
			rec := &recorder{got: map[string][]string{}}
			reg, err := inf.AddEventHandler(rec.handler(ns))
			require.NoError(t, err)
			require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
			recs[name][kind] = rec
		}
	}

	require.NoError(t, cl.Create(ctx, newPod(ns, "new", map[string]string{"v": "0"})))
	var p corev1.Pod
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, &p))
	p.Labels["v"] = "1"
	require.NoError(t, cl.Update(ctx, &p))
	require.NoError(t, cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p-01"}}, client.GracePeriodSeconds(0)))
	var s corev1.Secret
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s"}, &s))
	s.Labels["v"] = "1"
	require.NoError(t, cl.Update(ctx, &s))
	require.NoError(t, cl.Delete(ctx, &s))

	snapshot := func(r *recorder) map[string][]string {
		r.mu.Lock()
		defer r.mu.Unlock()
		out := map[string][]string{}
		for k, v := range r.got {
			out[k] = slices.Clone(v)
		}
		return out
	}
	for kind := range kinds {
		assert.EventuallyWithT(t, func(c *assert.CollectT) {
			want := snapshot(recs["controller-runtime"][kind])
			deleted := func(evs []string) bool { return len(evs) > 0 && strings.HasPrefix(evs[len(evs)-1], "delete") }
			if kind == "metadata-secret" {
				assert.True(c, deleted(want["s"]))
			} else {
				assert.True(c, deleted(want["p-01"]))
				assert.Len(c, want["p-00"], 2)
				assert.Len(c, want["new"], 1)
			}
			assert.Equal(c, want, snapshot(recs["crcache"][kind]), kind)
		}, 20*time.Second, 50*time.Millisecond, kind)
	}
}

// TestSameSelectionAsControllerRuntime: under several combinations of namespaces, selectors
// and per-type settings, controller-runtime's cache and crcache hold the same objects and
// refuse the same namespaces, for typed, unstructured and metadata-only reads.
func TestSameSelectionAsControllerRuntime(t *testing.T) {
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, ns := range []string{ns1, ns2, ns3} {
		createPods(t, cl, ns, "p", 3, "set", ns1)
	}
	cases := map[string]cache.Options{
		"namespaces and AllNamespaces": {DefaultNamespaces: map[string]cache.Config{ns1: {}, cache.AllNamespaces: {LabelSelector: mustSelector(t, "i!=0")}}},
		"type and default selectors": {DefaultLabelSelector: mustSelector(t, "set="+ns1),
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: mustSelector(t, "group=even")}}},
		"type namespaces over default ones": {DefaultNamespaces: map[string]cache.Config{ns1: {}},
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Namespaces: map[string]cache.Config{ns2: {}, ns3: {LabelSelector: mustSelector(t, "i=1")}}}}},
		"namespace field selector": {DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", ns2)},
		"field selector and namespaces": {DefaultNamespaces: map[string]cache.Config{ns1: {FieldSelector: fields.OneTermEqualSelector("metadata.name", "p-02")}, ns2: {}},
			DefaultLabelSelector: mustSelector(t, "group in (even,odd)")},
	}
	probe := func(t *testing.T, newFn cache.NewCacheFunc, opts cache.Options) map[string]string {
		c, err := newFn(cp.AdminConfig(), opts)
		require.NoError(t, err)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Start(runCtx) }()
		defer func() {
			cancel()
			require.NoError(t, <-done)
		}()
		require.True(t, c.WaitForCacheSync(ctx))
		out := map[string]string{}
		for kind, newList := range map[string]func() client.ObjectList{
			"typed": func() client.ObjectList { return &corev1.PodList{} }, "unstructured": func() client.ObjectList { return unstructuredPodList() },
			"metadata": func() client.ObjectList { return metadataPodList() },
		} {
			for _, ns := range []string{"", ns1, ns2, ns3} {
				l := newList()
				err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"set": ns1})
				items, _ := apimeta.ExtractList(l)
				var keys []string
				for _, o := range items {
					m, _ := apimeta.Accessor(o)
					keys = append(keys, m.GetNamespace()+"/"+m.GetName())
				}
				slices.Sort(keys)
				out[fmt.Sprintf("list %s in %q", kind, ns)] = errClass(err) + " " + strings.Join(keys, ",")
			}
		}
		for kind, newObj := range map[string]func() client.Object{
			"typed": func() client.Object { return &corev1.Pod{} }, "unstructured": func() client.Object { return unstructuredPod() },
			"metadata": func() client.Object { return metadataPod() },
		} {
			for _, ns := range []string{ns1, ns2, ns3} {
				for _, name := range []string{"p-00", "p-01", "p-02"} {
					out[fmt.Sprintf("get %s %s/%s", kind, ns, name)] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, newObj()))
				}
			}
		}
		return out
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			cr := probe(t, cache.New, opts)
			kx := probe(t, crcache.New, opts)
			for _, k := range slices.Sorted(maps.Keys(cr)) {
				assert.Equal(t, cr[k], kx[k], "%s", k)
			}
		})
	}
}

// TestSameInformerStatesAsControllerRuntime: what an informer and a registration say of
// themselves across RemoveEventHandler, RemoveInformer and a new GetInformer, on
// controller-runtime's cache and on crcache.
func TestSameInformerStatesAsControllerRuntime(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 1)
	probe := func(t *testing.T, newFn cache.NewCacheFunc) []string {
		c, err := newFn(cp.AdminConfig(), cache.Options{})
		require.NoError(t, err)
		var out []string
		state := func(step string, inf cache.Informer, reg toolscache.ResourceEventHandlerRegistration) {
			s := fmt.Sprintf("%s: informer synced=%v stopped=%v", step, inf.HasSynced(), inf.IsStopped())
			if reg != nil {
				s += fmt.Sprintf(" registration synced=%v", reg.HasSynced())
			}
			out = append(out, s)
		}
		inf, err := c.GetInformer(ctx, &corev1.Pod{})
		require.NoError(t, err)
		reg, err := inf.AddEventHandler(newEvents().handler())
		require.NoError(t, err)
		state("before start", inf, reg)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Start(runCtx) }()
		require.True(t, c.WaitForCacheSync(ctx))
		require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
		state("synced", inf, reg)
		require.NoError(t, inf.RemoveEventHandler(reg))
		state("handler removed", inf, nil)
		require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
		require.Eventually(t, inf.IsStopped, 10*time.Second, 10*time.Millisecond)
		state("informer removed", inf, nil)
		_, err = inf.AddEventHandler(newEvents().handler())
		out = append(out, fmt.Sprintf("handler on a removed informer: error=%v", err != nil))
		again, err := c.GetInformer(ctx, &corev1.Pod{})
		require.NoError(t, err)
		state("informer again", again, nil)
		out = append(out, fmt.Sprintf("same informer again: %v", again == inf))
		cancel()
		require.NoError(t, <-done)
		require.Eventually(t, again.IsStopped, 10*time.Second, 10*time.Millisecond)
		state("cache stopped", again, nil)
		return out
	}
	assert.Equal(t, probe(t, cache.New), probe(t, crcache.New))
}
