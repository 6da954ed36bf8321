package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// fnv64a is the KEP's hash, computed here independently of the package under test: 64-bit
// FNV-1a over the bytes of the field's value.
func fnv64a(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func auditRange(start, last uint64) informer.Shard {
	return informer.Shard{Ranges: []informer.ShardRange{{Start: start, Last: last}}}
}

// auditWithin is the set of UIDs of all whose own FNV-1a hash falls in [start, last].
func auditWithin(all map[types.UID]bool, rs ...informer.ShardRange) map[types.UID]bool {
	out := map[types.UID]bool{}
	for u := range all {
		h := fnv64a(string(u))
		for _, r := range rs {
			if h >= r.Start && h <= r.Last {
				out[u] = true
			}
		}
	}
	return out
}

// TestAuditShardBoundaryHashes: ranges whose ends are exactly the hash of an existing
// object's UID. The object at a boundary is held by exactly one of two adjacent ranges, the
// server's answer for each selector agrees with the independent hash, and informers the
// server filters for and informers kindex filters for hold the same sets.
func TestAuditShardBoundaryHashes(t *testing.T) {
	cp := gated
	ns := cp.Namespace(t)
	uids := configMaps(t, cp, ns, "b", 24)
	all := map[types.UID]bool{}
	for _, u := range uids {
		all[u] = true
	}
	hashes := make([]uint64, 0, len(uids))
	for _, u := range uids {
		hashes = append(hashes, fnv64a(string(u)))
		assert.Equal(t, fnv64a(string(u)), informer.Hash(string(u)), "the package's hash is 64-bit FNV-1a of %s", u)
	}
	sort.Slice(hashes, func(i, j int) bool { return hashes[i] < hashes[j] })
	lo, mid, hi := hashes[3], hashes[len(hashes)/2], hashes[len(hashes)-4]
	var shards []informer.Shard
	var want []map[types.UID]bool
	addPair := func(h uint64) {
		// [0, h] and [h+1, max]; [0, h-1] and [h, max]; and [h, h] alone.
		for _, rs := range [][]informer.ShardRange{
			{{Start: 0, Last: h}}, {{Start: h + 1, Last: math.MaxUint64}},
			{{Start: 0, Last: h - 1}}, {{Start: h, Last: math.MaxUint64}},
			{{Start: h, Last: h}},
		} {
			shards = append(shards, informer.Shard{Ranges: rs})
			want = append(want, auditWithin(all, rs...))
		}
	}
	addPair(mid)
	// A range from one object's hash to another's, both ends objects.
	shards = append(shards, auditRange(lo, hi))
	want = append(want, auditWithin(all, informer.ShardRange{Start: lo, Last: hi}))
	// Two ranges touching at an object's hash: merged, each object once.
	touch := informer.Shard{Ranges: []informer.ShardRange{{Start: lo, Last: mid - 1}, {Start: mid, Last: hi}}}
	shards = append(shards, touch)
	want = append(want, auditWithin(all, informer.ShardRange{Start: lo, Last: hi}))

	cs := cp.Clientset(t)
	for i, sh := range shards {
		l, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{ShardSelector: sh.String()})
		require.NoError(t, err)
		require.NotNil(t, l.ShardInfo, "the server filtered %s", sh)
		got := map[types.UID]bool{}
		for _, cm := range l.Items {
			got[cm.UID] = true
		}
		assert.Equal(t, want[i], got, "the server's answer for %s", sh)
	}

	server := startFactory(t, cp, dynamicinformer.Options{}, dynamicinformer.NewFactory)
	cfg := cp.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return stripShard{rt} })
	client, _, _ := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Logger: (&testsupport.Lines{}).Logger(0)}, dynamicinformer.NewFactory)
	ctx := waitCtx(t, 40*time.Second)
	for i, sh := range shards {
		for _, f := range []*dynamicinformer.Factory{server, client} {
			inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(sh))
			require.NoError(t, err)
			require.NoError(t, inf.WaitForSync(ctx))
			objs, err := inf.List(nil)
			require.NoError(t, err)
			assert.Equal(t, want[i], uidSet(objs), "%s (%s)", sh, inf.Status().ShardFilter)
			inf.Release()
		}
	}
}

