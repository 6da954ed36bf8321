package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// TestShardInformerCountsFromNewInformer: a replica publishes a range as held only when
// every Informer made on its Member holds it synced, including one whose Run has not
// started yet: otherwise the others drop that resource's range on the word of the
// replica's other Informers, and nobody holds it until the late one has synced.
func TestShardInformerCountsFromNewInformer(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	configMaps(t, plain, ns, "c", 3)
	f := startFactory(t, plain, metadataonly.Options{}, metadataonly.NewFactory)
	m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "a", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	in := InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}}
	cms, err := NewInformer(m, f, "configmaps", in)
	require.NoError(t, err)
	sas, err := NewInformer(m, f, "serviceaccounts", in)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 3)
	running := 2
	go func() { done <- m.Run(ctx) }()
	go func() { done <- cms.Run(ctx) }()
	defer func() {
		cancel()
		for range running {
			<-done
		}
	}()
	require.Eventually(t, cms.Settled, 20*time.Second, 20*time.Millisecond)
	held := func() string {
		l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "g-a", metav1.GetOptions{})
		require.NoError(t, err)
		return l.Annotations[HeldAnnotation]
	}
	time.Sleep(500 * time.Millisecond) // several renewals
	assert.Empty(t, held(), "the ServiceAccounts' Informer holds nothing yet")

	running++
	go func() { done <- sas.Run(ctx) }()
	whole := formatHeld(Split(informer.ShardByUID, 1)[0])
	require.Eventually(t, func() bool { return held() == whole }, 20*time.Second, 20*time.Millisecond,
		"both hold the whole space once the second has synced")
}
