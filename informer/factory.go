package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

// Selectors are a label and a field selector, in the API's string syntax.
type Selectors struct {
	Label string
	Field string
}

// Options configures a Factory. The zero value watches every namespace with no selector,
// strips managedFields, logs nothing (see Logger) and registers no metrics.
type Options[T Object] struct {
	// Namespace limits namespaced resources to one namespace; "" means all namespaces.
	// Cluster-scoped resources are always watched cluster-wide.
	Namespace string
	// LabelSelector and FieldSelector apply to every informer without a per-resource entry
	// in Selectors or a per-call override.
	LabelSelector string
	FieldSelector string
	// Selectors sets the selectors of one resource (both of them, replacing the defaults),
	// keyed by group and resource, including resources discovered later (watch-all).
	Selectors map[schema.GroupResource]Selectors
	// AccessRecheckInterval is the longest an informer parked on a 403 (Forbidden,
	// WatchForbidden) waits between access re-checks, so that a grant takes effect within
	// about this long however long the park lasted. Each re-check costs one
	// SelfSubjectAccessReview while the answer is no (two, list and watch, once list is
	// allowed), per parked informer. Informer.Recheck and Factory.Recheck re-check at once,
	// for callers that know permissions changed. Default 1.5 s; re-checks start at 1 s.
	// Between those immediate re-checks, the factory's parked informers share a rate of 4
	// a second: with n of them parked on a 403 (a watch-everything set a user may read
	// little of), each waits at least n/4 s, and a grant takes effect within about that.
	AccessRecheckInterval time.Duration
	// AccessChecks, if set, is a rate of access re-checks that the factory's parked
	// informers share with those of every other factory given the same one (NewAccessChecks),
	// in place of the factory's own rate of 4 a second: a program with a factory per
	// resource (as the controller-runtime cache has) then sends at most that many
	// SelfSubjectAccessReviews a second however many resources are parked on a 403.
	AccessChecks *AccessChecks
	// ResyncPeriod, if positive, re-delivers every cached object to handlers as an update
	// with this period. Default 0: never.
	ResyncPeriod time.Duration
	// Transform is applied to every object before it is cached, after kindex strips
	// managedFields. It may modify the object in place and must be idempotent (client-go
	// applies it twice to objects of a streaming initial list). It must keep the object's
	// namespace and name. If it fails (an error, a panic, nil, or an object of another
	// namespace or name, which would be cached under another key), the object is cached
	// without it (never dropped; changes it made in place before failing stay, except to
	// the namespace and name, which are set back), the failure is counted in
	// Status.CallbackErrors and the first one logged. It runs on the informer's
	// processing loop; a call back into the informer's lifecycle (Release,
	// Factory.Shutdown) takes effect once it has returned (package documentation,
	// "Concurrency").
	Transform func(T) (T, error)
	// KeepManagedFields keeps metadata.managedFields, which kindex otherwise strips: they are
	// about half of a typical object's memory. Without it, an index or a JSONPath condition
	// that reads them by name ({.metadata.managedFields[*].manager}) is refused (ErrInvalidIndex,
	// query.ErrInvalidQuery) rather than finding none.
	KeepManagedFields bool
	// Logger receives kindex's logs (one line per informer transition, never one per retry),
	// the reflectors' and, when the factory creates its discovery client, discovery's. The
	// zero Logger, like logr.Discard(), logs nothing: pass klog.Background() to log through
	// klog.
	Logger logr.Logger
	// Registerer, if set, receives kindex's metrics (kindex_informer_*, kindex_callback_failures_total,
	// kindex_start_collections_total). Default: none.
	Registerer prometheus.Registerer
	// Discovery resolves resources and reports their changes; front ends create one when it
	// is nil. A shared *discovery.Client is started by its owner; one that is never started
	// sends no events, so informers parked on a missing resource find it back only on their
	// re-check timer (one fresh discovery of the group per second at most, for all of them).
	Discovery Discovery
	// OwnerIndex registers the owner index of Dependents and Orphans (the built-in owner-uid
	// and uid indexes) on every informer as it starts. Without it the index is registered on
	// the first call of either method, which first indexes every object already cached, and
	// from then on on every informer as it starts. Its memory is about 300 bytes per cached
	// object with one owner reference (bench: BenchmarkQueryOwnerIndexMemory, 100,000
	// metadata-only objects): about 6% of a metadata-only object's ~5.4 KB, about 1% of an
	// unstructured one.
	OwnerIndex bool
	// QueryJSONPath bounds the JSONPath conditions of queries (query.Where), evaluated on
	// every candidate, separately from IndexJSONPath: a program that takes filters from its
	// users can give them a smaller budget (MaxSteps, MaxResults) than its own indexes. The
	// zero value is jsonpath's defaults.
	QueryJSONPath jsonpath.Options
	// IndexJSONPath bounds the JSONPath expressions of indexes (Indexes, AddIndex), evaluated
	// on every object added or changed. The zero value is jsonpath's defaults.
	IndexJSONPath jsonpath.Options
	// Shard, if set, makes every informer of the factory hold only the objects whose
	// metadata.uid (or namespace) hashes into the shard's ranges; WithShard overrides it
	// for one informer. See Shard for how the server and kindex share the filtering.
	Shard Shard
	// Indexes are JSONPath indexes (name -> expression, AddIndex's dialect) registered on
	// every informer as it starts, before its first list, for the informer's whole life: a
	// reference queries them by name without adding them, and cannot remove them. An
	// expression that does not compile fails NewFactory (ErrInvalidIndex, with the
	// *jsonpath.SyntaxError).
	Indexes map[string]string
	// SnapshotDir, if set, makes every informer keep a snapshot of its objects in this
	// directory (created 0700 if missing; files 0600), one file per API server address,
	// resource, namespace, selectors and storage options, and start from it unless it was
	// written for another cluster: see "Warm restart" in the package documentation. The
	// compact mode (dynamicinformer.NewCompactFactory) and the metadata-only mode
	// (metadataonly.NewFactory) can; NewFactory fails for the others (the unstructured
	// mode: re-encoding its maps would cost what a LIST saves). On Linux a plaintext
	// snapshot is mapped into memory on load, once per file per process (see
	// Status.SnapshotMapped): do not truncate or rewrite these files in place; remove them.
	//
	// Unencrypted snapshots of Secrets are Secrets on disk, readable by whoever can read the
	// file. An informer on secrets therefore neither reads nor writes a snapshot unless
	// SnapshotKey or SnapshotKeyFile is set (or SnapshotPlainSecrets).
	SnapshotDir string
	// SnapshotInterval is how often an informer whose objects changed writes its snapshot
	// in the background (it also writes one when it stops cleanly, so the last Release and
	// Shutdown take as long as that write: about 90 ms per 10,000 objects of 4 KB). Default
	// DefaultSnapshotInterval (5 minutes); a negative interval, or a positive one under a
	// millisecond (30 meant as seconds is 30 nanoseconds), fails NewFactory. Whatever
	// the interval, a write waits at least nine times as long as the previous one took.
	SnapshotInterval time.Duration
	// SnapshotKey encrypts snapshots with AES-GCM (16, 24 or 32 bytes: AES-128, -192 or
	// -256). SnapshotKeyFile reads the key from a file holding it as hexadecimal text: 32,
	// 48 or 64 hex digits, optionally followed by one newline ("openssl rand -hex 32 >file"
	// writes one); NewFactory refuses any other content (raw key bytes included), and a file
	// others may read or write or its group may write (mode & 0o027: use 0600 or 0400, or
	// 0640 and 0440 for a group of the process's; a Kubernetes Secret volume needs
	// defaultMode 0400, which an fsGroup makes 0440). Set one of the two, and only with
	// SnapshotDir: NewFactory refuses both at once, or either without SnapshotDir. A
	// snapshot written with another key, or without one, is ignored.
	SnapshotKey     []byte
	SnapshotKeyFile string
	// SnapshotPlainSecrets lets informers on secrets read and write unencrypted snapshots.
	// Without it, an informer on secrets (with a key or without) removes the unencrypted
	// snapshot an earlier run with it wrote.
	SnapshotPlainSecrets bool
	// SnapshotRetention, if set, removes from SnapshotDir the snapshot files that no
	// informer of the factory uses and that nothing has written for that long: the files of
	// identities a program no longer uses (other selectors, a shard range it held before a
	// rebalance, a resource since deleted), which are otherwise kept for good. Start prunes
	// before it returns, then every SnapshotRetention/2 (at most every hour) while the
	// factory runs. A file in use is rewritten whenever its informer has changes to save
	// (watch bookmarks count), so set it longer than the longest time a program sharing
	// the directory may be stopped, or run without changes, and still want its snapshot: a
	// removed snapshot costs a LIST at the next start, nothing else. Only files that start
	// as snapshots do, and the temporary files of interrupted writes, are removed. Default
	// 0: never remove a file. A positive retention under a minute fails NewFactory, as does
	// one without SnapshotDir.
	SnapshotRetention time.Duration
	// DisableStartGC leaves garbage collection during informers' starts to the Go runtime.
	// By default, in the compact mode, whose starts make garbage several times the size of
	// what they keep (every object decoded for a handler of objects; a relist over a full
	// cache, after a 410 or on a restart from a snapshot), kindex runs the collector itself
	// (runtime.GC) while handlers receive their initial adds and while a list replaces
	// cached objects, whenever the heap holds more than an eighth over what the last
	// collection found live: the process peaks near its steady heap instead of about twice
	// it (the runtime's GOGC=100), for more collector CPU while it starts. "Start garbage" in
	// the package documentation has the figures. Set it when GOGC or GOMEMLIMIT already pace
	// the process as it should be, or when a start's CPU matters more than its peak.
	DisableStartGC bool
	// ReadAfterShutdown keeps what the informers hold once the factory stops (Shutdown, or
	// the end of Start's context): reads (Get, List, GetItem, ListItems, Query, QueryItems,
	// Count, CountBy) go on answering from it, as client-go's and controller-runtime's
	// stopped informers do, so that a program still serving requests while it shuts down
	// (controller-runtime's manager stops its caches before its webhooks) reads what was
	// there. Nothing changes it any more; Status says PhaseStopped; handlers, indexes and
	// WaitForSync fail with ErrShutdown as without it. The objects are freed with the
	// factory, or a reference's reads end at its Release (ErrReleased). Without it, a
	// stopped informer empties its cache and reads fail with ErrShutdown.
	ReadAfterShutdown bool
}

