package dynamicinformer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/query"
)

// With ReadAfterShutdown, each mode's informers answer reads from what they held once the
// factory stopped, a change made after the stop unseen; without it, reads fail with
// ErrShutdown.
func TestReadAfterShutdown(t *testing.T) {
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	createConfigMaps(t, cms, 3)
	modes := map[string]func(*rest.Config, dynamicinformer.Options) (*dynamicinformer.Factory, error){
		"unstructured": dynamicinformer.NewFactory,
		"compact": func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{Compress: true})
		},
	}
	for name, newFactory := range modes {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, keep := range []bool{true, false} {
				f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(),
					dynamicinformer.Options{Namespace: ns, ReadAfterShutdown: keep}, newFactory)
				inf, err := f.Informer(ctx, "configmaps")
				require.NoError(t, err)
				require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
				waitSync(t, inf)
				before, err := inf.List(nil)
				require.NoError(t, err)
				require.GreaterOrEqual(t, len(before), 3)
				f.Shutdown()
				_, err = cms.Create(ctx, toUnstructured(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{GenerateName: "after-"}}), metav1.CreateOptions{})
				require.NoError(t, err)
				objs, err := inf.List(nil)
				if !keep {
					assert.ErrorIs(t, err, informer.ErrShutdown)
					continue
				}
				require.NoError(t, err)
				assert.Len(t, objs, len(before), "what the informer held, nothing created after the stop")
				it, err := inf.GetItem(ns, "o1")
				require.NoError(t, err)
				var cm corev1.ConfigMap
				require.NoError(t, it.DecodeInto(&cm))
				assert.Equal(t, "o1", cm.Name)
				res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "o2")}})
				require.NoError(t, err)
				require.Len(t, res.Items, 1)
				assert.Equal(t, "o2", res.Items[0].Name())
				inf.Release()
				_, err = inf.List(nil)
				assert.ErrorIs(t, err, informer.ErrReleased)
			}
		})
	}
}
