package discovery

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// Client resolves resources from a cache of the server's discovery documents and keeps the
// cache current. It is safe for concurrent use. Create it with New.
type Client struct {
	opts Options
	log  logr.Logger

	http      *http.Client
	disco     *cgdiscovery.DiscoveryClient
	crds      apiextclient.Interface
	services  aggregatorclient.Interface
	neg       negativeCache
	misses    missBudget   // re-discoveries that misses may still cause
	fullRound atomic.Int32 // full rounds in flight (0 or 1), which a miss joins for free
	subs      subscribers
	flights   singleflight.Group
	seq       atomic.Uint64 // discovery rounds, numbered as they start
	snap      atomic.Pointer[snapshot]
	applyMu   sync.Mutex // serialises snapshot replacement and event publication; never held across I/O
	follower  *follower  // while started; guarded by applyMu
	startMu   sync.Mutex
	started   bool
	following sync.WaitGroup
}

// New returns a Client for the server cfg points at. It sends no request: the first
// discovery happens in Start or in the first call that needs it. cfg is copied; its
// WrapTransport, rate limits and credentials apply to every request the client sends.
//
// The client's HTTP client refuses redirects to another host (scheme, host or port), so that
// the credentials client-go adds to every request are never sent elsewhere; client-go's own
// clients follow such redirects.
func New(cfg *rest.Config, opts Options) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("discovery: nil rest.Config")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	rc := rest.CopyConfig(cfg)
	if opts.WrapTransport != nil {
		rc.Wrap(opts.WrapTransport)
	}
	base, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	hc := sameHostRedirectsOnly(base)
	c := &Client{opts: opts, log: opts.Logger.WithName("discovery"), http: hc}
	if c.disco, err = cgdiscovery.NewDiscoveryClientForConfigAndClient(rc, hc); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	// CRDs and APIServices are read as protobuf: CRD lists are large and protobuf decodes
	// several times faster than JSON. Their watches are long requests: an http.Client
	// timeout (rest.Config.Timeout) would cut them, so that client has none.
	pc := rest.CopyConfig(rc)
	pc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	pc.ContentType = "application/vnd.kubernetes.protobuf"
	whc := *hc
	whc.Timeout = 0
	if c.crds, err = apiextclient.NewForConfigAndClient(pc, &whc); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if c.services, err = aggregatorclient.NewForConfigAndClient(pc, &whc); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	c.snap.Store(emptySnapshot())
	return c, nil
}

// valid reports whether c was made by New: the zero Client and a nil *Client were not.
func (c *Client) valid() bool { return c != nil && c.disco != nil }

// sameHostRedirectsOnly returns a copy of hc that follows a redirect only to the same scheme
// and host:port as the original request.
func sameHostRedirectsOnly(hc *http.Client) *http.Client {
	c := *hc // never modify the caller's client, which may be http.DefaultClient
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("discovery: stopped after 10 redirects")
		}
		orig := via[0].URL
		if req.URL.Scheme != orig.Scheme || !strings.EqualFold(req.URL.Host, orig.Host) {
			return fmt.Errorf("discovery: refusing redirect from %s://%s to %s://%s: another host would receive the credentials",
				orig.Scheme, orig.Host, req.URL.Scheme, req.URL.Host)
		}
		return nil
	}
	return &c
}

// ErrAlreadyStarted is returned by a second Start.
var ErrAlreadyStarted = errors.New("discovery: client already started")

// Start discovers the server's resources and then follows changes until ctx ends: it watches
// CustomResourceDefinitions and APIServices where the credentials permit, re-discovering the
// affected group on each relevant change, and falls back to re-discovering every
// RefreshInterval where they do not. It returns once the first discovery is done, with its
// error if it failed (a partial failure of some groups is not an error: see Resources). A
// Client may be started once; after a failed Start it may be started again. Without Start, a
// Client still resolves, discovering on first use and on misses only.
//
// When ctx ends, every goroutine Start created stops; Wait waits for that.
func (c *Client) Start(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	if !c.valid() {
		return ErrUninitialized
	}
	c.startMu.Lock()
	if c.started {
		c.startMu.Unlock()
		return ErrAlreadyStarted
	}
	c.started = true
	c.startMu.Unlock()
	// A context that has ended makes no request. The first round counts in c.following, so
	// that Wait also waits for a round that outlived Start's context (rounds are shared and
	// run on a context of their own): otherwise its requests, and the connection they hold,
	// would outlive Wait's closing of idle connections.
	err := ctx.Err()
	if err == nil {
		c.following.Add(1)
		err = c.refreshAllTracked(ctx, &c.following)
		c.following.Done()
	}
	if err != nil {
		c.startMu.Lock()
		c.started = false
		c.startMu.Unlock()
		return err
	}
	newFollower(c).start(ctx)
	return nil
}

// Wait blocks until the goroutines started by Start have stopped (after Start's context
// ended), including a discovery round the follower had in flight, and then closes the
// client's idle connections. It returns at once if Start was not called.
func (c *Client) Wait() {
	if !c.valid() {
		return
	}
	c.following.Wait()
	c.closeIdleConnections()
}

// closeIdleConnections closes the idle connections of the client's transport, unwrapping
// client-go's wrappers (and Options.WrapTransport's, if it implements
// utilnet.RoundTripperWrapper) to reach the transport that holds them. It is
// utilnet.CloseIdleConnectionsFor, except that a transport it cannot unwrap is reported to
// the client's logger, not to klog's global logger at V(0).
func (c *Client) closeIdleConnections() {
	t := c.http.Transport
	for t != nil {
		switch tt := t.(type) {
		case interface{ CloseIdleConnections() }:
			tt.CloseIdleConnections()
			return
		case utilnet.RoundTripperWrapper:
			t = tt.WrappedRoundTripper()
		default:
			c.log.V(1).Info("cannot close idle connections: the transport does not unwrap (see Options.WrapTransport)",
				"transport", fmt.Sprintf("%T", t))
			return
		}
	}
}

