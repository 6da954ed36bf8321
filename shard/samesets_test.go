package shard

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testsupport"
)

// stripShard removes the shardSelector parameter from every request, as a server without
// the feature would ignore it.
type stripShard struct{ rt http.RoundTripper }

func (s stripShard) RoundTrip(r *http.Request) (*http.Response, error) {
	q := r.URL.Query()
	if q.Has("shardSelector") {
		r = r.Clone(r.Context())
		q.Del("shardSelector")
		r.URL.RawQuery = q.Encode()
	}
	return s.rt.RoundTrip(r)
}

// TestShardServerAndClientSameSets: on the same objects of one server, an informer the
// server filters for and one whose requests lose the selector on the way (so kindex
// filters) hold the same objects, for every shard of a split, through list and watch.
func TestShardServerAndClientSameSets(t *testing.T) {
	cp := gated
	ns := cp.Namespace(t)
	configMaps(t, cp, ns, "s", 60)
	server := startFactory(t, cp, dynamicinformer.Options{}, dynamicinformer.NewFactory)
	cfg := cp.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return stripShard{rt} })
	client, _, _ := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Logger: (&testsupport.Lines{}).Logger(0)}, dynamicinformer.NewFactory)
	ctx := waitCtx(t, 30*time.Second)
	type pair struct{ s, c *dynamicinformer.Informer }
	var pairs []pair
	for _, sh := range Split(informer.ShardByUID, 3) {
		var p pair
		var err error
		p.s, err = server.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(sh))
		require.NoError(t, err)
		t.Cleanup(p.s.Release)
		p.c, err = client.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(sh))
		require.NoError(t, err)
		t.Cleanup(p.c.Release)
		require.NoError(t, p.s.WaitForSync(ctx))
		require.NoError(t, p.c.WaitForSync(ctx))
		assert.Equal(t, informer.ShardFilterServer, p.s.Status().ShardFilter)
		assert.Equal(t, informer.ShardFilterClient, p.c.Status().ShardFilter)
		pairs = append(pairs, p)
	}
	same := func() bool {
		total := 0
		for _, p := range pairs {
			a, err := p.s.List(nil)
			require.NoError(t, err)
			b, err := p.c.List(nil)
			require.NoError(t, err)
			if !assert.ObjectsAreEqual(uidSet(a), uidSet(b)) {
				return false
			}
			total += len(a)
		}
		return total == len(serverUIDs(t, cp, ns))
	}
	require.True(t, same(), "after the initial list")
	configMaps(t, cp, ns, "t", 30)
	require.Eventually(t, same, 20*time.Second, 50*time.Millisecond, "after watch events")
}

// TestShardSplitsAgreeWithTheServer: for every split of the hash space into 1 to 7 ranges,
// the objects the server returns for each range's selector are exactly those whose UID
// Shard.Matches, and the ranges together return each object once (the last range's upper
// bound, 2^64, included).
func TestShardSplitsAgreeWithTheServer(t *testing.T) {
	cp := gated
	ns := cp.Namespace(t)
	all := map[types.UID]bool{}
	for _, u := range configMaps(t, cp, ns, "k", 150) {
		all[u] = true
	}
	cs := cp.Clientset(t)
	for n := 1; n <= 7; n++ {
		seen := map[types.UID]int{}
		for i, sh := range Split(informer.ShardByUID, n) {
			l, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{ShardSelector: sh.String()})
			require.NoError(t, err)
			require.NotNil(t, l.ShardInfo, "the server filtered")
			got := map[types.UID]bool{}
			for _, cm := range l.Items {
				got[cm.UID] = true
				seen[cm.UID]++
			}
			assert.Equal(t, within(sh, all), got, "range %d of %d", i, n)
		}
		for u := range all {
			assert.Equal(t, 1, seen[u], "n=%d: %s returned once", n, u)
		}
	}
}
