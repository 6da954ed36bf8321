package crcache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
)

// accessKind is how a caller reads a resource: as the scheme's Go type, as
// *unstructured.Unstructured or as *metav1.PartialObjectMetadata. controller-runtime keeps
// one informer per kind; here typed and unstructured reads share one compact informer, and
// metadata-only reads share it too when it exists.
type accessKind uint8

const (
	kindTyped accessKind = iota
	kindUnstructured
	kindMetadata
)

func (k accessKind) String() string {
	switch k {
	case kindTyped:
		return "typed"
	case kindUnstructured:
		return "unstructured"
	case kindMetadata:
		return "metadata"
	}
	return fmt.Sprintf("accessKind(%d)", uint8(k))
}

// kindOf tells how obj (an object or a list) reads its resource.
func kindOf(obj runtime.Object) accessKind {
	switch obj.(type) {
	case runtime.Unstructured:
		return kindUnstructured
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return kindMetadata
	}
	return kindTyped
}

// backend is the storage an access reads.
type backend uint8

const (
	// backendCompact: kindex's compact mode, each object kept as its JSON bytes.
	backendCompact backend = iota
	// backendMetadata: kindex's metadata-only mode (PartialObjectMetadata over protobuf).
	backendMetadata
)

type accessKey struct {
	gvk  schema.GroupVersionKind
	kind accessKind
}

// errAccessStopped is returned by an informer after RemoveInformer or once the cache stopped.
var errAccessStopped = errors.New("crcache: informer stopped (removed, or the cache stopped)")

// access is what controller-runtime calls an informer: one resource read one way. It holds
// one kindex informer reference per shard of the resource's plan, so that RemoveInformer
// releases exactly its own references: the kindex informer stops when its last reference
// goes, whichever access held it.
type access struct {
	c   *Cache
	key accessKey
	inf *Informer

	// swapMu: index registrations (read) against a change of the informers for a new plan
	// (write, replan.go), so that an index registered meanwhile is on the new informers.
	swapMu sync.RWMutex

	ready   chan struct{} // closed when materialize has ended
	matOnce sync.Once
	err     error // why materialize failed; set before ready closes

	mu sync.Mutex
	// res is the resource whose plan the shards follow; a new plan (replan.go) replaces it
	// with the shards.
	res    *resource
	shards []shard // nil until materialized, and while moveErr is set
	// backend is the storage of the shards (or that materialize acquires); want is the one
	// the access is to move to (a metadata-only access moves to the compact informers once
	// its resource is read whole: upgradeLocked).
	backend, want backend
	// moveErr is why the access could not move to the informers of its resource's plan
	// (replan.go), at moveErrTime: it holds no informer, and reads fail with it until a
	// plan again moves it.
	moveErr     error
	moveErrTime time.Time
	regs        map[*Registration]struct{}
	indexes     []*indexReg // registered through this access, in order
	stopped     bool
	// readable: stopped with the cache (freeze), the access keeps its shards, whose
	// informers keep what they held (informer.Options.ReadAfterShutdown): reads go on
	// answering from them, as controller-runtime's stopped informers do.
	readable bool
	stopCh   chan struct{}
	checker  *doneChecker
	synced   bool // latch: every shard has synced once

	shared sharedObjects // objects read with UnsafeDisableDeepCopy (shared.go)
	// Handlers and function indexes registered; from two on they share decoded objects
	// through recent (recent.go).
	sharers atomic.Int32
	recent  recentObjects
}

// indexReg is an index registered through an access: a function (IndexField, AddIndexers)
// or a JSONPath expression (IndexJSONPath, field selectors on paths). done is closed once it
// is registered on the access's informers (err says whether it failed), so that a second
// request for the same JSONPath index waits for the first.
//
// name is the name the caller gave (field:<field> for IndexField and IndexJSONPath);
// kname is the name of the index on the kindex informers, which the reads of a resource
// (typed, unstructured, metadata) may share: name itself, unless another read of the
// resource registered that name with another definition, when the index is this read's
// own (name and the read's kind), as each informer of controller-runtime has its own
// indexes.
type indexReg struct {
	name  string
	kname string
	fn    toolscache.IndexFunc
	path  *jsonpath.Path
	done  chan struct{}
	err   error
}

