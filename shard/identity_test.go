package shard

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// running is a Member whose Run goes on in the background until stop or the test's end.
type running struct {
	m    *Member
	log  *testsupport.Lines
	stop context.CancelFunc
	done chan struct{} // closed when Run has returned err
	err  error
}

func startMember(t *testing.T, cs kubernetes.Interface, ns, g, id string) *running {
	t.Helper()
	r := &running{log: &testsupport.Lines{}, done: make(chan struct{})}
	var err error
	r.m, err = New(Options{Client: cs, Namespace: ns, Group: g, Identity: id, LeaseDuration: 3 * time.Second,
		RenewPeriod: 100 * time.Millisecond, Logger: r.log.Logger(1)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.err = r.m.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Errorf("Run of %s did not return", id)
		}
	})
	return r
}

func (r *running) assigned() bool { _, ok := r.m.Assignment(); return ok }

func getLease(t *testing.T, cs kubernetes.Interface, ns, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return l
}

// renewedAfter waits until the Lease name is renewed by instance after it has been read.
func renewedAfter(t *testing.T, cs kubernetes.Interface, ns, name, instance string) {
	t.Helper()
	before := getLease(t, cs, ns, name).Spec.RenewTime.Time
	require.Eventually(t, func() bool {
		l := getLease(t, cs, ns, name)
		return l.Annotations[InstanceAnnotation] == instance && l.Spec.RenewTime.After(before)
	}, 10*time.Second, 20*time.Millisecond, "Lease %s renewed by %s", name, instance)
}

// Two replicas given one identity (a careless deployment), started one after the other or
// together: one keeps the Lease and renews it undisturbed; the other never takes it, never
// has an assignment, and fails with ErrIdentityInUse naming the Lease, leaving the Lease to
// the first.
func TestMemberSameIdentity(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	for _, tt := range []struct {
		name     string
		together bool
	}{{"second later", false}, {"together", true}} {
		t.Run(tt.name, func(t *testing.T) {
			g := "g" + map[bool]string{false: "1", true: "2"}[tt.together]
			a := startMember(t, cs, ns, g, "b")
			if !tt.together {
				require.Eventually(t, a.assigned, 10*time.Second, 10*time.Millisecond)
			}
			b := startMember(t, cs, ns, g, "b")
			var keeper, loser *running
			var err error
			select {
			case <-a.done:
				keeper, loser, err = b, a, a.err
			case <-b.done:
				keeper, loser, err = a, b, b.err
			case <-time.After(20 * time.Second):
				t.Fatal("neither member noticed the other")
			}
			require.ErrorIs(t, err, ErrIdentityInUse)
			assert.Contains(t, err.Error(), ns+"/"+g+"-b", "the error names the Lease")
			if !tt.together {
				assert.Same(t, b, loser, "the replica already running keeps its Lease")
			}
			assert.Zero(t, loser.log.Count("Shard membership changed"), "the other replica never joined the group")
			require.Eventually(t, keeper.assigned, 10*time.Second, 10*time.Millisecond)
			renewedAfter(t, cs, ns, g+"-b", keeper.m.instance)
			assert.Zero(t, keeper.log.Count("Cannot renew"), "the replica keeping the Lease renews it undisturbed:\n%s", keeper.log)
			assert.Equal(t, []string{"b"}, keeper.m.Members())

			// A third, whose context has ended before Run: it leaves the Lease alone.
			c, err := New(Options{Client: cs, Namespace: ns, Group: g, Identity: "b"})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			assert.ErrorIs(t, c.Run(ctx), context.Canceled)
			assert.ErrorIs(t, c.Run(ctx), ErrRunOnce, "a Member runs once")
			assert.Equal(t, keeper.m.instance, getLease(t, cs, ns, g+"-b").Annotations[InstanceAnnotation])
			renewedAfter(t, cs, ns, g+"-b", keeper.m.instance)
		})
	}
}

