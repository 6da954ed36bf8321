// Command compare measures how much heap controller-runtime's default cache and crcache hold
// for the same objects, in the same run: it starts a control plane (bench/harness's), seeds N
// realistic Pods (and N/10 custom resources unless -m -1), and syncs each subject in a fresh
// child process, reading the heap after GC while the cache is held. It prints the harness's
// table and a summary of crcache against controller-runtime.
//
//	cd crcache && go run ./cmd/compare -n 20000 -runs 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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
		list     bool
	)
	flag.IntVar(&opts.N, "n", 20000, "number of pods to seed and measure")
	flag.IntVar(&opts.M, "m", -1, "number of Database custom resources (0: n/10, negative: none)")
	flag.IntVar(&opts.Runs, "runs", 3, "measurements per subject, each in a fresh child process")
	flag.StringVar(&subjects, "subjects", strings.Join(defaultSubjects, ","), "comma-separated subject names (see -list)")
	flag.IntVar(&opts.Workers, "workers", 16, "seeding concurrency")
	flag.DurationVar(&opts.ChildTimeout, "child-timeout", 15*time.Minute, "bound on one measurement")
	flag.BoolVar(&list, "list", false, "list the registered subjects and exit")
	flag.Parse()
	if list {
		for _, s := range harness.Subjects() {
			fmt.Println(s.Name())
		}
		return nil
	}
	opts.Subjects = strings.Split(subjects, ",")
	opts.Command = "cd crcache && go run ./cmd/compare " + strings.Join(os.Args[1:], " ")
	opts.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver", testenv.KubeAPIServerVersion)
	cp, err := testenv.Start(testenv.Options{ExtraAPIServerArgs: harness.APIServerArgs})
	if err != nil {
		return err
	}
	defer cp.Stop()
	opts.APIServer = "kube-apiserver " + testenv.KubeAPIServerVersion + ", etcd " + testenv.EtcdVersion + " (internal/testenv)"
	opts.ServerPIDs = cp.PIDs

	rep, runErr := harness.Run(ctx, cp.AdminConfig(), opts)
	if rep == nil {
		return runErr
	}
	fmt.Println(rep.Markdown())
	fmt.Println(summary(rep))
	return runErr
}

// summary compares every subject's median held heap with controller-runtime's default cache
// in the same run.
func summary(rep *harness.Report) string {
	var b strings.Builder
	for _, d := range rep.Datasets {
		var base float64
		for _, s := range d.Subjects {
			if s.Name == subjectCRDefault {
				base = float64(s.Median.HeapBytes)
			}
		}
		fmt.Fprintf(&b, "\n%s, N=%d, medians of %d: held heap against controller-runtime's default cache\n\n", d.Resource, d.Count, rep.Runs)
		fmt.Fprintf(&b, "| subject | held heap | per object | x controller-runtime | sync time | client CPU |\n|---|---:|---:|---:|---:|---:|\n")
		for _, s := range d.Subjects {
			if strings.HasPrefix(s.Name, "apiserver-") {
				continue // a floor: its "heap" is the LIST body, not a cache
			}
			if s.Error != "" || s.NotSupported {
				fmt.Fprintf(&b, "| %s | n/a | | | | |\n", s.Name)
				continue
			}
			ratio := "-"
			if base > 0 {
				ratio = fmt.Sprintf("%.3f", float64(s.Median.HeapBytes)/base)
			}
			fmt.Fprintf(&b, "| %s | %.1f MB | %.0f B | %s | %.2f s | %.2f s |\n", s.Name,
				float64(s.Median.HeapBytes)/1e6, s.Median.HeapPerObject, ratio, s.Median.Seconds, s.Median.CPUSeconds)
		}
	}
	return b.String()
}
