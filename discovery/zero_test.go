package discovery

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestZeroClientIsErrUninitialized: a Client that New did not make, the zero value or a nil
// pointer, returns ErrUninitialized from every method with an error result instead of a nil
// dereference; Wait returns at once and Following is false.
func TestZeroClientIsErrUninitialized(t *testing.T) {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for name, c := range map[string]*Client{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, c.Start(ctx), ErrUninitialized)
			assert.ErrorIs(t, c.Refresh(ctx), ErrUninitialized)
			c.Wait()
			assert.False(t, c.Following())
			_, err := c.Resolve(ctx, "pods")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.ResolveGVK(ctx, schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.ResolveGVR(ctx, gvr)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.CachedGVR(gvr)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.RecheckGVR(ctx, gvr)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.ResolveCategory(ctx, "all")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.Resources(ctx, Filter{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = c.Subscribe(func(Event) {})
			assert.ErrorIs(t, err, ErrUninitialized)
		})
	}
}

// TestAmbiguousErrorWithoutCandidates: an AmbiguousError a program builds without
// candidates (a fake Discovery's) has a message, not an index out of range.
func TestAmbiguousErrorWithoutCandidates(t *testing.T) {
	err := &AmbiguousError{Input: "widget"}
	assert.Equal(t, `discovery: "widget" is ambiguous`, err.Error())
}