// kindexName is the index's name on the kindex informers.
func (idx *indexReg) kindexName() string {
	if idx.kname != "" {
		return idx.kname
	}
	return idx.name
}

func (idx *indexReg) samePath(o *indexReg) bool {
	return idx.path != nil && o.path != nil && idx.path.String() == o.path.String()
}

// accessFor returns the cache's access for gvk read as kind, creating it (and, once the cache
// has started, its kindex informers). With failIfMissing it refuses to create an informer
// for a resource the cache does not hold yet (ReaderFailOnMissingInformer); a resource it
// holds can always be read another way the data allows (typed as unstructured and the
// reverse, either as metadata).
func (c *Cache) accessFor(gvk schema.GroupVersionKind, kind accessKind, failIfMissing bool) (*access, error) {
	key := accessKey{gvk: gvk, kind: kind}
	c.mu.Lock()
	if a := c.accesses[key]; a != nil {
		c.mu.Unlock()
		return a, nil
	}
	if failIfMissing && !c.holdsLocked(gvk, kind) {
		c.mu.Unlock()
		return nil, &cache.ErrResourceNotCached{GVK: gvk}
	}
	res := c.resources[gvk]
	c.mu.Unlock()

	if res == nil {
		mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, err
		}
		res = c.resourceFor(c.planFor(gvk, mapping))
	}

	c.mu.Lock()
	if a := c.accesses[key]; a != nil {
		c.mu.Unlock()
		return a, nil
	}
	if c.stopping {
		c.mu.Unlock()
		return nil, errAccessStopped
	}
	if cur := c.resources[gvk]; cur != nil {
		res = cur // planned again for a new scope meanwhile
	}
	a := &access{
		c:      c,
		key:    key,
		res:    res,
		ready:  make(chan struct{}),
		regs:   map[*Registration]struct{}{},
		stopCh: make(chan struct{}),
	}
	a.inf = &Informer{a: a}
	if kind == kindMetadata && !c.holdsLocked(gvk, kindTyped) {
		a.backend, a.want = backendMetadata, backendMetadata
	}
	c.accesses[key] = a
	if c.started {
		c.goMaterialize(a)
	}
	if kind != kindMetadata {
		if m := c.accesses[accessKey{gvk, kindMetadata}]; m != nil {
			c.upgradeLocked(m, a)
		}
	}
	c.mu.Unlock()
	return a, nil
}

// upgradeLocked moves metadata-only access m to the compact informers that full, a typed
// or unstructured access of the same resource, reads (c.mu held): one informer then holds
// the resource, as the package documentation promises. A materialized m moves once full
// has synced, so that its reads and handlers do not wait meanwhile; its handlers are
// handed the compact informers' objects as updates of what they hold (nothing for an
// unchanged one), and deletes of what those lack (replan.go, Registration.move). If full
// never syncs (removed, parked), m keeps its metadata-only informer.
func (c *Cache) upgradeLocked(m, full *access) {
	m.mu.Lock()
	if m.stopped || m.want == backendCompact {
		m.mu.Unlock()
		return
	}
	m.want = backendCompact
	materialized := m.shards != nil || m.moveErr != nil
	if !materialized {
		m.backend = backendCompact // materialize acquires it (again, if acquiring already)
	}
	m.mu.Unlock()
	if !materialized || !c.started {
		return
	}
	ctx := c.ctx
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		if err := full.waitSynced(ctx, true); err != nil {
			m.mu.Lock()
			if m.backend == backendMetadata {
				m.want = backendMetadata
			}
			m.mu.Unlock()
			return
		}
		if err := m.switchTo(ctx, nil); err != nil {
			c.logger().Error(err, "Cannot move metadata-only reads to the informers of the whole objects", "gvk", m.key.gvk.String())
		}
	}()
}

// holdsLocked reports whether the cache has an informer that can serve gvk read as kind:
// one of its own kind, or a compact one (typed or unstructured access) for any kind.
func (c *Cache) holdsLocked(gvk schema.GroupVersionKind, kind accessKind) bool {
	if c.accesses[accessKey{gvk, kind}] != nil {
		return true
	}
	for _, k := range []accessKind{kindTyped, kindUnstructured} {
		if a := c.accesses[accessKey{gvk, k}]; a != nil {
			return true
		}
	}
	return false
}

