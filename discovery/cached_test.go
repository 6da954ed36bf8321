package discovery_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// CachedGVR answers from what the client knows, with no request, hit or miss: many parked
// informers re-checking a missing resource with ResolveGVR made the client re-discover
// everything once per re-check.
func TestCachedGVRMakesNoRequest(t *testing.T) {
	c, rec := newClient(t, cp.AdminConfig(), discovery.Options{})
	pods := schema.GroupVersionResource{Resource: "pods"}
	_, err := c.CachedGVR(pods)
	assert.True(t, meta.IsNoMatchError(err), "before the first round everything misses: %v", err)
	assert.Empty(t, rec.discovery())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, c.Start(ctx))
	defer c.Wait()
	rec.reset()
	res, err := c.CachedGVR(pods)
	require.NoError(t, err)
	assert.Equal(t, "v1", res.GVR.Version)
	nopes := schema.GroupVersionResource{Group: "nope.example.com", Resource: "nopes"}
	for range 3 {
		_, err = c.CachedGVR(nopes)
		assert.True(t, meta.IsNoMatchError(err), "%v", err)
	}
	assert.Empty(t, rec.discovery(), "no request for a hit or a miss")
	_, err = c.ResolveGVR(ctx, nopes)
	assert.True(t, meta.IsNoMatchError(err))
	assert.NotEmpty(t, rec.discovery(), "ResolveGVR re-discovers on a miss")
	cancel()
}
