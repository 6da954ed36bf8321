package metadataonly_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// An index or a query on a field metadata-only objects do not hold was accepted and found
// nothing ({.spec.nodeName} on Pods, {.data.*} on ConfigMaps): it is refused, as the
// compact mode refuses fields its projection drops.
func TestFieldsOutsideMetadataAreRefused(t *testing.T) {
	for _, keep := range []bool{false, true} {
		fx := start(t, cp.AdminConfig(), metadataonly.Options{KeepManagedFields: keep})
		inf, err := fx.f.Informer(context.Background(), "pods")
		require.NoError(t, err)
		for _, expr := range []string{"{.spec.nodeName}", "{.data.*}", "{..name}", "{.status.phase}"} {
			err := inf.AddIndex("x", expr)
			require.ErrorIs(t, err, metadataonly.ErrNotMetadata, expr)
			require.ErrorIs(t, err, informer.ErrInvalidIndex, expr)
			_, err = inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Where(expr, query.Exists)}})
			assert.ErrorIs(t, err, metadataonly.ErrNotMetadata, "query on %s", expr)
		}
		for _, expr := range []string{"{.metadata.ownerReferences[*].uid}", "{.metadata.labels.app}", "{.kind}", "{.apiVersion}"} {
			require.NoError(t, inf.AddIndex("ok-"+expr, expr), expr)
		}
		err = inf.AddIndex("managers", "{.metadata.managedFields[*].manager}")
		if keep {
			assert.NoError(t, err, "kept with KeepManagedFields")
		} else {
			assert.ErrorIs(t, err, metadataonly.ErrNotMetadata)
		}
		inf.Release()
	}
}
