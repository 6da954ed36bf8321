package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/demoenv"
	"github.com/kindex/kindex/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

// seedOnce seeds the demo objects once for the package's tests.
func seedDemo(t *testing.T) *demoenv.Seed {
	t.Helper()
	seedMu.Lock()
	defer seedMu.Unlock()
	if seeded == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := demoenv.Apply(ctx, cp.AdminConfig(), demoenv.Options{})
		require.NoError(t, err)
		seeded = s
	}
	return seeded
}

// expect lists namespace/name of the seeded widgets that match, in the order queries return
// them: by namespace, then name.
func expect(s *demoenv.Seed, match func(demoenv.Widget) bool) []string {
	var out []string
	for _, w := range s.Widgets { // seeded in namespace, then name order
		if match(w) {
			out = append(out, w.Namespace+"/"+w.Name)
		}
	}
	return out
}

func TestQuickstartQueriesSeededObjects(t *testing.T) {
	s := seedDemo(t)
	ns := s.Namespaces[1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	sections, err := quickstart(ctx, cp.AdminConfig(), demoenv.WidgetResource, ns, &out)
	require.NoError(t, err, out.String())
	require.Len(t, sections, 4)

	want := [][]string{
		expect(s, func(w demoenv.Widget) bool { return w.Phase == "Running" }),
		expect(s, func(w demoenv.Widget) bool { return w.Size >= 3 && w.Size < 6 }),
		expect(s, func(w demoenv.Widget) bool { return w.Phase == "Failed" && w.Size > 7 }),
		expect(s, func(w demoenv.Widget) bool { return w.Namespace == ns && w.Phase == "Pending" }),
	}
	for k, sec := range sections {
		assert.NotEmpty(t, want[k], "the seed has matches for %q", sec.Title)
		assert.Equal(t, want[k], sec.Names(), sec.Title)
	}
	// The equality and the AND are answered from an index, not by visiting everything.
	assert.Equal(t, "phase=Running", sections[0].Pages[0].Plan.Driver)
	assert.Equal(t, len(want[0]), sections[0].Pages[0].Plan.Candidates)
	// The namespaced query comes in pages of 5 chained by continue tokens.
	var sizes []int
	for _, p := range sections[3].Pages {
		sizes = append(sizes, len(p.Items))
	}
	assert.Equal(t, []int{5, 5, 5, 1}, sizes)

	text := out.String()
	for _, line := range []string{
		"widgets.demo.kindex.io is demo.kindex.io/v1, Resource=widgets, kind Widget, namespaced, short names [wdg]",
		"Synced, 240 objects",
		fmt.Sprintf("phase = Running (equality): %d matches", len(want[0])),
		"page 4: widget-078",
	} {
		assert.Contains(t, text, line)
	}
}

// The command end to end: kubeconfig loading rules, a short name, the exit code.
func TestRunWithKubeconfig(t *testing.T) {
	s := seedDemo(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, demoenv.WriteKubeconfig(kubeconfig, cp.AdminConfig(), "default"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-kubeconfig", kubeconfig, "-context", "kindex", "-resource", "wdg", "-namespace", s.Namespaces[0]}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	assert.Contains(t, stdout.String(), `== 1. resolve "wdg" and start an informer`)
	assert.True(t, strings.HasSuffix(stdout.String(), "done\n"))

	stdout.Reset()
	stderr.Reset()
	code = run(ctx, []string{"-kubeconfig", kubeconfig, "-resource", "gadgets.nowhere.io"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), `doesn't have a resource type "gadgets.nowhere.io"`)

	stdout.Reset()
	stderr.Reset()
	code = run(ctx, []string{"-kubeconfig", kubeconfig, "-context", "missing"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), `context "missing" does not exist`)
}

var (
	seedMu sync.Mutex
	seeded *demoenv.Seed
)
