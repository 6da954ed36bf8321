package discovery

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Retry schedule for a group whose expectations do not hold yet after a re-discovery: with
// backoff from retryBase to retryMax, then, after giveUpAfter, every RefreshInterval.
const (
	retryBase   = 50 * time.Millisecond
	retryMax    = 5 * time.Second
	giveUpAfter = 30 * time.Second
	// confirmWindow is how long a met expectation guards its group against a full round
	// that contradicts it (see guard).
	confirmWindow = 30 * time.Second
)

// follower keeps a started Client current. Watch handlers only record which groups are dirty
// and what they expect (never I/O); one worker goroutine re-discovers dirty groups, in
// batches, so that bursts of events (a CRD's creation, its Established condition, its
// APIService) cost one round.
type follower struct {
	c    *Client
	log  logr.Logger
	wake chan struct{} // capacity 1

	mu      sync.Mutex
	pending map[string]*pendingGroup
	// confirmed holds met expectations by group and object key, until they expire.
	confirmed map[string]map[string]confirmation

	watchers []*watcher
}

type confirmation struct {
	expect expectation
	until  time.Time
}

// pendingGroup is a group waiting for re-discovery.
type pendingGroup struct {
	expect  map[string]expectation // by watched object ("crd/<name>", "apiservice/<name>")
	due     time.Time
	first   time.Time
	attempt int
	// dirty: an event arrived after the last round for this group was taken.
	dirty bool
	// slow: the expectations did not hold within giveUpAfter; the group is re-discovered
	// every RefreshInterval until they do or the objects change again.
	slow bool
}

func newFollower(c *Client) *follower {
	return &follower{c: c, log: c.log, wake: make(chan struct{}, 1), pending: map[string]*pendingGroup{},
		confirmed: map[string]map[string]confirmation{}}
}

func (f *follower) start(ctx context.Context) {
	f.watchers = []*watcher{newCRDWatcher(f), newAPIServiceWatcher(f)}
	f.c.setFollower(f)
	for _, w := range f.watchers {
		w.start(ctx)
	}
	f.c.following.Add(1)
	go func() {
		defer f.c.following.Done()
		defer f.c.setFollower(nil)
		f.run(ctx)
	}()
}

func (f *follower) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// mark records that the object key in group changed and what discovery should then show. If
// the current snapshot already shows it, nothing is re-discovered.
func (f *follower) mark(group, key string, expect expectation) {
	consistent := expect == nil || expect(f.c.snap.Load())
	now := f.c.opts.Clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	// The object's newest state supersedes whatever was expected of it before.
	delete(f.confirmed[group], key)
	p := f.pending[group]
	if consistent {
		if p != nil {
			delete(p.expect, key)
			if len(p.expect) == 0 {
				delete(f.pending, group)
			}
		}
		if expect != nil {
			f.confirmLocked(group, key, expect, now)
		}
		return
	}
	if p == nil {
		p = &pendingGroup{expect: map[string]expectation{}}
		f.pending[group] = p
	}
	p.expect[key] = expect
	p.due, p.first, p.attempt, p.dirty, p.slow = now, now, 0, true, false
	f.signal()
}

// takeDue returns the groups due for re-discovery.
func (f *follower) takeDue(now time.Time) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for name, p := range f.pending {
		if !p.due.After(now) {
			p.dirty = false
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// nextDue returns the earliest due time of a pending group.
func (f *follower) nextDue() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	for _, p := range f.pending {
		if next.IsZero() || p.due.Before(next) {
			next = p.due
		}
	}
	return next, !next.IsZero()
}

// settle checks the expectations of groups (all pending groups when groups is nil) after a
// round and schedules a retry for those that do not hold yet.
func (f *follower) settle(groups []string) {
	s := f.c.snap.Load()
	now := f.c.opts.Clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, p := range f.pending {
		if groups != nil && !slices.Contains(groups, name) {
			continue
		}
		for key, expect := range p.expect {
			if expect(s) {
				delete(p.expect, key)
				f.confirmLocked(name, key, expect, now)
			}
		}
		switch {
		case len(p.expect) == 0:
			delete(f.pending, name)
		case p.dirty:
			p.due = now // news arrived during the round: go again at once
		case now.Sub(p.first) > giveUpAfter:
			// Whatever the server says is applied at each round, so a group re-discovered
			// slowly is never far behind it; dropping it would leave it as it was until the
			// next change or resync, which may be minutes away.
			if !p.slow {
				p.slow = true
				f.log.Info("discovery does not reflect watched changes yet; re-discovering the group periodically until it does",
					"group", name, "waited", now.Sub(p.first).Round(time.Millisecond).String(),
					"interval", f.c.opts.RefreshInterval.String())
			}
			p.due = now.Add(f.c.opts.RefreshInterval)
		default:
			p.attempt++
			p.due = now.Add(min(retryBase<<(p.attempt-1), retryMax))
		}
	}
}

// polling reports whether some watch is refused or down, so that periodic re-discovery
// must cover it.
func (f *follower) polling() bool {
	for _, w := range f.watchers {
		if w.isRefused() || w.isDown() {
			return true
		}
	}
	return false
}

// lagging reports whether some watch is down: changes made now may reach the client only
// when it opens again.
func (f *follower) lagging() bool {
	for _, w := range f.watchers {
		if w.isDown() {
			return true
		}
	}
	return false
}

func (f *follower) run(ctx context.Context) {
	clk := f.c.opts.Clock
	nextResync := clk.Now().Add(f.c.opts.ResyncInterval)
	var nextPoll time.Time
	for {
		if ctx.Err() != nil {
			return
		}
		now := clk.Now()
		if !f.polling() {
			nextPoll = time.Time{}
		} else if nextPoll.IsZero() {
			nextPoll = now.Add(f.c.opts.RefreshInterval)
		}
		switch {
		case !nextPoll.IsZero() && !now.Before(nextPoll):
			f.fullRound(ctx, "poll")
			for _, w := range f.watchers {
				w.probe(ctx)
			}
			nextPoll = clk.Now().Add(f.c.opts.RefreshInterval)
			nextResync = clk.Now().Add(f.c.opts.ResyncInterval)
		case !now.Before(nextResync):
			f.fullRound(ctx, "resync")
			nextResync = clk.Now().Add(f.c.opts.ResyncInterval)
		}
		if groups := f.takeDue(now); len(groups) > 0 {
			if err := f.c.refreshGroups(ctx, groups, &f.c.following); err != nil && ctx.Err() == nil {
				f.log.V(1).Info("re-discovery of groups failed; retrying", "groups", groups, "err", err.Error())
			}
			f.settle(groups)
		}

		next := nextResync
		if !nextPoll.IsZero() && nextPoll.Before(next) {
			next = nextPoll
		}
		if d, ok := f.nextDue(); ok && d.Before(next) {
			next = d
		}
		wait := next.Sub(clk.Now())
		if wait <= 0 {
			continue
		}
		t := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-f.wake:
		case <-t.C():
		}
		t.Stop()
	}
}

