package informer

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
)

// WatchAll is a set of informers, one per watchable resource a filter selects, that follows
// discovery. Handlers added to it apply to every current and future member.
type WatchAll[T Object] struct {
	wa *watchAll
}

// WatchAll starts informers for every resource the filter selects that supports list and
// watch, and keeps the set current: a resource discovery reports Added joins, one Changed to
// a new preferred version moves to it, one Removed (or Changed so that it can no longer be
// listed and watched) leaves: handlers get a DeletedFinalStateUnknown for each of its
// remaining objects, and should it join again (a CRD deleted and created again), nothing
// of the new member before those. Resources of an API group
// whose discovery failed stay out until it recovers; their informers, if already members,
// are kept. Such a failure does not fail WatchAll, even when the filter selects nothing
// else: the set then starts empty. The set stops when ctx ends or on Stop. A nil ctx is an error (ErrNilContext),
// and so is one that has ended already (its error), before any informer is started.
//
// Across a move, each handler sees one consistent sequence of events per object key, as if
// one informer had watched the resource throughout: the old member's handler is first
// delivered what it has queued (the new member's handler is not called until then, nor
// concurrently with it); the new member's handler then gets the new member's cached objects
// as adds (again for objects the old one had handed over), then its changes; and once it has
// been delivered the new member's initial list, a DeletedFinalStateUnknown (whose Obj is the
// object as the old member last had it) for each key it was last handed by the old member
// that the new member does not cache: objects deleted while the informers changed, or that
// the new version does not serve. So, once the set has moved and the new member has synced,
// what a handler was told adds up to the new member's cache, and no delete of a key comes
// after the new member's add of it unless the object was deleted. (Of an object deleted
// just after the new member's initial list, the handler may get that delete and then
// such a tombstone. A member whose version is retired before discovery reports the move
// follows the resource to the version served (Factory.Informer's rule for an informer
// asked for without a version): its handler is told the objects changed, not deleted.
// Only a member shared with a caller that asked for its version, or whose resource is
// served at no version any more, parks NotFound and queues a delete per object: the
// handler gets those deletes, then the new member's adds.) These are per group and resource: a handler factory that gives each
// version its own state sees the re-adds in the new version's handler and the tombstones
// there too. AllRegistration.MemberSynced (and HasSynced) is false for the resource until
// the handler has been delivered the tombstones. This costs nothing outside moves: a move keeps the old member's keys and objects
// (one map, shared by its handlers) until its handlers' tombstones are queued, and a
// goroutine per handler until then; and the old member's informer runs until the new one
// has synced or parked, for the set's queries (QueryItems) to read meanwhile.
func (f *Factory[T]) WatchAll(ctx context.Context, filter discovery.Filter, opts ...Option) (*WatchAll[T], error) {
	if !f.valid() {
		return nil, ErrUninitialized
	}
	wa, err := f.c.newWatchAll(ctx, filter, opts)
	if err != nil {
		return nil, err
	}
	return &WatchAll[T]{wa: wa}, nil
}

// Stop releases every member informer of the set. As with Informer.Release, handlers are
// not delivered what is queued for them: each handler's call in progress, if any, completes
// and is the last (Stop does not wait for it). The end of the set's context and the
// factory's Shutdown stop it the same way (Shutdown waits for those calls). A zero or nil
// WatchAll (not made by Factory.WatchAll) is ErrUninitialized, in Stop and in every method of
// WatchAll that returns an error; the others do nothing and return zero values.
func (w *WatchAll[T]) Stop() {
	if w.valid() {
		w.wa.stop(ErrReleased)
	}
}

// valid reports whether w was made by Factory.WatchAll: the zero WatchAll and a nil
// *WatchAll were not.
func (w *WatchAll[T]) valid() bool { return w != nil && w.wa != nil }

// AllRegistration is a handler added to a watch-all set.
type AllRegistration struct {
	w  *watchAll
	ah *allHandler
}

// HasSynced reports whether the handler has seen the initial state of every current member.
// One member that cannot sync (forbidden, parked) keeps it false; MemberSynced tells
// members apart. False for a zero or nil AllRegistration (not made by
// WatchAll.AddEventHandler).
func (r *AllRegistration) HasSynced() bool {
	if r == nil || r.w == nil {
		return false
	}
	for _, m := range r.w.snapshot() {
		if !r.memberSynced(m) {
			return false
		}
	}
	return true
}

// MemberSynced reports whether the handler has seen the initial state of the member for gr
// (true also when its handler factory gave that member no handler); false when gr is not a
// member, or r is a zero or nil AllRegistration.
func (r *AllRegistration) MemberSynced(gr schema.GroupResource) bool {
	if r == nil || r.w == nil {
		return false
	}
	r.w.mu.Lock()
	m, ok := r.w.members[gr]
	r.w.mu.Unlock()
	return ok && r.memberSynced(m)
}

func (r *AllRegistration) memberSynced(m *member) bool {
	r.w.mu.Lock()
	reg, ok := m.regs[r.ah]
	moving := m.moving[r.ah] != nil
	settling := m.settling[r.ah]
	r.w.mu.Unlock()
	switch {
	case moving: // handed over from the member before: the tombstones are not queued yet
		return false
	case !ok || reg == skipped:
		return true
	case reg == nil: // being attached
		return false
	}
	if settling != nil {
		select {
		case <-settling:
			r.w.mu.Lock()
			if m.settling[r.ah] == settling {
				delete(m.settling, r.ah)
			}
			r.w.mu.Unlock()
		case <-reg.l.done(): // removed: nothing more comes
		default: // the tombstones are queued, not all delivered
			return false
		}
	}
	return reg.HasSynced()
}

