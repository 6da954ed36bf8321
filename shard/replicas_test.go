package shard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

const (
	testLease = 3 * time.Second
	testRenew = 300 * time.Millisecond
)

// replica is one member of a group with a metadata-only informer of ConfigMaps, in this
// test process.
type replica struct {
	id     string
	log    *testsupport.Lines // the Member's log
	m      *Member
	inf    *Informer[*metav1.PartialObjectMetadata]
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu      sync.Mutex
	handled map[types.UID]bool // what the handler's adds and deletes say is held
}

// group is the replicas of one test, over the ConfigMaps of ns.
type group struct {
	t        *testing.T
	cp       *testenv.ControlPlane
	ns       string
	f        *metadataonly.Factory
	received atomic.Int64 // response bytes of the factory's ConfigMap requests
	mu       sync.Mutex
	replicas map[string]*replica
	added    int                             // replicas added so far
	separate bool                            // each replica added gets a factory of its own (no informer shared)
	clients  map[string]kubernetes.Interface // the Lease client of a replica, if not the admin's
	leaseNS  string
}

// all returns the replicas (the sampler reads them while the test adds one).
func (g *group) all() []*replica {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*replica, 0, len(g.replicas))
	for _, r := range g.replicas {
		out = append(out, r)
	}
	return out
}

func (g *group) remove(id string) *replica {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.replicas[id]
	delete(g.replicas, id)
	return r
}

func newGroup(t *testing.T, cp *testenv.ControlPlane, ns string) *group {
	g := &group{t: t, cp: cp, ns: ns, replicas: map[string]*replica{}}
	g.f = g.newFactory()
	return g
}

// newFactory starts a metadata-only factory that counts what it receives into g.received.
func (g *group) newFactory() *metadataonly.Factory {
	cfg := g.cp.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingRT{rt: rt, n: &g.received} })
	f, _, _ := testsupport.StartFactory(g.t, cfg, metadataonly.Options{Logger: (&testsupport.Lines{}).Logger(0)}, metadataonly.NewFactory)
	return f
}

// countingRT counts the response bytes the factory's informers receive (lists, watches,
// probes).
type countingRT struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil && strings.Contains(r.URL.Path, "/configmaps") {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.n.Add(int64(k))
	return k, err
}

// add starts a replica. Replicas share one factory: informers of different shards are
// different informers, so each replica's cache is its own (as in separate processes).
func (g *group) add(id string) *replica {
	t := g.t
	var client kubernetes.Interface = g.cp.Clientset(t)
	g.mu.Lock()
	if c := g.clients[id]; c != nil {
		client = c
	}
	g.mu.Unlock()
	log := &testsupport.Lines{}
	lns := g.ns
	if g.leaseNS != "" {
		lns = g.leaseNS
	}
	m, err := New(Options{Client: client, Namespace: lns, Group: "test", Identity: id,
		LeaseDuration: testLease, RenewPeriod: testRenew, Logger: log.Logger(0)})
	require.NoError(t, err)
	r := &replica{id: id, log: log, m: m, handled: map[types.UID]bool{}}
	var h cache.ResourceEventHandler = cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { r.setHandled(obj.(*metav1.PartialObjectMetadata).UID, true) },
		UpdateFunc: func(_, obj any) {
			r.setHandled(obj.(*metav1.PartialObjectMetadata).UID, true)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			r.setHandled(obj.(*metav1.PartialObjectMetadata).UID, false)
		},
	}
	g.mu.Lock()
	items := g.added%2 == 1 // every other replica's handler takes Items
	g.added++
	g.mu.Unlock()
	if items {
		h = informer.ItemHandlerFuncs[*metav1.PartialObjectMetadata]{
			AddFunc:    func(it informer.Item[*metav1.PartialObjectMetadata], _ bool) { r.setHandled(it.UID(), true) },
			UpdateFunc: func(_, it informer.Item[*metav1.PartialObjectMetadata]) { r.setHandled(it.UID(), true) },
			DeleteFunc: func(it informer.Item[*metav1.PartialObjectMetadata], _ bool) { r.setHandled(it.UID(), false) },
		}
	}
	f := g.f
	if g.separate {
		f = g.newFactory()
	}
	r.inf, err = NewInformer(m, f, "configmaps", InformerOptions{Handler: h,
		Options: []informer.Option{informer.WithNamespace(g.ns)}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done.Add(2)
	go func() { defer r.done.Done(); _ = m.Run(ctx) }()
	go func() { defer r.done.Done(); _ = r.inf.Run(ctx) }()
	g.mu.Lock()
	g.replicas[id] = r
	g.mu.Unlock()
	t.Cleanup(func() { r.stop(false) })
	return r
}

func (r *replica) setHandled(uid types.UID, in bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if in {
		r.handled[uid] = true
	} else {
		delete(r.handled, uid)
	}
}

func (r *replica) handledSet() map[types.UID]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[types.UID]bool, len(r.handled))
	for k := range r.handled {
		out[k] = true
	}
	return out
}

