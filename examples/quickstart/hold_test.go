package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kindex/kindex/internal/demoenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// `make demo DEMO_FLAGS=-hold`: the demo walks through, then keeps its control plane
// running for the other examples, whose clients reach it with the kubeconfig it prints;
// Ctrl-C stops it and exits 0.
func TestHeldDemoServesUntilCtrlC(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "quickstart")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, testsupport.GoTool(t), "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.CommandContext(ctx, bin, "-local", "-hold")
	var stdout, stderr testsupport.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // copied until the process exits: Wait sees all
	require.NoError(t, cmd.Start())
	output := stdout.String
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(output(), "\ndone\n") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the walk-through did not finish:\n%s\n%s", output(), stderr.String())
		}
		time.Sleep(100 * time.Millisecond) // polling output a child writes: no event to await
	}
	var kubeconfig string
	for _, line := range strings.Split(output(), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "export KUBECONFIG="); ok {
			kubeconfig = p
		}
	}

	// Held: a client of another example reaches the seeded control plane.
	require.NotEmpty(t, kubeconfig, "the kubeconfig to export is printed:\n%s", output())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	widgets, err := dyn.Resource(demoenv.WidgetGVR).Namespace("kindex-demo-1").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, widgets.Items)

	// Ctrl-C: the control plane stops and the process exits 0.
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status 0 after Ctrl-C:\n%s\n%s", output(), stderr.String())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("still running a minute after Ctrl-C:\n%s", output())
	}
	assert.Contains(t, output(), "stopping the local control plane")
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	_, err = dyn.Resource(demoenv.WidgetGVR).Namespace("kindex-demo-1").List(lctx, metav1.ListOptions{})
	assert.Error(t, err, "the control plane is gone")
}