// goMaterialize materializes a in the background, with the cache's context (so that a
// caller whose context ends does not fail it for the others). c.mu is held.
func (c *Cache) goMaterialize(a *access) {
	ctx := c.ctx
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		c.startDiscovery(ctx)
		a.materialize(ctx)
	}()
}

// forget removes a from the cache's accesses if it is still there.
func (c *Cache) forget(a *access) {
	c.mu.Lock()
	if c.accesses[a.key] == a {
		delete(c.accesses, a.key)
	}
	c.mu.Unlock()
}

// materialize acquires the access's kindex informers (once), then registers what was
// registered before: indexes and handlers.
func (a *access) materialize(ctx context.Context) {
	a.matOnce.Do(func() {
		defer close(a.ready)
		var shards []shard
		var err error
		for {
			a.mu.Lock()
			res, be := a.res, a.backend
			a.mu.Unlock()
			shards, err = a.acquire(ctx, res, be)
			a.mu.Lock()
			if a.stopped || (a.res == res && a.backend == be) {
				break
			}
			// Planned again for a new scope while acquiring, or to be read from the compact
			// informers: acquire again.
			a.mu.Unlock()
			for _, s := range shards {
				s.release()
			}
		}
		if a.stopped || err != nil {
			pending := append([]*indexReg(nil), a.indexes...)
			a.mu.Unlock()
			for _, s := range shards {
				s.release()
			}
			a.err = errAccessStopped
			if err != nil {
				a.err = fmt.Errorf("crcache: starting the informer of %s (%s): %w", a.key.gvk, a.key.kind, err)
			}
			for _, idx := range pending {
				a.finishIndex(idx, a.err)
			}
			if err == nil {
				return
			}
			a.c.forget(a)
			a.c.logger().Error(err, "Cannot start informer", "gvk", a.key.gvk.String(), "type", a.key.kind.String())
			return
		}
		a.shards = shards
		res := a.res
		pending := append([]*indexReg(nil), a.indexes...)
		for r := range a.regs {
			if err := r.attachLocked(shards); err != nil {
				a.c.logger().Error(err, "Cannot add event handler", "gvk", a.key.gvk.String())
			}
		}
		a.mu.Unlock()
		// Indexes run their functions on what the informers hold already: not under a.mu.
		for _, idx := range pending {
			err := applyIndex(shards, idx)
			if err != nil {
				a.c.logger().Error(err, "Cannot register index", "gvk", a.key.gvk.String(), "index", idx.name)
			}
			a.finishIndex(idx, err)
		}
		a.c.checkScope(res, shards)
	})
}

// resource returns the resource whose plan the access follows.
func (a *access) resource() *resource {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.res
}

// acquire takes one kindex informer reference per shard of res's plan, from be's factory.
func (a *access) acquire(ctx context.Context, res *resource, be backend) ([]shard, error) {
	p := res.plan
	shards := make([]shard, 0, len(p.shards))
	fail := func(err error) ([]shard, error) {
		for _, s := range shards {
			s.release()
		}
		return nil, err
	}
	for i := range p.shards {
		sc := &p.shards[i]
		opts := []informer.Option{
			informer.WithNamespace(sc.listNamespace),
			informer.WithLabelSelector(sc.label),
			informer.WithFieldSelector(sc.field),
		}
		// The factory of be's storage, started, and a function that takes an informer of it.
		var informerOf func() (shard, error)
		switch be {
		case backendCompact:
			f, err := res.compactFactory()
			if err != nil {
				return fail(err)
			}
			informerOf = func() (shard, error) {
				inf, err := f.InformerForGVR(ctx, p.gvr, opts...)
				if err != nil {
					return nil, err
				}
				return &kshard[*unstructured.Unstructured]{inf: inf, cfg: sc}, nil
			}
		case backendMetadata:
			f, err := res.metaFactory()
			if err != nil {
				return fail(err)
			}
			informerOf = func() (shard, error) {
				inf, err := f.InformerForGVR(ctx, p.gvr, opts...)
				if err != nil {
					return nil, err
				}
				return &kshard[*metav1.PartialObjectMetadata]{inf: inf, cfg: sc}, nil
			}
		}
		if fault := a.c.acquireFault; fault != nil {
			if err := fault(p.gvr, p.namespaced); err != nil {
				return fail(err)
			}
		}
		s, err := informerOf()
		if err != nil {
			return fail(err)
		}
		shards = append(shards, s)
	}
	return shards, nil
}

