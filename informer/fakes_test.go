package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/storage"
)

type obj = *metav1.PartialObjectMetadata

// fakeServer is one resource on a fake API server: objects with resource versions, watchers,
// and errors a test can inject into lists and watches.
type fakeServer struct {
	mu       sync.Mutex
	rv       int
	objs     map[string]obj
	watchers map[*fakeWatch]struct{}
	history  []watch.Event // every change, for watches from an older resourceVersion
	listErr  error
	watchErr error
	listGate chan struct{} // if set, lists wait until it is closed
	lists    atomic.Int32
	watches  atomic.Int32
}

func newFakeServer() *fakeServer {
	return &fakeServer{objs: map[string]obj{}, watchers: map[*fakeWatch]struct{}{}}
}

func newObj(ns, name string, labels map[string]string) obj {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "test"}}}}
}

func objKey(o obj) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

func (s *fakeServer) change(t watch.EventType, o obj) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	o = o.DeepCopy()
	o.ResourceVersion = strconv.Itoa(s.rv)
	if t == watch.Deleted {
		delete(s.objs, objKey(o))
	} else {
		s.objs[objKey(o)] = o
	}
	s.history = append(s.history, watch.Event{Type: t, Object: o.DeepCopy()})
	for w := range s.watchers {
		w.ch <- watch.Event{Type: t, Object: o.DeepCopy()}
	}
}

func (s *fakeServer) add(o obj)    { s.change(watch.Added, o) }
func (s *fakeServer) update(o obj) { s.change(watch.Modified, o) }
func (s *fakeServer) remove(o obj) { s.change(watch.Deleted, o) }

func (s *fakeServer) setErrors(listErr, watchErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listErr, s.watchErr = listErr, watchErr
}

// closeWatches ends every open watch, as a server restart does.
func (s *fakeServer) closeWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		w.stopLocked()
	}
}

func (s *fakeServer) list(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	s.lists.Add(1)
	s.mu.Lock()
	gate := s.listGate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listErr != nil {
		return nil, s.listErr
	}
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	for _, o := range s.objs {
		l.Items = append(l.Items, *o.DeepCopy())
	}
	return l, nil
}

func (s *fakeServer) watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	s.watches.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchErr != nil {
		return nil, s.watchErr
	}
	w := &fakeWatch{s: s, ch: make(chan watch.Event, 1000)}
	from, _ := strconv.Atoi(o.ResourceVersion)
	for _, ev := range s.history {
		if rv, _ := strconv.Atoi(ev.Object.(obj).ResourceVersion); rv > from {
			w.ch <- watch.Event{Type: ev.Type, Object: ev.Object.DeepCopyObject()}
		}
	}
	s.watchers[w] = struct{}{}
	return w, nil
}

// fakeWatch is one open watch; its channel is written and closed under the server's lock.
type fakeWatch struct {
	s  *fakeServer
	ch chan watch.Event
}

func (w *fakeWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *fakeWatch) Stop() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.stopLocked()
}

func (w *fakeWatch) stopLocked() {
	if _, ok := w.s.watchers[w]; ok {
		delete(w.s.watchers, w)
		close(w.ch)
	}
}

func (s *fakeServer) watching() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

// noWatchListLW is a ListerWatcher without watch-list support (as fake clients are).
type noWatchListLW struct{ *cache.ListWatch }

func (noWatchListLW) IsWatchListSemanticsUnSupported() bool { return true }

// fakeMode serves fake servers keyed by GVR, with objects stored as PartialObjectMetadata.
type fakeMode struct {
	mu      sync.Mutex
	servers map[schema.GroupVersionResource]*fakeServer
	lws     atomic.Int32 // ListerWatcher calls: one per run
	keep    bool         // storage.Config.KeepManagedFields of the factory that built it
	// undecodable names stored objects whose decode fails, as a corrupt one would.
	undecodable sync.Map
	// decodes makes the mode say that Object decodes (storage.Decoding), as the compact
	// mode does.
	decodes bool
	// onObject, if set, is called by each Object.
	onObject atomic.Pointer[func()]
}

