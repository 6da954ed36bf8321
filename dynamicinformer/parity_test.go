package dynamicinformer_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// TestUpdatesDeletesTombstonesAndRelistAgreeAcrossModes watches the same pod templates in
// every storage mode (unstructured on kindex's decoder, unstructured on client-go's, compact,
// metadata-only) and requires the same handler callbacks from each: adds, updates and
// deletes seen through the watch, then, after the watches were cut, changes made while they
// were away, a compaction, a 410 and a relist, whose deletions reach handlers as
// cache.DeletedFinalStateUnknown tombstones carrying the object's last known state. Each
// mode must also match a model of what handlers should see, and the final caches must hold
// the server's objects. Pod templates have no watch cache in this control plane (TestMain),
// so the watch from the old resourceVersion gets a real 410. Not parallel: the compaction
// affects every watch.
func TestUpdatesDeletesTombstonesAndRelistAgreeAcrossModes(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	pts := cs.CoreV1().PodTemplates(ns)
	key := func(name string) string { return ns + "/" + name }

	// model holds, per object, the callbacks every mode must deliver (parityEvent.model);
	// last, the state of each object as the informers last saw it.
	model := map[string][]string{}
	last := map[string]*corev1.PodTemplate{}
	create := func(name, rev string) *corev1.PodTemplate {
		t.Helper()
		pt, err := pts.Create(ctx, parityPodTemplate(name, rev), metav1.CreateOptions{})
		require.NoError(t, err)
		return pt
	}
	update := func(name, rev string) (old, pt *corev1.PodTemplate) {
		t.Helper()
		old, err := pts.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		pt = old.DeepCopy()
		setParityRev(pt, rev)
		pt, err = pts.Update(ctx, pt, metav1.UpdateOptions{})
		require.NoError(t, err)
		return old, pt
	}
	del := func(name string) {
		t.Helper()
		require.NoError(t, pts.Delete(ctx, name, metav1.DeleteOptions{}))
	}

	for i := range 5 {
		name := fmt.Sprint("pt-", i)
		pt := create(name, "0")
		last[name] = pt
		model[key(name)] = append(model[key(name)], parityAddLine(true, pt))
	}

	modes := startParityModes(t, ctx, ns)
	for _, m := range modes {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		require.NoError(t, m.waitForSync(sctx), m.name)
		cancel()
		require.Equal(t, 1, m.status().Lists, "%s: %v", m.name, m.status())
	}
	waitParityModel(t, modes, model, "initial state")

	// Through the watch: an update, a delete, a create.
	old, pt := update("pt-0", "1")
	last["pt-0"] = pt
	model[key("pt-0")] = append(model[key("pt-0")], parityUpdateLine(old, pt))
	del("pt-1")
	model[key("pt-1")] = append(model[key("pt-1")], parityDeleteLine(last["pt-1"]))
	delete(last, "pt-1")
	pt = create("pt-5", "0")
	last["pt-5"] = pt
	model[key("pt-5")] = append(model[key("pt-5")], parityAddLine(false, pt))
	waitParityModel(t, modes, model, "changes through the watch")
	// Every informer watches from the resourceVersion of the last event: pt-5's creation.
	lastRV := pt.ResourceVersion

	// Disconnect every informer: its next watch waits, from the resourceVersion it has.
	path := "/api/v1/namespaces/" + ns + "/podtemplates"
	for _, m := range modes {
		m.rec.Hold(path)
	}
	for _, m := range modes {
		require.Equal(t, 1, m.rec.Cut(path), "%s: open watches cut", m.name)
	}
	// Changes the informers miss:
	//   - pt-0 deleted: a tombstone with its last known state (rev 1, updated through the watch);
	//   - pt-2 updated: an update from the state they had;
	//   - pt-3 updated then deleted: a tombstone with the state they had, not the missed update;
	//   - pt-6 created: an add;
	//   - pt-7 created then deleted: nothing at all.
	del("pt-0")
	model[key("pt-0")] = append(model[key("pt-0")], parityTombstoneLine(key("pt-0"), last["pt-0"]))
	old, pt = update("pt-2", "2")
	last["pt-2"] = pt
	model[key("pt-2")] = append(model[key("pt-2")], parityUpdateLine(old, pt))
	update("pt-3", "2")
	del("pt-3")
	model[key("pt-3")] = append(model[key("pt-3")], parityTombstoneLine(key("pt-3"), last["pt-3"]))
	pt = create("pt-6", "0")
	model[key("pt-6")] = append(model[key("pt-6")], parityAddLine(false, pt))
	create("pt-7", "0")
	del("pt-7")
	_, err := cp.CompactEtcd(ctx)
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(ctx, cs.CoreV1().PodTemplates(ns).Watch, lastRV) },
		"the apiserver answers 410 for the old resourceVersion")
	for _, m := range modes {
		m.rec.Release()
	}

	// Every cache equals the server, after a relist that followed a 410.
	for _, m := range modes {
		var want, got map[string]string
		testenv.EventuallyWith(t, 60*time.Second, func() bool {
			want, got = parityServerRVs(t, ctx, ns), m.rvs()
			return maps.Equal(want, got)
		}, func() string {
			return fmt.Sprintf("%s: cache differs from the server: want %v, got %v (%v)\n%s", m.name, want, got, m.status(), m.log)
		})
		testenv.Eventually(t, 10*time.Second, func() bool { return m.status().Lists >= 2 }, "%s relisted: %v", m.name, m.status())
		st := m.status()
		require.Equal(t, informer.PhaseSynced, st.Phase, "%s: %v", m.name, st)
		require.GreaterOrEqual(t, counter(t, m.reg, "kindex_informer_errors_total", "reason", "Expired"), 1.0,
			"%s: the relist followed a 410", m.name)
	}
	waitParityModel(t, modes, model, "changes missed while disconnected")

	// The same callbacks in every mode, object by object; content too between content modes.
	// Waited for: a mode's callbacks may still be on their way to its handler.
	ref := modes[0]
	for _, m := range modes[1:] {
		line := (*parityEvent).common
		if m.content {
			line = (*parityEvent).full
		}
		testenv.EventuallyWith(t, 10*time.Second, func() bool {
			return parityEqual(ref.events.byObject(line), m.events.byObject(line))
		}, func() string {
			return fmt.Sprintf("%s's callbacks differ from %s's:\n%s", m.name, ref.name,
				parityDiff(ref.name, ref.events.byObject(line), m.name, m.events.byObject(line)))
		})
	}

	for _, m := range modes {
		evs := m.events.all()
		// Handlers get the front end's object type, in tombstones too.
		wantType := "*unstructured.Unstructured"
		if !m.content {
			wantType = "*v1.PartialObjectMetadata"
		}
		for _, ev := range evs {
			require.Equal(t, wantType, ev.obj.typ, "%s: %s", m.name, ev.full())
			if ev.kind == "update" {
				require.Equal(t, wantType, ev.old.typ, "%s: %s", m.name, ev.full())
			}
		}
		// The tombstones carry the last state the handler saw of the object, whole.
		for _, name := range []string{"pt-0", "pt-3"} {
			var seen []parityEvent
			for _, ev := range evs {
				if ev.key == key(name) {
					seen = append(seen, ev)
				}
			}
			require.GreaterOrEqual(t, len(seen), 2, "%s: %s: %v", m.name, name, seen)
			tomb, prev := seen[len(seen)-1], seen[len(seen)-2]
			require.True(t, tomb.kind == "delete" && tomb.tombstone, "%s: %s: want a tombstone, got %s", m.name, name, tomb.full())
			require.Equal(t, key(name), tomb.tombKey, "%s", m.name)
			require.Equal(t, prev.obj, tomb.obj, "%s: %s: the tombstone's object is not the last state the handler saw", m.name, name)
			lastSeen := last[name]
			require.Equal(t, lastSeen.ResourceVersion, tomb.obj.rv, "%s: %s", m.name, name)
			require.Equal(t, labels.Set(lastSeen.Labels).String(), tomb.obj.labels, "%s: %s", m.name, name)
			if m.content {
				require.Equal(t, lastSeen.Template.Spec.Containers[0].Image, tomb.obj.image, "%s: %s", m.name, name)
				require.Equal(t, labels.Set(lastSeen.Template.Labels).String(), tomb.obj.podLabels, "%s: %s", m.name, name)
			}
		}
	}

	// The final caches hold the server's objects: whole (managedFields aside) in the content
	// modes, names, labels and resourceVersions in metadata-only.
	server := parityServerObjects(t, ctx, ns)
	for _, m := range modes {
		got := m.objects()
		require.Equal(t, slices.Sorted(maps.Keys(server)), slices.Sorted(maps.Keys(got)), m.name)
		for name, want := range server {
			if m.content {
				require.JSONEq(t, want.json, got[name].json, "%s: %s", m.name, name)
			}
			require.Equal(t, want.rv, got[name].rv, "%s: %s", m.name, name)
			require.Equal(t, want.labels, got[name].labels, "%s: %s", m.name, name)
		}
	}
}