// waitReady waits until the access has its informers (or failed to get them). An access
// that is ready, or stopped, answers so whatever ctx: a read with a context that has ended
// is served from a cache that needs no wait, as controller-runtime's is. An access that
// is ready answers so even once stopped: its reads (view) say whether it can still be read
// (readable).
func (a *access) waitReady(ctx context.Context) error {
	select {
	case <-a.ready:
		return a.err
	default:
	}
	select {
	case <-a.stopCh:
		return errAccessStopped
	default:
	}
	select {
	case <-a.ready:
	default:
		select {
		case <-a.ready:
		case <-a.stopCh:
			return errAccessStopped
		case <-ctx.Done():
			return a.timeout(ctx.Err())
		}
	}
	if a.err != nil {
		return a.err
	}
	return nil
}

// waitSynced waits until every shard has synced once. With orPark it returns at once, with
// the informer's *informer.SyncError (apierrors.IsForbidden, IsNotFound hold for it), when a
// shard is parked before its first sync; without, it waits for the shard to resume (a
// grant, the resource served again) and sync. It returns a timeout error
// (apierrors.IsTimeout) when ctx ends first.
func (a *access) waitSynced(ctx context.Context, orPark bool) error {
	for {
		// The informers of a resource planned again meanwhile are waited for in turn.
		if err := a.waitShardSynced(ctx, nil, -1, orPark); !errors.Is(err, errReplanned) {
			return err
		}
	}
}

// waitShardSynced is waitSynced for the shard of index only of plan p (all of them if only <
// 0; p nil: whatever the plan): a read of one namespace of a cache over several waits for
// that namespace's informer alone, so that another namespace's 403 does not fail it.
// errReplanned: the access follows another plan than p now, or its informers were changed
// while it waited.
func (a *access) waitShardSynced(ctx context.Context, p *plan, only int, orPark bool) error {
	if err := a.waitReady(ctx); err != nil {
		return err
	}
	shards, err := a.currentFor(p)
	if err != nil {
		return err
	}
	if only >= 0 {
		shards = shards[only : only+1]
	}
	for _, s := range shards {
		if s.hasSynced() {
			continue
		}
		wait := s.waitForSync
		if orPark {
			wait = s.waitForSyncOrPark
		}
		if err := wait(ctx); err != nil {
			if s.hasSynced() {
				continue
			}
			if ctx.Err() != nil {
				return a.timeout(err)
			}
			if errors.Is(err, informer.ErrReleased) {
				if a.isStopped() {
					return errAccessStopped
				}
				return errReplanned // released by a new plan (replan.go)
			}
			return fmt.Errorf("crcache: informer of %s cannot sync: %w", a.key.gvk, err)
		}
	}
	return nil
}

// hasSynced reports whether every shard has synced once (latched).
func (a *access) hasSynced() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.synced {
		return true
	}
	if a.shards == nil {
		return false
	}
	for _, s := range a.shards {
		if !s.hasSynced() {
			return false
		}
	}
	a.synced = true
	return true
}

// current returns the access's shards, or an error once it stopped.
func (a *access) current() ([]shard, error) { return a.currentFor(nil) }

// currentFor is current for a read planned with p: errReplanned if the access follows
// another plan now (p nil: any plan).
func (a *access) currentFor(p *plan) ([]shard, error) {
	_, shards, err := a.view()
	if err == nil && p != nil && a.resource().plan != p {
		return nil, errReplanned
	}
	return shards, err
}

// view returns the access's resource and its shards, together.
func (a *access) view() (*resource, []shard, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped && !a.readable {
		return nil, nil, errAccessStopped
	}
	if a.moveErr != nil {
		return nil, nil, a.moveErr
	}
	return a.res, a.shards, nil
}

// broken reports whether the access could not move to the informers of its resource's
// plan (moveErr).
func (a *access) broken() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.moveErr != nil
}

// storage is the storage the access reads.
func (a *access) storage() backend {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.backend
}

func (a *access) isStopped() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopped
}