func (m *fakeMode) ObjectDecodes() bool { return m.decodes }

// builder hands the mode to a factory, as a front end's ModeBuilder does.
func (m *fakeMode) builder() ModeBuilder {
	return func(_ *rest.Config, sc storage.Config) (storage.Mode, error) {
		m.keep = sc.KeepManagedFields
		return m, nil
	}
}

func newFakeMode() *fakeMode {
	return &fakeMode{servers: map[schema.GroupVersionResource]*fakeServer{}}
}

func (m *fakeMode) server(gvr schema.GroupVersionResource) *fakeServer {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[gvr]
	if s == nil {
		s = newFakeServer()
		m.servers[gvr] = s
	}
	return s
}

func (m *fakeMode) Name() string                  { return "fake" }
func (m *fakeMode) ExampleObject() runtime.Object { return &metav1.PartialObjectMetadata{} }
func (m *fakeMode) Object(item any) (any, error) {
	if fn := m.onObject.Load(); fn != nil {
		(*fn)()
	}
	if o, ok := item.(obj); ok && o != nil {
		if _, bad := m.undecodable.Load(o.Name); bad {
			return nil, errors.New("corrupt object")
		}
	}
	return item, nil
}
func (m *fakeMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	return storage.IdentityTransform(m.keep, user)
}

func (m *fakeMode) ListerWatcher(t storage.Target) cache.ListerWatcherWithContext {
	m.lws.Add(1)
	s := m.server(t.Resource.GVR)
	return noWatchListLW{&cache.ListWatch{ListWithContextFunc: s.list, WatchFuncWithContext: s.watch}}
}

// fakeDiscovery serves a set of resources and lets tests emit events.
type fakeDiscovery struct {
	mu     sync.Mutex
	res    map[schema.GroupResource]discovery.Resource
	subs   map[int]func(discovery.Event)
	nextID int
	// missed holds resources the server no longer serves although the cache shows them
	// (a deletion discovery missed): a recheck finds them gone.
	missed   map[schema.GroupResource]bool
	rechecks atomic.Int32
	resolves atomic.Int32 // ResolveGVR calls: each miss makes a real client re-discover
	// afterResources, if set, runs once after a Resources call has taken its answer: events
	// it emits are newer than that answer.
	afterResources func()
}

func newFakeDiscovery(rs ...discovery.Resource) *fakeDiscovery {
	d := &fakeDiscovery{res: map[schema.GroupResource]discovery.Resource{}, subs: map[int]func(discovery.Event){}}
	for _, r := range rs {
		d.res[r.GVR.GroupResource()] = r
	}
	return d
}

func resource(group, version, plural string) discovery.Resource {
	return discovery.Resource{
		GVR:        schema.GroupVersionResource{Group: group, Version: version, Resource: plural},
		GVK:        schema.GroupVersionKind{Group: group, Version: version, Kind: strings.TrimSuffix(plural, "s")},
		Namespaced: true,
		Verbs:      []string{"list", "watch", "get"},
	}
}

func (d *fakeDiscovery) Resolve(_ context.Context, input string) (discovery.Resource, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for gr, r := range d.res {
		if input == gr.Resource || input == resourceName(gr) {
			return r, nil
		}
	}
	return discovery.Resource{}, &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: input}}
}

func (d *fakeDiscovery) ResolveGVR(ctx context.Context, gvr schema.GroupVersionResource) (discovery.Resource, error) {
	d.resolves.Add(1)
	return d.CachedGVR(gvr)
}

func (d *fakeDiscovery) CachedGVR(gvr schema.GroupVersionResource) (discovery.Resource, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.res[gvr.GroupResource()]
	if !ok || (gvr.Version != "" && gvr.Version != r.GVR.Version) {
		return discovery.Resource{}, &meta.NoResourceMatchError{PartialResource: gvr}
	}
	return r, nil
}

