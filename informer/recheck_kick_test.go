package informer

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Recheck made while an informer runs (Factory.Recheck asks every informer) is not kept
// for its next park: that park re-discovers its resource on its backoff, not at once.
func TestRecheckWhileRunningIsNotKeptForTheNextPark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.add(newObj("ns", "a", nil))
		inf, err := e.f.Informer(ctx, "widgets")
		require.NoError(t, err)
		defer inf.Release()
		require.NoError(t, inf.WaitForSync(ctx))
		e.f.Recheck()
		synctest.Wait()
		before := e.disc.resolves.Load()

		e.disc.miss(widgets)
		srv.setErrors(notFoundErr(), notFoundErr())
		srv.closeWatches()
		eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
		synctest.Wait()
		assert.Equal(t, before, e.disc.resolves.Load(), "no re-discovery at once for the Recheck made before the park")

		inf.Recheck() // a Recheck of the park is one
		synctest.Wait()
		assert.Equal(t, before+1, e.disc.resolves.Load())
	})
}
