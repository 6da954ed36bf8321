package shard

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kindex/kindex/internal/testsupport"
)

// A renewal whose update conflicts (the Lease changed, or was deleted, since it was read:
// the API server answers an update of a deleted object with a failed UID precondition, a
// conflict) reads the Lease again at once instead of reporting a failure, so that the
// line a run of failures logs names a reason that lasts (a namespace being terminated),
// not a race. Here the first update of the member's Lease is refused with a conflict.
func TestRenewConflictReadsAgain(t *testing.T) {
	cs := fake.NewClientset()
	var updates atomic.Int32
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if updates.Add(1) == 1 {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"},
				"test-r0", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	log := &testsupport.Lines{}
	m, err := New(Options{Client: cs, Namespace: "ns", Group: "test", Identity: "r0",
		LeaseDuration: time.Second, RenewPeriod: 100 * time.Millisecond, Logger: log.Logger(0)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	require.Eventually(t, func() bool { return updates.Load() >= 3 }, 10*time.Second, 10*time.Millisecond,
		"renewed after the conflict")
	assert.Zero(t, log.Count("Cannot renew"), "a conflict is not reported:\n%s", log)
	_, ok := m.Assignment()
	assert.True(t, ok, "the member keeps its assignment")
}
