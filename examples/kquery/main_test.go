package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/examples/internal/demoenv"
	"github.com/kindex/kindex/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

var (
	seedOnce   sync.Once
	seed       *demoenv.Seed
	seedErr    error
	kubeconfig string // current context "kindex", namespace: the first seeded namespace
)

// setup seeds the demo objects once and writes a kubeconfig whose context's namespace is
// the first seeded namespace.
func setup(t *testing.T) {
	t.Helper()
	seedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if seed, seedErr = demoenv.Apply(ctx, cp.AdminConfig(), demoenv.Options{}); seedErr != nil {
			return
		}
		kubeconfig = filepath.Join(cp.Dir(), "kquery-kubeconfig")
		seedErr = demoenv.WriteKubeconfig(kubeconfig, cp.AdminConfig(), seed.Namespaces[0])
	})
	require.NoError(t, seedErr)
}

// kquery runs the command with the test kubeconfig and returns its exit code and output.
func kquery(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut testWriter
	code = run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func widgetNames(match func(demoenv.Widget) bool, format string) []string {
	var out []string
	for _, w := range seed.Widgets {
		if match(w) {
			out = append(out, fmt.Sprintf(format, w.Namespace, w.Name))
		}
	}
	return out
}

// A built-in resource, an index, a --where on it: only the context's namespace, as kubectl.
func TestBuiltinWithIndexAndWhere(t *testing.T) {
	setup(t)
	code, stdout, stderr := kquery(t, "configmaps", "--index", "n={.data.index}", "--where", "n<3", "-l", "app=kindex-demo", "--explain")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.Equal(t, []string{"NAMESPACE", "NAME", "N", "AGE"}, strings.Fields(lines[0]))
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		assert.Equal(t, []string{seed.Namespaces[0], fmt.Sprintf("config-%02d", i), fmt.Sprint(i)}, f[:3])
	}
	assert.Contains(t, stderr, `plan: candidates from "n<3": 3 candidates, 3 matched`, "answered from the index")

	// -n overrides the context's namespace; a JSONPath --where scans.
	code, stdout, stderr = kquery(t, "cm", "-n", seed.Namespaces[2], "--where", "{.data.index}=7", "-o", "name", "--explain")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "configmap/config-07\n", stdout)
	assert.Contains(t, stderr, `plan: candidates from "scan"`)
}

// A CRD's short name, an index on a custom field, -o name.
func TestCRDShortName(t *testing.T) {
	setup(t)
	code, stdout, stderr := kquery(t, demoenv.WidgetShort, "--index", "phase={.status.phase}", "--index", "size={.spec.size}",
		"--where", "phase=Failed", "--where", "size>=5", "-o", "name")
	require.Equal(t, 0, code, stderr)
	want := widgetNames(func(w demoenv.Widget) bool {
		return w.Namespace == seed.Namespaces[0] && w.Phase == "Failed" && w.Size >= 5
	}, "widget.demo.kindex.io/%[2]s")
	require.NotEmpty(t, want)
	assert.Equal(t, strings.Join(want, "\n")+"\n", stdout)

	// A path that yields a map indexes nothing, and says so.
	code, _, stderr = kquery(t, demoenv.WidgetShort, "--index", "spec={.spec}", "-o", "name")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "kquery: --index spec: 80 objects have values that cannot be indexed")
}

