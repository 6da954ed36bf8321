package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// TestShardFilterServerAndClient: an informer with a shard holds exactly the objects whose
// UID hashes into it, whether the server filters (gate on) or kindex does (gate off), in
// every storage mode, through the initial list and the watch.
func TestShardFilterServerAndClient(t *testing.T) {
	compact := func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	}
	compactWatchList := func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{WatchList: true})
	}
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
		want informer.ShardFilter
	}{{"server", gated, informer.ShardFilterServer}, {"client", plain, informer.ShardFilterClient}} {
		t.Run(side.name, func(t *testing.T) {
			t.Run("unstructured", func(t *testing.T) {
				checkFilter(t, side.cp, side.want, startFactory(t, side.cp, dynamicinformer.Options{}, dynamicinformer.NewFactory))
			})
			t.Run("compact", func(t *testing.T) {
				checkFilter(t, side.cp, side.want, startFactory(t, side.cp, dynamicinformer.Options{}, compact))
			})
			t.Run("compact-watchlist", func(t *testing.T) {
				checkFilter(t, side.cp, side.want, startFactory(t, side.cp, dynamicinformer.Options{}, compactWatchList))
			})
			t.Run("clientgo", func(t *testing.T) {
				checkFilter(t, side.cp, side.want, startFactory(t, side.cp, dynamicinformer.Options{}, dynamicinformer.NewClientGoFactory))
			})
			t.Run("metadata", func(t *testing.T) {
				checkFilter(t, side.cp, side.want, startFactory(t, side.cp, metadataonly.Options{}, metadataonly.NewFactory))
			})
		})
	}
}

func checkFilter[T informer.Object](t *testing.T, cp *testenv.ControlPlane, want informer.ShardFilter, f *informer.Factory[T]) {
	ns := cp.Namespace(t)
	configMaps(t, cp, ns, "a", 40)
	halves := Split(informer.ShardByUID, 2)
	ctx := waitCtx(t, 30*time.Second)
	var infs []*informer.Informer[T]
	for _, h := range halves {
		inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns), informer.WithShard(h))
		require.NoError(t, err)
		t.Cleanup(inf.Release)
		require.NoError(t, inf.WaitForSync(ctx))
		assert.Equal(t, want, inf.Status().ShardFilter)
		infs = append(infs, inf)
	}
	check := func() bool {
		all := serverUIDs(t, cp, ns)
		ok := true
		for i, inf := range infs {
			objs, err := inf.List(nil)
			require.NoError(t, err)
			ok = ok && assert.ObjectsAreEqual(within(halves[i], all), uidSet(objs))
		}
		return ok
	}
	require.True(t, check(), "initial list")
	// The watch: creations and deletions land in the right half only.
	configMaps(t, cp, ns, "b", 20)
	cs := cp.Clientset(t)
	for _, name := range []string{"a-0", "a-1", "a-2", "b-0"} {
		require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
	}
	require.Eventually(t, check, 20*time.Second, 50*time.Millisecond, "after watch events")
}

// TestShardWithoutSelectorIsUnchanged: the zero Shard sends no selector and reports no
// filter.
func TestShardWithoutSelectorIsUnchanged(t *testing.T) {
	f := startFactory(t, gated, dynamicinformer.Options{}, dynamicinformer.NewFactory)
	ns := gated.Namespace(t)
	configMaps(t, gated, ns, "c", 5)
	ctx := waitCtx(t, 30*time.Second)
	inf, err := f.Informer(ctx, "configmaps", informer.WithNamespace(ns))
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	objs, err := inf.List(nil)
	require.NoError(t, err)
	assert.Len(t, objs, 5)
	assert.Equal(t, informer.ShardFilter(""), inf.Status().ShardFilter)
	assert.Empty(t, inf.Key().Shard)
	var _ *unstructured.Unstructured = objs[0]
}

// TestShardByNamespace: a namespace shard keeps every object of a namespace together, on
// both paths.
func TestShardByNamespace(t *testing.T) {
	for _, side := range []struct {
		name string
		cp   *testenv.ControlPlane
		want informer.ShardFilter
	}{{"server", gated, informer.ShardFilterServer}, {"client", plain, informer.ShardFilterClient}} {
		t.Run(side.name, func(t *testing.T) {
			cp := side.cp
			var nss []string
			for range 6 {
				ns := cp.Namespace(t)
				configMaps(t, cp, ns, "n", 3)
				nss = append(nss, ns)
			}
			f := startFactory(t, cp, dynamicinformer.Options{}, dynamicinformer.NewFactory)
			ctx := waitCtx(t, 30*time.Second)
			half := Split(informer.ShardByNamespace, 2)[0]
			inf, err := f.Informer(ctx, "configmaps", informer.WithShard(half))
			require.NoError(t, err)
			defer inf.Release()
			require.NoError(t, inf.WaitForSync(ctx))
			assert.Equal(t, side.want, inf.Status().ShardFilter)
			objs, err := inf.List(nil)
			require.NoError(t, err)
			got := map[string]int{}
			for _, o := range objs {
				got[o.GetNamespace()]++
			}
			for _, ns := range nss {
				if half.Matches(ns) {
					assert.Equal(t, 3, got[ns], ns)
				} else {
					assert.Zero(t, got[ns], ns)
				}
			}
			for ns := range got {
				assert.True(t, half.Matches(ns), "no object of namespace %q outside the shard", ns)
			}
		})
	}
}

// An informer of one namespace, in a namespace shard that leaves that namespace out, holds
// nothing, rightly: it says so once, instead of syncing empty without a word.
func TestShardByNamespaceOutsideSaysSo(t *testing.T) {
	half := Split(informer.ShardByNamespace, 2)[0]
	ns := plain.Namespace(t)
	for half.Matches(ns) {
		ns = plain.Namespace(t)
	}
	configMaps(t, plain, ns, "n", 2)
	lines := &testsupport.Lines{}
	f, _, _ := testsupport.StartFactory(t, plain.AdminConfig(),
		dynamicinformer.Options{Namespace: ns, Logger: lines.Logger(0)}, dynamicinformer.NewFactory)
	ctx := waitCtx(t, 30*time.Second)
	inf, err := f.Informer(ctx, "configmaps", informer.WithShard(half))
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	objs, err := inf.List(nil)
	require.NoError(t, err)
	assert.Empty(t, objs)
	assert.Equal(t, 1, lines.Count("namespace is outside the factory's shard", ns), "%s", lines)

	// A namespace inside the shard says nothing.
	in := plain.Namespace(t)
	for !half.Matches(in) {
		in = plain.Namespace(t)
	}
	configMaps(t, plain, in, "n", 2)
	inLines := &testsupport.Lines{}
	g, _, _ := testsupport.StartFactory(t, plain.AdminConfig(),
		dynamicinformer.Options{Namespace: in, Logger: inLines.Logger(0)}, dynamicinformer.NewFactory)
	inf2, err := g.Informer(ctx, "configmaps", informer.WithShard(half))
	require.NoError(t, err)
	defer inf2.Release()
	require.NoError(t, inf2.WaitForSync(ctx))
	objs, err = inf2.List(nil)
	require.NoError(t, err)
	assert.Len(t, objs, 2)
	assert.Zero(t, inLines.Count("outside the factory's shard"), "%s", inLines)
}