// stop ends the replica; crash leaves its Lease to expire, as a killed process would.
func (r *replica) stop(crash bool) {
	r.m.mu.Lock()
	r.m.crash = crash
	r.m.mu.Unlock()
	r.cancel()
	r.done.Wait()
}

func (r *replica) held() map[types.UID]bool {
	objs, _ := r.inf.List()
	return uidSet(objs)
}

// dump logs each replica's view, for a failure.
func (g *group) dump() {
	for _, r := range g.all() {
		a, _ := r.m.Assignment()
		r.inf.mu.Lock()
		var ps []string
		for _, p := range r.inf.pieces {
			ps = append(ps, fmt.Sprintf("%s synced=%v phase=%s", p.shard, p.synced, p.inf.Status().Phase))
		}
		r.inf.mu.Unlock()
		g.t.Logf("%s: members %v assigned %s others %s pieces %v", r.id, r.m.Members(), a, r.m.OthersHeld(), ps)
	}
}

// settled: every replica sees n members and holds exactly its assignment, synced.
func (g *group) settled(n int) bool {
	for _, r := range g.all() {
		if len(r.m.Members()) != n || !r.inf.Settled() {
			return false
		}
	}
	return true
}

// counts returns, per UID, how many replicas hold it.
func (g *group) counts() map[types.UID]int {
	out := map[types.UID]int{}
	for _, r := range g.all() {
		for u := range r.held() {
			out[u]++
		}
	}
	return out
}

// missing returns how many of all no replica holds.
func (g *group) missing(all map[types.UID]bool) int {
	c := g.counts()
	n := 0
	for u := range all {
		if c[u] == 0 {
			n++
		}
	}
	return n
}

// checkExactlyOnce: every object is held by exactly one replica, and each replica's
// handler saw exactly what it holds.
func (g *group) checkExactlyOnce(all map[types.UID]bool) {
	t := g.t
	c := g.counts()
	for u := range all {
		assert.Equal(t, 1, c[u], "object %s", u)
	}
	assert.Len(t, c, len(all), "no object held that the server does not have")
	for _, r := range g.all() {
		held := r.held()
		assert.Eventually(t, func() bool { return assert.ObjectsAreEqual(held, r.handledSet()) },
			5*time.Second, 20*time.Millisecond, "handler of %s saw what it holds", r.id)
		a, _ := r.m.Assignment()
		for u := range held {
			assert.True(t, r.m.Owns(string(u)), "%s owns %s (%s)", r.id, u, a)
		}
	}
}

// startSampling samples the union in the background (sample) until the function it returns
// is called, which returns what sample found.
func (g *group) startSampling(all map[types.UID]bool) func() (misses []time.Duration, samples int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	var misses []time.Duration
	var samples int
	go func() { defer close(done); misses, samples = g.sample(all, stop) }()
	return func() ([]time.Duration, int) {
		close(stop)
		<-done
		return misses, samples
	}
}

// sample polls the union until stop is closed and returns the sampled instants with
// missing objects, and how many samples it took.
func (g *group) sample(all map[types.UID]bool, stop <-chan struct{}) (misses []time.Duration, samples int) {
	start := time.Now()
	for {
		select {
		case <-stop:
			return misses, samples
		default:
		}
		if g.missing(all) > 0 {
			misses = append(misses, time.Since(start))
		}
		samples++
		time.Sleep(20 * time.Millisecond)
	}
}

// bulkConfigMaps creates n ConfigMaps in ns with 8 writers and returns every UID there.
func bulkConfigMaps(t *testing.T, cp *testenv.ControlPlane, ns string, n int) map[types.UID]bool {
	cs := cp.Clientset(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i)}}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return serverUIDs(t, cp, ns)
}