// TestAuditShardNamespaceHashClusterScopedServer: with namespace hashing, the server that
// filters and kindex filtering agree on a cluster-scoped resource: every object hashes the
// empty namespace, so the shard holding that hash holds them all and the other none.
func TestAuditShardNamespaceHashClusterScopedServer(t *testing.T) {
	empty := fnv64a("")
	in := informer.Shard{Field: informer.ShardByNamespace, Ranges: []informer.ShardRange{{Start: empty, Last: empty}}}
	out := informer.Shard{Field: informer.ShardByNamespace, Ranges: []informer.ShardRange{{Start: 0, Last: empty - 1}, {Start: empty + 1, Last: math.MaxUint64}}}
	cs := gated.Clientset(t)
	all, err := cs.RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, all.Items)
	lin, err := cs.RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{ShardSelector: in.String()})
	require.NoError(t, err)
	lout, err := cs.RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{ShardSelector: out.String()})
	require.NoError(t, err)
	t.Logf("server: %d in the empty namespace's hash, %d outside, of %d", len(lin.Items), len(lout.Items), len(all.Items))

	server := startFactory(t, gated, dynamicinformer.Options{}, dynamicinformer.NewFactory)
	cfg := gated.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return stripShard{rt} })
	client, _, _ := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Logger: (&testsupport.Lines{}).Logger(0)}, dynamicinformer.NewFactory)
	ctx := waitCtx(t, 30*time.Second)
	for _, c := range []struct {
		sh   informer.Shard
		want int
	}{{in, len(all.Items)}, {out, 0}} {
		for _, f := range []*dynamicinformer.Factory{server, client} {
			inf, err := f.Informer(ctx, "clusterroles", informer.WithShard(c.sh))
			require.NoError(t, err)
			require.NoError(t, inf.WaitForSync(ctx))
			objs, err := inf.List(nil)
			require.NoError(t, err)
			assert.Len(t, objs, c.want, "%s (%s)", c.sh, inf.Status().ShardFilter)
			inf.Release()
		}
	}
	assert.Len(t, lin.Items, len(all.Items), "the server: every ClusterRole hashes the empty namespace")
	assert.Empty(t, lout.Items, "the server: none outside")
}

// auditCompact starts a compact factory with dir on cfg.
func auditCompact(t *testing.T, cfg *rest.Config, dir string) (*dynamicinformer.Factory, *testsupport.Recorder) {
	opts := dynamicinformer.Options{SnapshotDir: dir, Logger: (&testsupport.Lines{}).Logger(0)}
	f, rec, _ := testsupport.StartFactory(t, cfg, opts, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	})
	return f, rec
}

// TestAuditShardSnapshotAcrossFilterSides: a sharded snapshot written while the server
// filtered, resumed where kindex filters (the selector lost on the way, as with the gate off
// at the same address), and the reverse, with objects of every shard created and deleted
// while down: the resumed informer holds exactly its shard's objects of the server.
func TestAuditShardSnapshotAcrossFilterSides(t *testing.T) {
	cp := gated
	strip := cp.AdminConfig()
	strip.Wrap(func(rt http.RoundTripper) http.RoundTripper { return stripShard{rt} })
	for _, c := range []struct {
		name        string
		first, then *rest.Config
		want        informer.ShardFilter
	}{{"server-then-client", cp.AdminConfig(), strip, informer.ShardFilterClient},
		{"client-then-server", strip, cp.AdminConfig(), informer.ShardFilterServer}} {
		t.Run(c.name, func(t *testing.T) {
			ns := cp.Namespace(t)
			configMaps(t, cp, ns, "a", 40)
			shards := Split(informer.ShardByUID, 3)
			dir := t.TempDir()
			run := func(cfg *rest.Config) ([]*dynamicinformer.Informer, *testsupport.Recorder) {
				f, rec := auditCompact(t, cfg, dir)
				ctx := waitCtx(t, 30*time.Second)
				var infs []*dynamicinformer.Informer
				for _, sh := range shards {
					inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(sh))
					require.NoError(t, err)
					infs = append(infs, inf)
				}
				for _, inf := range infs {
					require.NoError(t, inf.WaitForSync(ctx))
				}
				return infs, rec
			}
			first, _ := run(c.first)
			for _, inf := range first {
				inf.Release()
			}
			// While down: new objects, and deletions, in every shard.
			configMaps(t, cp, ns, "b", 12)
			cs := cp.Clientset(t)
			for _, name := range []string{"a-0", "a-1", "a-2", "a-3", "a-4", "a-5"} {
				require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
			}
			infs, rec := run(c.then)
			lists, _ := rec.Count("/configmaps")
			all := serverUIDs(t, cp, ns)
			for i, inf := range infs {
				st := inf.Status()
				assert.False(t, st.SnapshotTime.IsZero(), "shard %d resumed from its snapshot", i)
				assert.Equal(t, c.want, st.ShardFilter, "shard %d", i)
				objs, err := inf.List(nil)
				require.NoError(t, err)
				assert.Equal(t, auditWithin(all, shards[i].Ranges...), uidSet(objs), "shard %d", i)
			}
			t.Logf("%d LISTs of configmaps (probes included) on the resumed run", lists)
		})
	}
}

