package discovery

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
)

// BenchmarkResolveCached measures a resolution from the cache (no request is possible: the
// client points at a closed port).
func BenchmarkResolveCached(b *testing.B) {
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	c.snap.Store(emptySnapshot().merge(testCluster()))
	ctx := context.Background()
	for _, in := range []string{"po", "deploy.apps", "Deployment.v1.apps", "apps/v1/deployments"} {
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Resolve(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
