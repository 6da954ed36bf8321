package refs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/subscribe"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/metadataonly"
)

// Options configures a Graph. The zero value watches every resource but events and
// Endpoints (DefaultFilter) with the built-in rules, through factories and a discovery client the graph creates.
type Options struct {
	// Rules are the rules the graph follows. nil: BuiltinRules(); to add rules for custom
	// resources, pass append(refs.BuiltinRules(), yours...).
	Rules []Rule
	// Filter selects the resources to watch. nil: DefaultFilter (everything but events and
	// Endpoints).
	// A reference to a resource the filter leaves out is Unknown, never Missing.
	Filter *discovery.Filter
	// Discovery is a shared discovery client, started by its owner. nil: the graph creates
	// one, shared by its factories, and starts it in Start.
	Discovery *discovery.Client
	// Metadata is a shared metadata-only factory, started by its owner, for the resources
	// whose rules read only metadata (most resources: only their owner references). Its
	// informers are shared with the owner's own use of the factory. nil: the graph creates
	// one.
	Metadata *metadataonly.Factory
	// Objects is a shared factory for the resources whose rules read fields (Pods,
	// workloads, bindings, ...), started by its owner; it must keep the fields the rules read
	// (a compact factory's projection must include every rule's Path: Start refuses one
	// that drops what a rule reads). nil: the graph creates a compact factory projected to
	// what its rules read.
	Objects *dynamicinformer.Factory
	// Logger receives the graph's diagnostics and is handed to the factories it creates.
	// The zero Logger, like logr.Discard(), logs nothing, as the informer factories' Logger:
	// pass klog.Background() to log through klog.
	Logger logr.Logger
}

// DefaultFilter is the filter of Options.Filter nil: every resource but events (of the
// core group and events.k8s.io), which name everything and are used by nothing, and the
// deprecated core Endpoints, which EndpointSlices supersede.
func DefaultFilter() discovery.Filter {
	return discovery.Filter{ExcludeGroups: []string{"events.k8s.io"}, ExcludeResources: []string{"events", "endpoints"}}
}

// Graph is a reference graph over a watch-everything set, kept current event by event.
// Create it with New, start it with Start; its queries (References, Referrers, Dangling,
// Unreferenced, EmptySelectors, Stats) are safe for concurrent use and answer from memory.
type Graph struct {
	g          *graph
	cover      coverFunc
	incomplete func() []schema.GroupResource

	cfg    *rest.Config
	opts   Options
	logger logr.Logger
	// fieldResources are the resources some rule reads fields of: watched through Objects.
	fieldResources []schema.GroupResource

	mu       sync.Mutex
	started  bool
	stopped  bool
	cancel   context.CancelFunc
	run      *running
	stopDone chan struct{}
}

// running is what Start started.
type running struct {
	disc     *discovery.Client
	ownDisc  bool
	meta     *metadataonly.Factory
	ownMeta  bool
	objs     *dynamicinformer.Factory
	ownObjs  bool
	sets     []*watchSet
	unsubs   []func()
	stopOnce sync.Once
}

// watchSet is one watch-all set and the graph's handler on it.
type watchSet struct {
	informer func(schema.GroupResource) (status informer.Status, ok bool)
	members  func() []informer.Status
	synced   func() bool                        // every member's objects handed to the graph
	handed   func(gr schema.GroupResource) bool // gr's
	wait     func(context.Context) error
	stop     func()
}

