package crcache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
)

// s51Run builds a cache with newFn and opts, starts it, waits for it, and stops it when the
// test ends.
func s51Run(t *testing.T, newFn cache.NewCacheFunc, opts cache.Options) cache.Cache {
	t.Helper()
	c, err := newFn(cp.AdminConfig(), opts)
	require.NoError(t, err)
	run(t, c)
	require.True(t, c.WaitForCacheSync(t.Context()))
	return c
}

func s51JSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// s51Compare runs probe on controller-runtime's cache and on crcache and compares answers.
func s51Compare(t *testing.T, probe func(t *testing.T, newFn cache.NewCacheFunc) map[string]string) {
	cr := probe(t, cache.New)
	kx := probe(t, crcache.New)
	for _, k := range slices.Sorted(maps.Keys(cr)) {
		assert.Equal(t, cr[k], kx[k], "%s", k)
	}
	for _, k := range slices.Sorted(maps.Keys(kx)) {
		_, ok := cr[k]
		assert.True(t, ok, "crcache answered %s, controller-runtime did not", k)
	}
}

// TestS51CopiesAreTheCallers: objects a Get or List returns (UnsafeDisableDeepCopy off) are
// the caller's: changing them, deep inside, changes no later read, typed, unstructured or
// metadata-only, of either cache.
func TestS51CopiesAreTheCallers(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	key := client.ObjectKey{Namespace: ns, Name: "p-00"}
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		out := map[string]string{}
		for round := range 2 {
			var p corev1.Pod
			require.NoError(t, c.Get(ctx, key, &p))
			p.Labels["x"] = "y"
			p.Spec.Containers[0].Image = "mutated"
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "E"})
			u := unstructuredPod()
			require.NoError(t, c.Get(ctx, key, u))
			u.Object["metadata"].(map[string]any)["labels"].(map[string]any)["x"] = "y"
			u.Object["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "mutated"
			m := metadataPod()
			require.NoError(t, c.Get(ctx, key, m))
			m.Labels["x"] = "y"
			m.ManagedFields = nil
			var pl corev1.PodList
			require.NoError(t, c.List(ctx, &pl, client.InNamespace(ns)))
			for i := range pl.Items {
				pl.Items[i].Labels["x"] = "y"
				pl.Items[i].Spec.Containers[0].Image = "mutated"
			}
			ul := unstructuredPodList()
			require.NoError(t, c.List(ctx, ul, client.InNamespace(ns)))
			for i := range ul.Items {
				ul.Items[i].Object["metadata"].(map[string]any)["labels"].(map[string]any)["x"] = "y"
			}
			ml := metadataPodList()
			require.NoError(t, c.List(ctx, ml, client.InNamespace(ns)))
			for i := range ml.Items {
				ml.Items[i].Labels["x"] = "y"
			}

			var again corev1.Pod
			require.NoError(t, c.Get(ctx, key, &again))
			ua := unstructuredPod()
			require.NoError(t, c.Get(ctx, key, ua))
			ma := metadataPod()
			require.NoError(t, c.Get(ctx, key, ma))
			out[fmt.Sprintf("round %d typed", round)] = s51JSON(t, &again)
			out[fmt.Sprintf("round %d unstructured", round)] = s51JSON(t, ua.Object)
			out[fmt.Sprintf("round %d metadata", round)] = s51JSON(t, ma)
			var l2 corev1.PodList
			require.NoError(t, c.List(ctx, &l2, client.InNamespace(ns)))
			out[fmt.Sprintf("round %d list", round)] = sortedJSON(t, l2.Items)
		}
		return out
	})
}

