package informer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

// hooks holds what New and tests wire in; users never see it.
type hooks struct {
	// Access re-checks permissions of parked informers; default: SelfSubjectAccessReviews.
	Access accessChecker
	// StartDiscovery, if set, is called by Start: the factory owns the discovery client.
	// WaitDiscovery, if set, is called by Shutdown after the factory's context ended, to wait
	// for the discovery client's goroutines.
	StartDiscovery func(ctx context.Context) error
	WaitDiscovery  func()
	// ReflectorBackoff overrides client-go's reflector backoff (800ms doubling to 30s).
	ReflectorBackoff *wait.Backoff
	// RecheckInitial and RecheckMax bound the re-check backoff of parked informers.
	// Defaults 1s and 30s.
	RecheckInitial, RecheckMax time.Duration
	// HealthyRun is how long a run must last before a later park starts its re-checks from
	// RecheckInitial again. Default 1m.
	HealthyRun time.Duration
	// Pacer replaces the process's start pacer (pacer.go) for the factory.
	Pacer *pacer
	// AccessChecksPerSecond bounds the access re-checks of the factory's informers parked
	// on a 403, together (see waitResume), unless Options.AccessChecks is set. Default 4
	// (NewAccessChecks).
	AccessChecksPerSecond float64
	// CallbackRelease, if set, is called first on each goroutine that finishes a Release
	// made from the informer's own Transform or index function (handle.later).
	CallbackRelease func()
}

// config is the validated, type-erased form of Options.
type config struct {
	Namespace     string
	LabelSelector string
	FieldSelector string
	Selectors     map[schema.GroupResource]Selectors
	ResyncPeriod  time.Duration
	Transform     cache.TransformFunc
	// AccessRecheckInterval caps the re-check backoff of informers parked on a 403.
	AccessRecheckInterval time.Duration
	// snapshot is the Snapshot options, validated; nil when snapshots are off (snapshot.go).
	snapshot *snapshotConfig
	// Shard is Options.Shard.
	Shard Shard
	// ReadAfterShutdown is Options.ReadAfterShutdown.
	ReadAfterShutdown bool
}

// core is the type-erased factory.
type core struct {
	mode storage.Mode
	// objectDecodes: mode.Object decodes a new object on each call (storage.Decoding), so
	// reads call it outside the store's lock; otherwise it is a type assertion.
	objectDecodes bool
	opts          config
	in            hooks
	logger        logr.Logger
	metrics       *metrics
	// pace, if set, paces the garbage of starts (Options.DisableStartGC, pacer.go).
	pace   *pacer
	hub    *hub
	disc   Discovery
	access accessChecker
	reg    *registry
	// probeShard asks the server whether it honours a target's shard selector (shard.go).
	probeShard shardProber
	// shards maps each shard selector keyFor built to its Shard, for the client-side filter.
	shards sync.Map

	handlers sync.WaitGroup // handler goroutines of every entry
	// releases counts the goroutines that finish a Release made from an informer's own
	// Transform or index function (handle.later): stop waits for them.
	releases sync.WaitGroup
	// listeners holds every listener whose goroutine has not ended (*listener keys), so
	// that a Shutdown from a handler can tell that it runs on one (fromHandler).
	listeners sync.Map

	// ownerIndex: every entry registers the owner index as it starts (Options.OwnerIndex, or
	// since the first Dependents or Orphans).
	ownerIndex atomic.Bool
	// objType is the front end's object type (Factory[T]'s T), for ItemHandlerFuncs.
	objType reflect.Type
	// paths compiles query.Where conditions (Options.QueryJSONPath); indexOpts compiles
	// index expressions (Options.IndexJSONPath).
	paths     pathCache
	indexOpts jsonpath.Options
	// statusPanicLogged: a status subscriber's panic was logged once.
	statusPanicLogged atomic.Bool
	// checks is the rate the entries parked on a 403 share (Options.AccessChecks, or the
	// factory's own).
	checks *AccessChecks
	// indexes are Options.Indexes, registered by every entry as it is created.
	indexes []namedIndex

	// rechecked is when each group was last re-discovered for parked entries of a
	// discovery client that follows nothing (freshRecheckDue).
	recheckMu sync.Mutex
	rechecked map[string]time.Time

	mu        sync.Mutex
	ctx       context.Context
	cancel    context.CancelFunc
	started   bool
	shutdown  bool
	watchAlls map[*watchAll]struct{}
	unsub     func()
	stopping  atomic.Bool   // stop has begun (stopAs)
	stopped   chan struct{} // closed when stop is done
	// watcherDone is closed when the goroutine that follows the factory's context ends.
	watcherDone chan struct{}
}