// -o json across every namespace, with --limit.
func TestJSONAllNamespaces(t *testing.T) {
	setup(t)
	code, stdout, stderr := kquery(t, "widgets.demo.kindex.io", "-A", "--where", ".spec.size>=10", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var list struct {
		Kind  string
		Items []struct {
			Metadata struct{ Namespace, Name string }
			Spec     struct{ Size int }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &list), stdout)
	assert.Equal(t, "List", list.Kind)
	var got []string
	for _, it := range list.Items {
		assert.Equal(t, 10, it.Spec.Size)
		got = append(got, it.Metadata.Namespace+"/"+it.Metadata.Name)
	}
	want := widgetNames(func(w demoenv.Widget) bool { return w.Size >= 10 }, "%s/%s")
	assert.Equal(t, want, got)
	assert.Greater(t, len(seed.Namespaces), 1)

	code, stdout, stderr = kquery(t, "widgets.demo.kindex.io", "-A", "--where", ".spec.size>=10", "-o", "json", "--limit", "2")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	assert.Len(t, list.Items, 2)
	assert.Contains(t, stderr, fmt.Sprintf("(2 of %d matches shown", len(want)))
}

func TestUnknownResource(t *testing.T) {
	setup(t)
	code, stdout, stderr := kquery(t, "wigdets")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `kquery: discovery: the server doesn't have a resource type "wigdets"`)
	assert.Contains(t, stderr, "did you mean widgets.demo.kindex.io?")
}

func TestAmbiguousResource(t *testing.T) {
	setup(t)
	for _, group := range []string{"a.kquery.io", "b.kquery.io"} {
		cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	}
	code, _, stderr := kquery(t, "gadgets")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `"gadgets" is ambiguous`)
	assert.Contains(t, stderr, "candidates:\n  gadgets.a.kquery.io")
	assert.Contains(t, stderr, "\n  gadgets.b.kquery.io")
	code, _, stderr = kquery(t, "gadgets.b.kquery.io")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "No resources found in "+seed.Namespaces[0]+" namespace.\n", stderr)
}

func TestMalformedJSONPath(t *testing.T) {
	setup(t)
	code, stdout, stderr := kquery(t, "pods", "--index", "node={.spec.nodeName[?(@.x ~ 1)]}")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	lines := strings.Split(stderr, "\n")
	require.GreaterOrEqual(t, len(lines), 3, stderr)
	assert.Contains(t, lines[0], "kquery: bad JSONPath in --index: unexpected '~'")
	assert.Equal(t, "  --index node={.spec.nodeName[?(@.x ~ 1)]}", lines[1])
	assert.Equal(t, "  "+strings.Repeat(" ", strings.Index(lines[1], "~")-2)+"^", lines[2])

	code, _, stderr = kquery(t, "pods", "--where", "size>three")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `kquery: --where "size>three": > needs a number, got "three"`)
}

// --watch prints the result again when an object starts matching, and stops on Ctrl-C.
func TestWatch(t *testing.T) {
	setup(t)
	ns := cp.Namespace(t)
	dyn := cp.Dynamic(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testWriter
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig", kubeconfig, "wdg", "-n", ns, "--index", "size={.spec.size}",
			"--where", "size>5", "-o", "name", "--watch", "--debounce", "20ms"}, &stdout, &stderr)
	}()
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(stderr.String(), "No resources found") },
		"first result printed")

	for i, size := range []int{3, 7} {
		w := map[string]any{"apiVersion": demoenv.Group + "/v1", "kind": demoenv.WidgetKind,
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i)}, "spec": map[string]any{"size": size}}
		body, err := json.Marshal(w)
		require.NoError(t, err)
		_, err = dyn.Resource(demoenv.WidgetGVR).Namespace(ns).Patch(ctx, fmt.Sprintf("w%d", i), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "test"})
		require.NoError(t, err)
	}
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return strings.Contains(stdout.String(), "widget.demo.kindex.io/w1\n") },
		func() string { return stdout.String() })
	// Growing w0 makes it match too: printed again, in name order.
	_, err := dyn.Resource(demoenv.WidgetGVR).Namespace(ns).Patch(ctx, "w0", types.MergePatchType, []byte(`{"spec":{"size":9}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return strings.HasSuffix(stdout.String(), "\nwidget.demo.kindex.io/w0\nwidget.demo.kindex.io/w1\n")
	}, func() string { return stdout.String() })
	assert.NotContains(t, stdout.String(), "w0\nwidget.demo.kindex.io/w0", "an unchanged result is not printed twice")

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("kquery --watch did not stop on cancel")
	}
}