// New validates the options and rules and returns a Graph that watches nothing until Start.
// A rule that cannot be used is a *RuleError (ErrInvalidRule).
func New(cfg *rest.Config, opts Options) (*Graph, error) {
	if cfg == nil {
		return nil, errors.New("refs: nil rest.Config")
	}
	if opts.Rules == nil {
		opts.Rules = BuiltinRules()
	}
	rules, err := compileRules(opts.Rules)
	if err != nil {
		return nil, err
	}
	if opts.Filter == nil {
		f := DefaultFilter()
		opts.Filter = &f
	}
	g := &Graph{g: newGraph(rules), cfg: rest.CopyConfig(cfg), opts: opts, logger: opts.Logger.WithName("refs")}
	g.cover, g.incomplete = g.covers, g.incompleteResources
	seen := map[schema.GroupResource]bool{}
	for _, r := range rules {
		if r.From != AnyResource && !r.metaOnly && !seen[r.From] {
			seen[r.From] = true
			g.fieldResources = append(g.fieldResources, r.From)
		}
	}
	slices.SortFunc(g.fieldResources, compareGR)
	return g, nil
}

func compareGR(a, b schema.GroupResource) int {
	return strings.Compare(resourceName(a), resourceName(b))
}

// projection is what the rules read, for the compact factory the graph creates.
func (g *Graph) projection() []string {
	var out []string
	for _, r := range g.g.rules {
		if !r.metaOnly {
			out = append(out, r.Path)
			if r.unless != nil {
				out = append(out, r.Unless.Path)
			}
		}
	}
	return out
}

// Start starts watching: the discovery client and factories the graph created, and two
// watch-all sets, one of metadata-only informers for the resources whose rules read only
// metadata and one of the Objects factory for the others, each following CRDs as they come
// and go. It returns once the sets are created; WaitForSync waits for their lists.
// Everything stops when ctx ends or on Shutdown. A Graph starts once. A zero or nil Graph
// (not made by New) is ErrUninitialized, here and in every method of Graph that returns an
// error; the others do nothing and return zero values.
func (g *Graph) Start(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("refs: Start: %w", informer.ErrNilContext)
	}
	if !g.valid() {
		return ErrUninitialized
	}
	g.mu.Lock()
	switch {
	case g.stopped:
		g.mu.Unlock()
		return ErrStopped
	case g.started:
		g.mu.Unlock()
		return ErrAlreadyStarted
	}
	g.started = true
	ctx, g.cancel = context.WithCancel(ctx)
	done := make(chan struct{})
	g.stopDone = done
	g.mu.Unlock()

	// No lock while discovery and the factories start: queries answer meanwhile.
	run := &running{}
	err := g.start(ctx, run)
	g.mu.Lock()
	if err == nil && g.stopped {
		err = errors.New("refs: graph shut down while starting")
	}
	if err != nil {
		cancel := g.cancel
		g.mu.Unlock()
		cancel() // what start started stops with it: run.stop waits for that
		run.stop()
		close(done)
		return err
	}
	g.run = run
	g.mu.Unlock()
	go func() {
		defer close(done)
		<-ctx.Done()
		run.stop()
	}()
	return nil
}

