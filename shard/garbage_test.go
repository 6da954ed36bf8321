package shard

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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
	// c's Lease exists before b starts, so that b's first lists show it: a c whose first
	// renewal is slower than b's two first lists (a loaded machine) would be missing from
	// the members below for a reason that has nothing to do with the hand-written Leases.
	require.Eventually(t, c.assigned, 10*time.Second, 10*time.Millisecond)
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
	assert.Equal(t, now.Add(time.Hour), m.expiry(&at, &huge, now, time.Time{}), "a huge leaseDurationSeconds counts for an hour")
	long, err := New(Options{Client: cs, Namespace: ns, Identity: "a", LeaseDuration: 2 * time.Hour})
	require.NoError(t, err)
	assert.Equal(t, now.Add(2*time.Hour), long.expiry(&at, &huge, now, time.Time{}), "or for the member's own LeaseDuration if longer")
}

// intersectRef is intersect by brute force: every pair of ranges.
func intersectRef(a, b informer.Shard) informer.Shard {
	var out []informer.ShardRange
	for _, x := range a.Ranges {
		for _, y := range b.Ranges {
			if lo, hi := max(x.Start, y.Start), min(x.Last, y.Last); lo <= hi {
				out = append(out, informer.ShardRange{Start: lo, Last: hi})
			}
		}
	}
	return informer.Shard{Field: a.Field, Ranges: out}.Normalize()
}

func TestIntersect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() informer.Shard {
		var s informer.Shard
		for range rng.IntN(8) {
			a, b := rng.Uint64N(64), rng.Uint64N(64)
			if rng.IntN(10) == 0 {
				b = math.MaxUint64 - rng.Uint64N(3)
			}
			s.Ranges = append(s.Ranges, informer.ShardRange{Start: min(a, b), Last: max(a, b)})
		}
		return s
	}
	for range 5000 {
		a, b := random(), random()
		want, got := intersectRef(a, b), intersect(a, b)
		require.True(t, want.Equal(got), "%v ∩ %v: want %v, got %v", a.Ranges, b.Ranges, want.Ranges, got.Ranges)
	}
}

// A Lease whose annotations list as many ranges as the API server lets them hold (a hand
// edit, or a forgery) costs a member a list of Leases, not seconds of CPU every RenewPeriod:
// what others hold is intersected in one pass over the ranges, not range by range.
func TestMemberEnormousAnnotations(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	var b strings.Builder
	var want informer.Shard
	for i := uint64(0); b.Len() < 120_000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		v := strconv.FormatUint(2*i, 16)
		b.WriteString(v + "-" + v)
		want.Ranges = append(want.Ranges, informer.ShardRange{Start: 2 * i, Last: 2 * i})
	}
	ranges := b.String()
	t.Logf("%d ranges in %d bytes per annotation", len(want.Ranges), len(ranges))
	// a sorts first: its share of a group of two is the first half, where the ranges are.
	handLease(t, cs, ns, "g", "g-a", "a", 60, time.Now(), map[string]string{HeldAnnotation: ranges, AssignedAnnotation: ranges})
	m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "b", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	ctx := waitCtx(t, 60*time.Second)
	require.NoError(t, m.renew(ctx))
	start := time.Now()
	require.NoError(t, m.observe(ctx))
	took := time.Since(start)
	t.Logf("one list of Leases took %v", took)
	assert.True(t, m.covered().Equal(want), "a holds every range it lists, all in its share")
	assert.Less(t, took, 2*time.Second)
}
