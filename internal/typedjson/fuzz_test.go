package typedjson

import (
	"testing"

	"github.com/kindex/kindex/internal/testsupport/podgen"

	corev1 "k8s.io/api/core/v1"
)

// FuzzUnmarshal decodes arbitrary input into a Pod, an empty interface and a struct of
// every kind of field (edge_test.go) with Unmarshal and with sigs.k8s.io/json, which must
// both fail or both succeed with equal values; Unmarshal must never panic or hang.
func FuzzUnmarshal(f *testing.F) {
	for _, in := range edgeInputs {
		if len(in) < 4096 {
			f.Add([]byte(in))
		}
	}
	f.Add(podgen.GenPodJSON(1))
	for _, b := range randomObjects(f, func() any { return new(corev1.Pod) }, 7, 2) {
		f.Add(b)
	}
	targets := []func() any{
		func() any { return new(corev1.Pod) },
		func() any { return new(any) },
		func() any { return new(edge) },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, newV := range targets {
			if why := sameAsSigs(data, newV); why != "" {
				t.Fatalf("%T from %q: %s", newV(), data, why)
			}
		}
	})
}