// Factory creates shared informers on demand and owns their lifetime. Informers of the same
// resource (version), mode, namespace and selectors are shared; each request returns a
// reference that must be released. Its methods are safe for concurrent use.
type Factory[T Object] struct {
	c *core
}

// newFactory validates opts, compiles Options.Indexes once, builds the storage mode with
// them and returns a factory that is not started yet. cfg is used for access re-checks;
// newMode builds the list/watch clients from it (New passes a redirect-safe config).
func newFactory[T Object](cfg *rest.Config, opts Options[T], newMode ModeBuilder, in hooks) (*Factory[T], error) {
	if cfg == nil {
		return nil, errors.New("kindex: nil rest.Config")
	}
	if newMode == nil {
		return nil, errors.New("kindex: nil storage mode")
	}
	if opts.Discovery == nil {
		return nil, errors.New("kindex: Options.Discovery is nil")
	}
	c := config{
		Namespace:             opts.Namespace,
		LabelSelector:         opts.LabelSelector,
		FieldSelector:         opts.FieldSelector,
		Selectors:             opts.Selectors,
		ResyncPeriod:          opts.ResyncPeriod,
		AccessRecheckInterval: opts.AccessRecheckInterval,
		Transform:             typedTransform(opts.Transform),
		Shard:                 opts.Shard,
		ReadAfterShutdown:     opts.ReadAfterShutdown,
	}
	if err := validateConfig(&c); err != nil {
		return nil, err
	}
	paths, err := compileIndexes(opts.Indexes, opts.IndexJSONPath)
	if err != nil {
		return nil, err
	}
	mode, err := newMode(cfg, storage.Config{KeepManagedFields: opts.KeepManagedFields, Indexes: paths})
	if err != nil {
		return nil, fmt.Errorf("kindex: %w", err)
	}
	if mode == nil {
		return nil, errors.New("kindex: nil storage mode")
	}
	if c.snapshot, err = newSnapshotConfig(mode, cfg.Host+cfg.APIPath, opts.SnapshotDir, opts.SnapshotInterval, opts.SnapshotRetention, opts.SnapshotKey,
		opts.SnapshotKeyFile, opts.SnapshotPlainSecrets); err != nil {
		return nil, err
	}
	// One client for the factory's own requests outside the storage mode: the shard probe
	// and the cluster a snapshot names.
	client, err := dynamic.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("kindex: client: %w", err)
	}
	if c.snapshot != nil {
		c.snapshot.cluster = newClusterIdentity(client)
	}
	logger := opts.Logger // the zero Logger discards, as logr.Discard() does
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("kindex: register metrics: %w", err)
	}
	access := in.Access
	if access == nil {
		if access, err = newAccessChecker(cfg); err != nil {
			return nil, err
		}
	}
	core := newCore(mode, c, in, logger.WithName("kindex"), m, opts.Discovery, access)
	if opts.AccessChecks != nil {
		core.checks = opts.AccessChecks
	}
	core.ownerIndex.Store(opts.OwnerIndex)
	if core.objectDecodes && !opts.DisableStartGC {
		core.pace = startPacer
		if in.Pacer != nil {
			core.pace = in.Pacer
		}
	}
	core.objType = reflect.TypeFor[T]()
	core.probeShard = newShardProber(client)
	core.paths.opts, core.indexOpts = opts.QueryJSONPath, opts.IndexJSONPath
	if _, err := jsonpath.CompileWithOptions("{.x}", opts.QueryJSONPath); err != nil {
		return nil, fmt.Errorf("kindex: Options.QueryJSONPath: %w", err)
	}
	if _, err := jsonpath.CompileWithOptions("{.x}", opts.IndexJSONPath); err != nil {
		return nil, fmt.Errorf("kindex: Options.IndexJSONPath: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		spec, err := jsonPathIndex(mode, name, paths[name])
		if err != nil {
			return nil, err
		}
		core.indexes = append(core.indexes, namedIndex{name: name, spec: spec})
	}
	return &Factory[T]{c: core}, nil
}

