package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// TestShardInformerFailedStillCounts: of a replica's two Informers, one whose Run fails (its
// resource may not be listed) holds nothing of its resource; the replica's Lease keeps
// publishing no range as held, instead of publishing what the other Informer holds, on
// whose word the other members would drop the failed resource's objects too.
func TestShardInformerFailedStillCounts(t *testing.T) {
	ns := plain.Namespace(t)
	configMaps(t, plain, ns, "c", 3)
	name, cfg, err := plain.NewUser()
	require.NoError(t, err)
	plain.Grant(t, name, ns,
		rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	user, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	f, err := metadataonly.NewFactory(cfg, metadataonly.Options{})
	require.NoError(t, err)
	ctx := waitCtx(t, 60*time.Second)
	require.NoError(t, f.Start(ctx))
	defer f.Shutdown()
	m, err := New(Options{Client: user, Namespace: ns, Group: "g", Identity: "a", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	in := InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}}
	cms, err := NewInformer(m, f, "configmaps", in)
	require.NoError(t, err)
	secrets, err := NewInformer(m, f, "secrets", in)
	require.NoError(t, err)

	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- m.Run(mctx) }()
	go func() { done <- cms.Run(mctx) }()
	defer func() { cancel(); <-done; <-done }()
	assert.ErrorIs(t, secrets.Run(mctx), informer.ErrParked, "the Secrets' Informer cannot sync")
	require.Eventually(t, cms.Settled, 20*time.Second, 20*time.Millisecond)
	cs := plain.Clientset(t)
	renewedAfter(t, cs, ns, "g-a", m.instance)
	renewedAfter(t, cs, ns, "g-a", m.instance)
	assert.Empty(t, getLease(t, cs, ns, "g-a").Annotations[HeldAnnotation],
		"the replica holds no Secret: it publishes no range as held")
}