// TestS51ConcurrentReadsAreWhole: typed, unstructured and metadata-only reads of objects
// that change meanwhile each return one version of the object (label and annotation
// written together agree), never older than one the same reader saw before.
func TestS51ConcurrentReadsAreWhole(t *testing.T) {
	cl := adminClient(t)
	ctx := t.Context()
	const n = 3
	for name, newFn := range map[string]cache.NewCacheFunc{"controller-runtime": cache.New, "crcache": crcache.New} {
		t.Run(name, func(t *testing.T) {
			ns := cp.Namespace(t)
			for i := range n {
				p := newPod(ns, fmt.Sprintf("c-%d", i), map[string]string{"n": "0"})
				p.Annotations = map[string]string{"n": "0"}
				require.NoError(t, cl.Create(ctx, p))
			}
			c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
			// Start the three informers before the changes.
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c-0"}, &corev1.Pod{}))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c-0"}, unstructuredPod()))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c-0"}, metadataPod()))
			done := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			var bad []string
			check := func(reader string, last map[string]int, o metav1.Object) {
				l, a := o.GetLabels()["n"], o.GetAnnotations()["n"]
				v, _ := strconv.Atoi(l)
				mu.Lock()
				defer mu.Unlock()
				if l != a {
					bad = append(bad, fmt.Sprintf("%s %s: label %s annotation %s", reader, o.GetName(), l, a))
				}
				if v < last[o.GetName()] {
					bad = append(bad, fmt.Sprintf("%s %s: %d after %d", reader, o.GetName(), v, last[o.GetName()]))
				}
				last[o.GetName()] = v
			}
			readers := map[string]func(last map[string]int){
				"typed": func(last map[string]int) {
					for i := range n {
						var p corev1.Pod
						if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("c-%d", i)}, &p); err == nil {
							check("typed", last, &p)
						}
					}
				},
				"unstructured": func(last map[string]int) {
					l := unstructuredPodList()
					if err := c.List(ctx, l, client.InNamespace(ns)); err == nil {
						for i := range l.Items {
							check("unstructured", last, &l.Items[i])
						}
					}
				},
				"metadata": func(last map[string]int) {
					for i := range n {
						m := metadataPod()
						if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("c-%d", i)}, m); err == nil {
							check("metadata", last, m)
						}
					}
				},
				"typed list": func(last map[string]int) {
					var l corev1.PodList
					if err := c.List(ctx, &l, client.InNamespace(ns)); err == nil {
						for i := range l.Items {
							check("typed list", last, &l.Items[i])
						}
					}
				},
			}
			for _, read := range readers {
				wg.Go(func() {
					last := map[string]int{}
					for {
						select {
						case <-done:
							return
						default:
						}
						read(last)
					}
				})
			}
			for v := 1; v <= 15; v++ {
				for i := range n {
					var p corev1.Pod
					require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("c-%d", i)}, &p))
					p.Labels["n"], p.Annotations["n"] = fmt.Sprint(v), fmt.Sprint(v)
					require.NoError(t, cl.Update(ctx, &p))
				}
			}
			require.Eventually(t, func() bool {
				var l corev1.PodList
				if err := c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{"n": "15"}); err != nil {
					return false
				}
				ml := metadataPodList()
				if err := c.List(ctx, ml, client.InNamespace(ns), client.MatchingLabels{"n": "15"}); err != nil {
					return false
				}
				return len(l.Items) == n && len(ml.Items) == n
			}, 20*time.Second, 20*time.Millisecond)
			close(done)
			wg.Wait()
			assert.Empty(t, bad)
		})
	}
}

