package dynamicinformer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kindex/kindex/internal/testenv"
)

// Pod templates have no watch cache in this control plane (TestMain): a watch from a
// compacted resourceVersion reaches etcd, and its 410 is certain, where the watch cache would
// keep serving it for a while. The tests of compactions use them.

// podTemplates returns the pod templates of a new namespace, with n of them created (o0, o1,
// ...).
func podTemplates(t *testing.T, n int) (string, dynamic.ResourceInterface) {
	t.Helper()
	ns := cp.Namespace(t)
	pts := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}).Namespace(ns)
	for i := range n {
		_, err := pts.Create(context.Background(), toUnstructured(t, &corev1.PodTemplate{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i)},
			Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return ns, pts
}

// compactPast compacts etcd and waits until the apiserver answers 410 for a watch of ns's
// pod templates from rv.
func compactPast(t *testing.T, ns, rv string) {
	t.Helper()
	ctx := context.Background()
	_, err := cp.CompactEtcd(ctx)
	require.NoError(t, err)
	cs := cp.Clientset(t)
	testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(ctx, cs.CoreV1().PodTemplates(ns).Watch, rv) },
		"the apiserver answers 410 for resourceVersion %s", rv)
}