// Group "a" with identity "b-c" and group "a-b" with identity "c" name the same Lease: the
// replica that finds it kept fails with ErrIdentityInUse saying so, not that identities must
// be unique in a group, and the other keeps its Lease.
func TestMemberLeaseNameOfAnotherGroup(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	a := startMember(t, cs, ns, "a", "b-c")
	require.Eventually(t, a.assigned, 10*time.Second, 10*time.Millisecond)
	b := startMember(t, cs, ns, "a-b", "c")
	select {
	case <-b.done:
	case <-a.done:
		t.Fatalf("the member keeping the Lease ended: %v", a.err)
	case <-time.After(20 * time.Second):
		t.Fatal("the second member never noticed the first")
	}
	require.ErrorIs(t, b.err, ErrIdentityInUse)
	assert.Contains(t, b.err.Error(), `group "a" with identity "b-c" names the same Lease as this member's group "a-b" with identity "c"`)
	assert.NotContains(t, b.err.Error(), "unique in a group")
	renewedAfter(t, cs, ns, "a-b-c", a.m.instance)
	assert.Equal(t, []string{"b-c"}, a.m.Members())
}

// A replica restarted under the name of one that died (a StatefulSet's Pod) finds its
// identity's Lease not yet expired: it waits, says so, and takes the Lease once it expires,
// without an error.
func TestMemberTakesOverAnExpiredLease(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	now := metav1.NewMicroTime(time.Now())
	secs, id := int32(2), "b"
	_, err := cs.CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "g-b", Labels: map[string]string{GroupLabel: "g"},
			Annotations: map[string]string{InstanceAnnotation: "dead", HeldAnnotation: formatHeld(Split(informer.ShardByUID, 1)[0])}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, RenewTime: &now},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	r := startMember(t, cs, ns, "g", "b")
	require.Eventually(t, r.assigned, 20*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, r.log.Count("kept by another instance", `"instance"="dead"`), "the wait is logged once:\n%s", r.log)
	assert.GreaterOrEqual(t, time.Since(now.Time), time.Duration(secs)*time.Second, "not before the Lease expired")
	assert.Equal(t, r.m.instance, getLease(t, cs, ns, "g-b").Annotations[InstanceAnnotation])
	select {
	case <-r.done:
		t.Fatalf("Run returned: %v", r.err)
	default:
	}
}

// A member whose Lease another instance takes over (this one could not renew it for a
// LeaseDuration, and a replica of the same name replaced it) stops: Run fails with
// ErrIdentityInUse without deleting the Lease, and its Informer ends and releases what it
// held, instead of holding a range that the group gives to the other.
func TestMemberLeaseTakenOver(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	configMaps(t, plain, ns, "c", 5)
	f := startFactory(t, plain, metadataonly.Options{}, metadataonly.NewFactory)
	r := startMember(t, cs, ns, "g", "b")
	inf, err := NewInformer(r.m, f, "configmaps", InformerOptions{Options: []informer.Option{informer.WithNamespace(ns)}})
	require.NoError(t, err)
	ictx := waitCtx(t, 60*time.Second)
	infDone := make(chan error, 1)
	go func() { infDone <- inf.Run(ictx) }()
	require.NoError(t, inf.WaitForSync(ictx))

	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l := getLease(t, cs, ns, "g-b")
		l.Annotations[InstanceAnnotation] = "other"
		_, err := cs.CoordinationV1().Leases(ns).Update(context.Background(), l, metav1.UpdateOptions{})
		return err
	}))

	select {
	case <-r.done:
		require.ErrorIs(t, r.err, ErrIdentityInUse)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not notice the takeover")
	}
	select {
	case err := <-infDone:
		assert.ErrorIs(t, err, ErrIdentityInUse, "the Informer says why it ended")
		assert.False(t, errors.Is(err, context.Canceled))
	case <-time.After(20 * time.Second):
		t.Fatal("the Informer goes on holding the range")
	}
	assert.Empty(t, inf.Informers(), "the Informer released what it held")
	assert.Empty(t, f.Statuses())
	_, ok := r.m.Assignment()
	assert.False(t, ok, "a stopped member has no assignment")
	assert.Equal(t, "other", getLease(t, cs, ns, "g-b").Annotations[InstanceAnnotation], "the Lease is left to the other instance")
}

