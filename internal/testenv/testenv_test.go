package testenv_test

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kindex/kindex/internal/testenv"
)

var cp *testenv.ControlPlane

// ConfigMaps bypass the watch cache, so that a watch from a compacted revision reaches etcd.
func TestMain(m *testing.M) {
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: []string{"--watch-cache-sizes=configmaps#0"}})
}

func TestListBuiltinAndCustomResources(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	for _, name := range []string{"a", "b", "c"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, cm := range cms.Items {
		names = append(names, cm.Name)
	}
	require.ElementsMatch(t, []string{"a", "b", "c"}, names)

	crd := cp.InstallCRD(t, testenv.NewCRD("testenv.kindex.io", "Widget", "widgets"))
	gvr := schema.GroupVersionResource{Group: "testenv.kindex.io", Version: "v1", Resource: "widgets"}
	dyn := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "testenv.kindex.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	_, err = dyn.Create(ctx, w, metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := dyn.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	size, _, _ := unstructured.NestedInt64(list.Items[0].Object, "spec", "size")
	require.Equal(t, int64(3), size)

	cp.DeleteCRD(t, crd.Name)
	_, err = dyn.List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "list after CRD delete: %v", err)
}

func TestRestrictedUserForbiddenUntilGranted(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)

	// Grant returns once the authorizer allows the grant, revoke once it refuses again.
	revoke := cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}})
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "list right after the grant")
	// The grant is namespaced: other namespaces stay forbidden.
	_, err = cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "want Forbidden in another namespace, got %v", err)

	revoke()
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "want Forbidden right after revoke, got %v", err)
}

func TestRestartAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			name := testenv.UniqueName(t)
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			require.NoError(t, err)

			require.NoError(t, cp.StopAPIServer(sig))
			_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			require.Error(t, err, "apiserver is down")

			startCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
			defer cancel()
			require.NoError(t, cp.StartAPIServer(startCtx))
			// The same client reconnects, and the data survived in etcd.
			got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, name, got.Name)
		})
	}
}

func TestCompactionForcesGone(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	oldRV := cm.ResourceVersion
	for i := range 3 {
		cm.Data = map[string]string{"i": string(rune('a' + i))}
		cm, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	_, err = cp.CompactEtcd(ctx)
	require.NoError(t, err)

	// The watch cache may still hold the old revision for a while; a watch from it must end
	// in 410 Gone once the compaction reaches the apiserver.
	testenv.Eventually(t, 30*time.Second, func() bool {
		return testenv.WatchGone(ctx, cs.CoreV1().ConfigMaps(ns).Watch, oldRV)
	}, "watch from a compacted resourceVersion did not return 410")
}

func TestMissingBinaryFails(t *testing.T) {
	t.Setenv("KINDEX_CONTROLPLANE_DIR", t.TempDir())
	_, err := testenv.Start(testenv.Options{})
	require.True(t, errors.Is(err, testenv.ErrBinaryMissing), "got %v", err)
}

func TestServesTLSOnLoopbackOnly(t *testing.T) {
	// The admin config trusts exactly the generated serving certificate.
	cfg := cp.AdminConfig()
	require.Contains(t, cfg.Host, "https://127.0.0.1:")
	_, err := http.Get(cfg.Host + "/readyz")
	require.Error(t, err, "a client that does not trust the test CA must fail TLS verification")
}