// compileIndexes compiles Options.Indexes, once for the factory's life.
func compileIndexes(exprs map[string]string, jopts jsonpath.Options) (map[string]*jsonpath.Path, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	paths := make(map[string]*jsonpath.Path, len(exprs))
	for _, name := range slices.Sorted(maps.Keys(exprs)) {
		if err := validIndexName(name); err != nil {
			return nil, err
		}
		p, err := jsonpath.CompileWithOptions(exprs[name], jopts)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrInvalidIndex, quote(name), err)
		}
		paths[name] = p
	}
	return paths, nil
}

// Start binds the factory to ctx and returns at once (after starting discovery, when the
// factory created it). Everything the factory started stops when ctx ends or on Shutdown.
// Informers can be requested only after Start (before it they fail with ErrNotStarted). A
// factory starts once: a second Start is ErrAlreadyStarted, Start after Shutdown is
// ErrShutdown, and a discovery client the factory created that fails its first discovery
// is an error.
// A zero or nil Factory (not made by New) is ErrUninitialized, here and in every method of
// Factory that returns an error; the others do nothing.
func (f *Factory[T]) Start(ctx context.Context) error {
	if !f.valid() {
		return ErrUninitialized
	}
	return f.c.start(ctx)
}

// valid reports whether f was made by New: the zero Factory and a nil *Factory were not.
func (f *Factory[T]) valid() bool { return f != nil && f.c != nil }