// Careless calls get errors, not panics or hangs: a Member not made by New, Leave before
// Run and twice, and a Run after Leave (the member joins as leaving and is given nothing).
func TestMemberMisuse(t *testing.T) {
	cs := plain.Clientset(t)
	ns := plain.Namespace(t)
	var zero Member
	assert.Error(t, zero.Run(waitCtx(t, 5*time.Second)), "a Member not made by New")
	f, err := metadataonly.NewFactory(plain.AdminConfig(), metadataonly.Options{})
	require.NoError(t, err)
	_, err = NewInformer(&zero, f, "configmaps", InformerOptions{})
	assert.Error(t, err, "an Informer of a Member not made by New")

	m, err := New(Options{Client: cs, Namespace: ns, Group: "g", Identity: "b", LeaseDuration: 3 * time.Second, RenewPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	ctx := waitCtx(t, 10*time.Second)
	require.NoError(t, m.Leave(ctx), "Leave before Run: nothing to hand over")
	require.NoError(t, m.Leave(ctx), "Leave twice")

	c := startMember(t, cs, ns, "g", "c")
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(rctx) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool {
		l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "g-b", metav1.GetOptions{})
		return err == nil && l.Annotations[LeavingAnnotation] == "true"
	}, 10*time.Second, 20*time.Millisecond, "Run after Leave keeps a Lease that says it leaves")
	renewedAfter(t, cs, ns, "g-b", m.instance)
	require.Eventually(t, c.assigned, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"c"}, c.m.Members(), "the leaving member is given nothing")
	_, ok := m.Assignment()
	assert.False(t, ok)
}

// A replica that may no longer renew its Lease (its RBAC revoked: 403) is counted out by
// the others once the Lease expires, and they take its range over. It counts itself out at
// the same point, says so, and releases its range as they hold it synced, instead of
// holding it twice for as long as the 403 lasts; no object is missing at any sampled
// moment. Allowed again, it rejoins.
func TestMemberRenewForbidden(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 300)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"get", "list", "create", "delete"}})
	rules := rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"update"}}
	revoke := cp.Grant(t, user, ns, rules)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	g := newGroup(t, cp, ns)
	g.clients = map[string]kubernetes.Interface{"r1": client}
	g.add("r0")
	r1 := g.add("r1")
	require.Eventually(t, func() bool { return g.settled(2) }, 30*time.Second, 50*time.Millisecond, "2 replicas settle")
	endSampling := g.startSampling(all)

	revoke()
	if !assert.Eventually(t, func() bool { return len(r1.held()) == 0 && g.missing(all) == 0 }, 30*time.Second, 50*time.Millisecond,
		"r1 hands its range over") {
		g.dump()
		t.FailNow()
	}
	assert.Equal(t, 1, r1.log.Count("not been renewed"), "r1 says it is counted out:\n%s", r1.log)
	_, ok := r1.m.Assignment()
	assert.False(t, ok, "r1 owns nothing while its Lease is expired")

	cp.Grant(t, user, ns, rules)
	require.Eventually(t, func() bool { return g.settled(2) }, 30*time.Second, 50*time.Millisecond, "r1 rejoins")
	misses, samples := endSampling()
	t.Logf("%d samples of the union, %d with an object missing", samples, len(misses))
	assert.Empty(t, misses, "no gap")
	g.checkExactlyOnce(all)
}