// TestS51SelectorsAndTransforms: ByObject label and field selectors with a ByObject
// transform, and a DefaultTransform (not controller-runtime's TransformStripManagedFields)
// for other types: reads of every kind and handler objects.
func TestS51SelectorsAndTransforms(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 4)
	for i := range 2 {
		require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("cm-", i), Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}))
	}
	strip := func(in any) (any, error) {
		if o, ok := in.(metav1.Object); ok {
			o.SetManagedFields(nil)
		}
		return in, nil
	}
	mark := func(in any) (any, error) {
		if o, ok := in.(metav1.Object); ok {
			a := maps.Clone(o.GetAnnotations())
			if a == nil {
				a = map[string]string{}
			}
			a["marked"] = "yes"
			o.SetAnnotations(a)
			o.SetLabels(map[string]string{"i": o.GetLabels()["i"], "group": o.GetLabels()["group"], "marked": "yes"})
		}
		if p, ok := in.(*corev1.Pod); ok {
			p.Spec.Containers[0].Image = "transformed"
		}
		if u, ok := in.(*unstructured.Unstructured); ok {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
			if len(cs) > 0 {
				cs[0].(map[string]any)["image"] = "transformed"
				_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "containers")
			}
		}
		return in, nil
	}
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		c := s51Run(t, newFn, cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform:  strip,
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {
				Label:     mustSelector(t, "group=even"),
				Field:     fields.OneTermNotEqualSelector("metadata.name", "p-02"),
				Transform: mark,
			}},
		})
		out := map[string]string{}
		for kind, newList := range map[string]func() client.ObjectList{
			"typed": func() client.ObjectList { return &corev1.PodList{} }, "unstructured": func() client.ObjectList { return unstructuredPodList() },
			"metadata": func() client.ObjectList { return metadataPodList() },
		} {
			l := newList()
			require.NoError(t, c.List(ctx, l, client.InNamespace(ns)))
			items, err := apimeta.ExtractList(l)
			require.NoError(t, err)
			out["pods "+kind] = sortedJSON(t, items)
			l = newList()
			require.NoError(t, c.List(ctx, l, client.MatchingLabels{"marked": "yes"}))
			items, err = apimeta.ExtractList(l)
			require.NoError(t, err)
			out["pods marked "+kind] = sortedJSON(t, items)
		}
		var cms corev1.ConfigMapList
		require.NoError(t, c.List(ctx, &cms, client.InNamespace(ns)))
		out["configmaps"] = sortedJSON(t, cms.Items)
		var ucms unstructured.UnstructuredList
		ucms.SetAPIVersion("v1")
		ucms.SetKind("ConfigMapList")
		require.NoError(t, c.List(ctx, &ucms, client.InNamespace(ns)))
		for i := range ucms.Items { // controller-runtime leaves the list's resourceVersion empty
			out["configmaps unstructured "+ucms.Items[i].GetName()] = s51JSON(t, ucms.Items[i].Object)
		}
		inf, err := c.GetInformer(ctx, &corev1.Pod{})
		require.NoError(t, err)
		var hmu sync.Mutex
		got := map[string]string{}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
			hmu.Lock()
			defer hmu.Unlock()
			got[o.(client.Object).GetName()] = s51JSON(t, o)
		}})
		require.NoError(t, err)
		require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
		hmu.Lock()
		out["handler adds"] = s51JSON(t, got)
		hmu.Unlock()
		return out
	})
}