// Shutdown stops every informer and watch-all set and waits until every goroutine the
// factory started has ended, handler goroutines included. Called from an event handler
// (of an informer or of a watch-all set), it stops everything as well but does not wait
// for handler calls in progress, its own included: it cannot wait for itself, and no
// handler is called again once its call returns. Called from an informer's Transform or
// index function, which stopping that informer would wait for, it refuses new informers,
// cancels the factory's context and returns at once: everything stops, as when Start's
// context ends, once the callback has returned (a later Shutdown waits for that). A
// Release made from a Transform or index function, which finishes once the callback has
// returned, is finished when Shutdown returns. Safe to call more than once, and without
// Start.
func (f *Factory[T]) Shutdown() {
	if f.valid() {
		f.c.stop()
	}
}

// Informer returns a reference to the shared informer of the resource the user typed
// ("deploy", "deployments.apps", "Deployment.v1.apps", a short name), at its preferred
// version. Release it when done. It does not wait for the informer to sync (WaitForSync
// does). Errors: ErrNotStarted before Start and ErrShutdown after the factory stopped;
// discovery's for the input (meta.IsNoMatchError for an unknown name,
// *discovery.AmbiguousError, discovery.ErrGroupUnavailable); ErrNotWatchable for a resource
// without list and watch; and, for a handler given with WithEventHandler, ErrNilCallback or
// ErrHandlerType.
//
// An informer asked for without a version (here, or InformerForGVR or InformerForGVK with an
// empty version) follows its resource to another version when its own stops being served
// while the resource is still served (a CRD's version retired, served: false): the next
// list is of the version discovery now prefers, and handlers see each object that still
// exists change (its apiVersion) as an update, never as a delete. Status.Resource names
// the version it lists (Key, the one it was made for), and it writes no snapshot from then
// on (its file would be of the other version). An informer asked for later with the same
// options, at the version followed or without one, shares it instead of listing the
// resource again (its Key too names the version the first was made for). One asked for at
// a version, or shared with a caller that asked so (ForResource does), parks NotFound
// instead, as for a deleted CRD: its objects are deleted for its handlers.
func (f *Factory[T]) Informer(ctx context.Context, input string, opts ...Option) (*Informer[T], error) {
	return f.resolveThen(ctx, func() (discovery.Resource, error) { return f.c.disc.Resolve(ctx, input) },
		func(res discovery.Resource) bool { return !namesVersion(input, res.GVR) }, opts)
}

