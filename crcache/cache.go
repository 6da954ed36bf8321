package crcache

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
)

// defaultSyncPeriod is controller-runtime's default SyncPeriod.
const defaultSyncPeriod = 10 * time.Hour

// Options are crcache's own settings, on top of controller-runtime's cache.Options. The zero
// value is what New uses.
type Options struct {
	// DisableCompression keeps each object's JSON as it is instead of zstd-compressed. By
	// default crcache compresses every cached object against a dictionary its informer
	// makes of the first objects it stores (kindex's CompactOptions.Compress): a realistic
	// Pod takes about 0.8 KB of heap instead of 5.1 KB, and each typed read decompresses the
	// JSON before decoding it (about 10 µs for a Pod, a fraction of the decode itself;
	// README.md has the measurements). Set it to trade that memory for the decompression.
	// Without compression, the strings of typed objects crcache hands out (reads, event
	// handlers, index functions) are views of the cached JSON: a string kept (a name in a
	// work queue, an object held) keeps that object's JSON alive until it is dropped. Index
	// values are copied.
	DisableCompression bool
	// Logger receives kindex's logs: one line per informer transition (parked, resumed),
	// never one per retry. Default (a Logger without a sink: the zero Logger, and
	// logr.Discard() too): klog.Background(). To drop them, pass a logger whose sink does.
	Logger logr.Logger
	// Registerer, if set, receives kindex's informer metrics (kindex_informer_*), for example
	// controller-runtime's metrics.Registry. Default: none.
	Registerer prometheus.Registerer
}

// New returns a controller-runtime cache backed by kindex, configured by controller-runtime's
// own cache.Options. It has the type of cache.NewCacheFunc, so a manager switches with one
// line:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{NewCache: crcache.New})
//
// The returned cache is a *Cache.
func New(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	return NewCache(cfg, opts, Options{})
}

// NewFunc returns a cache.NewCacheFunc that builds a Cache with kindex settings o.
func NewFunc(o Options) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		return NewCache(cfg, opts, o)
	}
}

// Cache is a controller-runtime cache.Cache backed by kindex informers. See the package
// documentation for what it does differently from controller-runtime's cache.
type Cache struct {
	cfg    *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	opts   cache.Options
	kopts  Options
	// byObject is opts.ByObject keyed by GVK (not defaulted: plans default it).
	byObject map[schema.GroupVersionKind]cache.ByObject
	resync   time.Duration
	disc     *discovery.Client
	// checks is the rate of access re-checks that the informers parked on a 403 share,
	// across the factories of every resource (one pair per resource, see resource).
	checks *informer.AccessChecks
	// instance tells the cache from others (continue tokens, resource.tokenSource), and
	// resourceIDs numbers its resources.
	instance    string
	resourceIDs atomic.Uint64
	// discOnce starts disc with the first informer, not with the cache: a cache no one
	// asks for an informer makes no request, as controller-runtime's own does not.
	discOnce sync.Once

	mu        sync.Mutex
	bg        sync.WaitGroup // materializations in flight
	starting  bool
	started   bool
	stopping  bool
	ctx       context.Context // Start's, once started
	startedCh chan struct{}
	accesses  map[accessKey]*access
	resources map[schema.GroupVersionKind]*resource
	// retired are resources replaced by a new plan whose factories are not shut down yet.
	retired []*resource

	// replanMu serializes plans made again for a new scope (replan.go).
	replanMu sync.Mutex
	// retries are the pending retries of plans whose informers could not be had
	// (replan.go); guarded by mu.
	retries map[schema.GroupVersionKind]*replanRetry
	// acquireFault, if set (by tests), fails the acquisition of the informers of a plan
	// when it returns an error.
	acquireFault func(gvr schema.GroupVersionResource, namespaced bool) error
	// unsubscribe ends the discovery subscription that notices scope changes; set with
	// discovery's start (in a materialization, which Start waits for).
	unsubscribe func()
}

var _ cache.Cache = (*Cache)(nil)

// NewCache is New with kindex settings, returning the concrete type.
func NewCache(cfg *rest.Config, opts cache.Options, o Options) (*Cache, error) {
	if cfg == nil {
		return nil, errors.New("crcache: nil rest.Config")
	}
	if o.Logger.GetSink() == nil {
		o.Logger = klog.Background()
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if opts.Scheme == nil {
		opts.Scheme = scheme.Scheme
	}
	if opts.Mapper == nil {
		httpClient := opts.HTTPClient
		if httpClient == nil {
			var err error
			if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
				return nil, fmt.Errorf("crcache: HTTP client for config: %w", err)
			}
		}
		m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("crcache: RESTMapper: %w", err)
		}
		opts.Mapper = m
	}
	opts.DefaultNamespaces = maps.Clone(opts.DefaultNamespaces)
	c := &Cache{
		cfg:       cfg,
		scheme:    opts.Scheme,
		mapper:    opts.Mapper,
		opts:      opts,
		kopts:     o,
		byObject:  map[schema.GroupVersionKind]cache.ByObject{},
		resync:    defaultSyncPeriod,
		startedCh: make(chan struct{}),
		accesses:  map[accessKey]*access{},
		resources: map[schema.GroupVersionKind]*resource{},
	}
	if opts.SyncPeriod != nil {
		c.resync = *opts.SyncPeriod
	}
	for obj, bo := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, fmt.Errorf("crcache: GVK for type %T: %w", obj, err)
		}
		namespaced, err := apiutil.IsGVKNamespaced(gvk, opts.Mapper)
		if err != nil {
			return nil, fmt.Errorf("crcache: whether %T is namespaced: %w", obj, err)
		}
		if !namespaced && bo.Namespaces != nil {
			return nil, fmt.Errorf("crcache: type %T is not namespaced, but its ByObject.Namespaces setting is not nil", obj)
		}
		bo.Namespaces = maps.Clone(bo.Namespaces)
		c.byObject[gvk] = bo
	}
	disc, err := discovery.New(cfg, discovery.Options{Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("crcache: discovery: %w", err)
	}
	c.disc = disc
	c.checks = informer.NewAccessChecks(0)
	c.instance = rand.Text()
	return c, nil
}

