package shard

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
)

// Options a Lease cannot carry, or that would make a member hammer the server, are refused
// by New instead of being rounded or accepted.
func TestMemberOptionsRefused(t *testing.T) {
	cs := plain.Clientset(t)
	for _, tt := range []struct {
		name string
		o    Options
	}{
		{"lease duration not whole seconds", Options{LeaseDuration: 1999 * time.Millisecond, RenewPeriod: 1500 * time.Millisecond}},
		{"lease duration overflows a Lease", Options{LeaseDuration: time.Duration(math.MaxInt32+1) * time.Second}},
		{"renew period in a hot loop", Options{LeaseDuration: 3 * time.Second, RenewPeriod: time.Nanosecond}},
		{"renew period as long as the lease", Options{LeaseDuration: 3 * time.Second, RenewPeriod: 3 * time.Second}},
		// Renewed every 2.9 s, a Lease of 3 s looks expired to the others whenever a renewal
		// is 100 ms late: the group counts the member out and in again.
		{"renew period leaves no time for a late renewal", Options{LeaseDuration: 3 * time.Second, RenewPeriod: 2900 * time.Millisecond}},
		{"renew period over half the lease", Options{LeaseDuration: 3 * time.Second, RenewPeriod: 1501 * time.Millisecond}},
		{"group not a label value", Options{Group: "g-"}},
		{"group too long for a label value", Options{Group: strings.Repeat("g", 64)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Client, o.Namespace, o.Identity = cs, "default", "a"
			_, err := New(o)
			assert.Error(t, err)
		})
	}
	_, err := New(Options{Client: cs, Namespace: "default", Identity: "a", LeaseDuration: 2 * time.Second, RenewPeriod: 100 * time.Millisecond})
	assert.NoError(t, err, "whole seconds and a renew period of 100 ms are fine")
	_, err = New(Options{Client: cs, Namespace: "default", Identity: "a", LeaseDuration: 2 * time.Second, RenewPeriod: time.Second})
	assert.NoError(t, err, "a renew period of half the lease is fine")
}

// runMember runs member id of group g until the test ends, and waits until it knows its
// assignment.
func runMember(t *testing.T, cs kubernetes.Interface, ns, g, id string) *Member {
	t.Helper()
	m, err := New(Options{Client: cs, Namespace: ns, Group: g, Identity: id, LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { _, ok := m.Assignment(); return ok }, 10*time.Second, 20*time.Millisecond)
	return m
}

// otherLease writes the Lease of another member of group g, as that member would.
func otherLease(t *testing.T, cs kubernetes.Interface, ns, g, id, held, assigned string, leaving bool) {
	t.Helper()
	leave := "false"
	if leaving {
		leave = "true"
	}
	handLease(t, cs, ns, g, g+"-"+id, id, 60, time.Now(),
		map[string]string{HeldAnnotation: held, LeavingAnnotation: leave, AssignedAnnotation: assigned})
}

// A member counts on another only for what that other holds of its own assignment, as
// both see it: not on a leaving member, not on what an active member still holds of an
// earlier assignment, not beyond what the other says it is assigned. Otherwise two members
// giving up the same range each drop it because the other's Lease says it holds it, and
// nobody does.
func TestMemberCountsOnlyWhatOthersKeep(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	whole := formatHeld(informer.Shard{Ranges: []informer.ShardRange{informer.FullRange}})
	otherLease(t, cs, ns, "g", "a", whole, "", true)     // leaving, still holding everything
	otherLease(t, cs, ns, "g", "c", "", "", false)       // joined, holds nothing synced yet
	otherLease(t, cs, ns, "g", "d", whole, whole, false) // active, holds and claims an earlier assignment
	// e holds the whole space too but claims the first half: as the group was when it last
	// looked (its view lags). b counts on e only where e's claim and b's view of e agree.
	otherLease(t, cs, ns, "g", "e", whole, formatHeld(Split(informer.ShardByUID, 2)[0]), false)

	m := runMember(t, cs, ns, "g", "b")

	split := Split(informer.ShardByUID, 4) // live: b, c, d, e
	a, _ := m.Assignment()
	assert.True(t, a.Equal(split[0]), "b is assigned the first quarter: %s", a)
	assert.Equal(t, []string{"b", "c", "d", "e"}, m.Members())
	assert.True(t, m.OthersHeld().Equal(informer.Shard{Ranges: []informer.ShardRange{informer.FullRange}}), "the Leases say the whole space is held")
	// d: its own quarter (its claim is wider). e: its quarter [3/4, 1) is outside its claim
	// [0, 1/2): nothing.
	assert.True(t, m.covered().Equal(split[2]), "only d's own quarter counts as covered: %s", m.covered())

	// Leave: from that moment the member owns nothing, before its next list of Leases.
	lctx, lcancel := context.WithCancel(context.Background())
	lcancel()
	assert.ErrorIs(t, m.Leave(lctx), context.Canceled, "a Leave whose context has ended returns its error")
	assert.False(t, m.Owns("anything"), "a leaving member owns nothing")
	_, ok := m.Assignment()
	assert.False(t, ok, "a leaving member has no assignment")
}

// Members that hash another field (a change of Options.Field rolling through the replicas)
// split their own hash space: left out of this field's split, so that every object is held
// by a member of each field (twice for a while) rather than by a member of neither. A Lease
// that does not say its field is counted as hashing the same one.
func TestMemberLeavesOutMembersOfAnotherField(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	otherLease(t, cs, ns, "g", "c", "", "", false) // says no field
	otherLease(t, cs, ns, "g", "n", "", "", false)
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "g-n", metav1.GetOptions{})
	require.NoError(t, err)
	l.Annotations[FieldAnnotation] = string(informer.ShardByNamespace)
	_, err = cs.CoordinationV1().Leases(ns).Update(context.Background(), l, metav1.UpdateOptions{})
	require.NoError(t, err)

	m := runMember(t, cs, ns, "g", "b")
	assert.Equal(t, []string{"b", "c"}, m.Members(), "n hashes namespaces: not in the split of UIDs")
	a, _ := m.Assignment()
	assert.True(t, a.Equal(Split(informer.ShardByUID, 2)[0]), "b is assigned half: %s", a)
	mine, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "g-b", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, string(informer.ShardByUID), mine.Annotations[FieldAnnotation], "b says what it hashes")
}

