package informer

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The cluster is asked for until an answer: a UID, or "" when the identity may not read
// kube-system (403) or the server has none (404). Another error is returned, not kept.
func TestClusterIdentity(t *testing.T) {
	ns := schema.GroupResource{Resource: "namespaces"}
	for _, tc := range []struct {
		name    string
		answers []error
		want    string
		asks    int
	}{
		{"uid", []error{nil}, "uid-1", 1},
		{"forbidden", []error{apierrors.NewForbidden(ns, "kube-system", errors.New("no"))}, "", 1},
		{"not found", []error{apierrors.NewNotFound(ns, "kube-system")}, "", 1},
		{"unreachable, then uid", []error{syscall.ECONNREFUSED, nil}, "uid-1", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asks := 0
			c := &clusterIdentity{ask: func(ctx context.Context) (string, error) {
				_, ok := ctx.Deadline()
				require.True(t, ok, "the request is bounded")
				err := tc.answers[min(asks, len(tc.answers)-1)]
				asks++
				if err != nil {
					return "", err
				}
				return "uid-1", nil
			}}
			var got string
			var err error
			for range 3 {
				if got, err = c.id(context.Background()); err == nil {
					break
				}
				assert.ErrorIs(t, err, syscall.ECONNREFUSED)
				assert.ErrorContains(t, err, "cannot identify the cluster")
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			got, err = c.id(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.asks, asks, "asked until an answer, then never again")
		})
	}
	var none *clusterIdentity // a factory of fakes
	got, err := none.id(context.Background())
	require.NoError(t, err)
	assert.Empty(t, got)
}
