package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// TestLeaveWaitsForEveryInformer: Leave returns once no Informer of the replica holds
// anything, not once what the Lease publishes (what all of them hold) is empty: with one
// Informer holding nothing (its Run not started), the other still holds the replica's
// range, and nobody has taken it over, so Leave of the group's only member waits for its
// context.
func TestLeaveWaitsForEveryInformer(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	configMaps(t, plain, ns, "c", 3)
	f := startFactory(t, plain, metadataonly.Options{}, metadataonly.NewFactory)
	m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "a", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	in := InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}}
	cms, err := NewInformer(m, f, "configmaps", in)
	require.NoError(t, err)
	_, err = NewInformer(m, f, "serviceaccounts", in) // never run: holds nothing
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- m.Run(ctx) }()
	go func() { done <- cms.Run(ctx) }()
	defer func() { cancel(); <-done; <-done }()
	require.Eventually(t, cms.Settled, 20*time.Second, 20*time.Millisecond)

	lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
	defer lcancel()
	assert.ErrorIs(t, m.Leave(lctx), context.DeadlineExceeded, "nobody took the range over")
	objs, err := cms.List()
	require.NoError(t, err)
	assert.Len(t, objs, 3, "the ConfigMaps are still held when Leave returns")
}