// restrictedUser returns a config of a user of cp who may do verbs on Leases in ns, and
// nothing else.
func restrictedUser(t *testing.T, cp *testenv.ControlPlane, ns string, verbs ...string) *rest.Config {
	t.Helper()
	name, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cs := cp.Clientset(t)
	_, err = cs.RbacV1().Roles(ns).Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: verbs}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return cfg
}

// A replica that may keep its Lease but not list the others' would be given a range by
// them and never take it: Run fails at once and deletes its Lease.
func TestMemberRunFailsWithoutListingLeases(t *testing.T) {
	ns := plain.Namespace(t)
	cfg := restrictedUser(t, plain, ns, "get", "create", "update", "delete")
	user, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	m, err := New(Options{Client: user, Namespace: ns, Group: "g", Identity: "b", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- m.Run(context.Background()) }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "the server's refusal is visible: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	_, err = plain.Clientset(t).CoordinationV1().Leases(ns).Get(context.Background(), "g-b", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the Lease is gone, so nobody assigns it a range: %v", err)
}

// An Informer whose resource the replica may not list cannot hold its range: Run says so
// with the server's answer instead of leaving the range held by nobody, and WaitForSync
// returns Run's error instead of waiting for its context.
func TestShardInformerParkedBeforeSync(t *testing.T) {
	ns := plain.Namespace(t)
	cfg := restrictedUser(t, plain, ns, "get", "list", "create", "update", "delete")
	user, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	f, err := metadataonly.NewFactory(cfg, metadataonly.Options{})
	require.NoError(t, err)
	ctx := waitCtx(t, 60*time.Second)
	require.NoError(t, f.Start(ctx))
	defer f.Shutdown()
	m, err := New(Options{Client: user, Namespace: ns, Group: "g", Identity: "b", LeaseDuration: 30 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	inf, err := NewInformer(m, f, "configmaps", InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}})
	require.NoError(t, err)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = m.Run(mctx) }()
	ran := make(chan error, 1)
	go func() { ran <- inf.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	werr := inf.WaitForSync(wctx)
	assert.ErrorIs(t, werr, informer.ErrParked, "Run's error, not the context's: %v", werr)
	assert.NoError(t, wctx.Err(), "returned before the context ended")
	err = <-ran
	require.Error(t, err)
	assert.ErrorIs(t, err, informer.ErrParked)
	assert.True(t, apierrors.IsForbidden(err), "the server's answer is in the error: %v", err)

	assert.ErrorIs(t, inf.Run(ctx), ErrRunOnce, "an Informer runs once")
}

func TestShardInformerRefusesNil(t *testing.T) {
	m, err := New(Options{Client: plain.Clientset(t), Namespace: "default", Identity: "a"})
	require.NoError(t, err)
	f, err := metadataonly.NewFactory(plain.AdminConfig(), metadataonly.Options{})
	require.NoError(t, err)
	for name, call := range map[string]func() error{
		"nil member": func() error { _, err := NewInformer(nil, f, "pods", InformerOptions{}); return err },
		"nil factory": func() error {
			_, err := NewInformer[*metav1.PartialObjectMetadata](m, nil, "pods", InformerOptions{})
			return err
		},
		"empty resource": func() error { _, err := NewInformer(m, f, "", InformerOptions{}); return err },
	} {
		assert.Error(t, call(), name)
	}
}
