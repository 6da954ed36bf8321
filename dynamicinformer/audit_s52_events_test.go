package dynamicinformer_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// evState is what a handler was told of one object.
type evState struct{ uid, rv string }

// evRec is one event a handler received.
type evRec struct {
	typ      string // add, update, delete
	key      string
	cur, old evState
	initial  bool // an add's isInInitialList
	tomb     bool // a delete's DeletedFinalStateUnknown
}

// evLog records what a handler is told, in order.
type evLog struct {
	mu  sync.Mutex
	evs []evRec
}

func (l *evLog) push(e evRec) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

func (l *evLog) get() []evRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

func stateOf(o any) (string, evState) {
	m, err := meta.Accessor(o)
	if err != nil {
		return fmt.Sprintf("unknown %T", o), evState{}
	}
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return key, evState{uid: string(m.GetUID()), rv: m.GetResourceVersion()}
}

// handler records objects (of any front end's type).
func (l *evLog) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) {
			k, s := stateOf(o)
			l.push(evRec{typ: "add", key: k, cur: s, initial: initial})
		},
		UpdateFunc: func(o, n any) {
			_, os := stateOf(o)
			k, ns := stateOf(n)
			l.push(evRec{typ: "update", key: k, cur: ns, old: os})
		},
		DeleteFunc: func(o any) {
			e := evRec{typ: "delete"}
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				e.tomb, e.key = true, t.Key
				_, e.cur = stateOf(t.Obj)
			} else {
				e.key, e.cur = stateOf(o)
			}
			l.push(e)
		},
	}
}

func itemState[T informer.Object](it informer.Item[T]) (string, evState) {
	return it.Key(), evState{uid: string(it.UID()), rv: it.ResourceVersion()}
}

// itemHandler records Items as handler records objects.
func itemHandler[T informer.Object](l *evLog) informer.ItemHandlerFuncs[T] {
	return informer.ItemHandlerFuncs[T]{
		AddFunc: func(it informer.Item[T], initial bool) {
			k, s := itemState(it)
			l.push(evRec{typ: "add", key: k, cur: s, initial: initial})
		},
		UpdateFunc: func(o, n informer.Item[T]) {
			_, os := itemState(o)
			k, ns := itemState(n)
			l.push(evRec{typ: "update", key: k, cur: ns, old: os})
		},
		DeleteFunc: func(it informer.Item[T], unknown bool) {
			k, s := itemState(it)
			l.push(evRec{typ: "delete", key: k, cur: s, tomb: unknown})
		},
	}
}

func rvNum(rv string) int64 {
	n, _ := strconv.ParseInt(rv, 10, 64)
	return n
}

// replay applies evs in order, checking what client-go's shared informers guarantee: an
// add of an absent object, an update of a present one whose old object is the previous
// new one and whose resourceVersion does not go back for the same UID, a delete of the
// object last handed out, nothing for a UID after its delete. It returns the final state
// and the violations.
func replay(evs []evRec) (map[string]evState, []string) {
	state := map[string]evState{}
	deleted := map[string]bool{}
	var bad []string
	for i, e := range evs {
		if deleted[e.cur.uid] || (e.typ == "update" && deleted[e.old.uid]) {
			bad = append(bad, fmt.Sprintf("#%d %s %s of uid %s after its delete", i, e.typ, e.key, e.cur.uid))
		}
		prev, present := state[e.key]
		switch e.typ {
		case "add":
			if present {
				bad = append(bad, fmt.Sprintf("#%d add of %s present at %v", i, e.key, prev))
			}
			state[e.key] = e.cur
		case "update":
			if !present {
				bad = append(bad, fmt.Sprintf("#%d update of absent %s", i, e.key))
			} else if e.old != prev {
				bad = append(bad, fmt.Sprintf("#%d update of %s: old %v is not the previous new %v", i, e.key, e.old, prev))
			}
			if e.old.uid == e.cur.uid && rvNum(e.cur.rv) < rvNum(e.old.rv) {
				bad = append(bad, fmt.Sprintf("#%d update of %s goes back from %s to %s", i, e.key, e.old.rv, e.cur.rv))
			}
			state[e.key] = e.cur
		case "delete":
			if !present {
				bad = append(bad, fmt.Sprintf("#%d delete of absent %s", i, e.key))
			} else if e.tomb && e.cur != prev {
				// A tombstone holds the last state the informer had.
				bad = append(bad, fmt.Sprintf("#%d tombstone of %s at %v, last handed out %v", i, e.key, e.cur, prev))
			} else if e.cur.uid != prev.uid || rvNum(e.cur.rv) < rvNum(prev.rv) {
				// A watched delete holds the object at its deletion.
				bad = append(bad, fmt.Sprintf("#%d delete of %s at %v, last handed out %v", i, e.key, e.cur, prev))
			}
			deleted[e.cur.uid] = true
			delete(state, e.key)
		}
	}
	return state, bad
}