// TestAuditShardSnapshotOfAnotherShardNotUsed: a snapshot written for one shard is not
// used for another: the same ranges hashing namespaces instead of UIDs, a range that
// differs by one hash, or no shard. Each restarted informer holds exactly its own set.
func TestAuditShardSnapshotOfAnotherShardNotUsed(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	configMaps(t, cp, ns, "a", 30)
	all := serverUIDs(t, cp, ns)
	dir := t.TempDir()
	half := Split(informer.ShardByUID, 2)[0]
	f, _ := auditCompact(t, cp.AdminConfig(), dir)
	ctx := waitCtx(t, 40*time.Second)
	inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(half))
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	inf.Release()
	f.Shutdown()

	r := half.Ranges[0]
	for _, c := range []struct {
		name string
		sh   informer.Shard
		want map[types.UID]bool
	}{
		{"namespace-hash", informer.Shard{Field: informer.ShardByNamespace, Ranges: half.Ranges}, func() map[types.UID]bool {
			if fnv64a(ns) <= r.Last {
				return all
			}
			return map[types.UID]bool{}
		}()},
		{"one-hash-more", auditRange(r.Start, r.Last+1), auditWithin(all, informer.ShardRange{Start: r.Start, Last: r.Last + 1})},
		{"none", informer.Shard{}, all},
		{"other-half", Split(informer.ShardByUID, 2)[1], auditWithin(all, Split(informer.ShardByUID, 2)[1].Ranges...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, _ := auditCompact(t, cp.AdminConfig(), dir)
			inf, err := g.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(c.sh))
			require.NoError(t, err)
			require.NoError(t, inf.WaitForSync(ctx))
			assert.True(t, inf.Status().SnapshotTime.IsZero(), "another shard's snapshot is not used")
			objs, err := inf.List(nil)
			require.NoError(t, err)
			assert.Equal(t, c.want, uidSet(objs))
			inf.Release()
			g.Shutdown()
		})
	}
	// The first shard itself, restarted: its own snapshot is used.
	g, _ := auditCompact(t, cp.AdminConfig(), dir)
	inf, err = g.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(
		informer.Shard{Field: informer.ShardByUID, Ranges: []informer.ShardRange{{Start: r.Start, Last: r.Last / 2}, {Start: r.Last/2 + 1, Last: r.Last}}}))
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(ctx))
	assert.False(t, inf.Status().SnapshotTime.IsZero(), "the same shard written otherwise uses its snapshot")
	objs, err := inf.List(nil)
	require.NoError(t, err)
	assert.Equal(t, auditWithin(all, r), uidSet(objs))
	inf.Release()
}

// strictHandler checks that a handler's stream is consistent: an add for an object it does
// not hold, an update or delete for one it holds, with the version it last saw as the old
// one, versions never going back; and keeps what the stream says is held.
type strictHandler struct {
	mu         sync.Mutex
	held       map[types.UID]string // UID -> resourceVersion
	violations []string
	events     int
}

