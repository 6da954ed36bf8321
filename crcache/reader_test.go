package crcache_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestGetTyped(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	created := createPods(t, cl, ns, "p", 3)
	c := startCache(t, nil, cache.Options{})

	var got corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(created[1]), &got))
	assert.Equal(t, created[1].Name, got.Name)
	assert.Equal(t, created[1].UID, got.UID)
	assert.Equal(t, corev1.RestartPolicyNever, got.Spec.RestartPolicy)
	assert.Equal(t, "Pod", got.Kind)

	var list corev1.PodList
	require.NoError(t, c.List(t.Context(), &list, client.InNamespace(ns)))
	assert.Equal(t, []string{"p-00", "p-01", "p-02"}, podNames(&list))
}