func newCore(mode storage.Mode, opts config, in hooks, logger logr.Logger, m *metrics, disc Discovery, access accessChecker) *core {
	if in.RecheckInitial <= 0 {
		in.RecheckInitial = time.Second
	}
	if in.RecheckMax <= 0 {
		in.RecheckMax = 30 * time.Second
	}
	if in.HealthyRun <= 0 {
		in.HealthyRun = time.Minute
	}
	c := &core{mode: mode, opts: opts, in: in, logger: logger, metrics: m, disc: disc, access: access,
		checks: NewAccessChecks(in.AccessChecksPerSecond),
		reg:    newRegistry(), watchAlls: map[*watchAll]struct{}{}, stopped: make(chan struct{}),
		watcherDone: make(chan struct{})}
	if d, ok := mode.(storage.Decoding); ok && d.ObjectDecodes() {
		c.objectDecodes = true
	}
	return c
}

// start binds the factory's lifetime to ctx; it does not block.
func (c *core) start(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return fmt.Errorf("%w: a factory cannot be started again after Shutdown", ErrShutdown)
	}
	if c.started {
		c.mu.Unlock()
		return ErrAlreadyStarted
	}
	c.started = true
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.hub = newHub(c.subscriberPanicked)
	c.mu.Unlock()
	pruneErr := ""
	if s := c.opts.snapshot; s != nil && s.retention > 0 {
		// Once per factory, before Start returns; the files of informers created meanwhile
		// are kept as at every prune.
		pruneErr = c.pruneSnapshots("")
	}
	if c.in.StartDiscovery != nil {
		if err := c.in.StartDiscovery(c.ctx); err != nil {
			close(c.watcherDone) // no watcher was started
			c.stop()
			return fmt.Errorf("kindex: start discovery: %w", err)
		}
	}
	// Discovery delivers events on a goroutine of its own, one at a time and in order: they
	// are handled there, with no queue of the factory's.
	unsub, err := c.disc.Subscribe(c.handleEvent)
	if err != nil { // cannot happen with a real client: handleEvent is not nil
		close(c.watcherDone)
		c.stop()
		return fmt.Errorf("kindex: subscribe to discovery: %w", err)
	}
	c.mu.Lock()
	c.unsub = unsub
	c.mu.Unlock()
	// The factory's lifetime is ctx's: when it ends, everything stops. Shutdown cancels ctx
	// too, and waits for this goroutine, which then has nothing to do.
	go func() {
		defer close(c.watcherDone)
		c.followContext(c.ctx, pruneErr)
		c.stopAs(true)
	}()
	return nil
}

// stop shuts everything down and waits for every goroutine the factory started, handler
// goroutines included.
func (c *core) stop() {
	if c.fromOwnGoroutine() {
		// Called from an informer's Transform or index function: stopping that informer
		// waits for the caller's return. Cancelling the factory's context makes the
		// goroutine that follows it stop everything (stopAs(true)) once it can; new
		// informers are refused from now on.
		c.mu.Lock()
		c.shutdown = true
		cancel := c.cancel
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return
	}
	c.stopAs(false)
}

// stopAs is stop; watcher is set when the goroutine that follows the factory's context
// calls it, which must not wait for itself. The first caller stops everything; a later or
// concurrent one waits until that is done, and for the watcher (the watcher does not wait:
// whoever stops waits for it). When the context ended first, the watcher is the first
// caller: Shutdown then waited for its work but not for its end, and returned while the
// watcher goroutine was still running.
func (c *core) stopAs(watcher bool) {
	if !c.stopping.CompareAndSwap(false, true) {
		if !watcher {
			<-c.stopped
			c.mu.Lock()
			started := c.started
			c.mu.Unlock()
			if started {
				<-c.watcherDone
			}
		}
		return
	}
	defer close(c.stopped)
	func() {
		c.mu.Lock()
		c.shutdown = true
		started := c.started
		cancel, unsub := c.cancel, c.unsub
		was := c.watchAlls
		c.watchAlls = map[*watchAll]struct{}{}
		c.mu.Unlock()
		if !started {
			return
		}
		cancel()
		if !watcher {
			<-c.watcherDone
		}
		if unsub != nil {
			unsub()
		}
		for wa := range was {
			wa.stop(ErrShutdown)
		}
		c.reg.close()
		// The Releases made from callbacks have all started their goroutines by now: close
		// stopped every informer, waiting for its runs (Transforms, the processing loop's
		// index functions) and for the store's write lock (AddIndex's index functions). Their
		// goroutines wait for nothing Shutdown holds: a Shutdown from a handler waits too.
		c.releases.Wait()
		if !c.fromHandler() {
			// A handler that shuts the factory down cannot wait for its own call to end,
			// nor for the goroutines that wait for it (watch-all handoffs).
			c.handlers.Wait()
		}
		c.hub.close()
		if c.in.WaitDiscovery != nil {
			c.in.WaitDiscovery()
		}
	}()
}