// TestS51InformerHandlersAndIndexes: an IndexField registered once the informer runs
// answers MatchingFields for objects cached before and after; a removed handler gets
// nothing more while another does; label selectors that select nothing; WaitForCacheSync
// with an ended context; GetInformer without blocking.
func TestS51InformerHandlersAndIndexes(t *testing.T) {
	cl := adminClient(t)
	ctx := t.Context()
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		ns := cp.Namespace(t)
		createPods(t, cl, ns, "p", 3)
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		out := map[string]string{}
		var pl corev1.PodList
		require.NoError(t, c.List(ctx, &pl))
		out["before index"] = fmt.Sprint(len(pl.Items))
		out["index after start"] = errClass(c.IndexField(ctx, &corev1.Pod{}, "group", func(o client.Object) []string { return []string{o.GetLabels()["group"]} }))
		require.NoError(t, c.List(ctx, &pl, client.MatchingFields{"group": "even"}))
		out["by index"] = fmt.Sprint(sorted(podNames(&pl)...))
		require.NoError(t, c.List(ctx, &pl, client.MatchingFields{"group": "even"}, client.InNamespace(ns)))
		out["by index in namespace"] = fmt.Sprint(sorted(podNames(&pl)...))

		inf, err := c.GetInformer(ctx, &corev1.Pod{})
		require.NoError(t, err)
		gone, kept := newEvents(), newEvents()
		regGone, err := inf.AddEventHandler(gone.handler())
		require.NoError(t, err)
		regKept, err := inf.AddEventHandler(kept.handler())
		require.NoError(t, err)
		require.True(t, toolscache.WaitForCacheSync(ctx.Done(), regGone.HasSynced, regKept.HasSynced))
		gone.mu.Lock()
		out["initial adds"] = fmt.Sprint(len(gone.adds))
		gone.mu.Unlock()
		require.NoError(t, inf.RemoveEventHandler(regGone))
		out["removed registration synced"] = fmt.Sprint(regGone.HasSynced())
		name := "new"
		require.NoError(t, cl.Create(ctx, newPod(ns, name, map[string]string{"group": "even"})))
		require.Eventually(t, func() bool { return kept.added(ns+"/"+name) != nil }, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, c.List(ctx, &pl, client.MatchingFields{"group": "even"}, client.InNamespace(ns)))
		out["by index after create"] = fmt.Sprint(sorted(podNames(&pl)...))
		out["removed handler got"] = fmt.Sprint(gone.added(ns+"/"+name) != nil)
		out["remove again"] = errClass(inf.RemoveEventHandler(regGone))

		for sname, sel := range map[string]labels.Selector{"nothing": labels.Nothing(), "everything": labels.Everything()} {
			var l corev1.PodList
			err := c.List(ctx, &l, client.MatchingLabelsSelector{Selector: sel}, client.InNamespace(ns))
			out["labels "+sname] = errClass(err) + " " + fmt.Sprint(len(l.Items))
		}
		// fields.Nothing(): controller-runtime refuses it (not an exact match), crcache
		// answers an empty list (reader.go says so); not compared.
		var l corev1.PodList

		cmInf, err := c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
		out["non-blocking informer"] = errClass(err)
		require.Eventually(t, cmInf.HasSynced, 10*time.Second, 10*time.Millisecond)
		// WaitForCacheSync with an ended context once synced: controller-runtime's answer
		// is random (a select between "started" and "done"); not compared.
		ended, cancel := context.WithCancel(ctx)
		cancel()
		var p corev1.Pod
		out["get ended context, synced"] = errClass(c.Get(ended, client.ObjectKey{Namespace: ns, Name: "p-00"}, &p))
		out["get not in scheme"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, &notInScheme{}))
		out["get not in scheme, unstructured"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-00"}, ghostObject()))
		ghosts := &unstructured.UnstructuredList{}
		ghosts.SetGroupVersionKind(ghostObject().GroupVersionKind())
		out["list unknown kind, unstructured"] = errClass(c.List(ctx, ghosts))
		out["list by index, unknown kind field"] = errClass(c.List(ctx, &l, client.MatchingFields{"group": "even", "metadata.name": "p-00"}))
		return out
	})
}

// TestS51PagesUnderChurn: a typed List with Limit and Continue while objects are created
// and deleted between pages returns every object present throughout exactly once, and no
// object twice.
func TestS51PagesUnderChurn(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 20)
	c := startCache(t, nil, cache.Options{})
	var all corev1.PodList
	require.Eventually(t, func() bool {
		return c.List(ctx, &all, client.InNamespace(ns)) == nil && len(all.Items) == 20
	}, 10*time.Second, 10*time.Millisecond)
	deleted := map[string]bool{}
	seen := map[string]int{}
	token := ""
	for page := 0; ; page++ {
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, client.InNamespace(ns), client.Limit(4), client.Continue(token)))
		for i := range l.Items {
			seen[l.Items[i].Name]++
			assert.Equal(t, "Pod", l.Items[i].Kind)
		}
		if l.Continue == "" {
			break
		}
		token = l.Continue
		// Delete one object ahead and one behind, create one ahead and one behind.
		ahead := fmt.Sprintf("p-%02d", 19-page)
		behind := fmt.Sprintf("p-%02d", page)
		for _, name := range []string{ahead, behind} {
			if !deleted[name] {
				deleted[name] = true
				require.NoError(t, cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, client.GracePeriodSeconds(0)))
			}
		}
		for _, name := range []string{fmt.Sprintf("p-%02d-a", page), fmt.Sprintf("a-%02d", page)} {
			require.NoError(t, cl.Create(ctx, newPod(ns, name, nil)))
		}
		require.Eventually(t, func() bool {
			var p corev1.Pod
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("a-%02d", page)}, &p) == nil
		}, 10*time.Second, 10*time.Millisecond)
	}
	for name, n := range seen {
		assert.Equal(t, 1, n, "%s returned %d times", name, n)
	}
	for i := range 20 {
		name := fmt.Sprintf("p-%02d", i)
		if !deleted[name] {
			assert.Equal(t, 1, seen[name], "%s, present throughout", name)
		}
	}
}

func ghostObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("nope.example.com/v1")
	u.SetKind("Ghost")
	return u
}

// handlerLog records what handlers of several reads are told, one line per event, each
// object described by desc.
type handlerLog struct {
	desc       func(any) string
	mu         sync.Mutex
	lines      []string
	lastDelete client.Object
}

// watch adds a handler, named kind in the log, to c's informer of obj and waits until it
// has synced.
func (l *handlerLog) watch(ctx context.Context, t *testing.T, c cache.Cache, kind string, obj client.Object) {
	t.Helper()
	inf, err := c.GetInformer(ctx, obj)
	require.NoError(t, err)
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { l.add(kind + " add " + l.desc(o)) },
		UpdateFunc: func(o, n any) { l.add(kind + " update " + l.desc(o) + " -> " + l.desc(n)) },
		DeleteFunc: func(o any) {
			l.add(kind + " delete " + l.desc(o))
			if m, ok := o.(client.Object); ok {
				l.mu.Lock()
				l.lastDelete = m
				l.mu.Unlock()
			}
		},
	})
	require.NoError(t, err)
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced))
}

func (l *handlerLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// count returns how many lines hold s.
func (l *handlerLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// record puts the lines, sorted, in out as "event <i>".
func (l *handlerLog) record(out map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.lines)
	for i, line := range l.lines {
		out[fmt.Sprint("event ", i)] = line
	}
}

// TestS51DeleteCarriesTheFinalState: a handler's delete of an object removed by the update
// that takes its last finalizer off (changing its labels too) gets the object as the
// server last had it, as an update then a delete, in both caches.
func TestS51DeleteCarriesTheFinalState(t *testing.T) {
	cl := adminClient(t)
	ctx := t.Context()
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		ns := cp.Namespace(t)
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		out := map[string]string{}
		log := &handlerLog{desc: func(o any) string {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				return "tombstone " + d.Key
			}
			m := o.(client.Object)
			return fmt.Sprintf("%s labels=%v finalizers=%v deleting=%v", m.GetName(), m.GetLabels(), m.GetFinalizers(), m.GetDeletionTimestamp() != nil)
		}}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		log.watch(ctx, t, c, "typed", &corev1.ConfigMap{})
		log.watch(ctx, t, c, "metadata", meta)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "f", Labels: map[string]string{"v": "0"}, Finalizers: []string{"example.com/hold"}}}
		require.NoError(t, cl.Create(ctx, cm))
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "f", Labels: map[string]string{"v": "0"}, Finalizers: []string{"example.com/hold"}}}
		require.NoError(t, cl.Create(ctx, sec))
		for _, o := range []client.Object{cm, sec} {
			require.NoError(t, cl.Delete(ctx, o))
		}
		require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(cm), cm))
		cm.Finalizers, cm.Labels["v"] = nil, "final"
		require.NoError(t, cl.Update(ctx, cm))
		require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(sec), sec))
		sec.Finalizers, sec.Labels["v"] = nil, "final"
		require.NoError(t, cl.Update(ctx, sec))
		require.Eventually(t, func() bool { return log.count(" delete ") == 2 }, 20*time.Second, 10*time.Millisecond)
		log.record(out)
		log.mu.Lock()
		lastDelete := log.lastDelete
		log.mu.Unlock()
		out["last delete has a resourceVersion"] = fmt.Sprint(lastDelete != nil && lastDelete.GetResourceVersion() != "")
		return out
	})
}

