package informer

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// Discovery is the part of *discovery.Client the core uses. Front ends pass the real client;
// unit tests pass a fake. An implementation may also have a method Following() bool, as
// *discovery.Client does, saying whether it delivers events now: while it does not, informers
// parked on a missing resource ask RecheckGVR on their re-check timer (once per group per
// second for all of them), since no event would tell them the resource is back. One without
// that method is taken to deliver events.
type Discovery interface {
	// Resolve resolves what a user typed ("deploy", "widgets.example.com", ...).
	Resolve(ctx context.Context, input string) (discovery.Resource, error)
	// ResolveGVR resolves a GVR; an empty version means the preferred one.
	ResolveGVR(ctx context.Context, gvr schema.GroupVersionResource) (discovery.Resource, error)
	// RecheckGVR is ResolveGVR with a fresh answer from the server for gvr's group; it is
	// asked when the server answers NotFound for a resource discovery still shows, so that
	// a cache that missed a CRD's deletion cannot keep an informer retrying.
	RecheckGVR(ctx context.Context, gvr schema.GroupVersionResource) (discovery.Resource, error)
	// CachedGVR is ResolveGVR on what the client knows now, without a request: parked
	// informers re-check with it between discovery events, so that many of them do not
	// each make the client re-discover everything.
	CachedGVR(gvr schema.GroupVersionResource) (discovery.Resource, error)
	// ResolveGVK resolves a GVK; an empty version means the preferred one.
	ResolveGVK(ctx context.Context, gvk schema.GroupVersionKind) (discovery.Resource, error)
	// Resources lists the served resources the filter selects; on a partial failure it
	// returns what it has plus an error (errors.Is(err, discovery.ErrGroupUnavailable)).
	Resources(ctx context.Context, filter discovery.Filter) ([]discovery.Resource, error)
	// Subscribe calls fn for every change to the served resources until unsubscribe, on a
	// goroutine of its own (never the caller's of Resolve or Refresh), one event at a time
	// and in order; unsubscribe waits for a call in flight. *discovery.Client does.
	// A nil fn is an error (the core never passes one).
	Subscribe(fn func(discovery.Event)) (unsubscribe func(), err error)
}

// follower is implemented by discovery clients that can say whether they follow the
// server's changes (*discovery.Client: while started and its watches are open). A client
// that does not implement it is taken to follow.
type follower interface{ Following() bool }

// freshRecheckDue says whether a parked entry's timed re-check should ask discovery afresh
// for group: only when the client follows nothing (no event will ever say the resource is
// back, and its cache does not change by itself), and then once per group per
// hooks.RecheckInitial for all the factory's parked entries, so that many entries parked on
// one group make one request, not one each.
func (c *core) freshRecheckDue(group string) bool {
	f, ok := c.disc.(follower)
	if !ok || f.Following() {
		return false
	}
	now := time.Now()
	c.recheckMu.Lock()
	defer c.recheckMu.Unlock()
	if last, ok := c.rechecked[group]; ok && now.Sub(last) < c.in.RecheckInitial {
		return false
	}
	if c.rechecked == nil {
		c.rechecked = map[string]time.Time{}
	}
	c.rechecked[group] = now
	return true
}
