package informer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/internal/subscribe"
)

// watchAll keeps one informer per listable and watchable resource that a filter selects,
// following discovery: Added starts one, Changed moves to the new preferred version,
// Removed stops it (handlers first see its remaining objects deleted).
//
// A move hands each handler over from the old member to the new one (handoff): the old
// listener is detached and delivers what it has queued, the handler is added to the new
// member only once that listener has ended (so the two never call the handler at the same
// time, and nothing of the old member comes after anything of the new one), and once the
// new member's initial list has been delivered the handler is told, with
// DeletedFinalStateUnknown tombstones, of the keys it was last handed by the old member that
// the new member does not cache. The old member's keys are taken from its store when its
// listeners are detached, one map per move shared by its handlers, and dropped when the
// handoff ends: nothing is kept or done per object outside moves.
type watchAll struct {
	c      *core
	filter discovery.Filter
	opts   []Option
	// source identifies the set in its continue tokens: its filter and the options of its
	// members (per-resource selectors aside, which the members' own tokens carry).
	source string
	// initial orders discovery events against the list the set starts from.
	initial subscribe.Guard

	mu       sync.Mutex
	members  map[schema.GroupResource]*member
	handlers map[*allHandler]struct{}
	indexes  map[string]indexSpec // AddIndex: registered on every member
	// indexMu orders AddIndex, RemoveIndex and the registration of the indexes on a new
	// member, so that an index removed while a member joins is not left on it. Held across
	// index builds (JSONPath only: no user code), never with mu.
	indexMu sync.Mutex
	// afterIndexCopy, in tests, runs when a joining member's indexes have been read.
	afterIndexCopy func()
	stopped        bool
	// stopErr, once stopped, is why: ErrReleased (Stop, the set's context), or ErrShutdown
	// (the factory's Shutdown or context).
	stopErr error
	// retired are listeners detached from members that still deliver what was queued to
	// them (a move or a removal), with their handler: Stop and RemoveEventHandler end them.
	retired map[*listener]*allHandler
	// leaving holds, per resource that left the set, what each handler is still being told
	// of its objects (a channel closed once delivered), so that a member that rejoins (a
	// CRD deleted and created again) hands the handler nothing before those deletes.
	leaving  map[schema.GroupResource]map[*allHandler]<-chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	// moveMu orders what changes which listener serves a handler for a resource: moves and
	// removals of members, attaching handlers to members and the steps of handoffs. It is
	// never held across user code (handler factories) or a wait; Stop and
	// RemoveEventHandler do not take it.
	moveMu sync.Mutex
}

type member struct {
	res  discovery.Resource
	h    *handle // the set's reference
	view *handle // what Informers() hands out: Release on it does nothing
	// scope binds the member's continue tokens in the set's queries: its informer's key
	// without the version (see memberOpts).
	scope string
	regs  map[*allHandler]*Registration
	// moving holds the handoffs of handlers moving to this member from the one it replaced,
	// until their tombstones are queued; the handler's entry in regs stays nil (reserved)
	// until it is added to this member. Guarded by wa.mu.
	moving map[*allHandler]*handoff
	// settling holds, per handler whose handoff to this member queued tombstones, a channel
	// closed once they have been delivered: until then the handler has not seen the
	// member's state (MemberSynced). Guarded by wa.mu.
	settling map[*allHandler]<-chan struct{}
	// prev is the synced member this one replaced (a move to another version), kept until
	// this one has synced (or parked, or leaves): the set's queries read it meanwhile, so
	// that the resource's objects do not vanish from them while the new version's initial
	// list runs. Guarded by wa.mu; nil outside moves.
	prev *member
	// left is closed when the member leaves the set (replaced, removed, or the set stopped).
	left     chan struct{}
	leftOnce sync.Once
}

// synced reports whether m's informer has synced (Informer.HasSynced).
func (m *member) synced() bool { return !m.h.e.Status().LastSyncTime.IsZero() }

// leave closes m.left.
func (m *member) leave() { m.leftOnce.Do(func() { close(m.left) }) }

