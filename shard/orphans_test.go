package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// TestShardOrphansNeverDangling: an owner in another shard is unknown to a sharded
// factory, never proven gone.
func TestShardOrphansNeverDangling(t *testing.T) {
	cp := gated
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	mine := Split(informer.ShardByUID, 2)[0]
	create := func(name string, owner *corev1.ConfigMap) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
		if owner != nil {
			cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
		}
		got, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
		require.NoError(t, err)
		return got
	}
	var owner, dependent *corev1.ConfigMap
	for owner == nil || mine.Matches(string(owner.UID)) {
		owner = create("owner", nil) // until one is in the other shard
	}
	for dependent == nil || !mine.Matches(string(dependent.UID)) {
		dependent = create("dependent", owner) // until one is in this shard
	}
	f := startFactory(t, cp, metadataonly.Options{Shard: mine}, metadataonly.NewFactory)
	ctx := waitCtx(t, 30*time.Second)
	inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns))
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	_, err = inf.Get(ns, owner.Name)
	require.Error(t, err, "the owner is in the other shard")
	orphans, err := f.Orphans(ctx)
	require.NoError(t, err)
	for _, o := range orphans {
		if o.Object.UID == dependent.UID {
			assert.Empty(t, o.Dangling, "an owner in another shard is not proven gone")
			assert.False(t, o.Orphaned())
		}
	}
}