func newStrictHandler() *strictHandler { return &strictHandler{held: map[types.UID]string{}} }

func (h *strictHandler) bad(format string, args ...any) {
	if len(h.violations) < 20 {
		h.violations = append(h.violations, fmt.Sprintf(format, args...))
	}
}

func (h *strictHandler) handler() cache.ResourceEventHandler {
	meta := func(o any) *metav1.PartialObjectMetadata {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		return o.(*metav1.PartialObjectMetadata)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			m := meta(o)
			h.mu.Lock()
			defer h.mu.Unlock()
			h.events++
			if rv, ok := h.held[m.UID]; ok {
				h.bad("add of %s/%s at %s, held at %s", m.Name, m.UID, m.ResourceVersion, rv)
			}
			h.held[m.UID] = m.ResourceVersion
		},
		UpdateFunc: func(oldObj, o any) {
			old, m := meta(oldObj), meta(o)
			h.mu.Lock()
			defer h.mu.Unlock()
			h.events++
			rv, ok := h.held[m.UID]
			switch {
			case !ok:
				h.bad("update of %s/%s to %s, not held", m.Name, m.UID, m.ResourceVersion)
			case old.UID != m.UID:
				h.bad("update of %s from UID %s to %s", m.Name, old.UID, m.UID)
			case old.ResourceVersion != rv:
				h.bad("update of %s/%s: old %s, last seen %s", m.Name, m.UID, old.ResourceVersion, rv)
			case olderVersion(m.ResourceVersion, rv) || m.ResourceVersion == rv:
				h.bad("update of %s/%s from %s back to %s", m.Name, m.UID, rv, m.ResourceVersion)
			}
			h.held[m.UID] = m.ResourceVersion
		},
		DeleteFunc: func(o any) {
			m := meta(o)
			h.mu.Lock()
			defer h.mu.Unlock()
			h.events++
			if _, ok := h.held[m.UID]; !ok {
				h.bad("delete of %s/%s, not held", m.Name, m.UID)
			}
			delete(h.held, m.UID)
		},
	}
}

func (h *strictHandler) snapshot() (map[types.UID]string, []string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.held), slices.Clone(h.violations), h.events
}