// parityPodTemplate is a pod template whose labels, pod labels and image all carry rev.
func parityPodTemplate(name, rev string) *corev1.PodTemplate {
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
	}
	setParityRev(pt, rev)
	return pt
}

func setParityRev(pt *corev1.PodTemplate, rev string) {
	pt.Labels = map[string]string{"rev": rev}
	pt.Template.Labels = map[string]string{"app": pt.Name, "rev": rev}
	pt.Template.Spec.Containers[0].Image = "registry.example/" + pt.Name + ":" + rev
}

// parityMode is one storage mode's informer of pod templates, with its recorder, metrics,
// log and handler.
type parityMode struct {
	name    string
	content bool // the mode hands out whole objects (not metadata-only)
	rec     *testsupport.Recorder
	reg     *prometheus.Registry
	log     *testsupport.Lines
	events  *parityHandler

	waitForSync func(context.Context) error
	status      func() informer.Status
	objects     func() map[string]parityObject
}

func (m *parityMode) rvs() map[string]string {
	out := map[string]string{}
	for name, o := range m.objects() {
		out[name] = o.rv
	}
	return out
}

// parityInformer is what the test uses of an informer of either front end.
type parityInformer[T metav1.Object] interface {
	AddEventHandler(cache.ResourceEventHandler) (*informer.Registration, error)
	List(labels.Selector) ([]T, error)
	Status() informer.Status
	WaitForSync(context.Context) error
	Release()
}

