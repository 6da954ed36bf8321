package shard

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/informer"
)

// TestMemberClockBehind: a replica whose clock is behind the others' by more than a
// LeaseDuration writes renewTimes that look expired on their clocks; while it keeps renewing,
// they count it live all the same (a renewTime that changed between two lists was written
// after the first), instead of each taking its range for good, every object of it held twice.
// Once it stops renewing it expires as any other.
func TestMemberClockBehind(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	late := func() time.Time { return time.Now().Add(-time.Hour) }
	handLease(t, cs, ns, "g", "g-b", "b", 2, late(), map[string]string{FieldAnnotation: string(informer.ShardByUID)})
	ctx, stop := context.WithCancel(context.Background())
	renewing := make(chan struct{})
	go func() { // b, an hour late, renews every 100 ms
		defer close(renewing)
		leases := cs.CoordinationV1().Leases(ns)
		for ctx.Err() == nil {
			if l, err := leases.Get(ctx, "g-b", metav1.GetOptions{}); err == nil {
				r := metav1.NewMicroTime(late())
				l.Spec.RenewTime = &r
				_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	defer func() { stop(); <-renewing }()
	a := runMember(t, cs, ns, "g", "a")
	both := []string{"a", "b"}
	if !assert.Eventually(t, func() bool { return slices.Equal(a.Members(), both) }, 10*time.Second, 20*time.Millisecond,
		"b is live while it renews") {
		t.Fatalf("members as a sees them: %v", a.Members())
	}
	for range 10 { // and stays so
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, both, a.Members())
	}
	assigned, ok := a.Assignment()
	assert.True(t, ok)
	assert.True(t, assigned.Equal(Split(informer.ShardByUID, 2)[0]), "a holds its half, not the whole space")

	stop()
	<-renewing
	require.Eventually(t, func() bool { return slices.Equal(a.Members(), []string{"a"}) }, 10*time.Second, 20*time.Millisecond,
		"b expires once it stops renewing")
}

// TestMemberSameIdentityClockBehind: a second instance of an identity whose live first
// instance's clock is behind by more than a LeaseDuration (its Lease looks expired) does not
// take the Lease over at first sight: it sees the Lease renewed meanwhile and fails with
// ErrIdentityInUse, leaving the Lease to the first.
func TestMemberSameIdentityClockBehind(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	late := func() time.Time { return time.Now().Add(-time.Hour) }
	handLease(t, cs, ns, "g", "g-a", "a", 2, late(), map[string]string{InstanceAnnotation: "first"})
	ctx, stop := context.WithCancel(context.Background())
	renewing := make(chan struct{})
	go func() { // the first instance, an hour late, renews every 50 ms
		defer close(renewing)
		leases := cs.CoordinationV1().Leases(ns)
		for ctx.Err() == nil {
			if l, err := leases.Get(ctx, "g-a", metav1.GetOptions{}); err == nil {
				r := metav1.NewMicroTime(late())
				l.Spec.RenewTime = &r
				_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer func() { stop(); <-renewing }()
	m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "a", LeaseDuration: 2 * time.Second, RenewPeriod: 500 * time.Millisecond})
	require.NoError(t, err)
	done := make(chan error, 1)
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- m.Run(rctx) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrIdentityInUse)
	case <-time.After(10 * time.Second):
		cancel()
		<-done
		t.Error("the second instance did not see the first renew its Lease")
	}
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "g-a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "first", l.Annotations[InstanceAnnotation], "the Lease is still the first instance's")
}