func (g *Graph) start(ctx context.Context, run *running) (err error) {
	run.disc = g.opts.Discovery
	if run.disc == nil {
		if run.disc, err = discovery.New(g.cfg, discovery.Options{Logger: g.logger}); err != nil {
			return err
		}
		run.ownDisc = true
		if err := run.disc.Start(ctx); err != nil {
			return fmt.Errorf("refs: discovery: %w", err)
		}
	}
	// Kinds and scopes of every served resource, watched or not, so that references resolve
	// to resources; subscribe first, then list, leaving to the events a listed resource they
	// touched meanwhile (the list may be older than they are).
	var initial subscribe.Guard
	unsub, err := run.disc.Subscribe(func(ev discovery.Event) {
		initial.Touch(ev.Resource.GVR.GroupResource())
		if ev.Old != nil {
			initial.Touch(ev.Old.GVR.GroupResource())
		}
		switch ev.Type {
		case discovery.Added, discovery.Changed:
			// Only what can be watched: a resource that cannot (pods.metrics.k8s.io) holds
			// no object of the graph, and known unwatched, it would make every answer
			// that owner references bear on incomplete.
			if ev.Resource.Watchable() {
				g.learn(ev.Resource)
			} else {
				g.g.forget(ev.Resource.GVR.GroupResource())
			}
		case discovery.Removed:
			g.g.forget(ev.Resource.GVR.GroupResource())
		}
	})
	if err != nil {
		return err
	}
	run.unsubs = append(run.unsubs, unsub)
	all, err := run.disc.Resources(ctx, discovery.Filter{})
	if err != nil && len(all) == 0 {
		return fmt.Errorf("refs: discovery: %w", err)
	}
	for _, r := range all {
		initial.Apply(r.GVR.GroupResource(), func() { g.learn(r) })
	}
	initial.Done()
	if err := g.checkRuleResources(all); err != nil {
		return err
	}

	run.meta, run.objs = g.opts.Metadata, g.opts.Objects
	if run.meta == nil {
		if run.meta, err = metadataonly.NewFactory(g.cfg, metadataonly.Options{Discovery: run.disc, Logger: g.logger}); err != nil {
			return err
		}
		run.ownMeta = true
		if err := run.meta.Start(ctx); err != nil {
			return err
		}
	}
	fieldFilter, metaFilter, anyFields := g.filters()
	if anyFields && run.objs != nil {
		// A shared factory must keep what the rules read: projected to other fields, every
		// rule would find nothing and every object would look unused.
		for _, r := range g.g.rules {
			if r.From == AnyResource || r.metaOnly {
				continue
			}
			for _, p := range []*jsonpath.Path{r.path, r.unless} {
				if p == nil {
					continue
				}
				if err := run.objs.CheckPath(p); err != nil {
					return &RuleError{Rule: r.Name, Err: fmt.Errorf("Options.Objects does not keep what the rule reads: %w", err)}
				}
			}
		}
	}
	if anyFields && run.objs == nil {
		run.objs, err = dynamicinformer.NewCompactFactory(g.cfg, dynamicinformer.Options{Discovery: run.disc, Logger: g.logger},
			dynamicinformer.CompactOptions{Projection: g.projection()})
		if err != nil {
			return err
		}
		run.ownObjs = true
		if err := run.objs.Start(ctx); err != nil {
			return err
		}
	}
	ms, err := newSet(ctx, run.meta, metaFilter, g.handler)
	if err != nil {
		return err
	}
	run.sets = append(run.sets, ms)
	if anyFields {
		fs, err := newSet(ctx, run.objs, fieldFilter, g.handler)
		if err != nil {
			return err
		}
		run.sets = append(run.sets, fs)
	}
	return nil
}

// stop stops what start started, once, and waits for the factories and discovery client
// the graph created (their context, the graph's, has ended or is ending).
func (run *running) stop() {
	run.stopOnce.Do(func() {
		for _, u := range run.unsubs {
			u()
		}
		for _, s := range run.sets {
			s.stop()
		}
		if run.ownObjs {
			run.objs.Shutdown()
		}
		if run.ownMeta {
			run.meta.Shutdown()
		}
		if run.ownDisc {
			run.disc.Wait()
		}
	})
}

// filters splits the watched resources: those some rule reads fields of (in the filter)
// and the rest.
func (g *Graph) filters() (fields, rest discovery.Filter, anyFields bool) {
	user := *g.opts.Filter
	rest = discovery.Filter{IncludeGroups: user.IncludeGroups, IncludeResources: user.IncludeResources,
		ExcludeGroups: user.ExcludeGroups, ExcludeResources: slices.Clone(user.ExcludeResources)}
	fields = discovery.Filter{ExcludeGroups: user.ExcludeGroups, ExcludeResources: user.ExcludeResources}
	for _, gr := range g.fieldResources {
		if !user.Matches(discovery.Resource{GVR: gr.WithVersion("")}) {
			continue
		}
		fields.IncludeResources = append(fields.IncludeResources, resourceName(gr))
		rest.ExcludeResources = append(rest.ExcludeResources, resourceName(gr))
	}
	return fields, rest, len(fields.IncludeResources) > 0
}