type churnReplica struct {
	id     string
	m      *Member
	inf    *Informer[*metav1.PartialObjectMetadata]
	h      *strictHandler
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func (r *churnReplica) heldRVs(t *testing.T) map[types.UID]string {
	objs, err := r.inf.List()
	require.NoError(t, err)
	out := map[types.UID]string{}
	for _, o := range objs {
		out[o.UID] = o.ResourceVersion
	}
	return out
}

// TestAuditShardHandoffUnderChurn: replicas join and leave while ConfigMaps are created,
// updated and deleted: each replica's handler stream is consistent (no add of a held
// object, no update or delete of one not held, no version going back), what it says is held
// is what the replica holds, at the same versions, and the replicas together hold the
// server's objects at the server's versions, each once.
func TestAuditShardHandoffUnderChurn(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
	}{{"server", gated}, {"client", plain}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			ns := cp.Namespace(t)
			bulkConfigMaps(t, cp, ns, 150)
			cs := cp.Clientset(t)
			var mu sync.Mutex
			reps := map[string]*churnReplica{}
			add := func(id string) *churnReplica {
				f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(), metadataonly.Options{Logger: (&testsupport.Lines{}).Logger(0)}, metadataonly.NewFactory)
				m, err := New(Options{Client: cs, Namespace: ns, Group: "churn", Identity: id,
					LeaseDuration: testLease, RenewPeriod: testRenew, Logger: (&testsupport.Lines{}).Logger(0)})
				require.NoError(t, err)
				r := &churnReplica{id: id, m: m, h: newStrictHandler()}
				r.inf, err = NewInformer(m, f, "configmaps", InformerOptions{Handler: r.h.handler(),
					Options: []informer.Option{informer.WithNamespace(ns)}})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				r.cancel = cancel
				r.done.Add(2)
				go func() { defer r.done.Done(); _ = m.Run(ctx) }()
				go func() { defer r.done.Done(); _ = r.inf.Run(ctx) }()
				t.Cleanup(func() { cancel(); r.done.Wait() })
				mu.Lock()
				reps[id] = r
				mu.Unlock()
				return r
			}
			settled := func(n int) bool {
				mu.Lock()
				defer mu.Unlock()
				for _, r := range reps {
					if len(r.m.Members()) != n || !r.inf.Settled() {
						return false
					}
				}
				return true
			}
			add("r0")
			require.Eventually(t, func() bool { return settled(1) }, 30*time.Second, 50*time.Millisecond)

			// Churn: creates, label updates and deletes, until stopped.
			stop := make(chan struct{})
			churned := make(chan int)
			go func() {
				rng := rand.New(rand.NewPCG(52, 52))
				ops := 0
				defer func() { churned <- ops }()
				ctx := context.Background()
				next := 0
				for {
					select {
					case <-stop:
						return
					default:
					}
					i := rng.IntN(150)
					name := "cm-" + strconv.Itoa(i)
					switch rng.IntN(3) {
					case 0:
						_, _ = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
							ObjectMeta: metav1.ObjectMeta{Name: "new-" + strconv.Itoa(next)}}, metav1.CreateOptions{})
						next++
					case 1:
						cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
						if err == nil {
							cm.Labels = map[string]string{"n": strconv.Itoa(ops)}
							_, _ = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
						}
					case 2:
						if cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}) != nil {
							// Gone already: create it again (a new UID under an old name).
							_, _ = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
								ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
						}
					}
					ops++
					time.Sleep(time.Millisecond)
				}
			}()
			add("r1")
			add("r2")
			require.Eventually(t, func() bool { return settled(3) }, 40*time.Second, 50*time.Millisecond, "3 settle under churn")
			mu.Lock()
			leaver := reps["r1"]
			mu.Unlock()
			require.NoError(t, leaver.m.Leave(waitCtx(t, 30*time.Second)))
			leaver.cancel()
			leaver.done.Wait()
			lh, lv, _ := leaver.h.snapshot()
			assert.Empty(t, lv, "the leaver's handler stream")
			assert.Empty(t, lh, "the leaver's handler saw every object leave")
			mu.Lock()
			delete(reps, "r1")
			mu.Unlock()
			add("r3")
			require.Eventually(t, func() bool { return settled(3) }, 40*time.Second, 50*time.Millisecond, "3 settle again under churn")
			close(stop)
			ops := <-churned

			l, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			truth := map[types.UID]string{}
			for _, cm := range l.Items {
				truth[cm.UID] = cm.ResourceVersion
			}
			union := func() (map[types.UID]string, int) {
				mu.Lock()
				defer mu.Unlock()
				out := map[types.UID]string{}
				n := 0
				for _, r := range reps {
					for u, rv := range r.heldRVs(t) {
						out[u] = rv
						n++
					}
				}
				return out, n
			}
			require.Eventually(t, func() bool {
				u, n := union()
				return n == len(truth) && maps.Equal(u, truth)
			}, 15*time.Second, 50*time.Millisecond, "the replicas hold the server's objects, each once")
			mu.Lock()
			defer mu.Unlock()
			for _, r := range reps {
				held := r.heldRVs(t)
				assert.Eventually(t, func() bool { hs, _, _ := r.h.snapshot(); return maps.Equal(hs, held) },
					5*time.Second, 20*time.Millisecond, "%s: the handler's stream replays to what it holds", r.id)
				_, v, n := r.h.snapshot()
				assert.Empty(t, v, "%s: the handler's stream", r.id)
				a, _ := r.m.Assignment()
				for u := range held {
					assert.True(t, a.Matches(string(u)), "%s holds %s within its assignment", r.id, u)
				}
				t.Logf("%s: %d events, holds %d", r.id, n, len(held))
			}
			t.Logf("%d changes during the test; %d objects at the end", ops, len(truth))
		})
	}
}

