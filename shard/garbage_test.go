package shard

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kindex/kindex/informer"
)

// handLease creates a Lease of group g as an operator might by hand: any name, holder,
// times and annotations.
func handLease(t *testing.T, cs kubernetes.Interface, ns, g, name, holder string, secs int32, renew time.Time, ann map[string]string) {
	t.Helper()
	r := metav1.NewMicroTime(renew)
	_, err := cs.CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{GroupLabel: g}, Annotations: ann},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &r},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// Leases written by hand in the group's namespace do not make members that hold nothing
// forever, nor speak for real members: a Lease whose name is not <group>-<holderIdentity>
// is left out (and logged once), whatever it claims; a renewTime far in the future counts
// as a renewal when first seen, so the Lease expires one duration later if nobody renews
// it; a huge leaseDurationSeconds counts for an hour at most.
func TestMemberHandWrittenLeases(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	whole := formatHeld(informer.Shard{Ranges: []informer.ShardRange{informer.FullRange}})
	claim := map[string]string{HeldAnnotation: whole, AssignedAnnotation: whole}
	now := time.Now()
	handLease(t, cs, ns, "g", "g-future", "future", 2, now.Add(100*365*24*time.Hour), nil)
	handLease(t, cs, ns, "g", "g-x", "c", 60, now, claim) // speaks for c, a real member
	handLease(t, cs, ns, "g", "g-uni", "ü/x", 60, now, nil)
	handLease(t, cs, ns, "g", "g-renamed", "renamed-other", 60, now, nil)
	c := startMember(t, cs, ns, "g", "c")
	b := startMember(t, cs, ns, "g", "b")
	require.Eventually(t, b.assigned, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"b", "c", "future"}, b.m.Members(), "Leases not named after their holder are left out")
	assert.Empty(t, b.m.covered().Ranges, "c holds nothing: the Lease g-x does not speak for it (%s)", b.m.covered())
	for _, name := range []string{"g-x", "g-uni", "g-renamed"} {
		assert.Equal(t, 1, b.log.Count("left out", ns+"/"+name), "logged once: %s\n%s", name, b.log)
	}
	require.Eventually(t, func() bool { return len(b.m.Members()) == 2 && len(c.m.Members()) == 2 }, 10*time.Second, 20*time.Millisecond,
		"a Lease renewed in 100 years, never renewed, expires after its duration")
	assert.Equal(t, []string{"b", "c"}, b.m.Members())

	m, err := New(Options{Client: cs, Namespace: ns, Identity: "a", LeaseDuration: 15 * time.Second})
	require.NoError(t, err)
	huge := int32(math.MaxInt32)
	at := metav1.NewMicroTime(now)
	assert.Equal(t, now.Add(time.Hour), m.expiry(&at, &huge, now), "a huge leaseDurationSeconds counts for an hour")
	long, err := New(Options{Client: cs, Namespace: ns, Identity: "a", LeaseDuration: 2 * time.Hour})
	require.NoError(t, err)
	assert.Equal(t, now.Add(2*time.Hour), long.expiry(&at, &huge, now), "or for the member's own LeaseDuration if longer")
}