// Refresh re-discovers everything now and waits for the round: it returns the round's error
// (a partial failure of some groups is not one: see Resources), or ctx's when ctx ends
// first; the round itself, bounded by Options.RequestTimeout, goes on for other callers.
// Calls made while a re-discovery is in flight share it. It clears the negative cache.
func (c *Client) Refresh(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	if !c.valid() {
		return ErrUninitialized
	}
	if err := c.refreshAll(ctx); err != nil {
		return err
	}
	c.neg.clear()
	return nil
}

// refreshAll runs a full discovery round, shared by all concurrent callers. The round is
// detached from the caller's cancellation (another caller may be waiting for it) and bounded
// by RequestTimeout; a caller whose ctx ends stops waiting.
func (c *Client) refreshAll(ctx context.Context) error { return c.refreshAllTracked(ctx, nil) }

// refreshAllTracked is refreshAll; the round it waits for (started or joined) counts in
// track until it ends, even if ctx ends first, so that Wait also waits for a round the
// follower abandoned when its context ended. The caller must itself be counted in track.
func (c *Client) refreshAllTracked(ctx context.Context, track *sync.WaitGroup) error {
	if track != nil {
		track.Add(1)
	}
	ch := c.flights.DoChan("full", func() (any, error) {
		c.fullRound.Add(1)
		defer c.fullRound.Add(-1)
		fctx, cancel := context.WithTimeout(c.logContext(context.WithoutCancel(ctx)), c.opts.RequestTimeout)
		defer cancel()
		res, err := c.fetchAll(fctx, c.seq.Add(1))
		if err != nil {
			return nil, fmt.Errorf("discovery: %w", err)
		}
		c.apply(res)
		return nil, nil
	})
	select {
	case r := <-ch:
		if track != nil {
			track.Done()
		}
		return r.Err
	case <-ctx.Done():
		if track != nil {
			go func() { // the round ends within RequestTimeout
				<-ch
				track.Done()
			}()
		}
		return ctx.Err()
	}
}

// refreshGroups runs a per-group round for names, or a full round when that is cheaper or
// the core group is involved; a full round counts in track (see refreshAllTracked).
func (c *Client) refreshGroups(ctx context.Context, names []string, track *sync.WaitGroup) error {
	if len(names) > maxGroupRounds || slices.Contains(names, "") {
		return c.refreshAllTracked(ctx, track)
	}
	fctx, cancel := context.WithTimeout(c.logContext(ctx), c.opts.RequestTimeout)
	defer cancel()
	res, err := c.fetchGroups(fctx, c.seq.Add(1), names)
	if err != nil {
		return err
	}
	c.apply(res)
	return nil
}

// apply installs the result of a round and publishes the resulting events. Events are queued
// to subscribers under applyMu, so every subscriber sees rounds in the order they were
// applied; handlers run later on the subscribers' own goroutines.
func (c *Client) apply(res *fetchResult) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	old := c.snap.Load()
	n := old.merge(res)
	if c.follower != nil {
		if res.full {
			n = c.follower.guard(old, n)
		}
		n = c.follower.holdMoves(old, n)
	}
	events := diff(old, n)
	c.snap.Store(n)
	// A miss can turn into a match when a resource is added or changes (new names, new
	// versions) or a group recovers; never when one is removed.
	failures := old.failureKey() != n.failureKey()
	if failures || slices.ContainsFunc(events, func(e Event) bool { return e.Type != Removed }) {
		c.neg.clear()
	}
	if failures {
		logFailures(c.log, old, n)
	}
	if len(events) > 0 {
		c.subs.publish(events)
	}
}

// logFailures logs each group whose discovery failed since old, and each that no longer
// fails: no event reports either (a failed group's resources are kept as last known), so
// this is how a program's log learns of an aggregated API that went down or came back.
func logFailures(log logr.Logger, old, n *snapshot) {
	was := map[string]bool{}
	for _, g := range old.failedGroups() {
		was[g.name] = true
	}
	for _, g := range n.failedGroups() {
		if was[g.name] {
			delete(was, g.name)
			continue
		}
		log.Info("API group unavailable; its resources do not resolve, and keep their last known description, until it recovers",
			"group", g.name, "err", g.unavailable(nil).Err)
	}
	for _, name := range slices.Sorted(maps.Keys(was)) {
		if n.groups[name] != nil {
			log.Info("API group available again", "group", name)
		} else {
			log.Info("API group no longer served", "group", name)
		}
	}
}

// logContext returns ctx with the client's logger, through which client-go logs what it
// logs about a request (klog's global logger otherwise).
func (c *Client) logContext(ctx context.Context) context.Context {
	return klog.NewContext(ctx, c.log)
}

// Following reports whether the client follows the server's changes now: it was started,
// its context has not ended, and its watches of CRDs and APIServices are open (or refused,
// and replaced by periodic re-discovery). While a watch is down (the apiserver restarting,
// or client-go's backoff between attempts to open it again, which grows to 30 s and, with
// jitter, up to a minute over repeated failures) a CRD created or deleted meanwhile reaches
// the client only when the watch opens again or at the next periodic re-discovery
// (RefreshInterval). A client that does not follow learns of a resource served or removed
// since its last round only when asked (a miss, RecheckGVR, Refresh).
func (c *Client) Following() bool {
	if !c.valid() {
		return false
	}
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	return c.follower != nil && !c.follower.lagging()
}

func (c *Client) setFollower(f *follower) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.follower = f
}
