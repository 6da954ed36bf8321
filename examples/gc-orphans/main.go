// Command gc-orphans is a garbage-collector-style watcher built on kindex: it watches the
// metadata of every listable resource (metadataonly.Factory.WatchAll, minus events by
// default), follows CRDs as they are added and deleted, and reports from its caches
//
//   - the dependents of an owner (--owner-uid): every cached object, of any resource, with an
//     owner reference to that UID (Factory.Dependents);
//   - the orphans: objects whose every owner is gone (Factory.Orphans), which a garbage
//     collector would delete after confirming with a GET;
//   - the dangling references beside owner references (package refs): a Pod mounting a
//     ConfigMap that does not exist, a RoleBinding to a deleted Role, an Ingress to a
//     missing Service (--references, on by default).
//
// With --once it waits for the initial lists, prints one report and exits. Otherwise it
// prints discovery and informer status changes as they happen and a report every --interval,
// until Ctrl-C.
//
//	go run ./examples/gc-orphans --once
//	go run ./examples/gc-orphans --owner-uid 0e1c...-... --interval 10s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kindex/kindex/discovery"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command; it returns the exit code (0 also when stopped with Ctrl-C).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gc-orphans", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	kubecontext := fs.String("context", "", "the kubeconfig context to use (default: the current context)")
	owner := fs.String("owner-uid", "", "print the dependents of the object with this UID")
	once := fs.Bool("once", false, "print one report once everything has synced, then exit")
	interval := fs.Duration("interval", 30*time.Second, "time between two reports")
	syncTimeout := fs.Duration("sync-timeout", time.Minute, "how long to wait for the initial lists before the first report")
	excludeGroups := fs.String("exclude-groups", "events.k8s.io", "comma-separated API groups not to watch")
	excludeResources := fs.String("exclude-resources", "events,endpoints", "comma-separated resources (plural.group) not to watch (endpoints: deprecated, superseded by endpointslices)")
	references := fs.Bool("references", true, "also report dangling references (a Pod mounting a missing ConfigMap, a RoleBinding to a missing Role, ...): watches the fields of Pods, workloads, bindings and the like, compactly")
	verbosity := fs.Int("v", 0, "kindex log verbosity on stderr: 0 errors only, 1 informer transitions, 2 and up more detail")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 || *interval <= 0 || *syncTimeout <= 0 {
		fmt.Fprintln(stderr, "gc-orphans: takes no arguments; --interval and --sync-timeout must be positive")
		return 1
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: *kubecontext}).ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "gc-orphans: %v\n", err)
		return 1
	}
	// kindex's logs: errors always, informational lines from -v 1 on (the status lines
	// printed while following already show informers parking and resuming).
	logger := funcr.New(func(prefix, args string) { fmt.Fprintf(stderr, "gc-orphans: %s %s\n", prefix, args) },
		funcr.Options{Verbosity: *verbosity - 1})
	filter := discovery.Filter{ExcludeGroups: split(*excludeGroups), ExcludeResources: split(*excludeResources)}

	if err := watch(ctx, cfg, filter, *references, logger, types.UID(*owner), *once, *interval, *syncTimeout, stdout); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return 0 // Ctrl-C
		}
		fmt.Fprintf(stderr, "gc-orphans: %v\n", err)
		return 1
	}
	return 0
}

func split(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
