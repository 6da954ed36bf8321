package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Resolve resolves what a user typed: "po", "pods", "pod", "Pod", "deployments.apps",
// "deploy.apps", "Deployment.v1.apps", "deployments.v1.apps", "apps/v1/deployments",
// "v1/pods", a CRD's plural, singular, short name or kind, or a category that exactly one
// resource has. A group may be given by its start when no group has that exact name, as
// kubectl reads it: "deploy.app", "ing.networking" (several candidates in groups that start
// so are ambiguous). The result's GVR.Version is the preferred version unless input names one.
// See the package documentation for the rules and priorities.
//
// Errors: meta.IsNoMatchError for unknown input; *AmbiguousError (meta.IsAmbiguousError) for
// input that names several resources; *GroupUnavailableError (ErrGroupUnavailable) when the
// input names, or can only be found in, a group whose discovery failed. Input that cannot
// name a resource in any of the forms (empty, with a space or control character anywhere,
// "a..b", longer than 1 KB) is a
// meta.IsNoMatchError at once, without any request. Error messages quote at most 256 bytes
// of input.
func (c *Client) Resolve(ctx context.Context, input string) (Resource, error) {
	if ctx == nil {
		return Resource{}, ErrNilContext
	}
	if !c.valid() {
		return Resource{}, ErrUninitialized
	}
	if parseInput(input) == nil {
		return Resource{}, notAName(input)
	}
	return lookup(ctx, c, "r\x00"+input, func(s *snapshot) (Resource, error) {
		return s.resolveInput(input)
	})
}

// ResolveGVK resolves a kind. An empty Version means the preferred version of the kind's
// group that serves it. Kinds match exactly, else case-insensitively. A miss is a
// meta.NoKindMatchError.
func (c *Client) ResolveGVK(ctx context.Context, gvk schema.GroupVersionKind) (Resource, error) {
	if ctx == nil {
		return Resource{}, ErrNilContext
	}
	if !c.valid() {
		return Resource{}, ErrUninitialized
	}
	if len(gvk.Group)+len(gvk.Version)+len(gvk.Kind) > maxInputLen {
		return Resource{}, noKindMatch(gvk)
	}
	return lookup(ctx, c, "k\x00"+gvk.String(), func(s *snapshot) (Resource, error) {
		return s.resolveGVK(gvk)
	})
}

// ResolveGVR resolves a resource given by group, optional version and plural (or singular)
// name. Group "" is the core group, not "any group". A miss is a meta.NoResourceMatchError.
func (c *Client) ResolveGVR(ctx context.Context, gvr schema.GroupVersionResource) (Resource, error) {
	if ctx == nil {
		return Resource{}, ErrNilContext
	}
	if !c.valid() {
		return Resource{}, ErrUninitialized
	}
	if len(gvr.Group)+len(gvr.Version)+len(gvr.Resource) > maxInputLen {
		return Resource{}, noResourceMatch(qualifiedName(gvr.GroupResource()), gvr)
	}
	return lookup(ctx, c, "v\x00"+gvr.String(), func(s *snapshot) (Resource, error) {
		return s.resolveGVR(gvr)
	})
}

// CachedGVR is ResolveGVR on what the client knows now, without any request: a miss (a
// meta.NoResourceMatchError) may be a resource served since the client's last round, and
// before the first round everything misses. For re-checks that the client's events and
// rounds keep current: many callers re-checking misses with ResolveGVR would each make
// the client re-discover everything.
func (c *Client) CachedGVR(gvr schema.GroupVersionResource) (Resource, error) {
	if !c.valid() {
		return Resource{}, ErrUninitialized
	}
	if len(gvr.Group)+len(gvr.Version)+len(gvr.Resource) > maxInputLen {
		return Resource{}, noResourceMatch(qualifiedName(gvr.GroupResource()), gvr)
	}
	return c.snap.Load().resolveGVR(gvr)
}

// RecheckGVR is ResolveGVR with a fresh answer: it re-discovers gvr's group from the
// server's per-group endpoints (everything, for the core group), applies the answer (with
// its events) and resolves gvr in the result. Call it when the server contradicts the cache,
// as when a LIST of a resource discovery still shows is answered NotFound: the aggregated
// discovery document is rebuilt asynchronously, so a round that ran just after a CRD was
// deleted can still show it, and no watch event comes later to correct that. Concurrent
// calls for one group share a round, bounded by Options.RequestTimeout and not by any
// caller's ctx (the others wait for it); a caller whose ctx ends first stops waiting for it
// and returns ctx's error. A miss is a meta.NoResourceMatchError, as is a group no server
// can serve (not a DNS subdomain), which is not asked about; an error of the round is
// returned as is, never as a miss.
func (c *Client) RecheckGVR(ctx context.Context, gvr schema.GroupVersionResource) (Resource, error) {
	if ctx == nil {
		return Resource{}, ErrNilContext
	}
	if !c.valid() {
		return Resource{}, ErrUninitialized
	}
	if len(gvr.Group)+len(gvr.Version)+len(gvr.Resource) > maxInputLen || !possibleGroup(gvr.Group) {
		return Resource{}, noResourceMatch(qualifiedName(gvr.GroupResource()), gvr)
	}
	if err := c.ensureDiscovered(ctx); err != nil {
		return Resource{}, err
	}
	// The round is shared: the end of the caller's ctx that started it must not fail it for
	// the others, which would take that caller's cancellation for their own.
	ch := c.flights.DoChan("recheck\x00"+gvr.Group, func() (any, error) {
		return nil, c.refreshGroups(context.WithoutCancel(ctx), []string{gvr.Group}, nil)
	})
	var err error
	select {
	case r := <-ch:
		err = r.Err
	case <-ctx.Done():
		return Resource{}, ctx.Err()
	}
	if err != nil {
		return Resource{}, fmt.Errorf("discovery: recheck of %s: %w", gvr.GroupResource(), err)
	}
	return c.snap.Load().resolveGVR(gvr)
}