func (c *core) context() (context.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.shutdown:
		return nil, ErrShutdown
	case !c.started:
		return nil, ErrNotStarted
	}
	return c.ctx, nil
}

// handleEvent is the discovery subscription: it hands an event to the parked entries of the
// resource and to the watch-all sets. Discovery calls it on its subscription goroutine, one
// event at a time and in order (Discovery.Subscribe); after Shutdown it does nothing.
func (c *core) handleEvent(ev discovery.Event) {
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return
	}
	was := make([]*watchAll, 0, len(c.watchAlls))
	for wa := range c.watchAlls {
		was = append(was, wa)
	}
	c.mu.Unlock()
	grs := []schema.GroupResource{ev.Resource.GVR.GroupResource()}
	if ev.Old != nil {
		grs = append(grs, ev.Old.GVR.GroupResource())
	}
	for _, e := range c.reg.list() {
		for _, gr := range grs {
			if e.key.GVR.GroupResource() == gr {
				if ev.Type != discovery.Removed && ev.Resource.GVR.GroupResource() == gr {
					e.described(ev.Resource)
					e.parkUnservable(ev.Resource)
				}
				e.notify()
			}
		}
	}
	for _, wa := range was {
		wa.onEvent(ev)
	}
}

// acquire returns a new reference to the shared informer of res.
func (c *core) acquire(res discovery.Resource, opts []Option) (*handle, error) {
	if _, err := c.context(); err != nil {
		return nil, err
	}
	if !res.Watchable() {
		return nil, fmt.Errorf("%w: %s (verbs %v)", ErrNotWatchable, resourceName(res.GVR.GroupResource()), res.Verbs)
	}
	key, t, err := c.keyFor(res, opts)
	if err != nil {
		return nil, err
	}
	co := parseCallOptions(opts)
	handlers := co.handlers
	for _, hd := range handlers {
		if err := c.checkHandler(hd, "WithEventHandler"); err != nil {
			return nil, err
		}
	}
	e, early, err := c.reg.acquire(c, key, t, co)
	if err != nil {
		return nil, err
	}
	h := &handle{c: c, e: e, regs: []*Registration{}}
	for _, r := range early {
		r.owner = h // as handle.addHandler: removing it again then does nothing
		h.track(r)
	}
	if len(early) == 0 {
		// An informer that existed already: the handlers are added as AddEventHandler
		// adds them.
		for _, hd := range handlers {
			if _, err := h.addHandler(hd); err != nil {
				h.dropRefs()
				return nil, err
			}
		}
	}
	return h, nil
}

// waitForSync waits for every live informer. One whose last reference is released while it
// waits is no longer held: it is not waited for (as a member that leaves a watch-all set),
// and the wait goes on with the others; the factory's stop still ends the wait.
func (c *core) waitForSync(ctx context.Context) error {
	if _, err := c.context(); err != nil {
		return err
	}
	if ctx == nil {
		return ErrNilContext
	}
	entries := c.reg.list()
	for {
		err := waitEntries(ctx, entries, false)
		if err == nil || ctx.Err() != nil {
			return err
		}
		held := slices.DeleteFunc(slices.Clone(entries), func(e *entry) bool { return e.haltCause() == haltReleased })
		if len(held) == len(entries) {
			return err
		}
		entries = held
	}
}

// waitEntries waits for every entry; with untilPark a parked entry counts as an answer
// (a failure with ErrParked as the cause) instead of something to wait out.
func waitEntries(ctx context.Context, entries []*entry, untilPark bool) error {
	if ctx == nil {
		return ErrNilContext
	}
	var failures []SyncFailure
	for _, e := range entries {
		if f := e.waitSynced(ctx, untilPark); f != nil {
			failures = append(failures, *f)
		}
	}
	if len(failures) == 0 {
		return nil
	}
	cause := ctx.Err()
	if cause == nil && untilPark && slices.ContainsFunc(failures, func(f SyncFailure) bool { return f.Phase == PhaseParked }) {
		cause = ErrParked
	}
	if cause == nil {
		// Every failure is a stopped informer (ErrShutdown or ErrReleased, entry.stoppedErr),
		// with untilPark too: a stopped informer is not parked, and will not resume.
		cause = failures[0].Err
	}
	return newSyncError(cause, failures)
}

// subscriberPanicked counts a status subscriber's panic and logs the first.
func (c *core) subscriberPanicked(err error) {
	c.metrics.callbackFailed("status")
	if c.statusPanicLogged.CompareAndSwap(false, true) {
		c.logger.Error(err, "Status subscriber panicked; the status was skipped for it (further panics are counted in kindex_callback_failures_total, not logged)")
	}
}
