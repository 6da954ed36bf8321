package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/query"
)

// execute runs a parsed command line: resolve the resource, start one informer, register
// the indexes, wait for the initial list, query, print; with --watch, again on every change.
func execute(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	// The kubeconfig loading rules and overrides, exactly as kubectl applies them.
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(o.Rules, o.Overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return err
	}
	namespace, _, err := cc.Namespace() // -n, else the context's namespace, else "default"
	if err != nil {
		return err
	}
	logger := newLogger(stderr, o.Verbosity)

	// kquery resolves the input with its own discovery client, which it then lends to the
	// factory, so that an unknown or ambiguous name can be reported with candidates.
	disc, err := discovery.New(cfg, discovery.Options{Logger: logger})
	if err != nil {
		return err
	}
	if o.Watch {
		// Started, discovery follows CRDs and APIServices: a watched CRD that is deleted
		// parks its informer, and one that comes back resumes it. A one-shot query does
		// not need that, and an unstarted client still discovers on first use.
		dctx, cancel := context.WithCancel(ctx)
		defer func() { cancel(); disc.Wait() }()
		if err := disc.Start(dctx); err != nil {
			return err
		}
	} else {
		defer disc.Wait() // closes its idle connections
	}
	res, err := disc.Resolve(ctx, o.Resource)
	if err != nil {
		return resolveFailed(ctx, disc, o.Resource, err)
	}

	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Discovery: disc, Logger: logger})
	if err != nil {
		return err
	}
	if err := f.Start(ctx); err != nil {
		return err
	}
	defer f.Shutdown()

	// Namespace and label selector go to the server: only matching objects are cached.
	var opts []informer.Option
	scope := "" // for "No resources found"
	if res.Namespaced && !o.AllNamespaces {
		opts = append(opts, informer.WithNamespace(namespace))
		scope = " in " + namespace + " namespace"
	}
	if o.Selector != "" {
		opts = append(opts, informer.WithLabelSelector(o.Selector))
	}
	inf, err := f.ForResource(res, opts...)
	if err != nil {
		return err
	}
	defer inf.Release()
	for _, ix := range o.Indexes {
		if err := inf.AddIndex(ix.Name, ix.Expr); err != nil {
			return err // expressions were compiled when parsing; this would be a conflict
		}
	}
	if o.Watch {
		unsubscribe, err := f.SubscribeStatus(func(st informer.Status) {
			if st.Phase != informer.PhaseSynced || st.Reason != informer.ReasonNone {
				fmt.Fprintf(stderr, "kquery: %s\n", st) // parked, retrying: say why the output may be stale
			}
		})
		if err != nil {
			return err
		}
		defer unsubscribe()
	}
	sctx, cancel := context.WithTimeout(ctx, o.SyncTimeout)
	err = inf.WaitForSync(sctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s did not sync within %v: %w", qualified(res), o.SyncTimeout, err)
	}
	for _, ix := range o.Indexes { // a path that yields maps or lists indexes nothing there
		if st, err := inf.IndexStats(ix.Name); err == nil && st.Errors > 0 {
			fmt.Fprintf(stderr, "kquery: --index %s: %d objects have values that cannot be indexed: %v\n", ix.Name, st.Errors, st.LastError)
		}
	}

	q := query.Query{Conditions: o.Conditions, Limit: o.Limit, Scan: needsScan(o.Conditions)}
	// once runs the query and renders the result (for stdout) and notes about it (stderr).
	once := func() (out, notes string, err error) {
		r, err := inf.Query(ctx, q)
		if err != nil {
			return "", "", err
		}
		var b, n strings.Builder
		if len(r.Items) == 0 && o.Output != "json" {
			fmt.Fprintf(&n, "No resources found%s.\n", scope) // as kubectl: no header, a note
		} else if err := render(&b, o.Output, res, r.Items, o.Indexes, r.Continue, time.Now()); err != nil {
			return "", "", err
		}
		if r.Continue != "" {
			fmt.Fprintf(&n, "(%d of %d matches shown; raise --limit to see more)\n", len(r.Items), r.Plan.Matched)
		}
		if o.Explain {
			fmt.Fprintf(&n, "plan: candidates from %q: %d candidates, %d matched\n", r.Plan.Driver, r.Plan.Candidates, r.Plan.Matched)
		}
		return b.String(), n.String(), nil
	}
	show := func(out, notes string) error {
		_, _ = io.WriteString(stderr, notes)
		_, err := io.WriteString(stdout, out)
		return err
	}

	out, notes, err := once()
	if err != nil {
		return err
	}
	if err := show(out, notes); err != nil || !o.Watch {
		return err
	}
	last := out + notes
	return watch(ctx, inf, o.Debounce, func() error {
		out, notes, err := once()
		if err != nil || out+notes == last {
			return err // print only what changed
		}
		last = out + notes
		if o.Output != "json" {
			out = "\n" + out // a blank line between two tables or name lists
		}
		return show(out, notes)
	})
}

// watch calls rerun after every change to the informer's objects, once the changes have
// paused for debounce, until ctx ends. It returns nil when ctx ends.
func watch(ctx context.Context, inf *dynamicinformer.Informer, debounce time.Duration, rerun func() error) error {
	changed := make(chan struct{}, 1)
	poke := func() { // never blocks the handler: one pending change is enough
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		select { // let a burst of changes settle
		case <-ctx.Done():
			return nil
		case <-time.After(debounce):
		}
		select {
		case <-changed: // covered by this run
		default:
		}
		if err := rerun(); err != nil {
			return err
		}
	}
}

// resolveError is a resource that did not resolve, with names to suggest.
type resolveError struct {
	input      string
	err        error
	candidates []discovery.Resource // for an ambiguous name
	suggest    []string             // for an unknown one
}

func (e *resolveError) Error() string { return e.err.Error() }
func (e *resolveError) Unwrap() error { return e.err }

// describe is the message for the terminal.
func (e *resolveError) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kquery: %v\n", e.err)
	if len(e.candidates) > 0 {
		b.WriteString("candidates:\n")
		for _, c := range e.candidates {
			fmt.Fprintf(&b, "  %-40s kind %s, %s\n", qualified(c), c.GVK.Kind, c.GVR.GroupVersion())
		}
	}
	if len(e.suggest) > 0 {
		fmt.Fprintf(&b, "did you mean %s?\n", strings.Join(e.suggest, ", "))
	}
	return b.String()
}

func resolveFailed(ctx context.Context, disc *discovery.Client, input string, err error) error {
	re := &resolveError{input: input, err: err}
	var amb *discovery.AmbiguousError
	if errors.As(err, &amb) {
		re.candidates = amb.Candidates
		return re
	}
	if all, _ := disc.Resources(ctx, discovery.Filter{}); len(all) > 0 { // partial is fine for hints
		re.suggest = suggest(input, all, 3)
	}
	return re
}

// newLogger sends kindex's logs (and its reflectors') to w: errors always, informational
// lines from -v 1 on (-v N shows V(N-1)). A one-shot command reports what matters itself
// (a *SyncError says why an informer did not sync), so informational lines stay off by
// default.
func newLogger(w io.Writer, v int) logr.Logger {
	return funcr.New(func(prefix, args string) {
		if prefix != "" {
			prefix += ": "
		}
		fmt.Fprintf(w, "kquery: %s%s\n", prefix, args)
	}, funcr.Options{Verbosity: v - 1})
}
