package main

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var cp *testenv.ControlPlane

// TestFlags: the command's flags sit next to controller-runtime's -kubeconfig.
func TestFlags(t *testing.T) {
	require.NotNil(t, flag.CommandLine.Lookup("kubeconfig"), "controller-runtime defines -kubeconfig")
	o, kubectx, install := defineFlags(flag.CommandLine)
	require.NoError(t, flag.CommandLine.Parse([]string{"-namespace", "", "-report", "0", "-context", "c", "-install-crd=false"}))
	assert.Equal(t, "", o.namespace)
	assert.Zero(t, o.report)
	assert.Equal(t, "c", *kubectx)
	assert.False(t, *install)
}

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

// TestController runs the sample against a real apiserver: a Widget gets spec.size Pods it
// controls, a smaller size deletes the surplus, a deleted Pod comes back, status.pods
// follows, and the report reads the cache with a range selector and pages.
func TestController(t *testing.T) {
	ctx := t.Context()
	cfg := cp.AdminConfig()
	require.NoError(t, ensureCRD(ctx, cfg))
	ns := cp.Namespace(t)
	out := &testsupport.Buffer{}
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(rctx, cfg, options{namespace: ns, report: 300 * time.Millisecond, out: out}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the controller did not stop")
		}
	})

	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, AddToScheme(scheme))
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w1"}, Spec: WidgetSpec{Size: 3, Color: "red"}}
	require.NoError(t, cl.Create(ctx, w))

	pods := func() []corev1.Pod {
		var l corev1.PodList
		require.NoError(t, cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{widgetLabel: "w1"}))
		return l.Items
	}
	statusPods := func() int32 {
		var got Widget
		require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(w), &got))
		if got.Status.Pods == nil {
			return -1
		}
		return *got.Status.Pods
	}
	testenv.Eventually(t, 30*time.Second, func() bool { return len(pods()) == 3 && statusPods() == 3 }, "3 pods for size 3")
	for _, p := range pods() {
		owner := metav1.GetControllerOf(&p)
		require.NotNil(t, owner)
		assert.Equal(t, "Widget", owner.Kind)
		assert.Equal(t, w.UID, owner.UID)
		assert.Equal(t, "red", p.Spec.Containers[0].Env[0].Value)
	}

	require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(w), w))
	w.Spec.Size = 1
	require.NoError(t, cl.Update(ctx, w))
	testenv.Eventually(t, 30*time.Second, func() bool {
		p := pods()
		return len(p) == 1 && p[0].Name == "w1-0" && statusPods() == 1
	}, "1 pod for size 1")

	old := pods()[0]
	require.NoError(t, cl.Delete(ctx, &old))
	testenv.Eventually(t, 30*time.Second, func() bool {
		p := pods()
		return len(p) == 1 && p[0].UID != old.UID
	}, "a deleted pod comes back")

	big := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w2"}, Spec: WidgetSpec{Size: 9}}
	require.NoError(t, cl.Create(ctx, big))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return strings.Contains(out.String(), "report: 2 widgets (1 with spec.size>=8), 10 pods they own")
	}, func() string { return "report:\n" + out.String() })
}
