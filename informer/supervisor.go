package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kindex/kindex/discovery"
)

// supervise is the entry's life: start a run; when it parks, wait for a reason to resume
// (a discovery event for the resource, or a re-check on a backoff timer that succeeds),
// then start a new run on the same store. It ends when the entry's context ends.
func (e *entry) supervise() {
	defer close(e.supDone)
	bo := newBackoff(e.core.in.RecheckInitial, e.core.in.RecheckMax)
	// unconfirmed: the cache holds a snapshot's objects that no run has confirmed with the
	// server yet.
	unconfirmed := false
	for {
		r := newRun(e)
		e.setRun(r)
		r.start()
		select {
		case <-r.done:
		case <-e.ctx.Done():
		}
		r.stop()
		e.setRun(nil)
		if e.ctx.Err() != nil {
			return
		}
		p := r.parked()
		if p == nil { // cannot happen: a run only ends by parking or with the entry
			continue
		}
		if time.Since(r.started) >= e.core.in.HealthyRun {
			bo.reset()
		}
		reason, perr := p.reason, p.err
		unconfirmed = unconfirmed || r.snap != nil
		if st := e.Status(); unconfirmed && st.LastSyncTime.IsZero() {
			if r.snap != nil && reason == ReasonWatchForbidden {
				// The run's list was the snapshot, not the server: an identity that may
				// list but not watch (its watch revoked while the process was down) gets
				// what a start without a snapshot gets, a list kept while parked. The next
				// run lists; handlers see the differences with the snapshot. Should that
				// list be refused too, the snapshot is dropped then.
				continue
			}
			// The snapshot was never confirmed by the server in this process, and now
			// cannot be (its resource forbidden, gone or refused): it is not served as if
			// it could be caught up with. Handlers are told its objects are deleted.
			e.dropAll()
			e.update(func(st *Status) { st.ServingFromSnapshot = false })
		}
		unconfirmed = false
		// A kick is for a park: one sent while the run was healthy (Recheck of every
		// informer, a discovery event for a resource being served) is no reason to
		// re-check this park at once. Kicks from now on are: Status says Parked after this.
		select {
		case <-e.kick:
		default:
		}
		if reason != ReasonForbidden && reason != ReasonWatchForbidden {
			e.probing.Store(false)
		}
		for {
			if reason == ReasonNotFound {
				if e.follow() {
					break // its resource, at another version: listed again at once
				}
				e.dropAll()
			}
			now := time.Now()
			e.update(func(st *Status) {
				st.Phase, st.Reason, st.LastError, st.LastErrorTime = PhaseParked, reason, perr, now
			})
			w := e.waitResume(reason, bo)
			if w == stopped {
				return
			}
			if w == resume {
				break
			}
			// Parked on access, and discovery says the resource is gone (its CRD deleted):
			// its objects are gone too, whatever the user may read.
			reason, perr = ReasonNotFound, fmt.Errorf("kindex: %s is no longer served", resourceName(e.key.GVR.GroupResource()))
		}
		e.update(func(st *Status) { st.Phase, st.Reason = PhaseSyncing, ReasonNone })
	}
}

// waited is how a park's wait ended.
type waited int

const (
	stopped waited = iota // the entry stopped
	resume                // the informer may run again
	gone                  // an access park whose resource discovery no longer serves
)

// waitResume blocks until the park can end (true) or the entry stops (false). Access
// problems are re-checked with SelfSubjectAccessReviews, a missing resource with discovery;
// both on a capped exponential backoff and at once on a discovery event for the resource.
// An invalid request is re-checked on discovery events only: nothing else can fix it. A
// discovery event for an access park asks discovery afresh whether the resource is still
// served (gone: a CRD deleted while its informer could not read it).
// The backoff is not reset by a resume, so a re-check that says yes while the real request
// still fails cannot turn into a tight loop.
//
// A review the server refuses to answer (the client may not create
// SelfSubjectAccessReviews, or the API is not served) cannot say when a grant took
// effect: the request itself is tried instead, once the park has lasted the backoff's
// current step (1 s doubling up to RecheckMax, 30 s), so that a grant still takes effect.
func (e *entry) waitResume(reason Reason, bo *backoff) waited {
	access := reason == ReasonForbidden || reason == ReasonWatchForbidden
	parkedAt := time.Now()
	if access {
		e.core.checks.parked.Add(1)
		defer e.core.checks.parked.Add(-1)
	}
	for {
		var timer *time.Timer
		var tick <-chan time.Time
		if reason != ReasonInvalid {
			wait := bo.next()
			if access {
				// A grant must take effect in seconds however long the park: access
				// re-checks never back off beyond the interval (jittered by up to a fifth).
				// The factory's parked informers (and those of factories given the same
				// Options.AccessChecks) share a rate, so that a watch-everything set a user
				// may read little of does not send a review per resource every second: with
				// n parked, each waits at least n/rate (AccessChecks.floor).
				floor := e.core.checks.floor()
				every := max(e.core.opts.AccessRecheckInterval, floor)
				if wait > every {
					wait = every - time.Duration(rand.Int64N(int64(every)/5+1))
				}
				wait = max(wait, floor)
			}
			timer = time.NewTimer(wait)
			tick = timer.C
		}
		kicked := false
		select {
		case <-e.ctx.Done():
		case <-e.kick:
			kicked = true
		case <-tick:
		}
		if timer != nil {
			timer.Stop()
		}
		if e.ctx.Err() != nil {
			return stopped
		}
		if access && kicked && e.gone() {
			return gone
		}
		switch e.canResume(reason, kicked) {
		case allowed:
			return resume
		case unanswered:
			if time.Since(parkedAt) >= bo.cur {
				return resume
			}
		}
	}
}

