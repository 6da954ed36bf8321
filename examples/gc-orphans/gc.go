package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/refs"
)

// collector watches the metadata of every listable resource a filter selects, following
// CRDs as they come and go, and answers owner questions from its caches.
type collector struct {
	disc        *discovery.Client
	stopDisc    context.CancelFunc
	unsubscribe []func()
	f           *metadataonly.Factory
	all         *informer.WatchAll[metadataonly.Object]
	// graph, when set, follows the references between objects (refs.Graph) on the same
	// discovery client and metadata-only informers, plus compact informers for the
	// resources whose references are in their fields (Pods, workloads, bindings, ...).
	graph *refs.Graph
}

// startCollector starts discovery, a metadata-only factory with the owner index and a
// watch-all set over filter, and with references a reference graph sharing them. With events
// set, discovery changes (a CRD added or deleted) and informer status changes are printed to
// it as they happen. Stop it with stop.
func startCollector(ctx context.Context, cfg *rest.Config, filter discovery.Filter, references bool, logger logr.Logger,
	events io.Writer) (_ *collector, err error) {
	c := &collector{}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	// The factory would create a discovery client itself; this one is created here so that
	// its events can be printed. A client handed to a factory is started by its owner.
	if c.disc, err = discovery.New(cfg, discovery.Options{Logger: logger}); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithCancel(ctx)
	c.stopDisc = cancel
	if err := c.disc.Start(dctx); err != nil { // returns after the first discovery
		return nil, err
	}
	if events != nil { // subscribed after Start: changes only, not the first discovery
		unsub, err := c.disc.Subscribe(func(e discovery.Event) {
			fmt.Fprintf(events, "[discovery] %s %s (%s)\n", e.Type, qualified(e.Resource), e.Resource.GVR.Version)
		})
		if err != nil {
			return nil, err
		}
		c.unsubscribe = append(c.unsubscribe, unsub)
	}

	// Metadata only: objects travel as protobuf and cost a fraction of their full form.
	// OwnerIndex indexes owner references from the start, so Dependents and Orphans are
	// lookups rather than scans.
	c.f, err = metadataonly.NewFactory(cfg, metadataonly.Options{Discovery: c.disc, OwnerIndex: true, Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := c.f.Start(ctx); err != nil {
		return nil, err
	}
	// One informer per listable and watchable resource the filter selects, now and as
	// discovery reports resources added, changed or removed.
	if c.all, err = c.f.WatchAll(ctx, filter); err != nil {
		return nil, err
	}
	if references {
		// The graph's watch-all set over the metadata-only factory shares the informers of the
		// set above; the resources whose rules read fields are watched by a compact factory
		// the graph creates, projected to those fields.
		if c.graph, err = refs.New(cfg, refs.Options{Discovery: c.disc, Metadata: c.f, Filter: &filter, Logger: logger}); err != nil {
			return nil, err
		}
		if err := c.graph.Start(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// follow prints every informer status change (syncing, synced, parked, stopped) to w until
// ctx ends: the informers stopping at shutdown are not news.
func (c *collector) follow(ctx context.Context, w io.Writer) error {
	unsubscribe, err := c.f.SubscribeStatus(func(st informer.Status) {
		if ctx.Err() != nil {
			return
		}
		line := fmt.Sprintf("[status] %s, %d objects", st, st.Objects)
		if st.LastError != nil && st.Reason != informer.ReasonNone {
			line += ": " + st.LastError.Error()
		}
		fmt.Fprintln(w, line)
	})
	if err != nil {
		return err
	}
	c.unsubscribe = append(c.unsubscribe, unsubscribe)
	return nil
}

// waitForSync waits up to timeout for every member to sync. Members that do not sync in time
// (forbidden, parked) are listed on w and are not an error: the report covers what is cached.
func (c *collector) waitForSync(ctx context.Context, timeout time.Duration, w io.Writer) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.all.WaitForSync(wctx)
	if err == nil && c.graph != nil {
		err = c.graph.WaitForSync(wctx)
	}
	var se *informer.SyncError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &se):
		for name, reason := range se.Reasons() {
			fmt.Fprintf(w, "not synced after %v: %s (%s)\n", timeout, name, reason)
		}
		return nil // report on what is cached
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(w, "not synced after %v: %v\n", timeout, err)
		return nil
	default:
		return err
	}
}

// stop stops everything startCollector started and waits for its goroutines.
func (c *collector) stop() {
	for _, u := range c.unsubscribe {
		u()
	}
	if c.graph != nil {
		c.graph.Shutdown()
	}
	if c.all != nil {
		c.all.Stop()
	}
	if c.f != nil {
		c.f.Shutdown()
	}
	if c.stopDisc != nil {
		c.stopDisc()
		c.disc.Wait()
	}
}

// report prints the dependents of owner (when set) and the orphans: the cached objects whose
// every owner is gone.
func (c *collector) report(ctx context.Context, w io.Writer, owner types.UID) error {
	objects, resources := 0, 0
	for _, inf := range c.all.Informers() {
		objects += inf.Status().Objects
		resources++
	}
	fmt.Fprintf(w, "--- report at %s: %d objects in %d resources\n", time.Now().Format(time.TimeOnly), objects, resources)

	if owner != "" {
		deps, err := c.f.Dependents(ctx, owner)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "dependents of %s: %d\n", owner, len(deps))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, d := range deps {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", qualified(d.Resource), orDash(d.Object.GetNamespace()), d.Object.GetName())
		}
		_ = tw.Flush()
	}

	orphans, err := c.f.Orphans(ctx)
	if err != nil {
		return err
	}
	var gone, unchecked []informer.Orphan[metadataonly.Object]
	for _, o := range orphans {
		if o.Orphaned() { // every owner is known to be gone
			gone = append(gone, o)
		} else { // some owner could not be checked: its resource is not cached, or its kind does not resolve
			unchecked = append(unchecked, o)
		}
	}
	fmt.Fprintf(w, "orphans (every owner gone): %d\n", len(gone))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, o := range gone {
		var owners []string
		for _, ref := range o.Dangling {
			owners = append(owners, fmt.Sprintf("%s/%s (uid %s)", ref.Kind, ref.Name, ref.UID))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\towner gone: %s\n", qualified(o.Resource), orDash(o.Object.GetNamespace()),
			o.Object.GetName(), strings.Join(owners, ", "))
	}
	_ = tw.Flush()
	if len(unchecked) > 0 {
		first := unchecked[0]
		fmt.Fprintf(w, "not checked (an owner's resource is not cached or its kind unknown): %d, for example %s %s/%s: %v\n", len(unchecked),
			qualified(first.Resource), first.Object.GetNamespace(), first.Object.GetName(), first.Unknown[0].Err)
	}
	if c.graph != nil {
		c.reportDangling(w)
	}
	return nil
}

// reportDangling prints the references, other than owner references (the orphans above),
// whose target is missing: a Pod mounting a ConfigMap that does not exist, a RoleBinding to
// a deleted Role, an Ingress to a missing Service. References marked optional (a ConfigMap
// volume with "optional: true") are not dangling: Dangling leaves them out. References the
// cache cannot check (their target's resource is not watched or not synced) are counted.
func (c *collector) reportDangling(w io.Writer) {
	var missing, unknown []refs.Edge
	for _, e := range c.graph.Dangling() {
		switch {
		case e.Rule == "owner":
		case e.State == refs.Missing:
			missing = append(missing, e)
		default:
			unknown = append(unknown, e)
		}
	}
	fmt.Fprintf(w, "dangling references (target missing): %d\n", len(missing))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range missing {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s -> %s\n", qualifiedGR(e.From.Group, e.From.Resource), orDash(e.From.Namespace), e.From.Name,
			e.Rule, e.To)
	}
	_ = tw.Flush()
	if len(unknown) > 0 {
		fmt.Fprintf(w, "not checked (the target's resource is not cached): %d, for example %s: %s\n", len(unknown),
			unknown[0].To, unknown[0].Reason)
	}
}

func qualifiedGR(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// qualified is "plural.group", or "plural" for the core group.
func qualified(r discovery.Resource) string {
	if r.GVR.Group == "" {
		return r.GVR.Resource
	}
	return r.GVR.Resource + "." + r.GVR.Group
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// watch starts a collector, waits for the initial lists and reports: once, or every interval
// (following discovery and status changes in between) until ctx ends.
func watch(ctx context.Context, cfg *rest.Config, filter discovery.Filter, references bool, logger logr.Logger, owner types.UID,
	once bool, interval, syncTimeout time.Duration, out io.Writer) error {
	var events io.Writer
	if !once {
		events = out
	}
	c, err := startCollector(ctx, cfg, filter, references, logger, events)
	if err != nil {
		return err
	}
	defer c.stop()
	fmt.Fprintf(out, "watching the metadata of %d resources\n", len(c.all.Informers()))
	if err := c.waitForSync(ctx, syncTimeout, out); err != nil {
		return err
	}
	if once {
		return c.report(ctx, out, owner)
	}
	// From here on, print informers starting, syncing, parking and stopping as CRDs come
	// and go (the initial syncs are behind us and would only be noise).
	if err := c.follow(ctx, out); err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := c.report(ctx, out, owner); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