// A replica whose Lease someone deletes, and that may no longer create it (its RBAC), fails
// to renew as one whose updates are forbidden does: once the Lease would have expired, the
// other members have taken its range, and it counts itself out as they do and hands its
// range over, instead of owning it with them for as long as the Lease is missing; no
// object is missing at any sampled moment. Allowed again, it creates its Lease and rejoins.
func TestMemberLeaseDeletedCannotCreate(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 300)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"get", "list", "update", "delete"}})
	rules := rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}}
	revoke := cp.Grant(t, user, ns, rules)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	g := newGroup(t, cp, ns)
	g.clients = map[string]kubernetes.Interface{"r1": client}
	r0 := g.add("r0")
	r1 := g.add("r1")
	require.Eventually(t, func() bool { return g.settled(2) }, 30*time.Second, 50*time.Millisecond, "2 replicas settle")
	endSampling := g.startSampling(all)

	revoke()
	require.NoError(t, cp.Clientset(t).CoordinationV1().Leases(ns).Delete(context.Background(), "test-r1", metav1.DeleteOptions{}))
	whole := Split(informer.ShardByUID, 1)[0]
	if !assert.Eventually(t, func() bool {
		a, ok := r0.m.Assignment()
		return ok && a.Equal(whole) && len(r1.held()) == 0 && g.missing(all) == 0
	}, 30*time.Second, 50*time.Millisecond, "r1 hands its range over to r0") {
		g.dump()
		t.FailNow()
	}
	for u := range all {
		require.False(t, r1.m.Owns(string(u)), "r1 owns nothing while its Lease is missing and expired")
	}
	assert.Equal(t, 1, r1.log.Count("not been renewed"), "r1 says it is counted out:\n%s", r1.log)

	cp.Grant(t, user, ns, rules)
	require.Eventually(t, func() bool { return g.settled(2) }, 30*time.Second, 50*time.Millisecond, "r1 rejoins")
	misses, samples := endSampling()
	t.Logf("%d samples of the union, %d with an object missing", samples, len(misses))
	assert.Empty(t, misses, "no gap")
	g.checkExactlyOnce(all)
}

// The namespace of the group's Leases is deleted under a running group (its Leases with
// it): no member can renew, and each list shows none of the group. Members keep their
// assignment rather than each taking the whole space on a list that no longer shows the
// group (every object held by every replica); a member whose Lease someone deletes says so
// and creates it again.
func TestMemberLeaseNamespaceDeleted(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 300)
	g := newGroup(t, cp, ns)
	g.leaseNS = cp.Namespace(t)
	// The members' requests pass a gate, closed while the Leases are deleted: a list that
	// shows some of them gone is a view in which a member rightly takes the others' ranges.
	var gate gate
	cfg := cp.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gateRT{rt: rt, g: &gate} })
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	g.clients = map[string]kubernetes.Interface{}
	for _, id := range []string{"r0", "r1", "r2"} {
		g.clients[id] = client
		g.add(id)
	}
	require.Eventually(t, func() bool { return g.settled(3) }, 30*time.Second, 50*time.Millisecond, "3 replicas settle")
	endSampling := g.startSampling(all)
	cs := cp.Clientset(t)

	g.mu.Lock()
	r1 := g.replicas["r1"]
	g.mu.Unlock()
	old := getLease(t, cs, g.leaseNS, "test-r1")
	require.NoError(t, cs.CoordinationV1().Leases(g.leaseNS).Delete(context.Background(), "test-r1", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		l, err := cs.CoordinationV1().Leases(g.leaseNS).Get(context.Background(), "test-r1", metav1.GetOptions{})
		return err == nil && l.UID != old.UID
	}, 10*time.Second, 20*time.Millisecond, "r1 creates its Lease again")
	assert.Equal(t, 1, r1.log.Count("was deleted while this replica kept it"), "r1 says its Lease was deleted:\n%s", r1.log)
	require.Eventually(t, func() bool { return g.settled(3) }, 30*time.Second, 50*time.Millisecond, "3 replicas settle again")

	gate.mu.Lock()
	require.NoError(t, cs.CoreV1().Namespaces().Delete(context.Background(), g.leaseNS, metav1.DeleteOptions{}))
	// No namespace controller runs: delete its Leases as it would.
	require.NoError(t, cs.CoordinationV1().Leases(g.leaseNS).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}))
	gate.mu.Unlock()
	// Until every Lease would have expired, and a few lists after that.
	require.Eventually(t, func() bool {
		for _, r := range g.all() {
			if time.Since(r.m.renewedAt()) < testLease+3*testRenew {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond)
	g.checkExactlyOnce(all)
	for _, r := range g.all() {
		assert.Equal(t, 1, r.log.Count("Cannot renew", "being terminated"), "%s says why it cannot renew:\n%s", r.id, r.log)
	}
	misses, samples := endSampling()
	t.Logf("%d samples of the union, %d with an object missing", samples, len(misses))
	assert.Empty(t, misses, "no gap")
}

// gate holds requests while its mu is locked; those under way finish first.
type gate struct{ mu sync.RWMutex }

type gateRT struct {
	rt http.RoundTripper
	g  *gate
}

func (g gateRT) RoundTrip(r *http.Request) (*http.Response, error) {
	g.g.mu.RLock()
	defer g.g.mu.RUnlock()
	return g.rt.RoundTrip(r)
}

// A replica that keeps renewing its Lease but may no longer list the group's (its RBAC
// revoked) follows an assignment the others no longer compute: when another member dies,
// the others give that range to it too, and it never takes it. After a LeaseDuration
// without a list it stops renewing, says so, and the others count it out and take the
// whole space, so that the dead member's range is not held by nobody for as long as the
// lists fail.
func TestMemberListForbidden(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"get", "create", "update", "delete"}})
	revoke := cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"list"}})
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	a := startMember(t, cs, ns, "g", "a")
	b := startMember(t, client, ns, "g", "b")
	c := startMember(t, cs, ns, "g", "c")
	abc := []string{"a", "b", "c"}
	require.Eventually(t, func() bool {
		return slices.Equal(a.m.Members(), abc) && slices.Equal(b.m.Members(), abc) && slices.Equal(c.m.Members(), abc)
	}, 20*time.Second, 20*time.Millisecond, "three members")

	revoke()
	c.m.mu.Lock()
	c.m.crash = true // dies: its Lease stays until it expires
	c.m.mu.Unlock()
	c.stop()
	<-c.done
	whole := Split(informer.ShardByUID, 1)[0]
	covered := func() bool {
		var u informer.Shard
		for _, r := range []*running{a, b} {
			if s, ok := r.m.Assignment(); ok {
				u = u.Union(s)
			}
		}
		return !u.IsZero() && u.Covers(whole)
	}
	if !assert.Eventually(t, covered, 30*time.Second, 50*time.Millisecond, "a and b own the whole space again") {
		t.Fatalf("members as a sees them %v, as b does %v", a.m.Members(), b.m.Members())
	}
	assert.Equal(t, 1, b.log.Count("Cannot list the shard group's Leases for a LeaseDuration"), "b says why:\n%s", b.log)
}