func newSet[T informer.Object](ctx context.Context, f *informer.Factory[T], filter discovery.Filter,
	handler func(discovery.Resource) cache.ResourceEventHandler) (*watchSet, error) {
	w, err := f.WatchAll(ctx, filter)
	if err != nil {
		return nil, err
	}
	reg, err := w.AddEventHandler(handler)
	if err != nil {
		w.Stop()
		return nil, err
	}
	return &watchSet{
		informer: func(gr schema.GroupResource) (informer.Status, bool) {
			inf, ok := w.Informer(gr)
			if !ok {
				return informer.Status{}, false
			}
			return inf.Status(), true
		},
		members: func() []informer.Status {
			var out []informer.Status
			for _, inf := range w.Informers() {
				out = append(out, inf.Status())
			}
			return out
		},
		synced: reg.HasSynced,
		handed: reg.MemberSynced,
		wait:   w.WaitForSync,
		stop: func() {
			w.RemoveEventHandler(reg)
			w.Stop()
		},
	}, nil
}

// learn records what discovery says of a served resource.
func (g *Graph) learn(res discovery.Resource) *resInfo {
	return g.g.learn(res.GVR.GroupResource(), res.GVK.Kind, res.Namespaced, append([]string{res.Singular}, res.ShortNames...)...)
}

// checkRuleResources refuses a rule that names a served resource by another name than its
// plural (a kind, singular or short name: "ConfigMap", "secret", "cm"), which would never
// match an object or would make a phantom resource whose references stay Unknown, and logs
// once the resources rules name that are not served (yet: a CRD may come).
func (g *Graph) checkRuleResources(served []discovery.Resource) error {
	isServed := map[schema.GroupResource]bool{}
	for _, r := range served {
		isServed[r.GVR.GroupResource()] = true
	}
	var absent []string
	for _, r := range g.g.rules {
		for _, gr := range []schema.GroupResource{r.From, r.To} {
			if gr.Resource == "" || gr == AnyResource || isServed[gr] {
				continue
			}
			if alt, ok := g.g.aliasOf(gr); ok && alt != gr {
				return &RuleError{Rule: r.Name, Err: fmt.Errorf("%s names %s by another name than its plural: use %s",
					resourceName(gr), resourceName(alt), resourceName(alt))}
			}
			if name := resourceName(gr); !slices.Contains(absent, name) {
				absent = append(absent, name)
			}
		}
	}
	if len(absent) > 0 {
		slices.Sort(absent)
		g.logger.Info("Rules name resources the server does not serve (yet): their rules apply once it does", "resources", absent)
	}
	return nil
}

// handler is the graph's handler for one member resource of a set.
func (g *Graph) handler(res discovery.Resource) cache.ResourceEventHandler {
	// The rules, not the record: the graph's own discovery subscription describes resources
	// in order, and a set's handler factory may run after a later event (a stale learn would
	// mark a deleted CRD served again, or restore an old scope); and the record goes when the
	// resource does, while a handler may still be called (its last events, a CRD deleted and
	// created again whose member outlived the record). Each event finds the record under the
	// graph's lock.
	rs := g.g.rulesOf(res.GVR.GroupResource())
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.upsert(rs, obj) },
		UpdateFunc: func(_, obj any) { g.upsert(rs, obj) },
		DeleteFunc: func(obj any) { g.delete(rs, obj) },
	}
}

func (g *Graph) upsert(rs *resRules, obj any) {
	rd, err := read(rs, obj)
	if err != nil {
		g.logger.Error(err, "Object skipped", "resource", resourceName(rs.gr))
		return
	}
	if rd.err != nil {
		g.logger.Error(rd.err, "A rule's references were cut short: those past the failure are not in the graph",
			"resource", resourceName(rs.gr), "namespace", rd.ns, "name", rd.name, "path", rd.cut)
	}
	g.g.apply(rs, rd)
}

