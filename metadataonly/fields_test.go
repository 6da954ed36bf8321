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
		for _, expr := range []string{"{.spec.nodeName}", "{.data.*}", "{..name}", "{.status.phase}", "{['spec.nodeName']}"} {
			err := inf.AddIndex("x", expr)
			require.ErrorIs(t, err, metadataonly.ErrNotMetadata, expr)
			require.ErrorIs(t, err, informer.ErrInvalidIndex, expr)
			_, err = inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Where(expr, query.Exists)}})
			assert.ErrorIs(t, err, metadataonly.ErrNotMetadata, "query on %s", expr)
		}
		// kubectl's quoted paths read the path their dots split them into: accepted.
		for _, expr := range []string{"{.metadata.ownerReferences[*].uid}", "{.metadata.labels.app}", "{.kind}", "{.apiVersion}",
			"{['metadata.name']}", "{['metadata.name','metadata.namespace']}"} {
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

// kubectl's {['metadata.name']} reads .metadata.name on metadata-only objects, indexed and
// as a filter: it was refused as reading a field they do not hold.
func TestDottedKeyReadsMetadata(t *testing.T) {
	ctx := context.Background()
	fx := start(t, cp.AdminConfig(), metadataonly.Options{})
	inf, err := fx.f.Informer(ctx, "namespaces")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	require.NoError(t, inf.AddIndex("name", "{['metadata.name']}"))
	res, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "kube-system")}})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, "kube-system", res.Items[0].GetName())
	all, err := inf.List(nil)
	require.NoError(t, err)
	n, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Where("{['metadata.name']}", query.Exists)}, Scan: true})
	require.NoError(t, err)
	assert.Equal(t, len(all), n, "every namespace has a name")
}