// handoff is one handler's move from the member a resource had to its new member.
type handoff struct {
	// prev is the handler's listener on the member before, detached and delivering what it
	// has queued; the handler is added to the new member once it has ended. Nil for a
	// member that rejoins the set: wait is then closed once the handler has been told of the
	// deletes of the member that left.
	prev *listener
	wait <-chan struct{}
	// seen is what the handler was last handed by the members before (key to object), once
	// prev has delivered its queue: the store of the old member when prev was detached.
	// Shared by the handlers of one move; read only.
	seen map[string]any
	// handler is the handler factory's handler for the new member, set by attach.
	handler cache.ResourceEventHandler
	// reg is the handler's registration on the new member once added.
	reg *Registration
}

// closed is a channel that is closed.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// ended is closed once what the handler is handed before the new member has been delivered.
func (ho *handoff) ended() <-chan struct{} {
	if ho.prev != nil {
		return ho.prev.done()
	}
	if ho.wait != nil {
		return ho.wait
	}
	return closed
}

type allHandler struct {
	fn func(discovery.Resource) cache.ResourceEventHandler
}

func (c *core) newWatchAll(ctx context.Context, filter discovery.Filter, opts []Option) (*watchAll, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: WatchAll(nil, ...)", ErrNilContext)
	}
	if err := ctx.Err(); err != nil {
		// The set would stop at once, after starting an informer (a list) per resource.
		return nil, err
	}
	if _, err := c.context(); err != nil {
		return nil, err
	}
	if len(parseCallOptions(opts).handlers) > 0 {
		return nil, errors.New("kindex: WithEventHandler is not an option of WatchAll: use WatchAll.AddEventHandler, which makes a handler per member")
	}
	key, _, err := c.keyFor(discovery.Resource{Namespaced: true}, opts)
	if err != nil {
		return nil, err
	}
	wa := &watchAll{c: c, filter: filter, opts: opts, members: map[schema.GroupResource]*member{},
		handlers: map[*allHandler]struct{}{}, retired: map[*listener]*allHandler{}, leaving: map[schema.GroupResource]map[*allHandler]<-chan struct{}{},
		done: make(chan struct{}),
		source: fmt.Sprintf("watch-all %q %q %q %q %s", filter.IncludeGroups, filter.ExcludeGroups,
			filter.IncludeResources, filter.ExcludeResources, key)}
	// Follow events first, then list; a listed resource that an event has touched meanwhile
	// is left to the events, which are newer than or as new as the list.
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return nil, ErrShutdown
	}
	c.watchAlls[wa] = struct{}{}
	// The goroutine that stops the set with ctx is one Shutdown waits for: added before
	// Shutdown can begin waiting (c.shutdown is false under c.mu).
	c.handlers.Add(1)
	c.mu.Unlock()
	resources, err := c.disc.Resources(ctx, filter)
	if err != nil {
		// A group whose discovery failed (an aggregated API that is down) comes with what
		// discovery knows, which may be nothing the filter selects: the set starts with that
		// and the group joins when it recovers. Only an answer without anything fails it.
		if len(resources) == 0 && !errors.Is(err, discovery.ErrGroupUnavailable) {
			wa.stop(ErrReleased)
			c.handlers.Done()
			return nil, err
		}
		if groups := unavailableFor(filter, err); len(groups) > 0 {
			c.logger.Info("Watch-all starts without some API groups; they join when discovery reports them", "groups", groups, "err", err)
		}
	} else {
		logUnservedIncludes(c.logger, filter, resources)
	}
	for _, res := range resources {
		wa.initial.Apply(res.GVR.GroupResource(), func() { wa.add(res) })
	}
	wa.initial.Done()
	go func() {
		defer c.handlers.Done()
		select {
		case <-ctx.Done():
			wa.stop(ErrReleased)
		case <-wa.done:
		}
	}()
	return wa, nil
}

// logUnservedIncludes logs each resource the filter includes by name that the server does
// not serve: a CRD not installed yet joins when it is, but a name such as "deployments" (the
// core group's, which has none; apps' is "deployments.apps") would select nothing, silently.
func logUnservedIncludes(logger logr.Logger, filter discovery.Filter, served []discovery.Resource) {
	for _, name := range filter.IncludeResources {
		if !slices.ContainsFunc(served, func(r discovery.Resource) bool { return resourceName(r.GVR.GroupResource()) == name }) {
			logger.Info("Watch-all filter includes a resource the server does not serve; it joins if one is served (a resource of a named group is written plural.group, as deployments.apps)",
				"resource", name)
		}
	}
}