// InformerForGVR is Informer for a GVR; an empty version means the preferred one.
func (f *Factory[T]) InformerForGVR(ctx context.Context, gvr schema.GroupVersionResource, opts ...Option) (*Informer[T], error) {
	return f.resolveThen(ctx, func() (discovery.Resource, error) { return f.c.disc.ResolveGVR(ctx, gvr) },
		func(discovery.Resource) bool { return gvr.Version == "" }, opts)
}

// InformerForGVK is Informer for the resource serving a GVK; an empty version means the
// preferred one.
func (f *Factory[T]) InformerForGVK(ctx context.Context, gvk schema.GroupVersionKind, opts ...Option) (*Informer[T], error) {
	return f.resolveThen(ctx, func() (discovery.Resource, error) { return f.c.disc.ResolveGVK(ctx, gvk) },
		func(discovery.Resource) bool { return gvk.Version == "" }, opts)
}

// resolveThen is Informer's checks, then resolve through discovery, then ForResource;
// versionFree says whether the caller named no version for the resource resolved.
func (f *Factory[T]) resolveThen(ctx context.Context, resolve func() (discovery.Resource, error), versionFree func(discovery.Resource) bool, opts []Option) (*Informer[T], error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !f.valid() {
		return nil, ErrUninitialized
	}
	if _, err := f.c.context(); err != nil {
		return nil, err
	}
	res, err := resolve()
	if err != nil {
		return nil, err
	}
	if versionFree(res) {
		opts = append(opts[:len(opts):len(opts)], anyVersion)
	}
	return f.ForResource(res, opts...)
}

// ForResource is Informer for a resource already resolved through discovery, with the same
// errors except discovery's: it makes no request.
func (f *Factory[T]) ForResource(res discovery.Resource, opts ...Option) (*Informer[T], error) {
	if !f.valid() {
		return nil, ErrUninitialized
	}
	h, err := f.c.acquire(res, opts)
	if err != nil {
		return nil, err
	}
	return &Informer[T]{h: h}, nil
}