// TestAuditShardSnapshotSyncedIncludesChangesWhileDown: a sharded informer restarting from
// its snapshot is synced only once the changes of its shard made while it was down are in
// its cache, also when most of the changes made meanwhile were of other shards (on a server
// that does not filter, kindex drops those as they arrive). Namespace hashing, so that the
// test chooses which changes are the shard's: many large updates in a namespace outside the
// shard, then one object created in a namespace inside it, the last change before the
// restart.
func TestAuditShardSnapshotSyncedIncludesChangesWhileDown(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
		want informer.ShardFilter
	}{{"server", gated, informer.ShardFilterServer}, {"client", plain, informer.ShardFilterClient}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			half := Split(informer.ShardByNamespace, 2)[0]
			nsIn, nsOut := cp.Namespace(t), cp.Namespace(t)
			for !half.Matches(nsIn) {
				nsIn = cp.Namespace(t)
			}
			for half.Matches(nsOut) {
				nsOut = cp.Namespace(t)
			}
			label := "audit-s52-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			cs := cp.Clientset(t)
			mk := func(ns, name string, data map[string]string) {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"audit": label}}, Data: data}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			mk(nsIn, "in-0", nil)
			for i := range 8 {
				mk(nsOut, "out-"+strconv.Itoa(i), nil)
			}
			dir := t.TempDir()
			start := func() *dynamicinformer.Informer {
				f, _ := auditCompact(t, cp.AdminConfig(), dir)
				ctx := waitCtx(t, 40*time.Second)
				inf, err := f.Informer(ctx, "configmaps", informer.WithShard(half), informer.WithLabelSelector("audit="+label))
				require.NoError(t, err)
				require.NoError(t, inf.WaitForSync(ctx))
				return inf
			}
			start().Release() // writes the snapshot

			// While down: 1,000 changes (10 MB) outside the shard, then one object inside it.
			big := strings.Repeat("x", 10_000)
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range 125 {
						cm, err := cs.CoreV1().ConfigMaps(nsOut).Get(context.Background(), "out-"+strconv.Itoa(w), metav1.GetOptions{})
						if !assert.NoError(t, err) {
							return
						}
						cm.Data = map[string]string{"big": big, "k": strconv.Itoa(k)}
						_, err = cs.CoreV1().ConfigMaps(nsOut).Update(context.Background(), cm, metav1.UpdateOptions{})
						if !assert.NoError(t, err) {
							return
						}
					}
				}()
			}
			wg.Wait()
			mk(nsIn, "in-last", nil)

			inf := start()
			st := inf.Status()
			require.False(t, st.SnapshotTime.IsZero(), "resumed from the snapshot")
			assert.Equal(t, side.want, st.ShardFilter)
			objs, err := inf.List(nil)
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{nsIn + "/in-0", nsIn + "/in-last"}, testsupport.Keys(objs),
				"synced: the shard's change made while down is in the cache")
		})
	}
}