func serverStates(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) map[string]evState {
	t.Helper()
	l, err := ri.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]evState{}
	for _, o := range l.Items {
		k, s := stateOf(&o)
		out[k] = s
	}
	return out
}

// handlerSet is one informer per storage mode of one resource, each with a recorded
// handler, and client-go's dynamic shared informer beside them.
type handlerSet struct {
	logs map[string]*evLog
	// late adds one more recorded handler to each (client-go's included).
	late func(t *testing.T) (map[string]*evLog, map[string]func() bool)
}

func startHandlerSet(t *testing.T, ns, resource string, gvr schema.GroupVersionResource, resync time.Duration) *handlerSet {
	t.Helper()
	ctx := context.Background()
	opts := dynamicinformer.Options{Namespace: ns, ResyncPeriod: resync}
	type kinf = *dynamicinformer.Informer
	infs := map[string]kinf{}
	for name, mk := range map[string]func() (*dynamicinformer.Factory, error){
		"kindex": func() (*dynamicinformer.Factory, error) { return dynamicinformer.NewFactory(cp.AdminConfig(), opts) },
		"client-go": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewClientGoFactory(cp.AdminConfig(), opts)
		},
		"compact": func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), opts, dynamicinformer.CompactOptions{})
		},
	} {
		f, err := mk()
		require.NoError(t, err)
		fctx, cancel := context.WithCancel(ctx)
		require.NoError(t, f.Start(fctx))
		t.Cleanup(func() { cancel(); f.Shutdown() })
		inf, err := f.Informer(ctx, resource)
		require.NoError(t, err)
		t.Cleanup(inf.Release)
		infs[name] = inf
	}
	mf, err := metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{Namespace: ns, ResyncPeriod: resync})
	require.NoError(t, err)
	mctx, mcancel := context.WithCancel(ctx)
	require.NoError(t, mf.Start(mctx))
	t.Cleanup(func() { mcancel(); mf.Shutdown() })
	minf, err := mf.Informer(ctx, resource)
	require.NoError(t, err)
	t.Cleanup(minf.Release)

	cgf := cgdynamicinformer.NewFilteredDynamicSharedInformerFactory(cp.Dynamic(t), resync, ns, nil)
	cginf := cgf.ForResource(gvr).Informer()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); cgf.Shutdown() })

	add := func(t *testing.T) (map[string]*evLog, map[string]func() bool) {
		logs, synced := map[string]*evLog{}, map[string]func() bool{}
		for name, inf := range infs {
			l := &evLog{}
			reg, err := inf.AddEventHandler(l.handler())
			require.NoError(t, err)
			logs[name], synced[name] = l, reg.HasSynced
		}
		li := &evLog{}
		reg, err := infs["compact"].AddEventHandler(itemHandler[*unstructured.Unstructured](li))
		require.NoError(t, err)
		logs["compact-items"], synced["compact-items"] = li, reg.HasSynced
		lm := &evLog{}
		reg, err = minf.AddEventHandler(lm.handler())
		require.NoError(t, err)
		logs["metadataonly"], synced["metadataonly"] = lm, reg.HasSynced
		lc := &evLog{}
		creg, err := cginf.AddEventHandlerWithResyncPeriod(lc.handler(), resync)
		require.NoError(t, err)
		logs["reference"], synced["reference"] = lc, creg.HasSynced
		return logs, synced
	}
	logs, _ := add(t)
	cgf.Start(stop)
	for _, inf := range infs {
		waitSync(t, inf)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, minf.WaitForSync(sctx))
	require.True(t, cache.WaitForCacheSync(sctx.Done(), cginf.HasSynced))
	return &handlerSet{logs: logs, late: add}
}

