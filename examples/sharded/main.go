// Command sharded is kquery's count mode run as N replicas: each replica holds only its
// share of a resource's objects (by UID hash), and the replicas agree on the shares through
// Leases (package shard). Each prints, every --interval, how many objects it holds; the
// total is the sum over the replicas (a query across shards asks every replica).
//
// Run it as a Deployment with N replicas (the Pod name as --identity), or by hand:
//
//	go run ./examples/sharded --lease-namespace default --identity a pods &
//	go run ./examples/sharded --lease-namespace default --identity b pods &
//
// The apiserver filters by shard when it runs with --feature-gates=ShardedListAndWatch=true
// (Kubernetes 1.36 and later); otherwise each replica still receives every object and
// kindex drops the others' (filter=client in the report). Each replica needs get, list,
// create, update and delete on leases.coordination.k8s.io in --lease-namespace (members
// list the group's Leases; they do not watch them), and list and watch on the resource.
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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/shard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command; it returns the exit code (0 also when stopped with Ctrl-C).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sharded", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	kubecontext := fs.String("context", "", "the kubeconfig context to use (default: the current context)")
	host, _ := os.Hostname()
	identity := fs.String("identity", host, "this replica's name, unique among the replicas (the Pod name)")
	leaseNS := fs.String("lease-namespace", "", "namespace of the replicas' Leases (required)")
	group := fs.String("group", "sharded", "name of the set of replicas (Lease prefix)")
	namespace := fs.String("n", "", "namespace of the objects (default: all namespaces)")
	_ = fs.Bool("A", false, "all namespaces (the default; for kquery's habit)")
	byNamespace := fs.Bool("by-namespace", false, "shard by namespace instead of UID (a namespace's objects stay together)")
	interval := fs.Duration("interval", 10*time.Second, "time between two reports")
	lease := fs.Duration("lease-duration", 15*time.Second, "how long a dead replica keeps its range (whole seconds)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	// A --lease-duration of 0 would be shard.Options' default for the Lease, but no time at
	// all for the handoff on SIGTERM, which waits at most one Lease duration.
	if fs.NArg() != 1 || *leaseNS == "" || *identity == "" || *interval <= 0 || *lease <= 0 {
		fmt.Fprintln(stderr, "usage: sharded --lease-namespace NS [--identity NAME] [--lease-duration D > 0] RESOURCE")
		return 1
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: *kubecontext}).ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "sharded: %v\n", err)
		return 1
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sharded: %v\n", err)
		return 1
	}
	field := informer.ShardByUID
	if *byNamespace {
		field = informer.ShardByNamespace
	}
	m, err := shard.New(shard.Options{Client: cs, Namespace: *leaseNS, Group: *group, Identity: *identity,
		Field: field, LeaseDuration: *lease})
	if err != nil {
		fmt.Fprintf(stderr, "sharded: %v\n", err)
		return 1
	}
	f, err := metadataonly.NewFactory(cfg, metadataonly.Options{Namespace: *namespace})
	if err != nil {
		fmt.Fprintf(stderr, "sharded: %v\n", err)
		return 1
	}
	// The replica outlives ctx (Ctrl-C, SIGTERM) by the time it takes to hand its range
	// over (Member.Leave), at most one Lease duration.
	stopped := ctx
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if err := f.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "sharded: %v\n", err)
		return 1
	}
	defer f.Shutdown()
	inf, err := shard.NewInformer(m, f, fs.Arg(0), shard.InformerOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "sharded: %v\n", err)
		return 1
	}
	errs := make(chan error, 2)
	go func() { errs <- m.Run(ctx) }()
	go func() { errs <- inf.Run(ctx) }()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		select {
		case err := <-errs:
			cancel()
			<-errs
			if errors.Is(err, context.Canceled) {
				return 0
			}
			fmt.Fprintf(stderr, "sharded: %v\n", err)
			return 1
		case <-stopped.Done():
			leaveCtx, done := context.WithTimeout(ctx, *lease)
			if err := m.Leave(leaveCtx); err != nil {
				fmt.Fprintf(stderr, "sharded: range not handed over (the last replica?): %v\n", err)
			}
			done()
			cancel()
			<-errs
			<-errs
			return 0
		case <-tick.C:
			report(stdout, *identity, m, inf)
		}
	}
}

// report prints one line: what this replica holds, and whether that is settled.
func report(w io.Writer, id string, m *shard.Member, inf *shard.Informer[metadataonly.Object]) {
	objs, err := inf.List()
	if err != nil {
		fmt.Fprintf(w, "replica=%s error=%q\n", id, err)
		return
	}
	a, _ := m.Assignment()
	filter := informer.ShardFilter("")
	for _, i := range inf.Informers() {
		if st := i.Status(); st.ShardFilter != "" {
			filter = st.ShardFilter
		}
	}
	fmt.Fprintf(w, "replica=%s members=%d settled=%v objects=%d filter=%s shard=%q\n",
		id, len(m.Members()), inf.Settled(), len(objs), filter, a)
}
