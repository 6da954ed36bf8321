// Command plugin shows kindex embedded in a host program that has a lifetime of its own.
// The host starts; the plugin's Start creates a factory, acquires the informers it needs
// (its settings ConfigMap, selected on the server by name, and a custom resource), adds
// event handlers and a JSONPath index, and then serves counts of the objects by index value,
// printed every few seconds. When the host shuts down (Ctrl-C), the plugin's Stop releases
// the informers and shuts the factory down: no goroutine is left behind (see the test).
//
//	go run ./examples/plugin -namespace kindex-demo-1
//	go run ./examples/plugin -namespace prod -resource deployments.apps -index '{.spec.replicas}'
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
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the host: it starts the plugin, runs until ctx ends and stops the plugin.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var opts Options
	fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	kubecontext := fs.String("context", "", "the kubeconfig context to use (default: the current context)")
	fs.StringVar(&opts.Namespace, "namespace", "kindex-demo-1", "the namespace the plugin works in")
	fs.StringVar(&opts.Resource, "resource", "widgets.demo.kindex.io", "the resource to count")
	fs.StringVar(&opts.Index, "index", "{.status.phase}", "the JSONPath whose values are counted")
	fs.StringVar(&opts.ConfigMap, "configmap", "kindex-plugin", `the plugin's ConfigMap; key "values": the values to count, comma-separated`)
	fs.DurationVar(&opts.Interval, "interval", 5*time.Second, "time between two reports")
	startTimeout := fs.Duration("start-timeout", 30*time.Second, "how long the host gives the plugin to start")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: *kubecontext}).ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "host: %v\n", err)
		return 1
	}
	opts.Out = stdout

	fmt.Fprintln(stdout, "host: starting the plugin")
	p, err := New(cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "host: %v\n", err)
		return 1
	}
	startCtx, cancel := context.WithTimeout(ctx, *startTimeout)
	err = p.Start(startCtx)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "host: the plugin did not start: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "host: plugin running (Ctrl-C to stop)")

	<-ctx.Done() // the host's work would happen here

	fmt.Fprintln(stdout, "host: shutting down")
	p.Stop()
	fmt.Fprintln(stdout, "host: plugin stopped")
	return 0
}