// AddEventHandler calls newHandler for each current and future member resource; the handler
// it returns (nil: none for that resource) receives that resource's objects, as with
// Informer.AddEventHandler. newHandler runs on the goroutine that hands the factory its
// discovery events: it must return promptly (no I/O, no waiting on the set), or every
// watch-everything set of the factory learns of new and removed resources late.
func (w *WatchAll[T]) AddEventHandler(newHandler func(discovery.Resource) cache.ResourceEventHandler) (*AllRegistration, error) {
	if newHandler == nil {
		return nil, fmt.Errorf("%w: WatchAll.AddEventHandler(nil)", ErrNilCallback)
	}
	if !w.valid() {
		return nil, ErrUninitialized
	}
	ah, err := w.wa.addHandler(newHandler)
	if err != nil {
		return nil, err
	}
	return &AllRegistration{w: w.wa, ah: ah}, nil
}

// RemoveEventHandler removes a handler from every member; notifications not yet delivered
// are dropped (those a member that left the set still had queued for it too). A nil
// registration, or one of another set, removes nothing.
func (w *WatchAll[T]) RemoveEventHandler(r *AllRegistration) {
	if !w.valid() || r == nil || r.w != w.wa {
		return
	}
	w.wa.removeHandler(r.ah)
}

// Informers returns the current members. Release on them does nothing: the set owns them.
func (w *WatchAll[T]) Informers() []*Informer[T] {
	if !w.valid() {
		return nil
	}
	ms := w.wa.snapshot()
	out := make([]*Informer[T], 0, len(ms))
	for _, m := range ms {
		out = append(out, &Informer[T]{h: m.view})
	}
	return out
}

// Informer returns the member for a group and resource, and false when it is not a member.
// Release on it does nothing: the set owns it.
func (w *WatchAll[T]) Informer(gr schema.GroupResource) (*Informer[T], bool) {
	if !w.valid() {
		return nil, false
	}
	w.wa.mu.Lock()
	defer w.wa.mu.Unlock()
	m, ok := w.wa.members[gr]
	if !ok {
		return nil, false
	}
	return &Informer[T]{h: m.view}, true
}

// Unavailable returns the API groups the set's filter may select whose discovery fails at
// present (an aggregated API whose service is down, such as metrics-server not ready):
// their resources are not members, or are members kept as they were, until discovery
// reports the group again, and then they join. Each error names its group and the
// discovery failure (errors.Is(err, discovery.ErrGroupUnavailable) holds); the list is
// sorted by group, and empty when every group the set may select is served. Failed groups
// the filter leaves out are not listed. It reads what discovery knows (which follows the
// server) and sends no request. A dashboard shows it next to the members; WatchAll also
// logs the failed groups once when it starts. An error that is not a group's (the server's
// discovery failing as a whole) is returned as it is; a stopped set returns why it stopped.
func (w *WatchAll[T]) Unavailable(ctx context.Context) ([]*discovery.GroupUnavailableError, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !w.valid() {
		return nil, ErrUninitialized
	}
	return w.wa.unavailable(ctx)
}

// WaitForSync waits until every current member is synced; see Factory.WaitForSync. A
// member that leaves the set while it waits (its CRD deleted, its resource moved to another
// version) is not waited for: the wait goes on with the members the set has then. On a set
// stopped (or stopping while it waits) it returns an error for which errors.Is(err,
// ErrReleased) is true, or errors.Is(err, ErrShutdown) if the factory's Shutdown stopped it.
func (w *WatchAll[T]) WaitForSync(ctx context.Context) error {
	return w.wait(ctx, false)
}

// WaitForSyncOrPark is WaitForSync for callers that want an answer, not a wait (see
// Informer.WaitForSyncOrPark): it returns once every member is synced or parked. When some
// parked (a resource the user may not list, a CRD deleted while it synced), the error is a
// *SyncError whose Cause is ErrParked and whose failures name those members and why
// (ReasonForbidden, ...); the others are synced and can be queried. A set over every
// resource, for a user who may not list them all, waits with WaitForSync until its context
// ends.
func (w *WatchAll[T]) WaitForSyncOrPark(ctx context.Context) error {
	return w.wait(ctx, true)
}

func (w *WatchAll[T]) wait(ctx context.Context, untilPark bool) error {
	if ctx == nil {
		return ErrNilContext
	}
	if !w.valid() {
		return ErrUninitialized
	}
	entries, stopErr := w.wa.entries()
	if stopErr != nil {
		return fmt.Errorf("%w: the watch-all set is stopped", stopErr)
	}
	for {
		err := waitEntries(ctx, entries, untilPark)
		if err == nil || ctx.Err() != nil {
			return err
		}
		now, stopErr := w.wa.entries()
		if stopErr != nil {
			// The members stopped with the set: say why the set did.
			return fmt.Errorf("%w: the watch-all set is stopped", stopErr)
		}
		if !left(entries, now) {
			return err
		}
		entries = now
	}
}

// left reports whether an entry of before is not in now.
func left(before, now []*entry) bool {
	for _, e := range before {
		if !slices.Contains(now, e) {
			return true
		}
	}
	return false
}