// recheck is what a park's re-check found.
type recheck int

const (
	denied     recheck = iota // still parked
	allowed                   // the park can end
	unanswered                // an access review the server refused to answer
)

// gone asks discovery afresh whether the resource is still served (see confirmGone).
func (e *entry) gone() bool {
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	return e.confirmGone(ctx)
}

// canResume asks whether the park can end. A missing resource is looked up in discovery's
// cache on the backoff timer and afresh (ResolveGVR, a re-discovery on a miss) only on a
// discovery event or Recheck: a factory with hundreds of informers parked on deleted CRDs
// made hundreds of full re-discoveries per backoff period. The cache is kept current by the
// discovery client's own rounds and events, which kick the entries they concern. A client
// that follows nothing (a shared client its owner did not start) sends no events and its
// cache never changes by itself: the timer then re-discovers the resource's group, at most
// once per group per RecheckInitial for all the factory's parked entries (freshRecheckDue).
func (e *entry) canResume(reason Reason, kicked bool) recheck {
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	switch reason {
	case ReasonForbidden, ReasonWatchForbidden:
		ns := e.key.Namespace
		ok, err := e.core.access.Allowed(ctx, e.gvr(), ns, e.accessName(), "list", "watch")
		switch {
		case err == nil && ok:
			return allowed
		case err == nil:
			return denied
		case apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
			if e.probing.CompareAndSwap(false, true) {
				e.logger.Info("Access re-check refused by the server: retrying the request itself instead", "err", err)
			}
			return unanswered
		default:
			e.logger.V(2).Info("Access re-check failed", "err", err)
			return denied
		}
	default:
		var res discovery.Resource
		var err error
		gvr := e.gvr()
		switch {
		case kicked:
			res, err = e.core.disc.ResolveGVR(ctx, gvr)
		case e.core.freshRecheckDue(gvr.Group):
			res, err = e.core.disc.RecheckGVR(ctx, gvr)
		default:
			res, err = e.core.disc.CachedGVR(gvr)
		}
		if err == nil && res.Watchable() && e.servable(res) {
			return allowed
		}
		return denied
	}
}

// backoff is a capped exponential backoff with jitter: each wait is between half and all
// of the current step.
type backoff struct {
	initial, max, cur time.Duration
}

func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max}
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.initial
	} else if b.cur *= 2; b.cur > b.max {
		b.cur = b.max
	}
	return b.cur/2 + time.Duration(rand.Int64N(int64(b.cur)/2+1))
}

func (b *backoff) reset() { b.cur = 0 }

// listAllowed asks whether the informer may still list (a watch was just refused).
func (e *entry) listAllowed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ok, err := e.core.access.Allowed(ctx, e.gvr(), e.key.Namespace, e.accessName(), "list")
	return err != nil || ok // unknown: as before, WatchForbidden after a good list
}

// accessName is the object name the apiserver authorizes the informer's list and watch for:
// the name a field selector requires (metadata.name=x), which the server takes as the
// request's name, so that a grant of that object alone (an RBAC rule with resourceNames)
// allows them; "" otherwise.
func (e *entry) accessName() string {
	if e.key.FieldSelector == "" {
		return ""
	}
	sel, err := fields.ParseSelector(e.key.FieldSelector)
	if err != nil {
		return ""
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || len(content.IsPathSegmentName(name)) > 0 {
		return "" // the server does not take a name that cannot be a path segment either
	}
	return name
}
