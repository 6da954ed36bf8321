package crcache_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// events records what a handler was given.
type events struct {
	mu      sync.Mutex
	adds    map[string]any
	updates []any
	deletes map[string]any
	ndel    int // OnDelete calls
}

func newEvents() *events { return &events{adds: map[string]any{}, deletes: map[string]any{}} }

func keyOf(obj any) string {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return t.Key
	}
	o := obj.(client.Object)
	return o.GetNamespace() + "/" + o.GetName()
}

func (e *events) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.adds[keyOf(obj)] = obj
		},
		UpdateFunc: func(_, obj any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.updates = append(e.updates, obj)
		},
		DeleteFunc: func(obj any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.deletes[keyOf(obj)] = obj
			e.ndel++
		},
	}
}

func (e *events) added(key string) any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.adds[key]
}

func (e *events) deleted(key string) any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.deletes[key]
}

func (e *events) deleteCalls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ndel
}

func (e *events) lastUpdate() any {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.updates) == 0 {
		return nil
	}
	return e.updates[len(e.updates)-1]
}

// TestInformerHandlers: handlers get objects of the kind they asked for, for the objects
// cached before and the changes after; registrations sync; removal stops delivery.
func TestInformerHandlers(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "old", 2)
	c := startCache(t, nil, cache.Options{})

	typedInf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	assert.True(t, typedInf.HasSynced())
	assert.False(t, typedInf.IsStopped())
	unsInf, err := c.GetInformer(ctx, unstructuredPod())
	require.NoError(t, err)
	metaInf, err := c.GetInformerForKind(ctx, podGVK)
	require.NoError(t, err)
	assert.Same(t, typedInf, metaInf, "GetInformerForKind of a scheme kind is the typed informer")
	mInf, err := c.GetInformer(ctx, metadataPod())
	require.NoError(t, err)

	typed, uns, meta := newEvents(), newEvents(), newEvents()
	regs := map[*events]toolscache.ResourceEventHandlerRegistration{}
	for inf, ev := range map[cache.Informer]*events{typedInf: typed, unsInf: uns, mInf: meta} {
		reg, err := inf.AddEventHandler(ev.handler())
		require.NoError(t, err)
		regs[ev] = reg
		select {
		case <-reg.HasSyncedChecker().Done():
		case <-time.After(10 * time.Second):
			t.Fatal("registration did not sync")
		}
		assert.True(t, reg.HasSynced())
	}
	oldKey := ns + "/old-01"
	require.IsType(t, &corev1.Pod{}, typed.added(oldKey), "initial objects come as adds")
	require.IsType(t, &unstructured.Unstructured{}, uns.added(oldKey))
	require.IsType(t, &metav1.PartialObjectMetadata{}, meta.added(oldKey))

	p := newPod(ns, "new", map[string]string{"app": "x"})
	require.NoError(t, cl.Create(ctx, p))
	key := ns + "/new"
	testenv.Eventually(t, 10*time.Second, func() bool {
		return typed.added(key) != nil && uns.added(key) != nil && meta.added(key) != nil
	}, "handlers did not see the new pod")
	got := typed.added(key).(*corev1.Pod)
	assert.Equal(t, p, got, "the object the server returned; TypeMeta empty, as in controller-runtime")
	assert.Equal(t, p.UID, uns.added(key).(*unstructured.Unstructured).GetUID())
	m := meta.added(key).(*metav1.PartialObjectMetadata)
	assert.Equal(t, p.Labels, m.Labels)
	assert.Equal(t, podGVK, m.GroupVersionKind())

	p.Labels["app"] = "y"
	require.NoError(t, cl.Update(ctx, p))
	testenv.Eventually(t, 10*time.Second, func() bool {
		u, ok := typed.lastUpdate().(*corev1.Pod)
		return ok && u.Labels["app"] == "y"
	}, "typed handler did not see the update")

	require.NoError(t, mInf.RemoveEventHandler(regs[meta]))
	require.NoError(t, mInf.RemoveEventHandler(regs[meta]), "removal is idempotent")
	require.NoError(t, cl.Delete(ctx, p))
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, ok := typed.deleted(key).(*corev1.Pod)
		return ok && uns.deleted(key) != nil
	}, "handlers did not see the delete")
	time.Sleep(200 * time.Millisecond)
	assert.Nil(t, meta.deleted(key), "a removed handler gets nothing more")

	// A registration of another informer: nothing, and no error, as in client-go.
	assert.NoError(t, typedInf.RemoveEventHandler(regs[uns]), "a registration of another informer")
	p2 := newPod(ns, "new2", nil)
	require.NoError(t, cl.Create(ctx, p2))
	testenv.Eventually(t, 10*time.Second, func() bool {
		return uns.added(ns+"/new2") != nil
	}, "the unstructured handler was removed through the typed informer")
}