// TestS51InformerLifecycleDetails: HasSyncedChecker of an informer got before Start, an
// IndexField name registered twice, indexes after RemoveInformer, and RemoveEventHandler
// given a registration of another informer.
func TestS51InformerLifecycleDetails(t *testing.T) {
	cl := adminClient(t)
	ctx := t.Context()
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		ns := cp.Namespace(t)
		createPods(t, cl, ns, "p", 2)
		out := map[string]string{}
		c, err := newFn(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		require.NoError(t, err)
		early, err := c.GetInformer(ctx, &corev1.Pod{})
		require.NoError(t, err)
		checker := early.HasSyncedChecker()
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		select {
		case <-checker.Done():
			out["checker before start"] = "done"
		case <-time.After(10 * time.Second):
			out["checker before start"] = "not done"
		}
		select {
		case <-early.HasSyncedChecker().Done():
			out["checker after sync"] = "done"
		case <-time.After(10 * time.Second):
			out["checker after sync"] = "not done"
		}
		idx := func(o client.Object) []string { return []string{o.GetLabels()["group"]} }
		out["index"] = errClass(c.IndexField(ctx, &corev1.Pod{}, "group", idx))
		out["index again"] = errClass(c.IndexField(ctx, &corev1.Pod{}, "group", idx))

		uinf, err := c.GetInformer(ctx, unstructuredPod())
		require.NoError(t, err)
		ureg, err := uinf.AddEventHandler(newEvents().handler())
		require.NoError(t, err)
		out["remove through another informer"] = errClass(early.RemoveEventHandler(ureg))
		treg, err := early.AddEventHandler(newEvents().handler())
		require.NoError(t, err)
		require.True(t, toolscache.WaitForCacheSync(ctx.Done(), treg.HasSynced, ureg.HasSynced))

		require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
		require.Eventually(t, early.IsStopped, 10*time.Second, 10*time.Millisecond)
		out["old registration through the stopped informer"] = errClass(early.RemoveEventHandler(treg))
		again, err := c.GetInformer(ctx, &corev1.Pod{})
		require.NoError(t, err)
		out["old registration through the new informer"] = errClass(again.RemoveEventHandler(treg))
		var pl corev1.PodList
		out["index after remove"] = errClass(c.List(ctx, &pl, client.MatchingFields{"group": "even"}))
		out["index on new informer"] = errClass(c.IndexField(ctx, &corev1.Pod{}, "group", idx))
		out["list by index on new informer"] = errClass(c.List(ctx, &pl, client.MatchingFields{"group": "even"})) + fmt.Sprint(sorted(podNames(&pl)...))
		// An unstructured List by a typed read's index: controller-runtime refuses it (an
		// index per informer), crcache answers it (one informer for both; reader.go's
		// fieldSubject says so); not compared.
		return out
	})
}

