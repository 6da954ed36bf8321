package crcache

import (
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// shardConfig is one kindex informer of a resource: the namespace it covers and the settings
// controller-runtime's options give it there.
type shardConfig struct {
	// namespace is the namespace the shard covers; "" covers every namespace no other shard
	// covers (those are excluded by its field selector), or the whole of a cluster-scoped
	// resource.
	namespace string
	// listNamespace is the namespace the informer lists: namespace, or the one an exact
	// metadata.namespace field selector pins (as controller-runtime does, so that a
	// namespaced grant suffices).
	listNamespace string
	label, field  string
	transform     toolscache.TransformFunc
	// stripManagedFields: the shard's transform is controller-runtime's
	// TransformStripManagedFields, which kindex does on the bytes instead (transform is nil).
	stripManagedFields bool
	noCopy             bool
	resync             time.Duration // the SyncPeriod that applies here
}

// plan is how a resource is cached: its scope and one shard per namespace configuration.
type plan struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	shards     []shardConfig // sorted by namespace, "" first
}

// resync is the resource's resync period: the shortest positive SyncPeriod of its shards,
// 0 (none) if no shard has one (kindex resyncs per factory, and a resource has one factory
// per storage mode).
func (p *plan) resync() time.Duration {
	var d time.Duration
	for _, s := range p.shards {
		if s.resync > 0 && (d == 0 || s.resync < d) {
			d = s.resync
		}
	}
	return d
}

// keepManagedFields reports whether the resource's objects are stored with their
// managedFields: as in controller-runtime, unless TransformStripManagedFields is the
// transform of every shard (kindex stores a resource once, for all its shards).
func (p *plan) keepManagedFields() bool {
	for _, s := range p.shards {
		if !s.stripManagedFields {
			return true
		}
	}
	return false
}

// shardFor returns the index of the shard that holds objects of namespace ns, or -1.
func (p *plan) shardFor(ns string) int {
	if !p.namespaced {
		return 0
	}
	all := -1
	for i, s := range p.shards {
		if s.namespace == ns {
			return i
		}
		if s.namespace == metav1.NamespaceAll {
			all = i
		}
	}
	return all
}

// planFor resolves controller-runtime's options for one resource, with its precedence:
// a namespace's own Config, then the type's ByObject settings, then DefaultNamespaces'
// entry for the namespace, then the Default* options.
func (c *Cache) planFor(gvk schema.GroupVersionKind, mapping *meta.RESTMapping) *plan {
	return c.planForScope(gvk, mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace)
}

// planForScope is planFor for a resource gvr of the given scope: a resource whose scope
// changed (a CRD re-created with the other scope) is planned again with it (replan.go).
func (c *Cache) planForScope(gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, namespaced bool) *plan {
	p := &plan{gvk: gvk, gvr: gvr, namespaced: namespaced}
	global := cache.Config{
		LabelSelector:         c.opts.DefaultLabelSelector,
		FieldSelector:         c.opts.DefaultFieldSelector,
		Transform:             c.opts.DefaultTransform,
		UnsafeDisableDeepCopy: c.opts.DefaultUnsafeDisableDeepCopy,
		SyncPeriod:            &c.resync,
	}
	bo, hasBO := c.byObject[gvk]
	typeLevel := cache.Config{
		LabelSelector:         bo.Label,
		FieldSelector:         bo.Field,
		Transform:             bo.Transform,
		UnsafeDisableDeepCopy: bo.UnsafeDisableDeepCopy,
		SyncPeriod:            bo.SyncPeriod,
	}
	nsConfigs := c.opts.DefaultNamespaces
	if hasBO && bo.Namespaces != nil {
		nsConfigs = bo.Namespaces
	}
	if !p.namespaced || len(nsConfigs) == 0 {
		p.shards = []shardConfig{c.toShard(metav1.NamespaceAll, defaulted(typeLevel, global), nil)}
		return p
	}
	others := make([]string, 0, len(nsConfigs))
	for ns := range nsConfigs {
		if ns != metav1.NamespaceAll {
			others = append(others, ns)
		}
	}
	sort.Strings(others)
	for ns, cfg := range nsConfigs {
		cfg = defaulted(cfg, typeLevel)
		if dn, ok := c.opts.DefaultNamespaces[ns]; ok {
			cfg = defaulted(cfg, dn)
		}
		cfg = defaulted(cfg, global)
		var exclude []string
		if ns == metav1.NamespaceAll {
			exclude = others
		}
		p.shards = append(p.shards, c.toShard(ns, cfg, exclude))
	}
	sort.Slice(p.shards, func(i, j int) bool { return p.shards[i].namespace < p.shards[j].namespace })
	return p
}