// requireReplays waits until every log replays to the server's state, then checks the
// per-object rules.
func requireReplays(t *testing.T, ctx context.Context, logs map[string]*evLog, ri dynamic.ResourceInterface) {
	t.Helper()
	for name, l := range logs {
		var got, want map[string]evState
		var bad []string
		testenv.EventuallyWith(t, 30*time.Second, func() bool {
			want = serverStates(t, ctx, ri)
			got, bad = replay(l.get())
			return fmt.Sprint(got) == fmt.Sprint(want)
		}, func() string { return fmt.Sprintf("%s: replayed %v, server %v", name, got, want) })
		require.Empty(t, bad, "%s: events inconsistent with client-go's", name)
	}
}

// churn drives creates, label and data updates, deletes, a delete and re-create of one
// name (a new UID) and a burst of updates of one object.
func churn(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, mk func(name string) *unstructured.Unstructured, field []string) {
	t.Helper()
	for i := range 8 {
		_, err := ri.Create(ctx, mk(fmt.Sprint("c", i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	update := func(name string, f func(o *unstructured.Unstructured)) {
		o, err := ri.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		f(o)
		_, err = ri.Update(ctx, o, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	update("c0", func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"l": "1"}) })
	update("c1", func(o *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(o.Object, "changed", field...))
	})
	require.NoError(t, ri.Delete(ctx, "c2", metav1.DeleteOptions{}))
	require.NoError(t, ri.Delete(ctx, "c3", metav1.DeleteOptions{}))
	_, err := ri.Create(ctx, mk("c3"), metav1.CreateOptions{})
	require.NoError(t, err)
	for i := range 25 {
		update("c4", func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"n": fmt.Sprint(i)}) })
	}
	require.NoError(t, ri.Delete(ctx, "c5", metav1.DeleteOptions{}))
	_, err = ri.Create(ctx, mk("c5"), metav1.CreateOptions{})
	require.NoError(t, err)
	update("c5", func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"again": "yes"}) })
}

// Handlers of every storage mode, and of client-go's own dynamic shared informer, see the
// same churn of ConfigMaps and of a custom resource: each replays to the server's final
// objects (UIDs and resourceVersions), with no event out of order; a handler added late
// gets an add, in the initial list, for exactly the cached objects and nothing else.
func TestAuditS52HandlersMatchClientGo(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, _, wgvr := installWidgets(t)
	cases := []struct {
		name, resource string
		gvr            schema.GroupVersionResource
		mk             func(string) *unstructured.Unstructured
		field          []string
	}{
		{"configmaps", "configmaps", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			func(name string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}}}
			}, []string{"data", "k"}},
		{"widgets", "widgets." + group, wgvr,
			func(name string) *unstructured.Unstructured { return widget(group, name, 1) }, []string{"spec", "color"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ri := cp.Dynamic(t).Resource(c.gvr).Namespace(ns)
			// Objects before the informers start: their initial list.
			for i := range 3 {
				_, err := ri.Create(ctx, c.mk(fmt.Sprint("pre", i)), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			hs := startHandlerSet(t, ns, c.resource, c.gvr, 0)
			churn(t, ctx, ri, c.mk, c.field)
			requireReplays(t, ctx, hs.logs, ri)
			for name, l := range hs.logs {
				for _, e := range l.get() {
					if e.typ == "add" && e.initial {
						require.Contains(t, []string{ns + "/pre0", ns + "/pre1", ns + "/pre2"}, e.key,
							"%s: only the objects of the initial list are adds in it", name)
					}
				}
			}

			// A handler added to a synced informer: adds for what is there, in the initial list.
			want := serverStates(t, ctx, ri)
			logs, synced := hs.late(t)
			for name, l := range logs {
				testenv.Eventually(t, 30*time.Second, synced[name], "%s: late handler synced", name)
				evs := l.get()
				got := map[string]evState{}
				for _, e := range evs {
					require.Equal(t, "add", e.typ, "%s: late handler's event %v", name, e)
					require.True(t, e.initial, "%s: late handler's add %v has isInInitialList", name, e)
					got[e.key] = e.cur
				}
				require.Equal(t, want, got, "%s: late handler's adds", name)
			}
		})
	}
}