// Start starts the informers requested so far and every one requested later, and blocks
// until ctx ends; then it stops them all and returns once their goroutines have ended.
// A cache is started once: a second Start fails. Start makes no request of its own:
// discovery starts with the first informer.
func (c *Cache) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.starting {
		c.mu.Unlock()
		return errors.New("crcache: informer already started")
	}
	c.starting = true
	c.mu.Unlock()

	c.mu.Lock()
	c.started = true
	c.ctx = ctx
	for _, a := range c.accesses {
		c.goMaterialize(a)
	}
	c.mu.Unlock()
	close(c.startedCh)

	<-ctx.Done()
	c.mu.Lock()
	c.stopping = true
	c.stopRetriesLocked()
	c.mu.Unlock()
	c.bg.Wait()
	c.mu.Lock()
	accesses := make([]*access, 0, len(c.accesses))
	for _, a := range c.accesses {
		accesses = append(accesses, a)
	}
	resources := make([]*resource, 0, len(c.resources)+len(c.retired))
	for _, r := range c.resources {
		resources = append(resources, r)
	}
	resources = append(resources, c.retired...)
	c.mu.Unlock()
	// Reads go on from what the informers held, as controller-runtime's do after its cache
	// stopped: a manager stops its caches before its webhooks and HTTP servers, which may
	// still serve requests that read through the manager's client.
	for _, a := range accesses {
		a.freeze()
	}
	for _, r := range resources {
		r.shutdown()
	}
	if c.unsubscribe != nil {
		c.unsubscribe()
	}
	c.disc.Wait()
	return nil
}

// startDiscovery starts the discovery client once, with the first informer to start, and
// returns when its first round is done: informers of the same moment wait for it, and
// resolve what it found. A failure is not fatal (informers resolve on demand and discovery
// retries), but it is worth a log line.
func (c *Cache) startDiscovery(ctx context.Context) {
	c.discOnce.Do(func() {
		// Before the first round, so that a scope changed at any time is seen (replan.go).
		c.unsubscribe, _ = c.disc.Subscribe(c.onDiscovery) // not nil: cannot fail
		if err := c.disc.Start(ctx); err != nil && ctx.Err() == nil {
			c.logger().Error(err, "Initial discovery failed; resources are resolved on demand")
		}
	})
}

// NeedLeaderElection tells a manager that the cache runs on every replica.
func (c *Cache) NeedLeaderElection() bool { return false }

// WaitForCacheSync waits until the cache is started and every informer requested so far has
// synced (applied a complete list at least once). It returns false when ctx ends first (the
// reason an informer has not synced is logged and shown by Statuses). An informer parked
// before its first sync (the server refuses the resource, or no longer serves it) is waited
// for, as controller-runtime's cache waits for its reflector: it resumes by itself when a
// grant arrives or the resource is served again. controller-runtime's controllers wait for
// their sources with this method, which covers every informer of the cache, up to their
// CacheSyncTimeout: returning at once would fail every controller starting meanwhile, and
// with them the manager, for a grant applied a moment after the manager started.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.startedCh:
	case <-ctx.Done():
		return false
	}
	for _, a := range c.accessList() {
		if err := a.waitSynced(ctx, false); err != nil {
			if !errors.Is(err, errAccessStopped) {
				c.logger().Error(err, "Cache did not sync", "gvk", a.key.gvk.String(), "type", a.key.kind.String())
				return false
			}
		}
	}
	return true
}

// Statuses returns the status of every kindex informer the cache holds: one per resource,
// and per namespace when the cache is restricted to several. A parked informer shows its
// reason (Forbidden, NotFound, ...) and the server's last error.
func (c *Cache) Statuses() []informer.Status {
	c.mu.Lock()
	resources := make([]*resource, 0, len(c.resources))
	for _, r := range c.resources {
		resources = append(resources, r)
	}
	c.mu.Unlock()
	var out []informer.Status
	for _, r := range resources {
		out = append(out, r.statuses()...)
	}
	for _, a := range c.accessList() {
		out = append(out, a.failedStatuses()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.String() < out[j].Key.String() })
	return out
}

// accessList returns the cache's accesses.
func (c *Cache) accessList() []*access {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Values(c.accesses))
}

func (c *Cache) logger() logr.Logger { return c.kopts.Logger.WithName("crcache") }

func (c *Cache) isStarted() bool {
	select {
	case <-c.startedCh:
		return true
	default:
		return false
	}
}

// gvkOf returns the GVK and access kind of an object or (with list true) of a list's items.
func (c *Cache) gvkOf(obj runtime.Object, list bool) (schema.GroupVersionKind, accessKind, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return gvk, 0, err
	}
	if list {
		// As controller-runtime's cache: the item kind is the list's without "List", and a
		// list whose kind lacks the suffix (an UnstructuredList set to "ConfigMap") lists that
		// kind.
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		if gvk.Kind == "" {
			return gvk, 0, fmt.Errorf("crcache: %T (%s) names no kind", obj, gvk)
		}
	}
	return gvk, kindOf(obj), nil
}
