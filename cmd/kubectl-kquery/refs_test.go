package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// `kquery refs` answers from the reference graph: what a Pod uses and what uses a
// ConfigMap, a dangling mount, and an unused ConfigMap.
func TestRefs(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cs := cp.Clientset(t).CoreV1()
	_, err := cs.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "used"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lonely"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	vol := func(name, cm string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}
	}
	_, err = cs.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		Volumes:    []corev1.Volume{vol("a", "used"), vol("b", "gone")},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)

	r := kquery(t, kc, "refs", "pod/web", "--uses")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "configmaps/"+ns+"/used", r.stderr)
	assert.Contains(t, r.stdout, "configmaps/"+ns+"/gone (Missing", r.stderr)

	r = kquery(t, kc, "refs", "cm/used", "--used-by")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[pods:volume-configmap] pods/"+ns+"/web")

	r = kquery(t, kc, "refs", "--dangling")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ns+"/gone")
	assert.NotContains(t, r.stdout, ns+"/used ")

	r = kquery(t, kc, "refs", "--unused", "configmaps")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ns+"/lonely")
	assert.NotContains(t, r.stdout, ns+"/used")

	r = kquery(t, kc, "refs")
	assert.Equal(t, 1, r.code, "one of TYPE/NAME, --dangling or --unused")
}