// possibleGroup reports whether a server can serve group: the core group, or a DNS subdomain
// (lower case), as CRDs and APIServices require. The name of any other is no group and goes
// into no request: its path would be cleaned into another group's ("x/../apps" into
// /apis/apps), whose resources the client would keep under the name given.
func possibleGroup(group string) bool {
	return group == "" || len(validation.IsDNS1123Subdomain(group)) == 0
}

// ResolveCategory expands a category ("all", "api-extensions", a CRD's categories) to its
// resources, in priority order. When some group's discovery failed, the known members come
// with a *PartialDiscoveryError, since the failed group may hold more. A category no
// resource has is a meta.NoResourceMatchError.
func (c *Client) ResolveCategory(ctx context.Context, name string) ([]Resource, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !c.valid() {
		return nil, ErrUninitialized
	}
	if len(name) > maxInputLen || name == "" || badRune(name) >= 0 {
		return nil, noCategoryMatch(name)
	}
	out, err := lookup(ctx, c, "c\x00"+strings.ToLower(name), func(s *snapshot) ([]Resource, error) {
		return s.resolveCategory(name)
	})
	if err == nil {
		err = c.snap.Load().partialError()
	}
	return out, err
}

// Resources returns every resource that supports list and watch, in its preferred version and
// priority order, that f selects. When some group's discovery failed, it returns what it knows
// (including the last known resources of the failed groups, which were never reported
// Removed) and a *PartialDiscoveryError naming the failed groups. It triggers the first
// discovery if none happened yet, and no other request.
func (c *Client) Resources(ctx context.Context, f Filter) ([]Resource, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !c.valid() {
		return nil, ErrUninitialized
	}
	if err := c.ensureDiscovered(ctx); err != nil {
		return nil, err
	}
	s := c.snap.Load()
	var out []Resource
	for _, e := range s.all {
		if e.res.Watchable() && f.Matches(e.res) {
			out = append(out, e.res.clone())
		}
	}
	return out, s.partialError()
}

// ensureDiscovered runs the first discovery if none has completed.
func (c *Client) ensureDiscovered(ctx context.Context) error {
	if c.snap.Load().discovered {
		return nil
	}
	return c.refreshAll(ctx)
}

// lookup runs find on the current snapshot. On a miss it re-discovers at most once for all
// concurrent callers of the same key, unless a full discovery already started after the call
// began, and remembers a persisting miss for NegativeCacheTTL. Misses of different keys
// share the budget of re-discoveries (missBudget); joining a full round in flight costs
// nothing. A miss beyond the budget is answered from the snapshot and not remembered,
// since nothing confirmed it.
func lookup[T any](ctx context.Context, c *Client, key string, find func(*snapshot) (T, error)) (T, error) {
	var zero T
	begin := c.seq.Load()
	if err := c.ensureDiscovered(ctx); err != nil {
		return zero, err
	}
	v, err := find(c.snap.Load())
	if !isMiss(err) {
		return v, err
	}
	if nerr, ok := c.neg.get(key, c.opts.Clock.Now()); ok {
		return zero, nerr
	}
	ch := c.flights.DoChan("miss\x00"+key, func() (any, error) {
		// A caller may have missed just before the previous flight for this key stored its
		// result: look again before sending anything.
		if nerr, ok := c.neg.get(key, c.opts.Clock.Now()); ok {
			return nil, nerr
		}
		var rerr error
		checked := c.snap.Load().fullSeq > begin
		if !checked && (c.fullRound.Load() > 0 || c.misses.take(c.opts.Clock.Now())) {
			rerr, checked = c.refreshAll(context.WithoutCancel(ctx)), true
		}
		gen := c.neg.generation()
		v, err := find(c.snap.Load())
		if isMiss(err) && checked {
			if rerr != nil {
				err = errors.Join(err, rerr)
			}
			c.neg.put(key, err, c.opts.Clock.Now().Add(c.opts.NegativeCacheTTL), gen)
		}
		return v, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return zero, r.Err
		}
		return cloneResult(r.Val.(T)), nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// cloneResult copies a shared flight result for one caller.
func cloneResult[T any](v T) T {
	switch x := any(v).(type) {
	case Resource:
		return any(x.clone()).(T)
	case []Resource:
		out := slices.Clone(x)
		for i := range out {
			out[i] = out[i].clone()
		}
		return any(out).(T)
	}
	return v
}