// startParityModes starts one factory per storage mode for ns, each on its own recorder,
// and an informer of pod templates with a recording handler in each.
func startParityModes(t *testing.T, ctx context.Context, ns string) []*parityMode {
	t.Helper()
	newMode := func(name string, content bool) (*parityMode, *rest.Config) {
		m := &parityMode{name: name, content: content, rec: testsupport.NewRecorder(),
			reg: prometheus.NewRegistry(), log: &testsupport.Lines{}, events: &parityHandler{}}
		cfg := cp.AdminConfig()
		cfg.Wrap(m.rec.Wrap)
		return m, cfg
	}
	factoryCtx := func(stop func()) context.Context {
		fctx, cancel := context.WithCancel(ctx)
		t.Cleanup(func() {
			cancel()
			stop()
		})
		return fctx
	}

	dynamic := map[string]func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error){
		"kindex":    dynamicinformer.NewFactory,
		"client-go": dynamicinformer.NewClientGoFactory,
		"compact": func(cfg *rest.Config, opts dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, opts, dynamicinformer.CompactOptions{})
		},
	}
	var modes []*parityMode
	for _, name := range []string{"kindex", "client-go", "compact"} {
		m, cfg := newMode(name, true)
		f, err := dynamic[name](cfg, dynamicinformer.Options{Namespace: ns, Registerer: m.reg, Logger: m.log.Logger(0)})
		require.NoError(t, err, name)
		require.NoError(t, f.Start(factoryCtx(f.Shutdown)), name)
		inf, err := f.Informer(ctx, "podtemplates")
		require.NoError(t, err, name)
		wireParity(t, m, inf)
		modes = append(modes, m)
	}
	m, cfg := newMode("metadata-only", false)
	f, err := metadataonly.NewFactory(cfg, metadataonly.Options{Namespace: ns, Registerer: m.reg, Logger: m.log.Logger(0)})
	require.NoError(t, err)
	require.NoError(t, f.Start(factoryCtx(f.Shutdown)))
	inf, err := f.Informer(ctx, "podtemplates")
	require.NoError(t, err)
	wireParity(t, m, inf)
	return append(modes, m)
}