// TestShardReplicasHandoff: three replicas hold every object exactly once; a killed one's
// range is covered within the Lease duration plus one sync with no gap after that; a new
// replica rebalances without a gap at any sampled moment.
func TestShardReplicasHandoff(t *testing.T) {
	cp := gated
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 600)
	g := newGroup(t, cp, ns)
	for _, id := range []string{"r0", "r1", "r2"} {
		g.add(id)
	}
	if !assert.Eventually(t, func() bool { return g.settled(3) }, 30*time.Second, 50*time.Millisecond, "3 replicas settle") {
		g.dump()
		t.FailNow()
	}
	g.checkExactlyOnce(all)

	// Kill r1: its Lease expires, r0 and r2 take its range over.
	killed := time.Now()
	g.remove("r1").stop(true)
	var covered time.Duration
	missesAfter := 0 // samples with an object missing once the range was covered again
	require.Eventually(t, func() bool {
		miss := g.missing(all) > 0
		if !miss && covered == 0 {
			covered = time.Since(killed)
		}
		if miss && covered != 0 {
			missesAfter++
		}
		return covered != 0 && g.settled(2)
	}, 30*time.Second, 20*time.Millisecond, "2 replicas settle")
	assert.Zero(t, missesAfter, "no object missing once the dead replica's range is covered")
	if covered == 0 {
		covered = time.Since(killed)
	}
	settled2 := time.Since(killed)
	t.Logf("kill: range covered again %v after the kill (Lease %v), settled after %v", covered.Round(time.Millisecond), testLease, settled2.Round(time.Millisecond))
	assert.Less(t, covered, testLease+testRenew+10*time.Second, "covered within the Lease duration plus one sync")
	g.checkExactlyOnce(all)

	// Add r3 (and bring r1 back under a new name): every sample of the union is complete.
	endSampling := g.startSampling(all)
	added := time.Now()
	g.add("r3")
	require.Eventually(t, func() bool { return g.settled(3) }, 30*time.Second, 50*time.Millisecond, "rebalanced to 3")
	rebalance := time.Since(added)
	misses, samples := endSampling()
	t.Logf("add: rebalanced from 2 to 3 replicas in %v; %d samples of the union, %d with an object missing", rebalance.Round(time.Millisecond), samples, len(misses))
	assert.Empty(t, misses, "no gap while rebalancing")
	assert.Greater(t, samples, 5)
	g.checkExactlyOnce(all)

	// Objects created and deleted while sharded land in exactly one replica.
	cs := cp.Clientset(t)
	for i := range 30 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "late-" + strconv.Itoa(i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), "cm-1", metav1.DeleteOptions{}))
	all = serverUIDs(t, cp, ns)
	require.Eventually(t, func() bool {
		c := g.counts()
		if len(c) != len(all) {
			return false
		}
		for u := range all {
			if c[u] != 1 {
				return false
			}
		}
		return true
	}, 10*time.Second, 50*time.Millisecond)
	g.checkExactlyOnce(all)
}

// TestShardBalance measures objects per replica with N = 1, 2, 4 on both paths (server
// and client filtering) and checks that they hold the same sets.
func TestShardBalance(t *testing.T) {
	const total = 2000
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
	}{{"server", gated}, {"client", plain}} {
		t.Run(side.name, func(t *testing.T) {
			ns := side.cp.Namespace(t)
			all := bulkConfigMaps(t, side.cp, ns, total)
			for _, n := range []int{1, 2, 4} {
				t.Run(strconv.Itoa(n), func(t *testing.T) {
					g := newGroup(t, side.cp, ns)
					start := time.Now()
					for i := range n {
						g.add(fmt.Sprintf("n%d-%d", n, i))
					}
					require.Eventually(t, func() bool { return g.settled(n) }, 60*time.Second, 50*time.Millisecond)
					synced := time.Since(start)
					g.checkExactlyOnce(all)
					var per []int
					worst := 0.0
					for _, r := range g.all() {
						k := len(r.held())
						per = append(per, k)
						a, _ := r.m.Assignment()
						assert.Equal(t, within(a, all), r.held(), "%s holds its assignment", r.id)
						worst = max(worst, float64(k)*float64(n)/float64(len(all)))
					}
					t.Logf("%s N=%d: objects per replica %v of %d; largest = %.3f/N of the total; settled in %v; %d KiB received by the N replicas together",
						side.name, n, per, len(all), worst, synced.Round(time.Millisecond), g.received.Load()/1024)
					assert.LessOrEqual(t, worst, 1.15, "largest replica within 1.15/N (target 1.1/N)")
					for _, r := range g.all() {
						r.stop(false)
					}
					assert.Empty(t, g.f.Statuses(), "stopped replicas release every informer")
				})
			}
		})
	}
}

// TestShardGracefulLeave: a replica that leaves with Member.Leave hands its range over
// before it stops: no object is missing from the union at any sampled moment.
func TestShardGracefulLeave(t *testing.T) {
	cp := gated
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 600)
	g := newGroup(t, cp, ns)
	for _, id := range []string{"r0", "r1", "r2"} {
		g.add(id)
	}
	require.Eventually(t, func() bool { return g.settled(3) }, 30*time.Second, 50*time.Millisecond, "3 replicas settle")
	g.checkExactlyOnce(all)

	endSampling := g.startSampling(all)
	start := time.Now()
	g.mu.Lock()
	leaver := g.replicas["r1"]
	g.mu.Unlock()
	ctx := waitCtx(t, 30*time.Second)
	require.NoError(t, leaver.m.Leave(ctx))
	left := time.Since(start)
	assert.False(t, leaver.m.Owns(string(firstUID(all))), "a leaving member owns nothing")
	assert.Empty(t, leaver.held(), "the leaver holds nothing once Leave returns")
	g.remove("r1").stop(false)
	require.Eventually(t, func() bool { return g.settled(2) }, 30*time.Second, 50*time.Millisecond, "2 replicas settle")
	misses, samples := endSampling()
	t.Logf("leave: handed over in %v; %d samples of the union, %d with an object missing", left.Round(time.Millisecond), samples, len(misses))
	assert.Empty(t, misses, "no gap while a replica leaves")
	g.checkExactlyOnce(all)
}

