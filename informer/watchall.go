package informer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
)

// watchAll keeps one informer per listable and watchable resource that a filter selects,
// following discovery: Added starts one, Changed moves to the new preferred version,
// Removed stops it (handlers first see its remaining objects deleted).
type watchAll struct {
	c      *core
	filter discovery.Filter
	opts   []Option
	// source identifies the set in its continue tokens: its filter and the options of its
	// members (per-resource selectors aside, which the members' own tokens carry).
	source string

	mu       sync.Mutex
	members  map[schema.GroupResource]*member
	handlers map[*allHandler]struct{}
	indexes  map[string]indexSpec // AddIndex: registered on every member
	stopped  bool
	done     chan struct{}
	stopOnce sync.Once
}

type member struct {
	res  discovery.Resource
	h    *handle // the set's reference
	view *handle // what Informers() hands out: Release on it does nothing
	regs map[*allHandler]*Registration
}

type allHandler struct {
	fn func(discovery.Resource) cache.ResourceEventHandler
}

func (c *core) newWatchAll(ctx context.Context, filter discovery.Filter, opts []Option) (*watchAll, error) {
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
		handlers: map[*allHandler]struct{}{}, done: make(chan struct{}),
		source: fmt.Sprintf("watch-all %q %q %q %q %s", filter.IncludeGroups, filter.ExcludeGroups,
			filter.IncludeResources, filter.ExcludeResources, key)}
	// Follow events first, then list: an event for a resource listed too is a no-op.
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return nil, ErrShutdown
	}
	c.watchAlls[wa] = struct{}{}
	c.mu.Unlock()
	resources, err := c.disc.Resources(ctx, filter)
	if err != nil {
		if len(resources) == 0 {
			wa.stop()
			return nil, err
		}
		c.logger.Info("Watch-all starts without some API groups; they join when discovery reports them", "err", err)
	}
	for _, res := range resources {
		wa.add(res)
	}
	go func() {
		select {
		case <-ctx.Done():
			wa.stop()
		case <-wa.done:
		}
	}()
	return wa, nil
}

func (wa *watchAll) selects(res discovery.Resource) bool {
	return res.Watchable() && wa.filter.Matches(res)
}

// add makes res a member unless it already is at the same version; an old version is
// replaced (its handlers move to the new informer).
func (wa *watchAll) add(res discovery.Resource) {
	if !wa.selects(res) {
		return
	}
	gr := res.GVR.GroupResource()
	wa.mu.Lock()
	if wa.stopped {
		wa.mu.Unlock()
		return
	}
	old := wa.members[gr]
	if old != nil && old.res.GVR == res.GVR {
		wa.mu.Unlock()
		return
	}
	h, err := wa.c.acquire(res, wa.opts) // no I/O: the informer starts on its own goroutine
	if err != nil {
		wa.mu.Unlock()
		wa.c.logger.V(1).Info("Watch-all cannot start an informer", "resource", resourceName(gr), "err", err)
		return
	}
	m := &member{res: res, h: h, view: &handle{c: h.c, e: h.e, borrowed: true, regs: []*Registration{}},
		regs: map[*allHandler]*Registration{}}
	wa.members[gr] = m
	todo := wa.reserveLocked([]*member{m}, wa.handlerList())
	wa.mu.Unlock()
	wa.applyIndexes(m)
	wa.attach(todo)
	if old != nil {
		old.detach(false)
	}
}

// remove drops the member of gr; with tombstones its handlers are told every remaining
// object is deleted first.
func (wa *watchAll) remove(gr schema.GroupResource, tombstones bool) {
	wa.mu.Lock()
	m := wa.members[gr]
	delete(wa.members, gr)
	wa.mu.Unlock()
	if m != nil {
		m.detach(tombstones)
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

// attach calls the handler factories and adds their handlers, without holding wa.mu (the
// factories are user code). A pair whose member or handler went away meanwhile is undone.
func (wa *watchAll) attach(todo []attachment) {
	for _, a := range todo {
		handler := wa.handlerFor(a.ah, a.m)
		reg := skipped
		if handler != nil && !isNil(handler) {
			var err error
			if reg, err = a.m.h.addHandler(handler); err != nil {
				if errors.Is(err, ErrHandlerType) {
					wa.c.logger.Error(err, "WatchAll handler not added", "resource", resourceName(a.m.res.GVR.GroupResource()))
				}
				reg = skipped // refused, or the member is going away
			}
		}
		wa.mu.Lock()
		_, live := wa.handlers[a.ah]
		cur, reserved := a.m.regs[a.ah]
		keep := live && reserved && cur == nil && wa.members[a.m.res.GVR.GroupResource()] == a.m
		if keep {
			a.m.regs[a.ah] = reg
		}
		wa.mu.Unlock()
		if !keep && reg != skipped {
			_ = a.m.h.removeHandler(reg, false, false)
		}
	}
}

// detach removes the set's handlers from the member's informer and releases it. The member
// is no longer in the set, so no attach records into m.regs any more.
func (m *member) detach(tombstones bool) {
	for _, r := range m.regs {
		if r != nil && r != skipped {
			_ = m.h.removeHandler(r, tombstones, true)
		}
	}
	m.view.forceRelease()
	m.h.release()
}

func (wa *watchAll) onEvent(ev discovery.Event) {
	gr := ev.Resource.GVR.GroupResource()
	switch ev.Type {
	case discovery.Added:
		wa.add(ev.Resource)
	case discovery.Changed:
		if !wa.selects(ev.Resource) {
			wa.remove(gr, false)
			return
		}
		wa.add(ev.Resource)
	case discovery.Removed:
		wa.remove(gr, true)
	}
}

func (wa *watchAll) stop() {
	wa.stopOnce.Do(func() {
		wa.c.mu.Lock()
		delete(wa.c.watchAlls, wa)
		wa.c.mu.Unlock()
		wa.mu.Lock()
		wa.stopped = true
		members := wa.members
		wa.members = map[schema.GroupResource]*member{}
		wa.mu.Unlock()
		for _, m := range members {
			m.detach(false)
		}
		close(wa.done)
	})
}

func (wa *watchAll) addHandler(fn func(discovery.Resource) cache.ResourceEventHandler) (*allHandler, error) {
	ah := &allHandler{fn: fn}
	wa.mu.Lock()
	if wa.stopped {
		wa.mu.Unlock()
		return nil, ErrReleased
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
		if r, ok := m.regs[ah]; ok {
			delete(m.regs, ah)
			if r != nil && r != skipped {
				h := m.h
				todo = append(todo, func() { _ = h.removeHandler(r, false, false) })
			}
		}
	}
	wa.mu.Unlock()
	for _, fn := range todo {
		fn()
	}
}

// entries returns the entries of the current members, and whether the set is stopped.
func (wa *watchAll) entries() ([]*entry, bool) {
	wa.mu.Lock()
	defer wa.mu.Unlock()
	out := make([]*entry, 0, len(wa.members))
	for _, m := range wa.members {
		out = append(out, m.h.e)
	}
	return out, wa.stopped
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