func (wa *watchAll) selects(res discovery.Resource) bool {
	return res.Watchable() && wa.filter.Matches(res)
}

// add makes res a member unless it already is at the same version and scope; an old
// version (or scope) is replaced: its handlers are handed over to the new member (see
// watchAll).
func (wa *watchAll) add(res discovery.Resource) {
	if !wa.selects(res) {
		return
	}
	gr := res.GVR.GroupResource()
	wa.moveMu.Lock()
	wa.mu.Lock()
	if wa.stopped {
		wa.mu.Unlock()
		wa.moveMu.Unlock()
		return
	}
	old := wa.members[gr]
	if old != nil && old.res.GVR == res.GVR && old.res.Namespaced == res.Namespaced {
		wa.mu.Unlock()
		wa.moveMu.Unlock()
		return
	}
	// A member is of the resource, not of its version: retired, the version is followed
	// (entry.follow) until the set has moved to the one discovery prefers, so that the
	// handlers are not told its objects were deleted meanwhile. No I/O: the informer starts
	// on its own goroutine.
	h, err := wa.c.acquire(res, append(wa.opts[:len(wa.opts):len(wa.opts)], asMember))
	if err != nil {
		wa.mu.Unlock()
		wa.moveMu.Unlock()
		wa.c.logger.V(1).Info("Watch-all cannot start an informer", "resource", resourceName(gr), "err", err)
		return
	}
	scope := h.e.key
	scope.GVR.Version = ""
	m := &member{res: res, h: h, view: &handle{c: h.c, e: h.e, borrowed: true, regs: []*Registration{}}, scope: scope.String(),
		regs: map[*allHandler]*Registration{}, moving: map[*allHandler]*handoff{}, settling: map[*allHandler]<-chan struct{}{},
		left: make(chan struct{})}
	wa.members[gr] = m
	// The member replaced stays readable by queries until m has synced, if it had: its
	// own stand-in, if it had not.
	var drop []*member
	if old != nil {
		old.leave()
		switch {
		case old.synced():
			m.prev = old
			if old.prev != nil {
				drop = append(drop, old.prev)
			}
		case old.prev != nil:
			m.prev = old.prev
			drop = append(drop, old)
		default:
			drop = append(drop, old)
		}
		old.prev = nil
	}
	todo := wa.reserveLocked([]*member{m}, wa.handlerList())
	var regs []*Registration
	var owners []*allHandler
	if old != nil {
		regs, owners = wa.retireLocked(old)
	}
	wa.mu.Unlock()
	if old != nil {
		seen := old.h.e.retire(regs)
		wa.mu.Lock()
		for i, r := range regs {
			ah := owners[i]
			s := seen
			if p := old.moving[ah]; p != nil && p.reg == r {
				// Its own handoff to old had not ended: what it was handed before old
				// and not told deleted yet is still its view.
				s = merged(p.seen, seen)
			}
			wa.handOverLocked(m, ah, &handoff{prev: r.l, seen: s})
		}
		for ah, p := range old.moving {
			if p.reg == nil { // not yet added to old: old handed it nothing
				wa.handOverLocked(m, ah, &handoff{prev: p.prev, wait: p.wait, seen: p.seen})
			}
		}
		old.moving = nil
		wa.mu.Unlock()
	} else if leaving := wa.leaving[gr]; leaving != nil {
		// Rejoining: each handler first gets the deletes of the member that left.
		wa.mu.Lock()
		delete(wa.leaving, gr)
		for ah, ch := range leaving {
			select {
			case <-ch:
			default:
				wa.handOverLocked(m, ah, &handoff{wait: ch})
			}
		}
		wa.mu.Unlock()
	}
	wa.moveMu.Unlock()
	wa.applyIndexes(m)
	wa.attach(todo)
	if old != nil {
		old.view.forceRelease()
	}
	for _, d := range drop {
		d.h.release()
	}
	wa.mu.Lock()
	if m.prev != nil && !wa.stopped { // a stopped set released it
		wa.c.handlers.Add(1)
		go wa.dropPrevOnSync(m)
	}
	wa.mu.Unlock()
}

