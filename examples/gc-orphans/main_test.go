package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/internal/demoenv"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

func writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, demoenv.WriteKubeconfig(path, cp.AdminConfig(), "default"))
	return path
}

func configMap(t *testing.T, ns, name string, owners ...*corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for _, o := range owners {
		cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID})
	}
	got, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	require.NoError(t, err)
	return got
}

// row matches a report line about one object; the tabwriter pads with spaces.
func row(resource, ns, name string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(resource) + ` +` + regexp.QuoteMeta(ns) + ` +` + regexp.QuoteMeta(name) + `\b.*$`)
}

// section returns the lines of the report section that starts with title.
func section(report, title string) string {
	_, after, ok := strings.Cut(report, "\n"+title)
	if !ok {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(after, "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// Dependents are found by owner UID; once the owner is deleted (no garbage collector runs
// in the test control plane, so they stay), they are orphans, but an object with another,
// live owner is not.
func TestOnceFindsOrphanAfterOwnerDeleted(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t)
	owner := configMap(t, ns, "owner")
	other := configMap(t, ns, "other-owner")
	configMap(t, ns, "dep-1", owner)
	configMap(t, ns, "dep-2", owner, other)
	configMap(t, ns, "free")

	once := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var stdout, stderr testsupport.Buffer
		code := run(ctx, []string{"--kubeconfig", kc, "--once", "--owner-uid", string(owner.UID)}, &stdout, &stderr)
		require.Equal(t, 0, code, "stderr: %s", stderr.String())
		return stdout.String()
	}

	report := once()
	deps := section(report, fmt.Sprintf("dependents of %s: 2", owner.UID))
	assert.Regexp(t, row("configmaps", ns, "dep-1"), deps, report)
	assert.Regexp(t, row("configmaps", ns, "dep-2"), deps, report)
	assert.NotRegexp(t, row("configmaps", ns, ""), section(report, "orphans"), "no orphan while the owner exists")

	require.NoError(t, cp.Clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), "owner", metav1.DeleteOptions{}))
	report = once()
	assert.Regexp(t, row("configmaps", ns, "dep-1"), section(report, fmt.Sprintf("dependents of %s: 2", owner.UID)),
		"dependents stay: no garbage collector")
	orphans := section(report, "orphans (every owner gone)")
	assert.Regexp(t, row("configmaps", ns, "dep-1"), orphans, report)
	assert.Contains(t, orphans, fmt.Sprintf("owner gone: ConfigMap/owner (uid %s)", owner.UID))
	assert.NotRegexp(t, row("configmaps", ns, "dep-2"), orphans, "dep-2's other owner exists")
	assert.NotRegexp(t, row("configmaps", ns, "free"), orphans)
}

// Without --once, the watcher follows a CRD created after it started: the discovery event
// is printed, its objects join the report, and they leave it when the CRD is deleted.
func TestFollowsCRDsAddedAfterStart(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--kubeconfig", kc, "--interval", "200ms"}, &stdout, &stderr) }()
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(stdout.String(), "--- report at") },
		"first report")

	group := strings.ReplaceAll(testenv.UniqueName(t), "-", "") + ".gc.io"
	crd := cp.InstallCRD(t, testenv.NewCRD(group, "Gizmo", "gizmos"))
	resource := "gizmos." + group
	gizmo := &unstructured.Unstructured{}
	gizmo.SetAPIVersion(group + "/v1")
	gizmo.SetKind("Gizmo")
	gizmo.SetName("g1")
	gizmo.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "never-existed", UID: types.UID("0000-gone")}})
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}
	_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, gizmo, metav1.CreateOptions{})
	require.NoError(t, err)

	lastReport := func() string {
		out := stdout.String()
		return out[strings.LastIndex(out, "--- report at"):]
	}
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return row(resource, ns, "g1").MatchString(section(lastReport(), "orphans (every owner gone)"))
	}, func() string { return stdout.String() })
	// The discovery event and the status come from subscribers' goroutines of their own:
	// printed soon, but not necessarily before a report that shows the object.
	synced := regexp.MustCompile(`\[status\] ` + regexp.QuoteMeta(resource) + `/v1 \(metadata\): Synced`)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		out := stdout.String()
		return strings.Contains(out, "[discovery] Added "+resource+" (v1)") && synced.MatchString(out)
	}, func() string { return "the discovery event and the Synced status are printed:\n" + stdout.String() })

	cp.DeleteCRD(t, crd.Name)
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return strings.Contains(stdout.String(), "[discovery] Removed "+resource) &&
			!strings.Contains(lastReport(), resource)
	}, func() string { return stdout.String() })

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("gc-orphans did not stop on cancel")
	}
}

// Beside the orphans, the report lists references whose target is missing: a Pod mounting a
// ConfigMap that does not exist, a RoleBinding to a Role that does not; creating the
// ConfigMap makes the Pod's mount whole. Owner references are left to the orphans, and the
// Pod's optional mount of another missing ConfigMap is not listed.
func TestOnceReportsDanglingReferences(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t)
	cs := cp.Clientset(t)
	ctx := context.Background()
	optional := true
	_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/web:1"}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
			{Name: "extra", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-extra"}, Optional: &optional}}}},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	owner := configMap(t, ns, "owner")
	configMap(t, ns, "owned", owner)
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}))

	once := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var stdout, stderr testsupport.Buffer
		code := run(ctx, []string{"--kubeconfig", kc, "--once"}, &stdout, &stderr)
		require.Equal(t, 0, code, "stderr: %s", stderr.String())
		return stdout.String()
	}
	report := once()
	t.Log(report)
	dangling := section(report, "dangling references (target missing)")
	assert.Regexp(t, row("pods", ns, "web"), dangling, report)
	assert.Contains(t, dangling, "pods:volume-configmap -> configmaps/"+ns+"/web-config")
	assert.NotContains(t, dangling, ns+"/web-extra", "an optional mount of a missing ConfigMap is not dangling")
	assert.Regexp(t, row("rolebindings.rbac.authorization.k8s.io", ns, "readers"), dangling, report)
	assert.Contains(t, dangling, "rolebindings.rbac.authorization.k8s.io:role -> roles.rbac.authorization.k8s.io/"+ns+"/reader")
	assert.NotContains(t, dangling, "owner ->", "owner references are the orphans' business")
	assert.Regexp(t, row("configmaps", ns, "owned"), section(report, "orphans (every owner gone)"), report)

	configMap(t, ns, "web-config")
	report = once()
	dangling = section(report, "dangling references (target missing)")
	assert.NotRegexp(t, row("pods", ns, "web"), dangling, report)
	assert.Regexp(t, row("rolebindings.rbac.authorization.k8s.io", ns, "readers"), dangling, report)

	// Without --references, no such section.
	var stdout, stderr testsupport.Buffer
	wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.Equal(t, 0, run(wctx, []string{"--kubeconfig", kc, "--once", "--references=false"}, &stdout, &stderr), stderr.String())
	assert.NotContains(t, stdout.String(), "dangling references")
}