func (g *Graph) delete(rs *resRules, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		ns, name, err := cache.SplitMetaNamespaceKey(t.Key)
		if err != nil {
			g.logger.Error(err, "Deletion skipped", "resource", resourceName(rs.gr), "key", t.Key)
			return
		}
		var uid types.UID
		if m, err := meta.Accessor(t.Obj); err == nil {
			uid = m.GetUID()
		}
		g.g.remove(rs, ns, name, uid)
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		g.logger.Error(err, "Deletion skipped", "resource", resourceName(rs.gr))
		return
	}
	g.g.remove(rs, m.GetNamespace(), m.GetName(), m.GetUID())
}

// covers tells whether gr's objects in ns are cached completely: a member of a set, synced
// without selectors over ns, its initial objects handed to the graph.
func (g *Graph) covers(gr schema.GroupResource, ns string) (bool, string) {
	sets := g.sets()
	for _, s := range sets {
		st, ok := s.informer(gr)
		if !ok {
			continue
		}
		return coverage(st, ns, s.handed)
	}
	return false, resourceName(gr) + " is not watched"
}

func coverage(st informer.Status, ns string, handed func(schema.GroupResource) bool) (bool, string) {
	gr := st.Key.GVR.GroupResource()
	name := resourceName(gr)
	switch {
	case st.Key.LabelSelector != "" || st.Key.FieldSelector != "":
		return false, name + " is watched with a selector"
	case st.Key.Namespace != "" && st.Key.Namespace != ns:
		return false, name + " is watched in namespace " + st.Key.Namespace + " only"
	case st.Phase != informer.PhaseSynced:
		reason := name + " is " + string(st.Phase)
		if st.Reason != informer.ReasonNone {
			reason += " (" + string(st.Reason) + ")"
		}
		return false, reason
	case !handed(gr):
		return false, name + ": initial objects not all handed to the graph yet"
	}
	return true, ""
}

// incompleteResources lists the members that are not cached completely cluster-wide.
func (g *Graph) incompleteResources() []schema.GroupResource {
	sets := g.sets()
	var out []schema.GroupResource
	for _, s := range sets {
		for _, st := range s.members() {
			if ok, _ := coverage(st, "", s.handed); !ok {
				out = append(out, st.Key.GVR.GroupResource())
			}
		}
	}
	slices.SortFunc(out, compareGR)
	return out
}

// WaitForSync waits until every watched resource has been listed and its objects handed to
// the graph. When ctx ends first it returns the sets' *informer.SyncError, or ctx's error.
// A forbidden or parked resource keeps it waiting: give ctx a deadline, then treat the
// resources WaitForSync names as Unknown, as the queries do.
func (g *Graph) WaitForSync(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("refs: WaitForSync: %w", informer.ErrNilContext)
	}
	if !g.valid() {
		return ErrUninitialized
	}
	sets := g.sets()
	if len(sets) == 0 {
		return errors.New("refs: graph not started")
	}
	for _, s := range sets {
		if err := s.wait(ctx); err != nil {
			return err
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		done := true
		for _, s := range sets {
			done = done && s.synced()
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("refs: waiting for the graph's handlers: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// valid reports whether g was made by New: the zero Graph and a nil *Graph were not.
func (g *Graph) valid() bool { return g != nil && g.g != nil }

// sets returns the running watch-all sets (none before Start has set them up).
func (g *Graph) sets() []*watchSet {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.run == nil {
		return nil
	}
	return g.run.sets
}

// Shutdown stops what Start started and waits for the factories and discovery client the
// graph created; shared ones are left to their owners. The graph keeps answering from what
// it holds. Safe to call more than once; not from a handler of the graph's factories.
func (g *Graph) Shutdown() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.stopped = true
	cancel, done := g.cancel, g.stopDone
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done != nil {
		<-done
	}
}