// kindexModes starts an informer of resource in each storage mode, each in a factory of
// its own built on cfg wrapped by wrap, with a recorded handler (and one of Items on the
// compact informer), and waits until they are synced.
func kindexModes(t *testing.T, ns, resource string, wrap func(http.RoundTripper) http.RoundTripper) (map[string]*evLog, map[string]*testsupport.Recorder, map[string]func() informer.Status) {
	t.Helper()
	ctx := context.Background()
	cfg := rest.CopyConfig(cp.AdminConfig())
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	opts := dynamicinformer.Options{Namespace: ns}
	logs, recs := map[string]*evLog{}, map[string]*testsupport.Recorder{}
	status := map[string]func() informer.Status{}
	var syncs []func(context.Context) error
	for name, mk := range map[string]func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error){
		"kindex":    dynamicinformer.NewFactory,
		"client-go": dynamicinformer.NewClientGoFactory,
		"compact": func(cfg *rest.Config, opts dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, opts, dynamicinformer.CompactOptions{})
		},
	} {
		f, rec, _ := testsupport.StartFactory(t, cfg, opts, mk)
		inf, err := f.Informer(ctx, resource)
		require.NoError(t, err)
		t.Cleanup(inf.Release)
		l := &evLog{}
		_, err = inf.AddEventHandler(l.handler())
		require.NoError(t, err)
		logs[name], recs[name], status[name] = l, rec, inf.Status
		if name == "compact" {
			li := &evLog{}
			_, err = inf.AddEventHandler(itemHandler[*unstructured.Unstructured](li))
			require.NoError(t, err)
			logs["compact-items"] = li
		}
		syncs = append(syncs, inf.WaitForSync)
	}
	mf, rec, _ := testsupport.StartFactory(t, cfg, metadataonly.Options{Namespace: ns}, metadataonly.NewFactory)
	minf, err := mf.Informer(ctx, resource)
	require.NoError(t, err)
	t.Cleanup(minf.Release)
	l := &evLog{}
	_, err = minf.AddEventHandler(l.handler())
	require.NoError(t, err)
	logs["metadataonly"], recs["metadataonly"], status["metadataonly"] = l, rec, minf.Status
	syncs = append(syncs, minf.WaitForSync)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, s := range syncs {
		require.NoError(t, s(sctx))
	}
	return logs, recs, status
}

// A delete missed while the watch was down, found by the relist after a 410, reaches
// every mode's handler as client-go's informers hand it: a DeletedFinalStateUnknown keyed
// "namespace/name" holding the last state the informer had; the update missed meanwhile is
// an update from that state.
func TestAuditS52MissedDeleteIsATombstone(t *testing.T) {
	ctx := context.Background()
	ns, pts := podTemplates(t, 4)
	logs, recs, _ := kindexModes(t, ns, "podtemplates", nil)
	requireReplays(t, ctx, logs, pts)
	o3, err := pts.Get(ctx, "o3", metav1.GetOptions{})
	require.NoError(t, err)
	o3.SetLabels(map[string]string{"seen": "yes"})
	o3, err = pts.Update(ctx, o3, metav1.UpdateOptions{})
	require.NoError(t, err)
	requireReplays(t, ctx, logs, pts)
	before := serverStates(t, ctx, pts)

	path := "/namespaces/" + ns + "/podtemplates"
	for name, rec := range recs {
		rec.Hold(path)
		require.Equal(t, 1, rec.Cut(path), name)
	}
	o0, err := pts.Get(ctx, "o0", metav1.GetOptions{})
	require.NoError(t, err)
	o0.SetLabels(map[string]string{"missed": "yes"})
	_, err = pts.Update(ctx, o0, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, pts.Delete(ctx, "o1", metav1.DeleteOptions{}))
	// Deleted and created again under a new UID: an update from the old object to the new.
	o2, err := pts.Get(ctx, "o2", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, pts.Delete(ctx, "o2", metav1.DeleteOptions{}))
	o2.SetResourceVersion("")
	o2.SetUID("")
	_, err = pts.Create(ctx, o2, metav1.CreateOptions{})
	require.NoError(t, err)
	compactPast(t, ns, o3.GetResourceVersion())
	for _, rec := range recs {
		rec.Release()
	}
	requireReplays(t, ctx, logs, pts)
	for name, l := range logs {
		var dels []evRec
		for _, e := range l.get() {
			if e.typ == "delete" {
				dels = append(dels, e)
			}
		}
		require.Equal(t, []evRec{{typ: "delete", key: ns + "/o1", cur: before[ns+"/o1"], tomb: true}}, dels, name)
		evs := l.get()
		last := map[string]evRec{}
		for _, e := range evs {
			last[e.key] = e
		}
		require.Equal(t, "update", last[ns+"/o2"].typ, name)
		require.Equal(t, before[ns+"/o2"], last[ns+"/o2"].old, name)
	}
}

