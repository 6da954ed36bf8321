package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// `kquery refs` answers from the reference graph: what a Pod uses and what uses a
// ConfigMap, a dangling mount, an optional mount of a missing ConfigMap (marked, and not
// dangling), and an unused ConfigMap.
func TestRefs(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t).CoreV1()
	_, err := cs.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "used"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lonely"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	vol := func(name, cm string, optional bool) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Optional: &optional}}}
	}
	_, err = cs.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		Volumes:    []corev1.Volume{vol("a", "used", false), vol("b", "gone", false), vol("c", "maybe", true)},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)

	r := kquery(t, kc, "refs", "pod/web", "--uses")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, strings.ReplaceAll(`pods/NS/web uses:
pods/NS/web
├── [pods:volume-configmap] configmaps/NS/gone (Missing: not found)
├── [pods:volume-configmap] configmaps/NS/maybe (optional) (Missing: not found)
└── [pods:volume-configmap] configmaps/NS/used
`, "NS", ns), r.stdout, r.stderr)

	r = kquery(t, kc, "refs", "cm/used", "--used-by")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[pods:volume-configmap] pods/"+ns+"/web")

	// An object that does not exist is NotFound, as for kubectl get, after what refers to
	// it (its dangling references).
	r = kquery(t, kc, "refs", "cm/gone", "--used-by")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "[pods:volume-configmap] pods/"+ns+"/web")
	assert.Equal(t, `Error from server (NotFound): configmaps "gone" not found`+"\n", r.stderr)
	r = kquery(t, kc, "refs", "pod/nope")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, `Error from server (NotFound): pods "nope" not found`+"\n", r.stderr)

	r = kquery(t, kc, "refs", "--dangling")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "pods/"+ns+"/web -[pods:volume-configmap]-> configmaps/"+ns+"/gone (Missing: not found)\n")
	assert.NotContains(t, r.stdout, ns+"/used ")
	assert.NotContains(t, r.stdout, ns+"/maybe", "an optional reference is not dangling")

	r = kquery(t, kc, "refs", "--unused", "configmaps")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ns+"/lonely")
	assert.NotContains(t, r.stdout, ns+"/used")
	// Nothing unused in the namespace asked for: said, as kubectl says "No resources found".
	empty := cp.Namespace(t)
	r = kquery(t, kc, "refs", "--unused", "configmaps", "-n", empty)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	assert.Equal(t, "No unused configmaps found in "+empty+" namespace.\n", r.stderr)

	r = kquery(t, kc, "refs")
	assert.Equal(t, 1, r.code, "one of TYPE/NAME, --dangling or --unused")
	// --uses and --used-by together left out both trees and printed nothing.
	r = kquery(t, kc, "refs", "pod/web", "--uses", "--used-by")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "--uses and --used-by exclude each other")
}

// `kquery refs --unused` of a type whose objects select (services, PDBs) lists those that
// select nothing and those without a selector that nothing names, each once, in order: every
// PDB was listed (nothing names a PDB), every Service too where no EndpointSlice names it,
// and one that nothing names and that selects no Pod was listed twice.
func TestRefsUnusedSelectingTypes(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, svc := range []struct {
		name     string
		selector map[string]string
	}{{"a-idle", map[string]string{"app": "nobody"}}, {"b-plain", nil}, {"c-idle", map[string]string{"app": "none"}}, {"web", map[string]string{"app": "web"}}} {
		_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc.name},
			Spec: corev1.ServiceSpec{Selector: svc.selector, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for name, app := range map[string]string{"covers": "web", "idle": "nobody"} {
		_, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	r := kquery(t, kc, "refs", "--unused", "services")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, strings.ReplaceAll("services/NS/a-idle\nservices/NS/b-plain\nservices/NS/c-idle\n", "NS", ns), r.stdout)
	r = kquery(t, kc, "refs", "--unused", "pdb")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "poddisruptionbudgets.policy/"+ns+"/idle\n", r.stdout)
}
