package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// readmeExample returns the Go program under "## A short example" in the repository's
// README.md.
func readmeExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "## A short example\n")
	require.True(t, ok, "README.md has no \"A short example\" section")
	_, code, ok := strings.Cut(after, "```go\n")
	require.True(t, ok, "no Go code block in the section")
	code, _, ok = strings.Cut(code, "\n```")
	require.True(t, ok, "unterminated code block")
	return code + "\n"
}

// The README's example is a complete program: it builds from the README's text as printed,
// and, run against a control plane seeded like `make demo` with a kubeconfig in $KUBECONFIG,
// or in ~/.kube/config when $KUBECONFIG is unset, prints the red widgets of kindex-demo-1
// larger than 6.
func TestREADMEExample(t *testing.T) {
	code := readmeExample(t)

	// Built inside this module (testdata is outside ./... patterns), so that it compiles
	// against this checkout of kindex.
	dir, err := os.MkdirTemp("testdata", "readme-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644))
	bin := filepath.Join(t.TempDir(), "readme-example")
	goTool := testsupport.GoTool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./"+filepath.ToSlash(dir)).CombinedOutput()
	require.NoError(t, err, "go build of the README example:\n%s", out)

	// The demo's CRD and a few widgets.
	cp.InstallCRD(t, testenv.NewCRD("demo.kindex.io", "Widget", "widgets"))
	a := newApplier(t)
	var docs []string
	want := []string{}
	for i, w := range []struct {
		ns, color string
		size      int
	}{
		{"kindex-demo-1", "red", 7}, {"kindex-demo-1", "red", 9}, {"kindex-demo-1", "blue", 9},
		{"kindex-demo-1", "red", 3}, {"kindex-demo-1", "red", 10}, {"kindex-demo-2", "red", 9},
	} {
		name := fmt.Sprintf("widget-%03d", i)
		docs = append(docs, fmt.Sprintf("apiVersion: demo.kindex.io/v1\nkind: Widget\nmetadata: {name: %s, namespace: %s}\nspec: {size: %d, color: %s}", name, w.ns, w.size, w.color))
		if w.ns == "kindex-demo-1" && w.color == "red" && w.size > 6 {
			want = append(want, name)
		}
	}
	namespace(t, "kindex-demo-1")
	namespace(t, "kindex-demo-2")
	a.apply(t, "", strings.Join(docs, "\n---\n"))

	kubeconfig := writeKubeconfig(t, cp.AdminConfig(), "default")
	run := exec.CommandContext(ctx, bin)
	run.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, strings.Join(want, "\n")+"\n", string(out))

	// Without $KUBECONFIG it reads ~/.kube/config, as the README says and kubectl does.
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, ".kube"), 0o700))
	kc, err := os.ReadFile(kubeconfig)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".kube", "config"), kc, 0o600))
	run = exec.CommandContext(ctx, bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			run.Env = append(run.Env, kv)
		}
	}
	run.Env = append(run.Env, "HOME="+home)
	out, err = run.CombinedOutput()
	require.NoError(t, err, "with ~/.kube/config: %s", out)
	assert.Equal(t, strings.Join(want, "\n")+"\n", string(out), "with ~/.kube/config")
}
