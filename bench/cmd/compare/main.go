// Command compare measures kindex against client-go on the same objects in one run: it starts
// a control plane (or uses -kubeconfig), seeds N realistic pods and N/10 custom resources,
// measures every registered subject in fresh child processes, prints a Markdown table with
// ratios and writes the results to <out>/compare-<N>.json and .md. See bench/harness.
//
// -server (with -token-file and -ca-file) measures an apiserver that is already running
// instead; its seed is resumed, or skipped if complete.
//
//	go run ./bench/cmd/compare -n 20000        # or: make bench-compare BENCH_N=20000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/internal/testenv"
)

func main() {
	// A child measures one subject and exits: before flags, before any control plane.
	if harness.IsChild() {
		os.Exit(harness.RunChild())
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		opts     harness.Options
		subjects string
		server   server
		out      string
		list     bool
	)
	flag.IntVar(&opts.N, "n", 20000, "number of pods to seed and measure")
	flag.IntVar(&opts.M, "m", 0, "number of Database custom resources (0: n/10, negative: none)")
	flag.IntVar(&opts.Runs, "runs", 3, "measurements per subject, each in a fresh child process")
	flag.StringVar(&subjects, "subjects", "", "comma-separated subject names (default: all but the optional ones; see -list)")
	flag.StringVar(&opts.Namespace, "namespace", "", "namespace of the seeded objects (default kindex-bench-<n>)")
	flag.IntVar(&opts.Workers, "workers", 32, "seeding concurrency")
	flag.DurationVar(&opts.ChildTimeout, "child-timeout", 15*time.Minute, "bound on one measurement")
	flag.BoolVar(&opts.NoWarmup, "no-warmup", false, "skip the unrecorded warm-up LIST")
	flag.StringVar(&server.url, "server", "", "URL of a running apiserver to measure instead of starting a control plane")
	flag.StringVar(&server.tokenFile, "token-file", "", "with -server: file holding an admin bearer token")
	flag.StringVar(&server.caFile, "ca-file", "", "with -server: CA bundle of the apiserver's serving certificate")
	flag.StringVar(&server.pids, "server-pids", "", "with -server: comma-separated ids of the apiserver and etcd processes on this machine, to report their CPU time")
	flag.StringVar(&out, "out", "bench/results", "directory for compare-<n>.json and compare-<n>.md")
	flag.BoolVar(&list, "list", false, "list the registered subjects and exit")
	flag.StringVar(&opts.HeapProfileDir, "memprofile", "", "directory for a heap profile of what every subject holds after its sync (<subject>-<resource>-<run>.heap.pprof; slows syncs down)")
	flag.StringVar(&opts.CPUProfileDir, "cpuprofile", "", "directory for a CPU profile of every measured sync (<subject>-<resource>-<run>.pprof)")
	flag.Parse()
	if list {
		for _, s := range harness.Subjects() {
			if o, ok := s.(harness.Optional); ok && o.Optional() {
				fmt.Println(s.Name(), "(optional)")
				continue
			}
			fmt.Println(s.Name())
		}
		return nil
	}
	if subjects != "" {
		opts.Subjects = strings.Split(subjects, ",")
	}
	opts.Command = "go run ./bench/cmd/compare " + strings.Join(os.Args[1:], " ")
	opts.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, cleanup, err := server.config(&opts)
	if err != nil {
		return err
	}
	defer cleanup()

	rep, runErr := harness.Run(ctx, cfg, opts)
	if rep == nil {
		return runErr
	}
	md := rep.Markdown()
	fmt.Println(md)
	if err := write(out, rep, md); err != nil {
		return err
	}
	return runErr
}

// server is a running apiserver given on the command line; empty means start one here.
type server struct{ url, tokenFile, caFile, pids string }

// config returns an admin config for the apiserver, starting a control plane if none was
// given, and a function that stops what it started.
func (s server) config(opts *harness.Options) (*rest.Config, func(), error) {
	if s.url != "" {
		cfg := &rest.Config{
			Host: s.url, BearerTokenFile: s.tokenFile, QPS: 1000, Burst: 2000,
			TLSClientConfig: rest.TLSClientConfig{CAFile: s.caFile},
		}
		if s.pids != "" {
			var pids []int
			for _, f := range strings.Split(s.pids, ",") {
				pid, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return nil, nil, fmt.Errorf("-server-pids: %w", err)
				}
				pids = append(pids, pid)
			}
			opts.ServerPIDs = func() []int { return pids }
		}
		return cfg, func() {}, nil
	}
	fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver", testenv.KubeAPIServerVersion)
	cp, err := testenv.Start(testenv.Options{ExtraAPIServerArgs: harness.APIServerArgs})
	if err != nil {
		return nil, nil, err
	}
	opts.APIServer = "kube-apiserver " + testenv.KubeAPIServerVersion + ", etcd " + testenv.EtcdVersion + " (internal/testenv)"
	opts.ServerPIDs = cp.PIDs
	opts.Parent.CompactEtcd = func(ctx context.Context) error { _, err := cp.CompactEtcd(ctx); return err }
	opts.Parent.RestartAPIServer = func(ctx context.Context) error { return cp.RestartAPIServer(ctx, syscall.SIGTERM) }
	return cp.AdminConfig(), cp.Stop, nil
}

func write(dir string, rep *harness.Report, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, "compare-"+strconv.Itoa(rep.N))
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".md", []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s.json and %s.md\n", base, base)
	return nil
}