// TestInformerBeforeStart: informers, handlers and indexes requested before Start work once
// it starts; BlockUntilSynced(false) does not wait.
func TestInformerBeforeStart(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	c := newCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})

	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err, "before Start GetInformer returns at once")
	assert.False(t, inf.HasSynced())
	ev := newEvents()
	reg, err := inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	require.NoError(t, inf.AddIndexers(toolscache.Indexers{"byPolicy": func(obj any) ([]string, error) {
		return []string{string(obj.(*corev1.Pod).Spec.RestartPolicy)}, nil
	}}))
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "spec.restartPolicy", func(o client.Object) []string {
		return []string{string(o.(*corev1.Pod).Spec.RestartPolicy)}
	}))
	assert.Error(t, c.IndexField(ctx, &corev1.Pod{}, "spec.restartPolicy", func(client.Object) []string { return nil }),
		"a field is indexed once")

	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))
	assert.True(t, inf.HasSynced())
	select {
	case <-inf.HasSyncedChecker().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("HasSyncedChecker not done")
	}
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "handler added before Start did not sync")
	assert.NotNil(t, ev.added(ns+"/p-02"))

	var never corev1.PodList
	require.NoError(t, c.List(ctx, &never, client.MatchingFields{"spec.restartPolicy": "Never"}))
	assert.Equal(t, []string{"p-01"}, podNames(&never))
	assert.Contains(t, inf.(*crcache.Informer).Statuses()[0].Key.String(), ns)

	// After Start, BlockUntilSynced(false) returns before the informer syncs.
	sinf, err := c.GetInformer(ctx, &corev1.Secret{}, cache.BlockUntilSynced(false))
	require.NoError(t, err)
	require.NotNil(t, sinf)
	assert.EqualError(t, c.Start(ctx), "crcache: informer already started")
}

// TestRemoveInformer: RemoveInformer stops an informer for real, and the kindex informer it
// shares with another read of the resource stops only when both are gone.
func TestRemoveInformer(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	podStatuses := func() []informer.Status {
		var out []informer.Status
		for _, s := range c.Statuses() {
			if s.Key.GVR.Resource == "pods" && s.Phase != informer.PhaseStopped {
				out = append(out, s)
			}
		}
		return out
	}

	typedInf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	unsInf, err := c.GetInformer(ctx, unstructuredPod())
	require.NoError(t, err)
	require.Len(t, podStatuses(), 1, "typed and unstructured reads share one kindex informer")
	ev := newEvents()
	_, err = typedInf.AddEventHandler(ev.handler())
	require.NoError(t, err)

	require.NoError(t, c.RemoveInformer(ctx, &corev1.Pod{}))
	assert.True(t, typedInf.IsStopped())
	assert.False(t, unsInf.IsStopped())
	require.Len(t, podStatuses(), 1, "the unstructured read still holds the kindex informer")
	_, err = typedInf.AddEventHandler(newEvents().handler())
	assert.Error(t, err, "a stopped informer takes no handler")

	require.NoError(t, cl.Create(ctx, newPod(ns, "after-remove", nil)))
	u := unstructuredPodList()
	testenv.Eventually(t, 10*time.Second, func() bool {
		return c.List(ctx, u, client.InNamespace(ns)) == nil && len(u.Items) == 3
	}, "the unstructured read stopped with the typed one")
	time.Sleep(200 * time.Millisecond)
	assert.Nil(t, ev.added(ns+"/after-remove"), "the removed informer's handler got an event")

	require.NoError(t, c.RemoveInformer(ctx, unstructuredPod()))
	testenv.Eventually(t, 10*time.Second, func() bool { return len(podStatuses()) == 0 },
		"the kindex informer did not stop with its last user")

	// Reading again starts a new informer.
	typed2, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	assert.NotSame(t, typedInf, typed2)
	assert.True(t, typed2.HasSynced())
	assert.False(t, typed2.IsStopped())
	var l corev1.PodList
	require.NoError(t, c.List(ctx, &l, client.InNamespace(ns)))
	assert.Len(t, l.Items, 3)
	require.NoError(t, c.RemoveInformer(ctx, &corev1.ConfigMap{}), "removing an informer never made is fine")
}