// TestS51SelectorTransitions: an object whose labels take it out of a ByObject label
// selector is deleted for handlers and reads, and added again when they bring it back;
// with ReaderFailOnMissingInformer, a read of a namespace outside the cache fails as in
// controller-runtime.
func TestS51SelectorTransitions(t *testing.T) {
	cl := adminClient(t)
	ctx := t.Context()
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		ns, other := cp.Namespace(t), cp.Namespace(t)
		out := map[string]string{}
		c := s51Run(t, newFn, cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: mustSelector(t, "keep=yes")}},
		})
		log := &handlerLog{desc: func(o any) string {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				return "tombstone " + d.Key
			}
			m := o.(client.Object)
			return fmt.Sprintf("%T %s labels=%v", o, m.GetName(), m.GetLabels())
		}}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		log.watch(ctx, t, c, "typed", &corev1.ConfigMap{})
		log.watch(ctx, t, c, "unstructured", u)
		count := log.count
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", Labels: map[string]string{"keep": "yes", "v": "0"}}}
		require.NoError(t, cl.Create(ctx, cm))
		require.Eventually(t, func() bool { return count(" add ") == 2 }, 10*time.Second, 10*time.Millisecond)
		cm.Labels["keep"] = "no"
		require.NoError(t, cl.Update(ctx, cm))
		require.Eventually(t, func() bool { return count(" delete ") == 2 }, 10*time.Second, 10*time.Millisecond)
		out["get after leaving"] = errClass(c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
		cm.Labels["keep"], cm.Labels["v"] = "yes", "1"
		require.NoError(t, cl.Update(ctx, cm))
		require.Eventually(t, func() bool { return count(" add ") == 4 }, 10*time.Second, 10*time.Millisecond)
		var got corev1.ConfigMap
		out["get after coming back"] = errClass(c.Get(ctx, client.ObjectKeyFromObject(cm), &got)) + fmt.Sprint(got.Labels)
		log.record(out)

		strict := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, ReaderFailOnMissingInformer: true})
		defer func() {
			for k, v := range out {
				out[k] = strings.NewReplacer(other, "OTHER", ns, "NS").Replace(v)
			}
		}()
		out["strict get, other namespace"] = errClass(strict.Get(ctx, client.ObjectKey{Namespace: other, Name: "x"}, &corev1.Secret{}))
		out["strict list, other namespace"] = errClass(strict.List(ctx, &corev1.SecretList{}, client.InNamespace(other)))
		g := ghostObject()
		g.SetNamespace(ns)
		out["strict get, kind not served"] = errClass(strict.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, g))
		var notCached *cache.ErrResourceNotCached
		out["strict get, other namespace, ErrResourceNotCached"] = fmt.Sprint(errors.As(strict.Get(ctx, client.ObjectKey{Namespace: other, Name: "x"}, &corev1.Secret{}), &notCached))
		out["strict get, ErrResourceNotCached"] = fmt.Sprint(errors.As(strict.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &corev1.Secret{}), &notCached))
		out["strict get"] = errClass(strict.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &corev1.Secret{}))
		out["strict get, other namespace (message)"] = fmt.Sprint(strict.Get(ctx, client.ObjectKey{Namespace: other, Name: "x"}, &corev1.Secret{}))
		out["strict list, other namespace (message)"] = fmt.Sprint(strict.List(ctx, &corev1.SecretList{}, client.InNamespace(other)))
		out["strict get, no namespace (message)"] = fmt.Sprint(strict.Get(ctx, client.ObjectKey{Name: "x"}, &corev1.Secret{}))
		out["strict list, all namespaces (message)"] = fmt.Sprint(strict.List(ctx, &corev1.SecretList{}))
		out["strict get, cluster-scoped (message)"] = fmt.Sprint(strict.Get(ctx, client.ObjectKey{Name: "x"}, &corev1.Namespace{}))
		return out
	})
}

