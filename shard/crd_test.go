package shard

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// TestShardFilterCustomResource: the API server filters custom resources by shard without
// echoing the selector in ListMeta.ShardInfo (their lists are UnstructuredLists, which carry
// none); an informer of one still says who filters, and holds exactly its shard either way.
func TestShardFilterCustomResource(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
		want informer.ShardFilter
	}{{"server", gated, informer.ShardFilterServer}, {"client", plain, informer.ShardFilterClient}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			group := testenv.UniqueName(t) + ".kindex.test"
			cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
			gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
			ns := cp.Namespace(t)
			all := map[types.UID]bool{}
			for i := range 20 {
				w, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{
					Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
						"metadata": map[string]any{"name": "w-" + strconv.Itoa(i)}}}, metav1.CreateOptions{})
				require.NoError(t, err)
				all[w.GetUID()] = true
			}
			f := startFactory(t, cp, dynamicinformer.Options{}, dynamicinformer.NewFactory)
			ctx := waitCtx(t, 30*time.Second)
			half := Split(informer.ShardByUID, 2)[0]
			inf, err := f.Informer(ctx, "widgets."+group, informer.WithNamespace(ns), informer.WithShard(half))
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
			assert.Equal(t, side.want, inf.Status().ShardFilter)
			objs, err := inf.List(nil)
			require.NoError(t, err)
			assert.Equal(t, within(half, all), uidSet(objs))
		})
	}
}