// TestSharedStorage: typed, unstructured and metadata-only reads of one resource are served
// by one kindex informer; a metadata-only read alone uses a metadata-only informer.
func TestSharedStorage(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}))
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})

	require.NoError(t, c.List(ctx, &corev1.PodList{}))
	require.NoError(t, c.List(ctx, unstructuredPodList()))
	require.NoError(t, c.List(ctx, metadataPodList()))
	cms := &metav1.PartialObjectMetadataList{}
	cms.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	require.NoError(t, c.List(ctx, cms))
	assert.Equal(t, []string{"cm"}, names(ptrs(cms.Items)))

	modes := map[string][]string{}
	for _, s := range c.Statuses() {
		modes[s.Key.GVR.Resource] = append(modes[s.Key.GVR.Resource], s.Key.Mode)
	}
	assert.Len(t, modes["pods"], 1, "one informer for three kinds of reads: %v", modes)
	assert.Len(t, modes["configmaps"], 1)
	assert.NotEqual(t, modes["pods"][0], modes["configmaps"][0], "metadata alone uses the metadata-only mode")
}

// TestMetadataThenWholeShareOneInformer: a resource read as metadata only, then typed, is
// held by one informer once the typed read has synced: the metadata-only informer stops
// (and its watch), metadata reads go on from the other, and the metadata handler is handed
// nothing again (no add, no delete of an object that did not change) and gets the changes
// that follow.
func TestMetadataThenWholeShareOneInformer(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	pods := func() []informer.Status {
		var out []informer.Status
		for _, s := range c.Statuses() {
			if s.Key.GVR.Resource == "pods" && s.Phase != informer.PhaseStopped {
				out = append(out, s)
			}
		}
		return out
	}

	meta := metadataPodList()
	require.NoError(t, c.List(ctx, meta))
	require.Len(t, meta.Items, 3)
	minf, err := c.GetInformer(ctx, metadataPod())
	require.NoError(t, err)
	var adds, updates, deletes atomic.Int32
	var mu sync.Mutex
	var last *metav1.PartialObjectMetadata
	reg, err := minf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { adds.Add(1) },
		UpdateFunc: func(_, obj any) {
			mu.Lock()
			defer mu.Unlock()
			last = obj.(*metav1.PartialObjectMetadata)
			updates.Add(1)
		},
		DeleteFunc: func(any) { deletes.Add(1) },
	})
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "handler did not sync")
	require.EqualValues(t, 3, adds.Load())
	st := pods()
	require.Len(t, st, 1)
	require.Equal(t, "metadata", st[0].Key.Mode)

	var typed corev1.PodList
	require.NoError(t, c.List(ctx, &typed))
	require.Len(t, typed.Items, 3)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		st = pods()
		return len(st) == 1 && st[0].Key.Mode != "metadata"
	}, func() string { return fmt.Sprintf("informers of pods: %v", st) })
	tinf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	assert.Equal(t, tinf.(*crcache.Informer).Statuses()[0].Key, minf.(*crcache.Informer).Statuses()[0].Key,
		"the metadata reads use the typed reads' informer")
	meta = metadataPodList()
	require.NoError(t, c.List(ctx, meta))
	assert.Len(t, meta.Items, 3)
	assert.EqualValues(t, 3, adds.Load(), "nothing handed again")
	assert.Zero(t, updates.Load(), "nothing changed")
	assert.Zero(t, deletes.Load())

	p := typed.Items[0].DeepCopy()
	p.Labels["moved"] = "yes"
	require.NoError(t, cl.Update(ctx, p))
	testenv.Eventually(t, 10*time.Second, func() bool { return updates.Load() == 1 }, "no update after the move")
	mu.Lock()
	assert.Equal(t, "yes", last.Labels["moved"])
	mu.Unlock()
	require.NoError(t, cl.Delete(ctx, p))
	testenv.Eventually(t, 10*time.Second, func() bool { return deletes.Load() == 1 }, "no delete after the move")
	m := metadataPod()
	err = c.Get(ctx, client.ObjectKeyFromObject(p), m)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	assert.Len(t, pods(), 1)

	// Both asked for before Start: one informer from the start.
	c2 := newCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	_, err = c2.GetInformer(ctx, metadataPod())
	require.NoError(t, err)
	_, err = c2.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	run(t, c2)
	require.True(t, c2.WaitForCacheSync(ctx))
	var modes []string
	for _, s := range c2.Statuses() {
		if s.Key.GVR.Resource == "pods" {
			modes = append(modes, s.Key.Mode)
		}
	}
	assert.Equal(t, []string{"compact"}, modes)
}