// RecheckGVR answers as a fresh round would: a missed removal is applied first.
func (d *fakeDiscovery) RecheckGVR(ctx context.Context, gvr schema.GroupVersionResource) (discovery.Resource, error) {
	d.rechecks.Add(1)
	d.mu.Lock()
	if d.missed[gvr.GroupResource()] {
		delete(d.res, gvr.GroupResource())
	}
	d.mu.Unlock()
	return d.CachedGVR(gvr)
}

// miss makes the server stop serving r without the cache learning of it.
func (d *fakeDiscovery) miss(r discovery.Resource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.missed == nil {
		d.missed = map[schema.GroupResource]bool{}
	}
	d.missed[r.GVR.GroupResource()] = true
}

func (d *fakeDiscovery) ResolveGVK(_ context.Context, gvk schema.GroupVersionKind) (discovery.Resource, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.res {
		if r.GVK.GroupKind() == gvk.GroupKind() {
			return r, nil
		}
	}
	return discovery.Resource{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind()}
}

func (d *fakeDiscovery) Resources(_ context.Context, f discovery.Filter) ([]discovery.Resource, error) {
	d.mu.Lock()
	var out []discovery.Resource
	for _, r := range d.res {
		if f.Matches(r) {
			out = append(out, r)
		}
	}
	after := d.afterResources
	d.afterResources = nil
	d.mu.Unlock()
	if after != nil {
		after()
	}
	return out, nil
}

func (d *fakeDiscovery) Subscribe(fn func(discovery.Event)) (func(), error) {
	if fn == nil {
		return nil, discovery.ErrNilHandler
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := d.nextID
	d.nextID++
	d.subs[id] = fn
	return func() {
		d.mu.Lock()
		delete(d.subs, id)
		d.mu.Unlock()
	}, nil
}

func (d *fakeDiscovery) emit(ev discovery.Event) {
	d.mu.Lock()
	gr := ev.Resource.GVR.GroupResource()
	switch ev.Type {
	case discovery.Removed:
		delete(d.res, gr)
	default:
		d.res[gr] = ev.Resource
	}
	subs := make([]func(discovery.Event), 0, len(d.subs))
	for _, fn := range d.subs {
		subs = append(subs, fn)
	}
	d.mu.Unlock()
	for _, fn := range subs {
		fn(ev)
	}
}

// fakeAccess answers access reviews from a switch and counts them.
type fakeAccess struct {
	allowed  atomic.Bool // every verb
	listOnly atomic.Bool // list (not watch) even when allowed is false
	checks   atomic.Int32
	lastName atomic.Pointer[string] // the object name of the latest check
	err      atomic.Pointer[error]  // the review's error, when set
}

func (a *fakeAccess) Allowed(_ context.Context, _ schema.GroupVersionResource, _, name string, verbs ...string) (bool, error) {
	a.checks.Add(1)
	a.lastName.Store(&name)
	if err := a.err.Load(); err != nil {
		return false, *err
	}
	for _, v := range verbs {
		if !a.allowed.Load() && !(v == "list" && a.listOnly.Load()) {
			return false, nil
		}
	}
	return true, nil
}

// logLines collects log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: 0})
}