// fullRound re-discovers everything and settles every pending group.
func (f *follower) fullRound(ctx context.Context, why string) {
	if err := f.c.refreshAllTracked(ctx, &f.c.following); err != nil && ctx.Err() == nil {
		f.log.V(1).Info("periodic re-discovery failed", "reason", why, "err", err.Error())
	}
	f.settle(nil)
}

func (f *follower) confirmLocked(group, key string, expect expectation, now time.Time) {
	m := f.confirmed[group]
	if m == nil {
		m = map[string]confirmation{}
		f.confirmed[group] = m
	}
	m[key] = confirmation{expect: expect, until: now.Add(confirmWindow)}
}

// holdMoves keeps old's state of a group whose round shows a resource it served as served
// at no version while a watched change of the group is not reflected yet: the apiserver
// rebuilds a CRD's discovery asynchronously, so a CRD that retires one version for another
// (v1 no longer served, v2 served) shows for a moment neither. Applied, that moment would
// tell subscribers the resource was removed, then added, and a watch-all set would tell
// its handlers every object was deleted where the resource only changed version. The group
// is re-discovered on the pending retry and applied once its expectations hold (a Changed
// event then), or as it is once giveUpAfter has passed, as settle gives up. A deleted CRD
// is expected unlisted: a round that shows it gone meets that and is applied at once. It
// runs under the client's applyMu and does no I/O.
func (f *follower) holdMoves(old, n *snapshot) *snapshot {
	now := f.c.opts.Clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []string
	for group, p := range f.pending {
		if now.Sub(p.first) > giveUpAfter || !lostResource(old, n, group) {
			continue
		}
		for _, expect := range p.expect {
			if !expect(n) {
				keep = append(keep, group) // settle retries it on its backoff
				break
			}
		}
	}
	if len(keep) == 0 {
		return n
	}
	slices.Sort(keep)
	f.log.V(1).Info("a re-discovery shows a resource served at no version while a watched change is not reflected yet; keeping the groups as they were until it is",
		"groups", keep)
	return n.keepGroups(old, keep)
}

// lostResource reports whether a resource of group that old serves is not served by n.
func lostResource(old, n *snapshot, group string) bool {
	for _, e := range old.all {
		if gr := e.res.GVR.GroupResource(); gr.Group == group && n.byGR[gr] == nil {
			return true
		}
	}
	return false
}

// guard protects what the watches confirmed from a full round that lags behind them. The
// per-group endpoints answer from the server's current state, while the aggregated
// document is rebuilt asynchronously (for an aggregated API server, after fetching from
// it), so a full round may briefly show a group as it was before a change the watch already
// confirmed. For a group where n contradicts a confirmed expectation that old met, guard
// keeps old's state of the group and schedules a per-group round, whose answer is then
// applied as is. It runs under the client's applyMu and does no I/O.
func (f *follower) guard(old, n *snapshot) *snapshot {
	now := f.c.opts.Clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []string
	for group, m := range f.confirmed {
		for key, cf := range m {
			if now.After(cf.until) {
				delete(m, key)
				continue
			}
			if cf.expect(old) && !cf.expect(n) {
				keep = append(keep, group)
				p := f.pending[group]
				if p == nil {
					p = &pendingGroup{expect: map[string]expectation{}, first: now}
					f.pending[group] = p
				}
				p.expect[key] = cf.expect
				p.due, p.dirty = now, true
				delete(m, key)
			}
		}
		if len(m) == 0 {
			delete(f.confirmed, group)
		}
	}
	if len(keep) == 0 {
		return n
	}
	f.log.V(1).Info("a full re-discovery contradicts watched changes; re-checking the groups", "groups", keep)
	f.signal()
	return n.keepGroups(old, keep)
}