// TestGetInformerCancelled: a context that ends before the informer syncs gives a timeout,
// as in controller-runtime.
func TestGetInformerCancelled(t *testing.T) {
	c := startCache(t, nil, cache.Options{})
	for _, get := range []func() (cache.Informer, error){
		func() (cache.Informer, error) {
			return c.GetInformer(cancelledContext(t.Context()), &corev1.Endpoints{})
		},
		func() (cache.Informer, error) {
			return c.GetInformerForKind(cancelledContext(t.Context()), corev1.SchemeGroupVersion.WithKind("LimitRange"))
		},
	} {
		inf, err := get()
		require.Error(t, err)
		assert.Nil(t, inf)
		assert.True(t, apierrors.IsTimeout(err), "%v", err)
	}
}

// TestHandlersShareObjects: the handlers and IndexField functions of one informer are handed
// one object per version of a cached object, as controller-runtime's informer hands them
// its stored object, instead of a decode each; a single handler gets objects of its own.
func TestHandlersShareObjects(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})

	var mu sync.Mutex
	indexed := map[string]any{} // key -> the last object the index function was given
	require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
		mu.Lock()
		defer mu.Unlock()
		indexed[o.GetNamespace()+"/"+o.GetName()] = o
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}))
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	one, two := newEvents(), newEvents()
	addSynced(t, inf, one)
	addSynced(t, inf, two)
	p := newPod(ns, "shared", nil)
	require.NoError(t, cl.Create(ctx, p))
	key := ns + "/shared"
	testenv.Eventually(t, 10*time.Second, func() bool { return one.added(key) != nil && two.added(key) != nil },
		"handlers did not see the new pod")
	assert.Same(t, one.added(key), two.added(key), "two handlers, one object")
	mu.Lock()
	assert.Same(t, indexed[key], one.added(key), "the index function's object is the handlers'")
	mu.Unlock()
	assert.Equal(t, p.UID, one.added(key).(*corev1.Pod).UID)

	// A new version is a new object, shared again.
	p.Labels = map[string]string{"v": "2"}
	require.NoError(t, cl.Update(ctx, p))
	testenv.Eventually(t, 10*time.Second, func() bool {
		u1, ok1 := one.lastUpdate().(*corev1.Pod)
		u2, ok2 := two.lastUpdate().(*corev1.Pod)
		return ok1 && ok2 && u1.Labels["v"] == "2" && u2.Labels["v"] == "2"
	}, "handlers did not see the update")
	assert.Same(t, one.lastUpdate(), two.lastUpdate())
	assert.NotSame(t, one.added(key), one.lastUpdate())

	// One handler alone, on an informer of another kind with no index: its own objects.
	unsInf, err := c.GetInformer(ctx, unstructuredPod())
	require.NoError(t, err)
	alone := newEvents()
	addSynced(t, unsInf, alone)
	first := alone.added(key)
	require.NotNil(t, first)
	second := newEvents()
	addSynced(t, unsInf, second)
	assert.NotSame(t, first, second.added(key), "decoded for each while the first handler was alone")
	assert.Equal(t, first, second.added(key))
}