func (l *logLines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// env is a started factory over fakes.
type env struct {
	f      *Factory[obj]
	mode   *fakeMode
	disc   *fakeDiscovery
	access *fakeAccess
	logs   *logLines
}

var (
	widgets = resource("example.com", "v1", "widgets")
	gadgets = resource("example.com", "v1", "gadgets")
)

func newEnv(t *testing.T, opts Options[obj], rs ...discovery.Resource) *env {
	t.Helper()
	return newEnvWith(t, opts, hooks{}, rs...)
}

// newEnvWith is newEnv with hooks (the fakes' access checker and short backoffs
// are always used).
func newEnvWith(t *testing.T, opts Options[obj], in hooks, rs ...discovery.Resource) *env {
	t.Helper()
	return newEnvMode(t, newFakeMode(), opts, in, rs...)
}

// newEnvMode is newEnvWith on the given mode.
func newEnvMode(t *testing.T, mode *fakeMode, opts Options[obj], in hooks, rs ...discovery.Resource) *env {
	t.Helper()
	if len(rs) == 0 {
		rs = []discovery.Resource{widgets, gadgets}
	}
	e := &env{mode: mode, disc: newFakeDiscovery(rs...), access: &fakeAccess{}, logs: &logLines{}}
	opts.Discovery = e.disc
	if opts.Logger.GetSink() == nil {
		opts.Logger = e.logs.logger()
	}
	in.Access = e.access
	in.ReflectorBackoff = &wait.Backoff{Duration: 10 * time.Millisecond, Cap: 50 * time.Millisecond, Steps: 100, Factor: 2}
	if in.RecheckInitial == 0 {
		in.RecheckInitial = 20 * time.Millisecond
	}
	if in.RecheckMax == 0 {
		in.RecheckMax = 100 * time.Millisecond
	}
	f, err := newFactory(&rest.Config{Host: "https://fake.invalid"}, opts, e.mode.builder(), in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	e.f = f
	return e
}

func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within 10s: %s", fmt.Sprintf(msg, args...))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func forbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: resource}, "", fmt.Errorf("no"))
}

func notFoundErr() error { return apierrors.NewNotFound(schema.GroupResource{}, "") }

// recorder is an event handler that records what it is told.
type recorder struct {
	mu      sync.Mutex
	adds    map[string]int
	updates int
	deletes map[string]bool
	tombs   int
	block   chan struct{} // if set, every call waits for it
}

func newRecorder() *recorder { return &recorder{adds: map[string]int{}, deletes: map[string]bool{}} }

func (r *recorder) wait() {
	if r.block != nil {
		<-r.block
	}
}

func (r *recorder) OnAdd(o any, _ bool) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds[objKey(o.(obj))]++
}

func (r *recorder) OnUpdate(_, _ any) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates++
}

func (r *recorder) OnDelete(o any) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		r.tombs++
		r.deletes[t.Key] = true
		return
	}
	r.deletes[objKey(o.(obj))] = true
}

func (r *recorder) addCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.adds {
		n += c
	}
	return n
}

func (r *recorder) deleted(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deletes[key]
}

func (r *recorder) tombstones() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tombs
}

func restConfig() *rest.Config { return &rest.Config{Host: "https://fake.invalid"} }

func discoveryAdded(r discovery.Resource) discovery.Event {
	return discovery.Event{Type: discovery.Added, Resource: r}
}

func discoveryFilterAll() discovery.Filter { return discovery.Filter{} }

func testLogger() logr.Logger { return logr.Discard() }

// testSink counts what reaches it.
type testSink struct {
	errors atomic.Int32
	infos  atomic.Int32
}

func (s *testSink) Init(logr.RuntimeInfo)          {}
func (s *testSink) Enabled(int) bool               { return true }
func (s *testSink) Info(int, string, ...any)       { s.infos.Add(1) }
func (s *testSink) Error(error, string, ...any)    { s.errors.Add(1) }
func (s *testSink) WithValues(...any) logr.LogSink { return s }
func (s *testSink) WithName(string) logr.LogSink   { return s }
func sinkLogger(s logr.LogSink) logr.Logger        { return logr.New(s) }

// must returns v, panicking on err: for List calls inside assertions.
func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// set makes the server serve r (replacing the resource of its group and plural) without
// an event, as a deletion and re-creation between two rounds of discovery would.
func (d *fakeDiscovery) set(r discovery.Resource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.res[r.GVR.GroupResource()] = r
}
