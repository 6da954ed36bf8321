package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testsupport"
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

// TestShardInformerClusterScopedByNamespace: in a group that hashes namespaces, a
// cluster-scoped resource's objects all hash the empty namespace: the one replica whose
// range holds that hash holds them all, the other none, and each says why once.
func TestShardInformerClusterScopedByNamespace(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	f := startFactory(t, plain, metadataonly.Options{}, metadataonly.NewFactory)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 4)
	defer func() {
		cancel()
		for range 4 {
			<-done
		}
	}()
	type replica struct {
		m   *Member
		inf *Informer[*metav1.PartialObjectMetadata]
		log *testsupport.Lines
	}
	var rs []replica
	for _, id := range []string{"a", "b"} {
		r := replica{log: &testsupport.Lines{}}
		var err error
		r.m, err = New(Options{Client: cs, Namespace: ns, Group: "g", Identity: id, Field: informer.ShardByNamespace,
			LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond, Logger: r.log.Logger(0)})
		require.NoError(t, err)
		r.inf, err = NewInformer(r.m, f, "clusterroles", InformerOptions{})
		require.NoError(t, err)
		go func() { done <- r.m.Run(ctx) }()
		go func() { done <- r.inf.Run(ctx) }()
		rs = append(rs, r)
	}
	require.Eventually(t, func() bool {
		return rs[0].inf.Settled() && rs[1].inf.Settled() &&
			len(rs[0].m.Members()) == 2 && len(rs[1].m.Members()) == 2
	}, 30*time.Second, 20*time.Millisecond)
	all, err := cs.RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, all.Items)
	var counts []int
	for _, r := range rs {
		objs, err := r.inf.List()
		require.NoError(t, err)
		counts = append(counts, len(objs))
		assert.Equal(t, 1, r.log.Count("cluster-scoped", "one replica holds them all"), "%s", r.log)
	}
	owner := 0
	if rs[1].m.Owns("") {
		owner = 1
	}
	assert.True(t, rs[owner].m.Owns("") && !rs[1-owner].m.Owns(""), "exactly one owns the empty namespace")
	assert.Equal(t, len(all.Items), counts[owner], "the owner of the empty namespace holds every ClusterRole")
	assert.Zero(t, counts[1-owner])
}

// TestShardInformerFactoryShutdown: when its factory stops under a running Member, the
// Informer's caches are empty: Run ends with ErrShutdown, and the replica's Lease stops
// saying that it holds its range, instead of the others counting on a cache that is gone.
func TestShardInformerFactoryShutdown(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	configMaps(t, plain, ns, "c", 3)
	f := startFactory(t, plain, metadataonly.Options{}, metadataonly.NewFactory)
	m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "a", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	inf, err := NewInformer(m, f, "configmaps", InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	mdone := make(chan error, 1)
	go func() { mdone <- m.Run(ctx) }()
	defer func() { cancel(); <-mdone }()
	idone := make(chan error, 1)
	go func() { idone <- inf.Run(ctx) }()
	require.Eventually(t, inf.Settled, 20*time.Second, 20*time.Millisecond)
	held := func() string {
		l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "g-a", metav1.GetOptions{})
		require.NoError(t, err)
		return l.Annotations[HeldAnnotation]
	}
	require.Eventually(t, func() bool { return held() != "" }, 10*time.Second, 20*time.Millisecond)

	f.Shutdown()
	select {
	case err := <-idone:
		assert.ErrorIs(t, err, informer.ErrShutdown)
	case <-time.After(10 * time.Second):
		cancel()
		<-idone
		t.Fatal("Run did not end when the factory stopped")
	}
	require.Eventually(t, func() bool { return held() == "" }, 10*time.Second, 20*time.Millisecond,
		"the Lease no longer says the range is held")
}