// addSynced adds ev's handler to inf and waits until it has had every cached object.
func addSynced(t *testing.T, inf cache.Informer, ev *events) {
	t.Helper()
	reg, err := inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	require.True(t, toolscache.WaitForCacheSync(t.Context().Done(), reg.HasSynced))
}

// TestReadsRacingRemoveInformer: a read or a GetInformer that races RemoveInformer of the
// informer it reads or waits for starts a new informer, as one after RemoveInformer does,
// instead of failing with the removal.
func TestReadsRacingRemoveInformer(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 20)
	c := startCache(t, nil, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	var removals atomic.Int32
	served := make(chan struct{}, 1) // a read succeeded since the last removal
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Remove the informer as soon as it has served a read: the next read is in flight,
		// or about to be, when it goes.
		for removals.Load() < 50 {
			<-served
			if c.RemoveInformer(ctx, &corev1.Pod{}) == nil {
				removals.Add(1)
			}
		}
	}()
	failures, reads := 0, 0
	for removals.Load() < 50 {
		reads += 3
		if _, err := c.GetInformer(ctx, &corev1.Pod{}); err != nil {
			failures++
			t.Logf("get informer: %v", err)
		}
		var l corev1.PodList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil || len(l.Items) != 20 {
			failures++
			t.Logf("list: %d items, %v", len(l.Items), err)
		}
		var p corev1.Pod
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-03"}, &p); err != nil {
			failures++
			t.Logf("get: %v", err)
		}
		select {
		case served <- struct{}{}:
		default:
		}
	}
	<-done
	t.Logf("%d reads during 50 removals", reads)
	assert.Zero(t, failures)
}

// TestAddIndexersAllOrNothing: AddIndexers adds every index it is given or, as client-go's
// does, none when one of them cannot be added (a name taken, a nil function): a caller can
// fix the call and make it again.
func TestAddIndexersAllOrNothing(t *testing.T) {
	ns := cp.Namespace(t)
	createPods(t, adminClient(t), ns, "p", 1)
	c := startCache(t, nil, cache.Options{})
	inf, err := c.GetInformer(t.Context(), &corev1.Pod{})
	require.NoError(t, err)

	var calls atomic.Int64
	fn := func(any) ([]string, error) { calls.Add(1); return nil, nil }
	require.NoError(t, inf.AddIndexers(toolscache.Indexers{"taken": fn}))
	require.Positive(t, calls.Load(), "an index function runs on the cached objects")

	// Many names, so that whatever the order a map is read in, some come before the
	// failing one.
	batch := func(extra string, extraFn toolscache.IndexFunc) toolscache.Indexers {
		ix := toolscache.Indexers{extra: extraFn}
		for i := range 30 {
			ix[fmt.Sprintf("new-%02d", i)] = fn
		}
		return ix
	}
	calls.Store(0)
	err = inf.AddIndexers(batch("taken", fn))
	require.ErrorIs(t, err, informer.ErrIndexConflict)
	err = inf.AddIndexers(batch("nil", nil))
	require.Error(t, err)
	assert.Zero(t, calls.Load(), "no index of a refused call runs")

	ok := batch("other", fn)
	require.NoError(t, inf.AddIndexers(ok), "none of the refused calls' names were taken")
	assert.Positive(t, calls.Load())
	require.ErrorIs(t, inf.AddIndexers(toolscache.Indexers{"new-00": fn}), informer.ErrIndexConflict,
		"the names of a call that succeeded are taken")
}