// wireParity adds m's handler to inf, before inf has synced, and m's views of it.
func wireParity[T metav1.Object](t *testing.T, m *parityMode, inf parityInformer[T]) {
	t.Helper()
	t.Cleanup(inf.Release) // before the factory's shutdown
	_, err := inf.AddEventHandler(m.events)
	require.NoError(t, err, m.name)
	m.waitForSync = inf.WaitForSync
	m.status = inf.Status
	m.objects = func() map[string]parityObject {
		out := map[string]parityObject{}
		for _, o := range must(inf.List(nil)) {
			out[o.GetName()] = newParityObject(t, o)
		}
		return out
	}
}

// parityObject is a cached or served object as the final comparison sees it.
type parityObject struct {
	rv, labels string
	json       string // the whole object without managedFields; unstructured objects only
}

func newParityObject(t *testing.T, o metav1.Object) parityObject {
	t.Helper()
	po := parityObject{rv: o.GetResourceVersion(), labels: labels.Set(o.GetLabels()).String()}
	if u, ok := o.(*unstructured.Unstructured); ok {
		b, err := json.Marshal(withoutManagedFields(u).Object)
		require.NoError(t, err)
		po.json = string(b)
	}
	return po
}

// withoutManagedFields returns a copy of u without metadata.managedFields; u is shared with
// the cache and must not change.
func withoutManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	return c
}

// parityServerObjects lists ns's pod templates through the dynamic client (the content
// modes' form: unstructured, apiVersion and kind set on each item).
func parityServerObjects(t *testing.T, ctx context.Context, ns string) map[string]parityObject {
	t.Helper()
	l, err := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}).
		Namespace(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]parityObject{}
	for i := range l.Items {
		out[l.Items[i].GetName()] = newParityObject(t, &l.Items[i])
	}
	return out
}

func parityServerRVs(t *testing.T, ctx context.Context, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, o := range parityServerObjects(t, ctx, ns) {
		out[name] = o.rv
	}
	return out
}

// parityState is what one callback showed of one object.
type parityState struct {
	typ           string // the Go type handed to the handler
	rv, labels    string
	managedFields bool
	// Content modes only: the pod template's image and pod labels, and a digest of the whole
	// object without managedFields.
	image, podLabels, digest string
}

func newParityState(obj any) parityState {
	st := parityState{typ: fmt.Sprintf("%T", obj)}
	m, err := meta.Accessor(obj)
	if err != nil || obj == nil {
		return st
	}
	st.rv, st.labels, st.managedFields = m.GetResourceVersion(), labels.Set(m.GetLabels()).String(), len(m.GetManagedFields()) > 0
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return st
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "template", "spec", "containers")
	if len(containers) > 0 {
		if c, ok := containers[0].(map[string]any); ok {
			st.image, _ = c["image"].(string)
		}
	}
	podLabels, _, _ := unstructured.NestedStringMap(u.Object, "template", "metadata", "labels")
	st.podLabels = labels.Set(podLabels).String()
	b, err := json.Marshal(withoutManagedFields(u).Object)
	if err != nil {
		st.digest = "unencodable: " + err.Error()
	} else {
		st.digest = fmt.Sprintf("%x", sha256.Sum256(b))[:16]
	}
	return st
}

func (s parityState) common() string {
	return fmt.Sprintf("{rv=%s labels=%s managedFields=%t}", s.rv, s.labels, s.managedFields)
}

func (s parityState) content() string {
	return fmt.Sprintf("{%s image=%s podLabels=%s digest=%s}", s.typ, s.image, s.podLabels, s.digest)
}

// parityEvent is one handler callback.
type parityEvent struct {
	kind      string // add, update or delete
	key       string // namespace/name
	initial   bool   // add: isInInitialList
	tombstone bool   // delete: delivered as a cache.DeletedFinalStateUnknown
	tombKey   string
	old, obj  parityState // old: updates only
}

// common is the callback as every mode must show it.
func (e *parityEvent) common() string {
	switch e.kind {
	case "add":
		return fmt.Sprintf("add initial=%t %s", e.initial, e.obj.common())
	case "update":
		return fmt.Sprintf("update %s -> %s", e.old.common(), e.obj.common())
	}
	return fmt.Sprintf("delete tombstone=%t key=%q %s", e.tombstone, e.tombKey, e.obj.common())
}

