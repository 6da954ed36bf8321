package metadataonly_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/metadataonly"
)

// The metadata-only mode's client cuts managedFields from the protobuf bytes before they are
// decoded, in lists and in watch events alike, so that they are never built; with
// KeepManagedFields it leaves them.
func TestMetadataClientCutsManagedFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

	for _, keep := range []bool{false, true} {
		c, err := storage.NewMetadataClient(cp.AdminConfig(), keep)
		require.NoError(t, err)
		l, err := c.List(ctx, gvr, ns, metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, l.Items, 1)
		got := l.Items[0]
		assert.Equal(t, "a", got.Name)
		assert.Contains(t, got.Labels, "k")
		assert.NotEmpty(t, got.UID)
		assert.Equal(t, keep, len(got.ManagedFields) > 0, "keep=%v: managedFields %v", keep, got.ManagedFields)

		w, err := c.Watch(ctx, gvr, ns, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
		require.NoError(t, err)
		label := fmt.Sprint("keep-", keep)
		_, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": label}}}, metav1.UpdateOptions{})
		require.NoError(t, err)
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-time.After(30 * time.Second):
			t.Fatal("no watch event")
		}
		w.Stop()
		require.Equal(t, watch.Modified, ev.Type, "%+v", ev.Object)
		o := ev.Object.(*metav1.PartialObjectMetadata)
		assert.Equal(t, map[string]string{"k": label}, o.Labels)
		assert.Equal(t, keep, len(o.ManagedFields) > 0, "keep=%v: watch event managedFields %v", keep, o.ManagedFields)
	}

	// Through the factory: KeepManagedFields reaches the client.
	fx := start(t, nil, metadataonly.Options{Namespace: ns, KeepManagedFields: true})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	o, err := inf.Get(ns, "a")
	require.NoError(t, err)
	assert.NotEmpty(t, o.ManagedFields)
}