// TestAuditShardSnapshotRelistEmitsDifferences: a sharded informer restarting from its
// snapshot after etcd was compacted past it (the watch from its version gets 410 and it
// lists again) tells its handler the differences of its shard only: an add per object
// created meanwhile, an update per object changed, a delete per object deleted, nothing for
// unchanged objects or other shards' objects; and holds exactly its shard's objects. On both
// paths: the server filtering, and kindex.
func TestAuditShardSnapshotRelistEmitsDifferences(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
		want informer.ShardFilter
	}{{"server", gated, informer.ShardFilterServer}, {"client", plain, informer.ShardFilterClient}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			ns := cp.Namespace(t)
			pts := cp.Clientset(t).CoreV1().PodTemplates(ns)
			create := func(name string) *corev1.PodTemplate {
				pt, err := pts.Create(context.Background(), &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
					metav1.CreateOptions{})
				require.NoError(t, err)
				return pt
			}
			byName := map[string]types.UID{}
			for i := range 40 {
				pt := create("p-" + strconv.Itoa(i))
				byName[pt.Name] = pt.UID
			}
			shard := Split(informer.ShardByUID, 2)[0]
			dir := t.TempDir()
			f, _ := auditCompact(t, cp.AdminConfig(), dir)
			ctx := waitCtx(t, 40*time.Second)
			inf, err := f.Informer(ctx, "podtemplates", informer.WithNamespace(ns), informer.WithShard(shard))
			require.NoError(t, err)
			require.NoError(t, inf.WaitForSync(ctx))
			inf.Release()
			f.Shutdown()

			// While down: updates, deletes and creates, in and out of the shard.
			updated, deleted := map[types.UID]bool{}, map[types.UID]bool{}
			for i := range 40 {
				name := "p-" + strconv.Itoa(i)
				switch i % 4 {
				case 0:
					pt, err := pts.Get(context.Background(), name, metav1.GetOptions{})
					require.NoError(t, err)
					pt.Labels = map[string]string{"changed": "yes"}
					_, err = pts.Update(context.Background(), pt, metav1.UpdateOptions{})
					require.NoError(t, err)
					updated[byName[name]] = true
				case 1:
					require.NoError(t, pts.Delete(context.Background(), name, metav1.DeleteOptions{}))
					deleted[byName[name]] = true
				}
			}
			created := map[types.UID]bool{}
			for i := range 10 {
				created[create("q-"+strconv.Itoa(i)).UID] = true
			}
			_, err = cp.CompactEtcd(context.Background())
			require.NoError(t, err)

			h := newStrictHandler()
			var mu sync.Mutex
			kinds := map[types.UID][]string{}
			note := func(kind string, o any) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				u := o.(*unstructured.Unstructured).GetUID()
				mu.Lock()
				kinds[u] = append(kinds[u], kind)
				mu.Unlock()
			}
			asMeta := func(o any) any {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					return cache.DeletedFinalStateUnknown{Key: d.Key, Obj: auditMeta(d.Obj)}
				}
				return auditMeta(o)
			}
			sh := h.handler()
			g, rec := auditCompact(t, cp.AdminConfig(), dir)
			inf, err = g.Informer(ctx, "podtemplates", informer.WithNamespace(ns), informer.WithShard(shard),
				informer.WithEventHandler(cache.ResourceEventHandlerFuncs{
					AddFunc:    func(o any) { note("add", o); sh.OnAdd(asMeta(o), false) },
					UpdateFunc: func(a, b any) { note("update", b); sh.OnUpdate(asMeta(a), asMeta(b)) },
					DeleteFunc: func(o any) { note("delete", o); sh.OnDelete(asMeta(o)) },
				}))
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
			st := inf.Status()
			require.False(t, st.SnapshotTime.IsZero(), "started from the snapshot")
			assert.Equal(t, side.want, st.ShardFilter)
			relists := 0
			for _, r := range rec.Requests("/podtemplates") {
				if r.Method == http.MethodGet && !r.Watch && !strings.Contains(r.Query, "limit=1") {
					relists++
				}
			}
			assert.Equal(t, 1, relists, "the watch from the snapshot's version got 410: one relist")
			all := serverUIDs2(t, pts)
			objs, err := inf.List(nil)
			require.NoError(t, err)
			assert.Equal(t, auditWithin(all, shard.Ranges...), uidSet(objs), "holds its shard's objects")
			require.Eventually(t, func() bool {
				held, _, _ := h.snapshot()
				return len(held) == len(objs)
			}, 5*time.Second, 20*time.Millisecond)
			_, v, _ := h.snapshot()
			assert.Empty(t, v, "the handler's stream")
			mu.Lock()
			defer mu.Unlock()
			for u, ks := range kinds {
				assert.True(t, shard.Matches(string(u)), "an event of an object outside the shard: %s %v", u, ks)
				var want []string
				switch {
				case created[u]:
					want = []string{"add"}
				case deleted[u]:
					want = []string{"add", "delete"}
				case updated[u]:
					want = []string{"add", "update"}
				default:
					want = []string{"add"}
				}
				assert.Equal(t, want, ks, "events of %s", u)
			}
			for u := range auditWithin(all, shard.Ranges...) {
				assert.NotEmpty(t, kinds[u], "an object of the shard the handler was not told of: %s", u)
			}
		})
	}
}

func auditMeta(o any) *metav1.PartialObjectMetadata {
	u := o.(*unstructured.Unstructured)
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(),
		UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()}}
}

func serverUIDs2(t *testing.T, pts interface {
	List(context.Context, metav1.ListOptions) (*corev1.PodTemplateList, error)
}) map[types.UID]bool {
	l, err := pts.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[types.UID]bool{}
	for _, p := range l.Items {
		out[p.UID] = true
	}
	return out
}