// full is common with the content the content modes show.
func (e *parityEvent) full() string {
	if e.kind == "update" {
		return fmt.Sprintf("%s content %s -> %s", e.common(), e.old.content(), e.obj.content())
	}
	return fmt.Sprintf("%s content %s", e.common(), e.obj.content())
}

// model is the callback as the test's model predicts it: the resourceVersion of a delete
// seen through the watch (the deletion's) is left out. A relist that finds an object
// unchanged must not call the handler (as client-go's shared informers do not), so an
// update with equal resourceVersions differs from every line of the model.
func (e *parityEvent) model() string {
	switch {
	case e.kind == "delete" && !e.tombstone:
		return fmt.Sprintf("delete labels=%s", e.obj.labels)
	}
	return e.common()
}

func parityAddLine(initial bool, pt *corev1.PodTemplate) string {
	e := parityEvent{kind: "add", initial: initial, obj: parityModelState(pt)}
	return e.model()
}

func parityUpdateLine(old, pt *corev1.PodTemplate) string {
	e := parityEvent{kind: "update", old: parityModelState(old), obj: parityModelState(pt)}
	return e.model()
}

func parityDeleteLine(pt *corev1.PodTemplate) string {
	e := parityEvent{kind: "delete", obj: parityModelState(pt)}
	return e.model()
}

func parityTombstoneLine(key string, pt *corev1.PodTemplate) string {
	e := parityEvent{kind: "delete", tombstone: true, tombKey: key, obj: parityModelState(pt)}
	return e.model()
}

// parityModelState is what handlers must see of pt: managedFields are cut in every mode.
func parityModelState(pt *corev1.PodTemplate) parityState {
	return parityState{rv: pt.ResourceVersion, labels: labels.Set(pt.Labels).String()}
}

// parityHandler records every callback.
type parityHandler struct {
	mu     sync.Mutex
	events []parityEvent
}

func (h *parityHandler) record(e parityEvent, obj any) {
	if m, err := meta.Accessor(obj); err == nil && obj != nil {
		e.key = m.GetNamespace() + "/" + m.GetName()
	} else {
		e.key = e.tombKey
	}
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *parityHandler) OnAdd(obj any, initial bool) {
	h.record(parityEvent{kind: "add", initial: initial, obj: newParityState(obj)}, obj)
}

func (h *parityHandler) OnUpdate(old, obj any) {
	h.record(parityEvent{kind: "update", old: newParityState(old), obj: newParityState(obj)}, obj)
}

func (h *parityHandler) OnDelete(obj any) {
	e := parityEvent{kind: "delete"}
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		e.tombstone, e.tombKey, obj = true, t.Key, t.Obj
	}
	e.obj = newParityState(obj)
	h.record(e, obj)
}

func (h *parityHandler) all() []parityEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// byObject returns each object's callbacks in order, as line renders them (a callback line
// renders as "" is left out).
func (h *parityHandler) byObject(line func(*parityEvent) string) map[string][]string {
	out := map[string][]string{}
	for _, e := range h.all() {
		if l := line(&e); l != "" {
			out[e.key] = append(out[e.key], l)
		}
	}
	return out
}

func parityEqual(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// parityDiff renders the objects whose callbacks differ between a and b.
func parityDiff(aName string, a map[string][]string, bName string, b map[string][]string) string {
	var sb strings.Builder
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if slices.Equal(a[k], b[k]) {
			continue
		}
		fmt.Fprintf(&sb, "%s:\n  %s:\n    %s\n  %s:\n    %s\n", k,
			aName, strings.Join(a[k], "\n    "), bName, strings.Join(b[k], "\n    "))
	}
	return sb.String()
}

// waitParityModel waits until every mode's handler has seen exactly what model predicts.
func waitParityModel(t *testing.T, modes []*parityMode, model map[string][]string, step string) {
	t.Helper()
	for _, m := range modes {
		testenv.EventuallyWith(t, 30*time.Second, func() bool {
			return parityEqual(model, m.events.byObject((*parityEvent).model))
		}, func() string {
			return fmt.Sprintf("%s: %s: callbacks differ from the model (%v):\n%s", step, m.name, m.status(),
				parityDiff("model", model, m.name, m.events.byObject((*parityEvent).model)))
		})
	}
}