// stop releases the access's informer references, with the handlers and indexes added
// through them. It is idempotent, and ends the reads of an access the cache froze.
func (a *access) stop() {
	a.mu.Lock()
	if a.stopped && !a.readable {
		a.mu.Unlock()
		return
	}
	if !a.stopped {
		close(a.stopCh)
	}
	a.stopped, a.readable = true, false
	shards := a.shards
	a.mu.Unlock()
	a.shared.reset()
	a.recent.reset()
	for _, s := range shards {
		s.release()
	}
}

// freeze stops the access as the cache stops: its informers stop with their factories and
// take no handler or index any more, but it keeps their references, whose reads answer from
// what they held (readable) until stop.
func (a *access) freeze() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return
	}
	a.stopped, a.readable = true, true
	close(a.stopCh)
}

// addIndex registers an index through this access: now on every shard if materialized, and
// in any case on the shards it gets later. Index functions run on the objects already cached
// before it returns, without a lock of the cache held.
func (a *access) addIndex(idx *indexReg) error { return a.addIndexAs(idx, false) }

// addIndexAs is addIndex; with selector, idx is a field selector's path, refused with
// errSelectorLimit when the resource has maxSelectorIndexes of them (registerIndex).
func (a *access) addIndexAs(idx *indexReg, selector bool) error {
	a.swapMu.RLock()
	have, shards, err := a.registerIndex(idx, selector)
	if err != nil || have != nil || shards == nil {
		a.swapMu.RUnlock()
		if err != nil {
			return err
		}
		if have != nil {
			<-have.done // the same JSONPath index again: registered here already, or being
			return have.err
		}
		return nil // materialize, or the move to the informers of a plan, registers it
	}
	err = applyIndex(shards, idx)
	a.finishIndex(idx, err)
	a.swapMu.RUnlock()
	return err
}

// errSelectorLimit: a field selector's path would exceed maxSelectorIndexes.
var errSelectorLimit = errors.New("crcache: selector index limit")

// registerIndex records idx on a and returns the shards to apply it to (nil before
// materialize), or the same JSONPath index registered before (have). It runs under the
// resource's index lock, so that two reads of the resource cannot register one name with
// two definitions at the same moment, nor field selectors go past maxSelectorIndexes on
// the resource (selector: idx is a field selector's path; errSelectorLimit when full).
func (a *access) registerIndex(idx *indexReg, selector bool) (have *indexReg, shards []shard, err error) {
	res := a.resource()
	res.idxMu.Lock()
	defer res.idxMu.Unlock()
	if have, err := a.sameName(idx); have != nil || err != nil {
		return have, nil, err
	}
	kname, err := a.c.kindexIndexName(a, idx)
	if err != nil {
		return nil, nil, err
	}
	idx.kname = kname
	if selector && a.c.selectorIndexes(a.key.gvk) >= maxSelectorIndexes {
		return nil, nil, errSelectorLimit
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return nil, nil, errAccessStopped
	}
	idx.done = make(chan struct{})
	a.indexes = append(a.indexes, idx)
	if idx.fn != nil {
		a.sharers.Add(1)
	}
	if a.moveErr != nil {
		// No informer until a plan moves the access, which registers it then.
		idx.err = nil
		close(idx.done)
	}
	return nil, a.shards, nil
}

// checkIndexName returns the error that registering a function index named name through a
// would fail with now (informer.ErrIndexConflict when the name is taken), nil if it would
// not: a caller registering several indexes checks them all before it registers any.
func (a *access) checkIndexName(name string) error {
	idx := &indexReg{name: name}
	res := a.resource()
	res.idxMu.Lock()
	defer res.idxMu.Unlock()
	if _, err := a.sameName(idx); err != nil {
		return err
	}
	_, err := a.c.kindexIndexName(a, idx)
	return err
}

// sameName returns the index of idx's name registered through a if it is the same JSONPath
// index, ErrIndexConflict if it is another, nothing if there is none.
func (a *access) sameName(idx *indexReg) (*indexReg, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return nil, errAccessStopped
	}
	for _, h := range a.indexes {
		if h.name != idx.name {
			continue
		}
		if h.samePath(idx) {
			return h, nil
		}
		return nil, fmt.Errorf("crcache: index %q of %s: %w", idx.name, a.key.gvk, informer.ErrIndexConflict)
	}
	return nil, nil
}

