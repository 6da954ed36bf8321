package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/internal/testsupport"
)

// BenchmarkPeakRSS measures what one run of the command costs on 5,000 Pods (the comparison
// harness's, bench/harness.ExtraPod, without their status): the built binary lists
// them into its cache and prints a page of 10, in a process of its own; it reports the
// median peak RSS and wall time of the runs.
//
//	go test -run '^$' -bench PeakRSS -benchtime 5x ./cmd/kubectl-kquery/
func BenchmarkPeakRSS(b *testing.B) {
	ns := cp.Namespace(b)
	cs := cp.Clientset(b)
	const n = 5000
	testsupport.CreateN(b, n, func(i int) error {
		_, err := cs.CoreV1().Pods(ns).Create(context.Background(), harness.ExtraPod(ns, "pod-"+strconv.Itoa(i), i), metav1.CreateOptions{})
		return err
	})
	bin := filepath.Join(b.TempDir(), "kubectl-kquery")
	if out, err := exec.Command(testsupport.GoTool(b), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	kubeconfig := writeKubeconfig(b, cp.AdminConfig(), ns)
	var rss []int64
	var wall []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "pods", "--limit", "10")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		wall = append(wall, time.Since(start))
		rss = append(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB
	}
	slices.Sort(rss)
	slices.Sort(wall)
	b.ReportMetric(float64(rss[len(rss)/2])/1024, "peak-RSS-MiB")
	b.ReportMetric(wall[len(wall)/2].Seconds(), "wall-s")
	b.Logf("%d Pods; peak RSS %v KiB; wall %v", n, rss, wall)
}