// dropPrevOnSync releases the member m replaced once m has synced or parked, or m leaves
// the set, or the set stops.
func (wa *watchAll) dropPrevOnSync(m *member) {
	defer wa.c.handlers.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-m.left:
		case <-wa.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	_ = m.h.e.waitSynced(ctx, true)
	wa.mu.Lock()
	prev := m.prev
	m.prev = nil
	wa.mu.Unlock()
	if prev != nil {
		prev.h.release()
	}
}

// handOverLocked records ho as ah's handoff to m if both are still in the set; wa.mu is
// held.
func (wa *watchAll) handOverLocked(m *member, ah *allHandler, ho *handoff) {
	_, live := wa.handlers[ah]
	if cur, reserved := m.regs[ah]; live && !wa.stopped && reserved && cur == nil {
		m.moving[ah] = ho
	}
}

// merged returns a copy of a with b's entries added over it.
func merged(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// retireLocked returns the registrations of m's handlers, and their handlers, and records
// their listeners as retired (they are about to be detached and drained); wa.mu is held. A
// stopped set retires nothing: its Stop ended them.
func (wa *watchAll) retireLocked(m *member) ([]*Registration, []*allHandler) {
	if wa.stopped {
		return nil, nil
	}
	var regs []*Registration
	var owners []*allHandler
	for ah, r := range m.regs {
		if r != nil && r != skipped {
			regs = append(regs, r)
			owners = append(owners, ah)
			wa.watchRetiredLocked(r.l, ah)
		}
	}
	return regs, owners
}

// watchRetiredLocked records l, a listener that delivers what it has queued and ends, so
// that Stop and RemoveEventHandler can end it, and forgets it once it has ended; wa.mu is
// held and the set is not stopped (so the factory's Shutdown, which stops the set before it
// waits for handler goroutines, has not begun waiting).
func (wa *watchAll) watchRetiredLocked(l *listener, ah *allHandler) {
	wa.retired[l] = ah
	wa.c.handlers.Add(1)
	go func() {
		defer wa.c.handlers.Done()
		<-l.done()
		wa.mu.Lock()
		delete(wa.retired, l)
		wa.mu.Unlock()
	}()
}

// remove drops the member of gr; its handlers are told every remaining object is deleted
// (after what they have queued), and a member that rejoins later hands them nothing before.
func (wa *watchAll) remove(gr schema.GroupResource) {
	wa.moveMu.Lock()
	wa.mu.Lock()
	m := wa.members[gr]
	delete(wa.members, gr)
	if m == nil {
		wa.mu.Unlock()
		wa.moveMu.Unlock()
		return
	}
	moving := m.moving
	m.moving = nil
	prev := m.prev
	m.prev = nil
	m.leave()
	regs, owners := wa.retireLocked(m)
	wa.mu.Unlock()
	if prev != nil {
		prev.h.release()
	}
	leaving := map[*allHandler]<-chan struct{}{}
	for i, r := range regs {
		p := moving[owners[i]]
		if p == nil || p.reg != r {
			_ = m.h.removeHandler(r, true, true)
			leaving[owners[i]] = r.l.done()
			continue
		}
		// Its handoff to m had not ended: the tombstones cover what the members before
		// handed it too.
		seen := m.h.e.retire([]*Registration{r})
		leaving[owners[i]] = wa.farewell(owners[i], &handoff{prev: r.l, seen: merged(p.seen, seen)})
	}
	for ah, p := range moving {
		if p.reg == nil {
			leaving[ah] = wa.farewell(ah, p)
		}
	}
	wa.mu.Lock()
	if !wa.stopped {
		wa.pruneLeavingLocked()
		wa.leaving[gr] = leaving
	}
	wa.mu.Unlock()
	wa.moveMu.Unlock()
	m.view.forceRelease()
	m.h.release()
}

// farewell tells ah's handler, once what it is handed before has been delivered, that every
// key of ho.seen is deleted: a handler whose handoff had not ended when its resource left
// the set. The tombstones are delivered by a listener of their own, with prev's handler. It
// returns a channel closed once they have been delivered (or given up: the set stopped, the
// handler was removed).
func (wa *watchAll) farewell(ah *allHandler, ho *handoff) <-chan struct{} {
	if ho.prev == nil {
		return ho.ended() // a rejoin's handoff: nothing was handed before but the deletes it waits for
	}
	wa.mu.Lock()
	defer wa.mu.Unlock()
	if wa.stopped {
		return closed
	}
	out := make(chan struct{})
	wa.c.handlers.Add(1)
	go func() {
		defer wa.c.handlers.Done()
		defer close(out)
		<-ho.prev.done()
		wa.mu.Lock()
		if _, live := wa.handlers[ah]; !live || wa.stopped {
			wa.mu.Unlock()
			return
		}
		p := ho.prev
		l := newListener(p.handler, p.convert, nil, p.logger, p.onPanic)
		l.onLost = p.onLost
		for key, obj := range ho.seen {
			l.add(notification{kind: noteDelete, obj: cache.DeletedFinalStateUnknown{Key: key, Obj: obj}})
		}
		l.close(true)
		wa.watchRetiredLocked(l, ah)
		wa.mu.Unlock()
		<-l.done()
	}()
	return out
}

// pruneLeavingLocked forgets the deletes of members that left that have been delivered;
// wa.mu is held.
func (wa *watchAll) pruneLeavingLocked() {
	for gr, hs := range wa.leaving {
		for ah, ch := range hs {
			select {
			case <-ch:
				delete(hs, ah)
			default:
			}
		}
		if len(hs) == 0 {
			delete(wa.leaving, gr)
		}
	}
}

func (wa *watchAll) handlerList() []*allHandler {
	out := make([]*allHandler, 0, len(wa.handlers))
	for ah := range wa.handlers {
		out = append(out, ah)
	}
	return out
}

// skipped marks a (member, handler) pair whose factory returned no handler.
var skipped = &Registration{}

type attachment struct {
	m  *member
	ah *allHandler
}

// reserveLocked marks the (member, handler) pairs not attached yet, so that concurrent adds
// never attach a handler twice; wa.mu is held.
func (wa *watchAll) reserveLocked(ms []*member, ahs []*allHandler) []attachment {
	var todo []attachment
	for _, m := range ms {
		for _, ah := range ahs {
			if _, done := m.regs[ah]; !done {
				m.regs[ah] = nil // reserved
				todo = append(todo, attachment{m, ah})
			}
		}
	}
	return todo
}

// attach calls the handler factories and adds their handlers, without holding wa.mu or
// moveMu across the factories (user code). A pair whose member or handler went away
// meanwhile is undone; a pair with a handoff is added by handOver once the handler's old
// listener has ended.
func (wa *watchAll) attach(todo []attachment) {
	for _, a := range todo {
		handler := wa.handlerFor(a.ah, a.m)
		if handler != nil && isNil(handler) {
			handler = nil
		}
		wa.moveMu.Lock()
		wa.mu.Lock()
		ok := wa.reservedLocked(a.m, a.ah)
		if ho := a.m.moving[a.ah]; ok && ho != nil {
			if handler == nil {
				// No handler for the new member: the old listener delivers what it has
				// queued and nothing is handed over.
				a.m.regs[a.ah] = skipped
				delete(a.m.moving, a.ah)
			} else {
				ho.handler = handler
				wa.c.handlers.Add(1)
				go wa.handOver(a.m, a.ah, ho)
			}
			wa.mu.Unlock()
			wa.moveMu.Unlock()
			continue
		}
		wa.mu.Unlock()
		reg := skipped
		if ok && handler != nil {
			var err error
			if reg, err = a.m.h.addHandler(handler); err != nil {
				if errors.Is(err, ErrHandlerType) {
					wa.c.logger.Error(err, "WatchAll handler not added", "resource", resourceName(a.m.res.GVR.GroupResource()))
				}
				reg = skipped // refused, or the member is going away
			}
		}
		wa.mu.Lock()
		keep := wa.reservedLocked(a.m, a.ah)
		if keep {
			a.m.regs[a.ah] = reg
		}
		wa.mu.Unlock()
		wa.moveMu.Unlock()
		if !keep && reg != skipped {
			_ = a.m.h.removeHandler(reg, false, false)
		}
	}
}

// reservedLocked reports whether (m, ah) is reserved and not attached yet, with both still
// in the set; wa.mu is held.
func (wa *watchAll) reservedLocked(m *member, ah *allHandler) bool {
	_, live := wa.handlers[ah]
	cur, reserved := m.regs[ah]
	return !wa.stopped && live && reserved && cur == nil && wa.members[m.res.GVR.GroupResource()] == m
}

// handOver completes a handoff, on a goroutine of its own: once the handler's old listener
// has delivered its queue, it adds the handler to m (which hands it m's cached objects as
// adds), and once the handler has been delivered m's initial list it queues a
// DeletedFinalStateUnknown for each key the handler was last handed before that m does not
// cache (those deleted while no informer watched them, or not served at m's version). It
// gives up at any step where the handoff is no longer m's (the set stopped, the handler was
// removed, the resource moved again or left: that handoff's new owner goes on).
func (wa *watchAll) handOver(m *member, ah *allHandler, ho *handoff) {
	defer wa.c.handlers.Done()
	<-ho.ended()
	wa.moveMu.Lock()
	wa.mu.Lock()
	ok := wa.reservedLocked(m, ah) && m.moving[ah] == ho
	wa.mu.Unlock()
	if !ok {
		wa.moveMu.Unlock()
		return
	}
	reg, err := m.h.addHandler(ho.handler)
	wa.mu.Lock()
	ok = wa.reservedLocked(m, ah) && m.moving[ah] == ho
	if ok && err != nil {
		m.regs[ah] = skipped
		delete(m.moving, ah)
	} else if ok {
		m.regs[ah] = reg
		ho.reg = reg
	}
	wa.mu.Unlock()
	wa.moveMu.Unlock()
	if err != nil {
		if errors.Is(err, ErrHandlerType) {
			wa.c.logger.Error(err, "WatchAll handler not added", "resource", resourceName(m.res.GVR.GroupResource()))
		}
		return
	}
	if !ok {
		_ = m.h.removeHandler(reg, false, false)
		return
	}
	select {
	case <-reg.l.synced:
	case <-reg.l.done(): // removed, or m left the set
	}
	wa.moveMu.Lock()
	defer wa.moveMu.Unlock()
	wa.mu.Lock()
	ok = !wa.stopped && m.moving[ah] == ho && m.regs[ah] == reg
	wa.mu.Unlock()
	if !ok {
		return
	}
	// Queued before the handoff ends, and MemberSynced stays false until the handler has
	// been delivered them (moveMu keeps the handoff m's meanwhile; Stop and
	// RemoveEventHandler end reg.l, and queueGone queues nothing to a listener that is gone).
	delivered := m.h.e.queueGone(reg.l, ho.seen)
	wa.mu.Lock()
	if m.moving[ah] == ho {
		delete(m.moving, ah)
		if delivered != nil {
			m.settling[ah] = delivered
		}
	}
	wa.mu.Unlock()
}

// retire detaches the listeners of regs from e: they get nothing more from it, deliver what
// they have queued and end. It returns e's cached items by key at that moment: what each of
// those handlers has been handed by e once its queue is delivered.
func (e *entry) retire(regs []*Registration) map[string]any {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	for _, r := range regs {
		if _, ok := e.listeners[r.l]; ok {
			delete(e.listeners, r.l)
			r.l.close(true)
		}
	}
	items := e.store.List()
	seen := make(map[string]any, len(items))
	for _, item := range items {
		if key, err := store.KeyFunc(item); err == nil {
			seen[key] = item
		}
	}
	return seen
}

// queueGone queues to l, if it is still one of e's listeners, a DeletedFinalStateUnknown for
// each key of seen that e does not cache. Under dispatchMu, so that it is ordered with
// everything queued to l: a key e caches now was handed to l (and a later delete of it
// will be); one it does not was not, or was deleted since. It returns a channel closed once
// l has delivered them (nil when it queued none); l ending before does not close it.
func (e *entry) queueGone(l *listener, seen map[string]any) <-chan struct{} {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	if _, ok := e.listeners[l]; !ok {
		return nil
	}
	queued := false
	for key, obj := range seen {
		if _, exists, err := e.store.GetByKey(key); err == nil && !exists {
			l.add(notification{kind: noteDelete, obj: cache.DeletedFinalStateUnknown{Key: key, Obj: obj}})
			queued = true
		}
	}
	if !queued {
		return nil
	}
	mark := make(chan struct{})
	l.add(notification{kind: noteMark, mark: mark})
	return mark
}

func (wa *watchAll) onEvent(ev discovery.Event) {
	gr := ev.Resource.GVR.GroupResource()
	if ev.Old != nil {
		wa.initial.Touch(gr, ev.Old.GVR.GroupResource())
	} else {
		wa.initial.Touch(gr)
	}
	switch ev.Type {
	case discovery.Added:
		wa.add(ev.Resource)
	case discovery.Changed:
		if !wa.selects(ev.Resource) {
			wa.remove(gr) // no longer listable and watchable: it leaves as if removed
			return
		}
		wa.add(ev.Resource)
	case discovery.Removed:
		wa.remove(gr)
	}
}

// stop releases every member. Handlers get nothing more, as with Informer.Release: their
// queues are dropped (those of retired listeners too) and only the call in progress
// completes; stop does not wait for it. cause is why, ErrReleased or ErrShutdown: what
// the set's calls report from then on.
func (wa *watchAll) stop(cause error) {
	wa.stopOnce.Do(func() {
		wa.c.mu.Lock()
		delete(wa.c.watchAlls, wa)
		wa.c.mu.Unlock()
		wa.mu.Lock()
		wa.stopped, wa.stopErr = true, cause
		members := wa.members
		wa.members = map[schema.GroupResource]*member{}
		retired := make([]*listener, 0, len(wa.retired))
		for l := range wa.retired {
			retired = append(retired, l)
		}
		wa.mu.Unlock()
		for _, l := range retired {
			l.close(false)
		}
		for _, m := range members {
			// Releasing the member's references removes the set's handlers without
			// delivering their queues.
			m.view.forceRelease()
			m.h.release()
			wa.mu.Lock()
			prev := m.prev
			m.prev = nil
			wa.mu.Unlock()
			if prev != nil {
				prev.h.release()
			}
		}
		close(wa.done)
	})
}

func (wa *watchAll) addHandler(fn func(discovery.Resource) cache.ResourceEventHandler) (*allHandler, error) {
	ah := &allHandler{fn: fn}
	wa.mu.Lock()
	if wa.stopped {
		wa.mu.Unlock()
		return nil, wa.stopErr
	}
	wa.handlers[ah] = struct{}{}
	ms := make([]*member, 0, len(wa.members))
	for _, m := range wa.members {
		ms = append(ms, m)
	}
	todo := wa.reserveLocked(ms, []*allHandler{ah})
	wa.mu.Unlock()
	wa.attach(todo)
	return ah, nil
}

func (wa *watchAll) removeHandler(ah *allHandler) {
	wa.mu.Lock()
	delete(wa.handlers, ah)
	var todo []func()
	for _, m := range wa.members {
		delete(m.moving, ah)
		delete(m.settling, ah)
		if r, ok := m.regs[ah]; ok {
			delete(m.regs, ah)
			if r != nil && r != skipped {
				h := m.h
				todo = append(todo, func() { _ = h.removeHandler(r, false, false) })
			}
		}
	}
	for l, owner := range wa.retired {
		if owner == ah {
			todo = append(todo, func() { l.close(false) })
		}
	}
	wa.mu.Unlock()
	for _, fn := range todo {
		fn()
	}
}

// entries returns the members' informers, and, once the set is stopped, why (see stop).
func (wa *watchAll) entries() ([]*entry, error) {
	wa.mu.Lock()
	defer wa.mu.Unlock()
	out := make([]*entry, 0, len(wa.members))
	for _, m := range wa.members {
		out = append(out, m.h.e)
	}
	return out, wa.stopErr
}

// gone says why the set cannot be read: once it is stopped, an error for which errors.Is
// with ErrReleased (Stop, the set's context) or ErrShutdown (the factory's) is true; nil
// while it runs. A stopped set has no members, and members that stop while a read runs
// empty their caches: what a read finds then is not an answer.
func (wa *watchAll) gone() error {
	wa.mu.Lock()
	defer wa.mu.Unlock()
	if wa.stopped {
		return fmt.Errorf("%w: the watch-all set is stopped", wa.stopErr)
	}
	return nil
}

func (wa *watchAll) snapshot() []*member {
	wa.mu.Lock()
	defer wa.mu.Unlock()
	out := make([]*member, 0, len(wa.members))
	for _, m := range wa.members {
		out = append(out, m)
	}
	return out
}

// readers returns, per member, the member whose cache the set's queries read: the member,
// or the member it replaced (member.prev) while it has not synced; in the set's order, by
// resource name.
func (wa *watchAll) readers() []*member {
	wa.mu.Lock()
	out := make([]*member, 0, len(wa.members))
	prevs := make([]*member, 0, len(wa.members))
	for _, m := range wa.members {
		out = append(out, m)
		prevs = append(prevs, m.prev)
	}
	wa.mu.Unlock()
	for i, m := range out {
		if prevs[i] != nil && !m.synced() {
			out[i] = prevs[i]
		}
	}
	slices.SortFunc(out, func(a, b *member) int {
		return strings.Compare(resourceName(a.res.GVR.GroupResource()), resourceName(b.res.GVR.GroupResource()))
	})
	return out
}

// indexHoldersLocked returns the members and the members they replaced that queries may still
// read: those the set's indexes are registered on.
func (wa *watchAll) indexHoldersLocked() []*member {
	out := make([]*member, 0, len(wa.members))
	for _, m := range wa.members {
		out = append(out, m)
		if m.prev != nil {
			out = append(out, m.prev)
		}
	}
	return out
}

// handlerFor calls the caller's handler factory for a member, recovering its panic (the
// member then gets no handler from it, as if it had returned nil).
func (wa *watchAll) handlerFor(ah *allHandler, m *member) (h cache.ResourceEventHandler) {
	defer func() {
		if r := recover(); r != nil {
			h = nil
			m.h.e.callbackFailed("handler", &PanicError{Callback: "handler factory", Value: r, Stack: string(debug.Stack())},
				"WatchAll handler factory panicked; no handler for this resource")
		}
	}()
	return ah.fn(m.res)
}

// unavailableFor returns the names of the groups of a discovery error that filter may
// select (groupErrsFor); an error of another kind gives "*", as a group that may matter.
func unavailableFor(filter discovery.Filter, err error) []string {
	var ge *discovery.GroupUnavailableError
	if !errors.As(err, &ge) {
		return []string{"*"}
	}
	var out []string
	for _, g := range groupErrsFor(filter, err) {
		out = append(out, g.Group)
	}
	return out
}

// groupErrsFor returns the failed groups of a discovery error (*discovery.PartialDiscoveryError,
// or one *GroupUnavailableError) whose resources filter may select, in the error's order: a
// failed group the filter leaves out is no reason to tell a set's user anything.
func groupErrsFor(filter discovery.Filter, err error) []*discovery.GroupUnavailableError {
	var failed []*discovery.GroupUnavailableError
	var pe *discovery.PartialDiscoveryError
	var ge *discovery.GroupUnavailableError
	switch {
	case errors.As(err, &pe):
		failed = pe.Groups
	case errors.As(err, &ge):
		failed = []*discovery.GroupUnavailableError{ge}
	}
	var out []*discovery.GroupUnavailableError
	for _, g := range failed {
		if slices.Contains(filter.ExcludeGroups, g.Group) {
			continue
		}
		concerns := len(filter.IncludeGroups) == 0 && len(filter.IncludeResources) == 0 || slices.Contains(filter.IncludeGroups, g.Group)
		for _, r := range filter.IncludeResources {
			// "plural.group": a plural has no dot, so the group is all after the first one
			// ("foos.sub.bar.io" is of sub.bar.io, not bar.io); the core group never fails.
			_, group, ok := strings.Cut(r, ".")
			concerns = concerns || ok && group == g.Group
		}
		if concerns {
			out = append(out, g)
		}
	}
	return out
}

// unavailable returns the failed groups the set's filter may select, as discovery knows
// them now.
func (wa *watchAll) unavailable(ctx context.Context) ([]*discovery.GroupUnavailableError, error) {
	if err := wa.gone(); err != nil {
		return nil, err
	}
	_, err := wa.c.disc.Resources(ctx, wa.filter)
	switch {
	case err == nil:
		return nil, nil
	case !errors.Is(err, discovery.ErrGroupUnavailable):
		return nil, err
	}
	return groupErrsFor(wa.filter, err), nil
}