// When no member can renew or list for longer than a LeaseDuration (an outage of the API
// server, or here of their RBAC), every Lease expires. When they come back, each at its own
// moment, none takes the whole space (and lists it) because the others' Leases still look
// expired: a Lease live when a member last saw it counts from the member's first list after
// the outage.
func TestMemberOutage(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"get", "create", "delete"}})
	rules := rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"list", "update"}}
	revoke := cp.Grant(t, user, ns, rules)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ids := []string{"a", "b", "c"}
	var rs []*running
	for _, id := range ids {
		// A third of a RenewPeriod apart, as replicas started at different moments renew:
		// the first back renews and lists before the others renew.
		rs = append(rs, startMember(t, client, ns, "g", id))
		time.Sleep(33 * time.Millisecond)
	}
	settled := func() bool {
		for i, r := range rs {
			s, ok := r.m.Assignment()
			if !ok || !slices.Equal(r.m.Members(), ids) || !s.Equal(Split(informer.ShardByUID, 3)[i]) {
				return false
			}
		}
		return true
	}
	require.Eventually(t, settled, 20*time.Second, 20*time.Millisecond, "three members")

	var mu sync.Mutex
	var wholes []string
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			for i, r := range rs {
				if s, ok := r.m.Assignment(); ok && len(s.Ranges) == 1 && s.Ranges[0] == informer.FullRange {
					mu.Lock()
					wholes = append(wholes, ids[i])
					mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	revoke()
	require.Eventually(t, func() bool {
		for _, r := range rs {
			if r.log.Count("Cannot list the shard group's Leases for a LeaseDuration") == 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "every member stops renewing")
	cp.Grant(t, user, ns, rules)
	require.Eventually(t, settled, 30*time.Second, 20*time.Millisecond, "three members again")
	time.Sleep(500 * time.Millisecond)
	close(stop)
	<-sampled
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, wholes, "no member took the whole space")
}