// selectorIndexes counts the indexes field selectors registered through every read of
// gvk's resource (an index of the same path through two reads counts twice, as the reads
// may use two informers).
func (c *Cache) selectorIndexes(gvk schema.GroupVersionKind) int {
	n := 0
	for _, a := range c.accessesOf(gvk, nil) {
		n += a.selectorIndexes()
	}
	return n
}

// accessesOf returns the accesses of gvk's resource (its typed, unstructured and metadata
// reads), except is left out.
func (c *Cache) accessesOf(gvk schema.GroupVersionKind, except *access) []*access {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*access
	for k, a := range c.accesses {
		if k.gvk == gvk && a != except {
			out = append(out, a)
		}
	}
	return out
}

// anyIndex reports whether an index registered through a read of gvk's resource, but
// except's, satisfies pred.
func (c *Cache) anyIndex(gvk schema.GroupVersionKind, except *access, pred func(*indexReg) bool) bool {
	for _, o := range c.accessesOf(gvk, except) {
		o.mu.Lock()
		found := slices.ContainsFunc(o.indexes, pred)
		o.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// kindexIndexName returns the name idx gets on the kindex informers: its own name, as the
// same JSONPath index registered through another read of a's resource (typed,
// unstructured or metadata) has; or, when another read registered that name with another
// definition, a name of a's kind, so that both reads keep their index as they would with
// controller-runtime's informers, one per kind (the reads may share one kindex informer,
// where one name is one index). ErrIndexConflict if that name is taken too.
func (c *Cache) kindexIndexName(a *access, idx *indexReg) (string, error) {
	taken := func(kname string) bool {
		return c.anyIndex(a.key.gvk, a, func(have *indexReg) bool { return have.kindexName() == kname && !have.samePath(idx) })
	}
	if !taken(idx.name) {
		return idx.name, nil
	}
	own := idx.name + "[" + a.key.kind.String() + "]"
	if taken(own) {
		return "", fmt.Errorf("crcache: index %q of %s: %w", idx.name, a.key.gvk, informer.ErrIndexConflict)
	}
	return own, nil
}

// finishIndex records the outcome of an index's registration; a failed one is forgotten.
func (a *access) finishIndex(idx *indexReg, err error) {
	idx.err = err
	close(idx.done)
	if err == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, have := range a.indexes {
		if have == idx {
			a.indexes = append(a.indexes[:i], a.indexes[i+1:]...)
			if idx.fn != nil {
				a.sharers.Add(-1)
			}
			break
		}
	}
}

// applyIndex registers idx on every shard, undoing it on failure.
func applyIndex(shards []shard, idx *indexReg) error {
	for i, s := range shards {
		var err error
		if idx.path != nil {
			err = s.addIndexPath(idx.kindexName(), idx.path)
		} else {
			err = s.addIndexFunc(idx.kindexName(), idx.fn)
		}
		if err != nil {
			for _, done := range shards[:i] {
				_ = done.removeIndex(idx.kindexName())
			}
			return err
		}
	}
	return nil
}

func (a *access) timeout(cause error) error {
	return newTimeoutError(fmt.Sprintf("failed waiting for %s informer of %s to sync", a.key.kind, a.key.gvk), cause)
}

// failedStatuses returns, for an access that could not move to the informers of its
// resource's plan (moveErr), a Stopped status with the error for each informer of the plan
// it lacks; nil otherwise.
func (a *access) failedStatuses() []informer.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.moveErr == nil || a.stopped {
		return nil
	}
	p := a.res.plan
	mode := "compact"
	if a.backend == backendMetadata {
		mode = "metadata"
	}
	out := make([]informer.Status, 0, len(p.shards))
	for _, sc := range p.shards {
		out = append(out, informer.Status{
			Key:           informer.Key{GVR: p.gvr, Mode: mode, Namespace: sc.listNamespace, LabelSelector: sc.label, FieldSelector: sc.field},
			Resource:      discovery.Resource{GVR: p.gvr, GVK: p.gvk, Namespaced: p.namespaced},
			Phase:         informer.PhaseStopped,
			Reason:        informer.ReasonUnknown,
			LastError:     a.moveErr,
			LastErrorTime: a.moveErrTime,
		})
	}
	return out
}
