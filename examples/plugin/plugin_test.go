package main

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/internal/demoenv"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

// leakOptions ignore the goroutines of idle keep-alive connections: client-go shares HTTP
// transports between clients of the same config (its transport cache), so their connections
// outlive any one client. Everything else must be gone.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
}

func seed(t *testing.T, widgets int) *demoenv.Seed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := demoenv.Apply(ctx, cp.AdminConfig(), demoenv.Options{Prefix: testenv.UniqueName(t), Namespaces: 1, Widgets: widgets, ConfigMaps: -1})
	require.NoError(t, err)
	return s
}

func phases(s *demoenv.Seed) map[string]int {
	out := map[string]int{}
	for _, w := range s.Widgets {
		out[w.Phase]++
	}
	return out
}

// Not parallel: goleak sees every goroutine of the process.
func TestPluginServesAndStopsWithoutLeaks(t *testing.T) {
	s := seed(t, 25)
	ns := s.Namespaces[0]
	ctx := context.Background()
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kindex-plugin"},
		Data: map[string]string{"values": "Running, Pending"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	ignore := goleak.IgnoreCurrent()
	var out testsupport.Buffer
	p, err := New(cp.AdminConfig(), Options{Namespace: ns, Interval: 50 * time.Millisecond, Out: &out})
	require.NoError(t, err)
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.Start(startCtx))
	cancel() // the start context ending does not stop the plugin

	want := phases(s)
	require.Positive(t, want["Failed"])
	counts := func() map[string]int {
		c, err := p.Counts()
		require.NoError(t, err)
		return c
	}
	testenv.EventuallyWith(t, 10*time.Second, func() bool {
		c := counts()
		return c["Running"] == want["Running"] && c["Pending"] == want["Pending"] && len(c) == 3
	}, func() string { return "counts from the ConfigMap's values: " + out.String() })
	assert.Equal(t, 0, counts()["<none>"])
	testenv.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(out.String(), "plugin: widgets.demo.kindex.io by {.status.phase}: Running=")
	},
		"the report is printed")
	assert.GreaterOrEqual(t, p.Events(), int64(len(s.Widgets)), "the handler saw the initial list")

	// A change of settings applies at once; a change of an object reaches the index.
	_, err = cms.Patch(ctx, "kindex-plugin", types.MergePatchType, []byte(`{"data":{"values":"Failed"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	_, err = cp.Dynamic(t).Resource(demoenv.WidgetGVR).Namespace(ns).Patch(ctx, "widget-000", types.MergePatchType,
		[]byte(`{"status":{"phase":null}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	testenv.EventuallyWith(t, 10*time.Second, func() bool {
		c := counts()
		return c["Failed"] == want["Failed"] && c["<none>"] == 1 && len(c) == 2
	}, func() string { return out.String() })
	assert.Contains(t, out.String(), "plugin: counting Failed\n")

	p.Stop()
	assert.Empty(t, running(), "Stop waits: nothing of kindex or client-go's cache runs once it returns")
	p.Stop() // idempotent
	goleak.VerifyNone(t, append(leakOptions, ignore)...)
}

// running returns the stacks of the goroutines running kindex's informers or discovery or
// client-go's cache machinery now. goleak retries for a while before it reports a leak,
// which would hide a Stop that returns before its goroutines have ended.
func running() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, pkg := range []string{"github.com/kindex/kindex/informer.", "github.com/kindex/kindex/discovery.", "k8s.io/client-go/tools/cache."} {
			if strings.Contains(g, pkg) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// A plugin that cannot start (its resource does not exist) leaves nothing running either.
func TestPluginFailedStartLeavesNothing(t *testing.T) {
	ns := cp.Namespace(t)
	ignore := goleak.IgnoreCurrent()
	p, err := New(cp.AdminConfig(), Options{Namespace: ns, Resource: "gadgets.nowhere.io"})
	require.NoError(t, err)
	err = p.Start(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `doesn't have a resource type "gadgets.nowhere.io"`)
	p.Stop()
	goleak.VerifyNone(t, append(leakOptions, ignore)...)
}

// The host end to end: it starts the plugin, serves until its context ends, then stops it.
func TestHost(t *testing.T) {
	s := seed(t, 5)
	kubeconfig := t.TempDir() + "/kubeconfig"
	require.NoError(t, demoenv.WriteKubeconfig(kubeconfig, cp.AdminConfig(), "default"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-kubeconfig", kubeconfig, "-namespace", s.Namespaces[0], "-interval", "50ms"}, &stdout, &stderr)
	}()
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return strings.Contains(stdout.String(), "Running=3 Pending=1 Failed=1 <none>=0") },
		func() string { return stdout.String() + stderr.String() })
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the host did not stop")
	}
	assert.True(t, strings.HasSuffix(stdout.String(), "host: shutting down\nhost: plugin stopped\n"), stdout.String())
}