// gate holds the LISTs (not the watches) of requests whose path contains a part while
// closed.
type gate struct {
	mu     sync.Mutex
	part   string
	closed chan struct{}
}

func (g *gate) wrap(rt http.RoundTripper) http.RoundTripper {
	return testsupport.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
		g.mu.Lock()
		ch, part := g.closed, g.part
		g.mu.Unlock()
		if ch != nil && req.Method == http.MethodGet && strings.Contains(req.URL.Path, part) && req.URL.Query().Get("watch") != "true" {
			select {
			case <-ch:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return rt.RoundTrip(req)
	})
}

func (g *gate) close(part string) {
	g.mu.Lock()
	g.part, g.closed = part, make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) open() {
	g.mu.Lock()
	if g.closed != nil {
		close(g.closed)
		g.closed = nil
	}
	g.mu.Unlock()
}

// After an informer that had synced resumes (here its CRD deleted, which parks it and
// tombstones its objects, then created again), the objects its new list brings are adds
// outside the initial list, as client-go's informer, whose reflector keeps relisting until
// the resource is back, hands them: isInInitialList is true only for the objects of the
// informer's first list (and for the cached objects a new handler is handed).
func TestAuditS52ResumedListIsNotTheInitialList(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, crd, gvr := installWidgets(t)
	ri := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	_, err := ri.Create(ctx, widget(group, "w1", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	g := &gate{}
	logs, _, status := kindexModes(t, ns, "widgets."+group, g.wrap)
	requireReplays(t, ctx, logs, ri)

	g.close("/" + group + "/")
	cp.DeleteCRD(t, crd.Name)
	for name, l := range logs {
		testenv.Eventually(t, 30*time.Second, func() bool {
			st, _ := replay(l.get())
			return len(st) == 0
		}, "%s: the objects of the deleted CRD are deleted", name)
	}
	for name, st := range status {
		testenv.Eventually(t, 30*time.Second, func() bool { return st().Phase == informer.PhaseParked },
			"%s: parked: %v", name, st())
	}
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	_, err = ri.Create(ctx, widget(group, "w2", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	g.open()
	requireReplays(t, ctx, logs, ri)
	for name, l := range logs {
		evs := l.get()
		last := evs[len(evs)-1]
		require.Equal(t, "add", last.typ, name)
		require.Equal(t, ns+"/w2", last.key, name)
		require.False(t, last.initial, "%s: an add after the informer synced is not in the initial list", name)
	}
}

// With Options.ResyncPeriod, every handler of every mode is handed each cached object again
// as an update whose old and new objects are the same, as client-go's handler added with
// that resync period is.
func TestAuditS52ResyncMatchesClientGo(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ri := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	for i := range 3 {
		_, err := ri.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprint("r", i)}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	hs := startHandlerSet(t, ns, "configmaps", gvr, time.Second)
	want := serverStates(t, ctx, ri)
	for name, l := range hs.logs {
		var resynced map[string]int
		testenv.EventuallyWith(t, 20*time.Second, func() bool {
			resynced = map[string]int{}
			for _, e := range l.get() {
				if e.typ == "update" && e.old == e.cur {
					resynced[e.key]++
				}
			}
			for k := range want {
				if resynced[k] < 2 {
					return false
				}
			}
			return true
		}, func() string {
			return fmt.Sprintf("%s: resyncs per object %v, want two of each of %v", name, resynced, want)
		})
		got, bad := replay(l.get())
		require.Empty(t, bad, name)
		require.Equal(t, want, got, name)
	}
}

// HandOffEventHandler, while objects change, returns what the handler has been handed once
// its queued notifications are delivered: the state its events replay to, by key, at the
// same UIDs and resourceVersions; nothing arrives after its channel is closed.
func TestAuditS52HandOffMatchesWhatTheHandlerSaw(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	mk := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}}}
	}
	for i := range 10 {
		_, err := cms.Create(ctx, mk(fmt.Sprint("h", i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for name, newFactory := range map[string]func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error){
		"kindex": dynamicinformer.NewFactory,
		"compact": func(cfg *rest.Config, opts dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, opts, dynamicinformer.CompactOptions{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(), dynamicinformer.Options{Namespace: ns}, newFactory)
			inf, err := f.Informer(ctx, "configmaps")
			require.NoError(t, err)
			defer inf.Release()
			waitSync(t, inf)
			stop := make(chan struct{})
			churned := make(chan struct{})
			go func() { // changes while the handler is handed off
				defer close(churned)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					n := fmt.Sprint("h", i%10)
					if o, err := cms.Get(ctx, n, metav1.GetOptions{}); err == nil {
						if i%3 == 0 {
							_ = cms.Delete(ctx, n, metav1.DeleteOptions{})
						} else {
							o.SetLabels(map[string]string{"i": fmt.Sprint(i)})
							_, _ = cms.Update(ctx, o, metav1.UpdateOptions{})
						}
					} else {
						_, _ = cms.Create(ctx, mk(n), metav1.CreateOptions{})
					}
				}
			}()
			defer func() { close(stop); <-churned }()
			var prev *evLog
			prevLen := 0
			for round := range 5 {
				l := &evLog{}
				reg, err := inf.AddEventHandler(l.handler())
				require.NoError(t, err)
				testenv.Eventually(t, 10*time.Second, func() bool { return len(l.get()) > 15 }, "events flow")
				if prev != nil {
					require.Len(t, prev.get(), prevLen, "round %d: events after the hand-off was done", round)
				}
				seen, done, err := inf.HandOffEventHandler(reg)
				require.NoError(t, err)
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("handed-off handler's notifications not delivered")
				}
				got, bad := replay(l.get())
				require.Empty(t, bad, "round %d", round)
				want := map[string]evState{}
				for k, it := range seen {
					want[k] = evState{uid: string(it.UID()), rv: it.ResourceVersion()}
				}
				require.Equal(t, want, got, "round %d: handed off %d, replayed %d", round, len(want), len(got))
				prev, prevLen = l, len(l.get())
			}
		})
	}
}

