// Command quickstart walks through kindex in four steps: it resolves a resource from what a
// user typed (by default the demo CRD widgets.demo.kindex.io), starts an informer for it,
// registers two JSONPath expressions as indexes ({.spec.size} and {.status.phase}) and
// answers queries from the cache: an equality, a numeric range, an AND, and a namespaced
// query read page by page.
//
// It runs against the cluster of the current kubeconfig (standard loading rules: -kubeconfig,
// $KUBECONFIG, ~/.kube/config; -context picks a context), or with -local against a control
// plane it starts on loopback and seeds itself (`make demo`). -seed writes the demo CRD and
// objects to the kubeconfig's cluster first and removes them at the end.
//
//	go run ./examples/quickstart -local
//	go run ./examples/quickstart -seed -context kind-kind
//	go run ./examples/quickstart -resource deployments.apps
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	// Ctrl-C cancels ctx; everything started below stops with it, the local control plane
	// included, before main returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type options struct {
	resource   string
	namespace  string
	kubeconfig string
	context    string
	local      bool
	seed       bool
	keep       bool
	hold       bool
}

// run is main without the process: it parses args, connects, runs the quickstart and
// returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.resource, "resource", "widgets.demo.kindex.io", "the resource to watch, as you would type it for kubectl")
	fs.StringVar(&o.namespace, "namespace", "kindex-demo-1", "the namespace of the paged query")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use (default: the current context)")
	fs.BoolVar(&o.local, "local", false, "start a local control plane (built by make controlplane), seed it and run against it")
	fs.BoolVar(&o.seed, "seed", false, "write the demo CRD and objects to the kubeconfig's cluster first, and delete them at the end")
	fs.BoolVar(&o.keep, "keep", false, "with -seed: keep the demo objects at the end")
	fs.BoolVar(&o.hold, "hold", false, "with -local: keep the control plane running after the walk-through, until Ctrl-C")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quickstart: unexpected arguments %q\n", fs.Args())
		return 1
	}

	cfg, cleanup, err := connect(ctx, o, stdout)
	defer cleanup() // runs before run returns: the control plane stops on every path
	if err == nil {
		_, err = quickstart(ctx, cfg, o.resource, o.namespace, stdout)
	}
	if err != nil {
		if ctx.Err() != nil { // Ctrl-C
			fmt.Fprintln(stderr, "quickstart: interrupted")
			return 130
		}
		fmt.Fprintf(stderr, "quickstart: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "\ndone")
	if o.hold && o.local {
		<-ctx.Done()
	}
	return 0
}

// connect returns the config to use and a function that undoes what connect started.
func connect(ctx context.Context, o options, out io.Writer) (*rest.Config, func(), error) {
	if o.local {
		return startLocal(ctx, o, out)
	}
	// The standard kubeconfig loading rules, as kubectl applies them.
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, func() {}, err
	}
	if !o.seed {
		return cfg, func() {}, nil
	}
	return seed(ctx, cfg, o, out)
}