// TestS51PagesUnderChurnOverNamespaces: TestS51PagesUnderChurn over a cache of two
// namespaces, listed across both, with objects coming and going in both between pages.
func TestS51PagesUnderChurnOverNamespaces(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "p", 8)
	createPods(t, cl, ns2, "p", 8)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {LabelSelector: mustSelector(t, "i!=3")}}})
	var all corev1.PodList
	require.Eventually(t, func() bool { return c.List(ctx, &all) == nil && len(all.Items) == 15 }, 10*time.Second, 10*time.Millisecond)
	deleted := map[string]bool{}
	seen := map[string]int{}
	token := ""
	for page := 0; ; page++ {
		var l corev1.PodList
		require.NoError(t, c.List(ctx, &l, client.Limit(3), client.Continue(token), client.MatchingLabelsSelector{Selector: mustSelector(t, "i")}))
		for i := range l.Items {
			seen[l.Items[i].Namespace+"/"+l.Items[i].Name]++
		}
		if l.Continue == "" {
			break
		}
		token = l.Continue
		for _, ns := range []string{ns1, ns2} {
			for _, name := range []string{fmt.Sprintf("p-%02d", 7-page%8), fmt.Sprintf("p-%02d", page%8)} {
				if !deleted[ns+"/"+name] {
					deleted[ns+"/"+name] = true
					require.NoError(t, cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, client.GracePeriodSeconds(0)))
				}
			}
			require.NoError(t, cl.Create(ctx, newPod(ns, fmt.Sprintf("p-%02d-b", page), map[string]string{"i": "x"})))
		}
		require.Eventually(t, func() bool {
			var p corev1.Pod
			return c.Get(ctx, client.ObjectKey{Namespace: ns2, Name: fmt.Sprintf("p-%02d-b", page)}, &p) == nil
		}, 10*time.Second, 10*time.Millisecond)
		require.Less(t, page, 40)
	}
	for key, n := range seen {
		assert.Equal(t, 1, n, "%s returned %d times", key, n)
	}
	for _, ns := range []string{ns1, ns2} {
		for i := range 8 {
			key := fmt.Sprintf("%s/p-%02d", ns, i)
			if !deleted[key] && !(ns == ns2 && i == 3) {
				assert.Equal(t, 1, seen[key], "%s, present throughout", key)
			}
		}
	}
	assert.Zero(t, seen[ns2+"/p-03"], "outside the namespace's selector")
}

// TestS51RemoveInformerLeavesOtherReads: RemoveInformer of the typed informer of a resource
// also read unstructured and metadata-only stops the typed informer only: the others'
// handlers go on, and a typed read afterwards starts a new informer.
func TestS51RemoveInformerLeavesOtherReads(t *testing.T) {
	cl := adminClient(t)
	ctx := t.Context()
	s51Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]string {
		ns, ns2 := cp.Namespace(t), cp.Namespace(t)
		createPods(t, cl, ns, "p", 2)
		out := map[string]string{}
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}, ns2: {}}})
		evs := map[string]*events{}
		infs := map[string]cache.Informer{}
		for kind, obj := range map[string]client.Object{"typed": &corev1.Pod{}, "unstructured": unstructuredPod(), "metadata": metadataPod()} {
			inf, err := c.GetInformer(ctx, obj)
			require.NoError(t, err)
			ev := newEvents()
			addSynced(t, inf, ev)
			evs[kind], infs[kind] = ev, inf
		}
		require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
		require.Eventually(t, infs["typed"].IsStopped, 10*time.Second, 10*time.Millisecond)
		for kind, inf := range infs {
			out[kind+" stopped"] = fmt.Sprint(inf.IsStopped())
		}
		require.NoError(t, cl.Create(ctx, newPod(ns, "late", nil)))
		require.Eventually(t, func() bool {
			return evs["unstructured"].added(ns+"/late") != nil && evs["metadata"].added(ns+"/late") != nil
		}, 10*time.Second, 10*time.Millisecond)
		var p corev1.Pod
		out["typed get after remove"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "late"}, &p)) + " " + p.Name
		out["typed handler got late"] = fmt.Sprint(evs["typed"].added(ns+"/late") != nil)
		require.NoError(t, c.RemoveInformer(ctx, unstructuredPod()))
		require.Eventually(t, infs["unstructured"].IsStopped, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"}}, client.GracePeriodSeconds(0)))
		require.Eventually(t, func() bool { return evs["metadata"].deleted(ns+"/late") != nil }, 10*time.Second, 10*time.Millisecond)
		out["unstructured handler got delete"] = fmt.Sprint(evs["unstructured"].deleted(ns+"/late") != nil)
		out["metadata stopped at the end"] = fmt.Sprint(infs["metadata"].IsStopped())
		return out
	})
}