// A compact informer restarted from a snapshot, after changes made while it was down
// (creates, updates, deletes, a delete and re-create of one name), hands its handler
// events that replay to the server's objects with no event out of order.
func TestAuditS52SnapshotRestartReplays(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	mk := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}}}
	}
	for i := range 6 {
		_, err := cms.Create(ctx, mk(fmt.Sprint("s", i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	snapshotOnce(t, opts, "configmaps")
	before := serverStates(t, ctx, cms)
	churn(t, ctx, cms, mk, []string{"data", "k"})
	require.NoError(t, cms.Delete(ctx, "s0", metav1.DeleteOptions{}))
	require.NoError(t, cms.Delete(ctx, "s1", metav1.DeleteOptions{}))
	_, err := cms.Create(ctx, mk("s1"), metav1.CreateOptions{})
	require.NoError(t, err)

	fx := startCompact(t, opts)
	l := &evLog{}
	inf, err := fx.f.Informer(ctx, "configmaps", informer.WithEventHandler(l.handler()))
	require.NoError(t, err)
	defer inf.Release()
	reg := inf.Registrations()[0]
	waitSync(t, inf)
	testenv.Eventually(t, 10*time.Second, reg.HasSynced, "registration synced")
	requireReplays(t, ctx, map[string]*evLog{"snapshot": l}, cms)
	for _, e := range l.get() {
		if e.typ == "add" && e.initial {
			require.Equal(t, before[e.key], e.cur, "an add in the initial list is a snapshot's object: %v", e)
		}
	}
}