// WaitForSync waits until every informer currently held is synced. When ctx ends first it
// returns a *SyncError naming each informer that is not, with its phase and reason; a
// parked informer (forbidden, resource gone) never delays the others, and WaitForSync
// returns as soon as ctx ends. Without a deadline it waits for parked informers to resume.
// An informer whose last reference is released while it waits is no longer held and is not
// waited for.
func (f *Factory[T]) WaitForSync(ctx context.Context) error {
	if !f.valid() {
		return ErrUninitialized
	}
	return f.c.waitForSync(ctx)
}

// CheckPath returns an error if the factory's objects do not hold what p reads (a compact
// factory's projection drops it, a metadata-only factory holds only metadata): an index, a
// query or a program's own evaluation of p on them would find nothing where the server's
// objects have values (metadata.managedFields too, unless Options.KeepManagedFields). nil
// for modes that keep whole objects. A nil Path is an error, and so is the zero Path
// (jsonpath.ErrNotCompiled), which reads nothing.
func (f *Factory[T]) CheckPath(p *jsonpath.Path) error {
	if p == nil {
		return errors.New("kindex: CheckPath(nil)")
	}
	if p.String() == "" {
		// The zero Path reads nothing, which every mode holds: it is not a path to check.
		return fmt.Errorf("kindex: CheckPath: %w", jsonpath.ErrNotCompiled)
	}
	if !f.valid() {
		return ErrUninitialized
	}
	if pc, ok := f.c.mode.(storage.PathChecker); ok {
		return pc.CheckPath(p)
	}
	return nil
}

// Statuses returns the status of every informer currently held.
func (f *Factory[T]) Statuses() []Status {
	if !f.valid() {
		return nil
	}
	entries := f.c.reg.list()
	out := make([]Status, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Status())
	}
	return out
}

// SubscribeStatus calls fn with an informer's status each time its phase, reason, last
// error, last sync time, ServingFromSnapshot or SnapshotError changes (not on each change of
// its object count). A panic of fn is recovered (the status is skipped for
// it, counted in kindex_callback_failures_total and logged once); a nil fn is refused
// (ErrNilCallback). Calls come from one goroutine, in order; a slow fn
// delays other subscribers but never an informer. It returns the function that ends the
// subscription: once it has returned, fn is not called again (called from another
// goroutine it waits for fn's call in progress; called from a subscriber, fn itself
// included, it returns at once). It is idempotent.
func (f *Factory[T]) SubscribeStatus(fn func(Status)) (unsubscribe func(), err error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: SubscribeStatus(nil)", ErrNilCallback)
	}
	if !f.valid() {
		return nil, ErrUninitialized
	}
	if _, err := f.c.context(); err != nil {
		return nil, err
	}
	return f.c.hub.subscribe(fn), nil
}

// Recheck is Informer.Recheck for every parked informer of the factory.
func (f *Factory[T]) Recheck() {
	if !f.valid() {
		return
	}
	for _, e := range f.c.reg.list() {
		e.notify()
	}
}

// namesVersion reports whether input, which Informer resolved to gvr, named a version, in
// the forms discovery reads (discovery.Client.Resolve): group/version/name, version/name
// in the core group, name.version. and name.version.group. A name.group whose group reads
// like a version and more ("foos.v1.example.com" resolved in group v1.example.com) named
// none: the group it resolved to tells the two readings apart.
func namesVersion(input string, gvr schema.GroupVersionResource) bool {
	if strings.Contains(input, "/") {
		p := strings.Split(input, "/")
		switch len(p) {
		case 3:
			return true
		case 2:
			return gvr.Group == "" && strings.EqualFold(p[0], gvr.Version) // v1/pods, not apps/deployments
		}
		return false
	}
	if trimmed, ok := strings.CutSuffix(input, "."); ok {
		return strings.Contains(trimmed, ".") // pods.v1.
	}
	_, rest, ok := strings.Cut(input, ".")
	return ok && strings.EqualFold(rest, gvr.Version+"."+gvr.Group)
}