// defaulted fills cfg's unset settings from def.
func defaulted(cfg, def cache.Config) cache.Config {
	if cfg.LabelSelector == nil {
		cfg.LabelSelector = def.LabelSelector
	}
	if cfg.FieldSelector == nil {
		cfg.FieldSelector = def.FieldSelector
	}
	if cfg.Transform == nil {
		cfg.Transform = def.Transform
	}
	if cfg.UnsafeDisableDeepCopy == nil {
		cfg.UnsafeDisableDeepCopy = def.UnsafeDisableDeepCopy
	}
	if cfg.SyncPeriod == nil {
		cfg.SyncPeriod = def.SyncPeriod
	}
	return cfg
}

func (c *Cache) toShard(ns string, cfg cache.Config, exclude []string) shardConfig {
	s := shardConfig{namespace: ns, listNamespace: ns, transform: cfg.Transform, resync: c.resync}
	if cfg.SyncPeriod != nil {
		s.resync = *cfg.SyncPeriod
	}
	if isStripManagedFields(cfg.Transform) {
		// kindex cuts managedFields from the bytes before it stores them: the transform would
		// only cost a decode and an encode per object.
		s.transform, s.stripManagedFields = nil, true
	}
	if cfg.UnsafeDisableDeepCopy != nil {
		s.noCopy = *cfg.UnsafeDisableDeepCopy
	}
	if cfg.LabelSelector != nil {
		s.label = cfg.LabelSelector.String()
	}
	field := cfg.FieldSelector
	if len(exclude) > 0 {
		sels := make([]fields.Selector, 0, len(exclude)+1)
		if field != nil && !field.Empty() {
			sels = append(sels, field)
		}
		for _, other := range exclude {
			sels = append(sels, fields.OneTermNotEqualSelector("metadata.namespace", other))
		}
		field = fields.AndSelectors(sels...)
	}
	if field != nil && !field.Empty() {
		s.field = field.String()
		if ns == metav1.NamespaceAll {
			if pinned, ok := field.RequiresExactMatch("metadata.namespace"); ok {
				s.listNamespace = pinned
			}
		}
	}
	return s
}

// isStripManagedFields reports whether fn is controller-runtime's TransformStripManagedFields.
// Functions cannot be compared, and each call site where it is inlined has a closure of its
// own with a name of the caller's (pkg.Caller.TransformStripManagedFields.funcN), which a
// project's own function of that name would share; so this compares where the closure's
// code comes from: the file and line of controller-runtime's closure, as compiled into this
// program. A function it fails to recognize simply runs.
func isStripManagedFields(fn toolscache.TransformFunc) bool {
	return fn != nil && funcSite(fn) == stripManagedFieldsSite
}

// stripManagedFieldsSite is where the code of TransformStripManagedFields' closure is.
var stripManagedFieldsSite = funcSite(cache.TransformStripManagedFields())

// funcSite is the source file and line where fn's code starts ("" if unknown).
func funcSite(fn toolscache.TransformFunc) string {
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return ""
	}
	file, line := f.FileLine(f.Entry())
	return file + ":" + strconv.Itoa(line)
}