func firstUID(all map[types.UID]bool) types.UID {
	for u := range all {
		return u
	}
	return ""
}

// TestShardLeaveWhileAnotherJoins: a leaves as b joins, and c joins as soon as b has taken
// the whole space over: a (leaving) and b (giving half of the space to c) must not each
// drop that half because the other's Lease says it holds it. No object is missing from the
// union at any sampled moment.
func TestShardLeaveWhileAnotherJoins(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 600)
	g := newGroup(t, cp, ns)
	g.separate = true // as in separate processes: b's informer of the whole space is not a's
	a := g.add("a")
	require.Eventually(t, func() bool { return g.settled(1) }, 30*time.Second, 50*time.Millisecond, "a settles")

	endSampling := g.startSampling(all)
	b := g.add("b")
	left := make(chan error, 1)
	go func() { left <- a.m.Leave(waitCtx(t, 30*time.Second)) }()
	whole := informer.Shard{Ranges: []informer.ShardRange{informer.FullRange}}
	require.Eventually(t, func() bool { s, ok := b.m.Assignment(); return ok && s.Equal(whole) }, 30*time.Second, 5*time.Millisecond, "b takes the whole space")
	g.add("c")
	require.NoError(t, <-left)
	g.remove("a").stop(false)
	require.Eventually(t, func() bool { return g.settled(2) }, 30*time.Second, 50*time.Millisecond, "b and c settle")
	misses, samples := endSampling()
	t.Logf("leave while joining: %d samples of the union, %d with an object missing", samples, len(misses))
	assert.Empty(t, misses, "no gap")
	g.checkExactlyOnce(all)
}

// TestShardRapidScale: three replicas join a group of one and leave again (Member.Leave),
// over and over, staying from no time at all to a few RenewPeriods: no object is missing
// from the union at any sampled moment, and afterwards the one replica left holds each
// object exactly once.
func TestShardRapidScale(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	all := bulkConfigMaps(t, cp, ns, 300)
	g := newGroup(t, cp, ns)
	g.separate = true
	r0 := g.add("r0")
	require.Eventually(t, func() bool { return g.settled(1) }, 30*time.Second, 50*time.Millisecond, "r0 settles")
	endSampling := g.startSampling(all)
	var wg sync.WaitGroup
	for _, periods := range []int{0, 1, 3, 6, 12} {
		var joined []*replica
		for i := 1; i <= 3; i++ {
			joined = append(joined, g.add(fmt.Sprintf("r%d-%d", i, periods)))
		}
		// They stay for this many lists of Leases of r0 (none: they leave at once).
		r0.m.mu.Lock()
		until := r0.m.observed + periods
		r0.m.mu.Unlock()
		require.Eventually(t, func() bool { r0.m.mu.Lock(); defer r0.m.mu.Unlock(); return r0.m.observed >= until },
			30*time.Second, 5*time.Millisecond)
		if periods == 12 {
			// Given the time, r0 hands three quarters over before they leave. Twelve lists are
			// enough on an idle machine, but the handoff waits for three informers to sync and
			// for their Leases to say so: on a loaded one it can take longer. They stay until it
			// is done, so that this round does test leaving after a handoff.
			assert.Eventually(t, func() bool { return r0.inf.Settled() && !r0.inf.Held().Equal(Split(informer.ShardByUID, 1)[0]) },
				30*time.Second, 20*time.Millisecond, "given the time, r0 hands three quarters over before they leave: %s", r0.inf.Held())
		}
		for _, r := range joined {
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.NoError(t, r.m.Leave(waitCtx(t, 30*time.Second)), "%s leaves", r.id)
				g.remove(r.id).stop(false)
			}()
		}
	}
	wg.Wait()
	require.Eventually(t, func() bool { return g.settled(1) }, 30*time.Second, 50*time.Millisecond, "r0 alone again")
	misses, samples := endSampling()
	t.Logf("%d samples of the union, %d with an object missing", samples, len(misses))
	assert.Empty(t, misses, "no gap")
	assert.Greater(t, samples, 20)
	g.checkExactlyOnce(all)
}