// TestShardHandoffFromSnapshotDoesNotBringBackDeletedObject: a replica whose factory keeps
// snapshots takes back a range whose informer it released earlier: the informer of that
// range starts from the snapshot written at its release, which holds an object deleted
// since, whose delete the handler already got from the informer that held it meanwhile. The
// handler is not told of it again (it was: an add at its old version, then a second delete).
func TestShardHandoffFromSnapshotDoesNotBringBackDeletedObject(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	uids := configMaps(t, cp, ns, "c", 20)
	dir := t.TempDir()
	f, _ := auditCompact(t, cp.AdminConfig(), dir)
	var mu sync.Mutex
	events := map[types.UID][]string{}
	note := func(kind string, o any) {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		u := o.(*unstructured.Unstructured)
		mu.Lock()
		events[u.GetUID()] = append(events[u.GetUID()], kind+"@"+u.GetResourceVersion())
		mu.Unlock()
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { note("add", o) },
		UpdateFunc: func(_, o any) { note("update", o) },
		DeleteFunc: func(o any) { note("delete", o) },
	}
	mk := func(id string, fac *dynamicinformer.Factory, hd cache.ResourceEventHandler) (*Member, *Informer[*unstructured.Unstructured], context.CancelFunc, *sync.WaitGroup) {
		m, err := New(Options{Client: cs, Namespace: ns, Group: "snap", Identity: id,
			LeaseDuration: testLease, RenewPeriod: testRenew, Logger: (&testsupport.Lines{}).Logger(0)})
		require.NoError(t, err)
		inf, err := NewInformer(m, fac, "configmaps", InformerOptions{Handler: hd, Options: []informer.Option{informer.WithNamespace(ns)}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _ = m.Run(ctx) }()
		go func() { defer wg.Done(); _ = inf.Run(ctx) }()
		t.Cleanup(func() { cancel(); wg.Wait() })
		return m, inf, cancel, &wg
	}
	ma, a, _, _ := mk("a", f, h)
	whole := Split(informer.ShardByUID, 1)[0]
	require.Eventually(t, func() bool { return a.Settled() && a.Held().Equal(whole) }, 30*time.Second, 20*time.Millisecond)
	// b joins: a keeps the first half, releases the whole space's informer (its snapshot
	// is written).
	g, _ := auditCompact(t, cp.AdminConfig(), t.TempDir())
	mb, b, cancelB, wgB := mk("b", g, nil)
	first := Split(informer.ShardByUID, 2)[0]
	require.Eventually(t, func() bool { return a.Settled() && a.Held().Equal(first) && b.Settled() }, 30*time.Second, 20*time.Millisecond)
	// Delete an object of a's half: its handler is told.
	var x types.UID
	var xname string
	for i, u := range uids {
		if first.Matches(string(u)) {
			x, xname = u, "c-"+strconv.Itoa(i)
			break
		}
	}
	require.NotEmpty(t, x)
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), xname, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		ev := events[x]
		return len(ev) > 0 && strings.HasPrefix(ev[len(ev)-1], "delete")
	}, 10*time.Second, 20*time.Millisecond)
	// b leaves: a takes the whole space again, from the snapshot of its earlier informer.
	require.NoError(t, mb.Leave(waitCtx(t, 30*time.Second)))
	cancelB()
	wgB.Wait()
	require.Eventually(t, func() bool { return a.Settled() && a.Held().Equal(whole) && len(ma.Members()) == 1 }, 30*time.Second, 20*time.Millisecond)
	_ = b
	objs, err := a.List()
	require.NoError(t, err)
	assert.Equal(t, serverUIDs(t, cp, ns), uidSet(objs))
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, events[x], 2, "the deleted object: one add, one delete: %v", events[x])
	for u, ev := range events {
		for k := 1; k < len(ev); k++ {
			if strings.HasPrefix(ev[k], "add") && strings.HasPrefix(ev[k-1], "update") {
				t.Errorf("%s: an add after an update %v", u, ev)
			}
		}
	}
}
