package dynamicinformer_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// A CRD's version retired (served: false, another version served and preferred): an
// informer asked for without a version follows the resource there. Its objects all still
// exist, so its handlers are told no delete, its cache holds them at the new version, and
// it goes on with changes made there. One asked for at the version parks NotFound and
// deletes them, as for a deleted CRD: that version is gone. (Before, an informer asked
// for without a version deleted every object too.)
func TestRetiredVersionIsFollowed(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			w := s52NewWidgets(t, 3, func(i int) int64 { return int64(i) })
			dir := ""
			if mode.name != "unstructured" { // the modes that write snapshots
				dir = t.TempDir()
			}
			fx := mode.startRec(t, nil, dynamicinformer.Options{Namespace: w.ns, SnapshotDir: dir})
			free, pinned := &testsupport.Events{}, &testsupport.Events{}
			inf, err := fx.f.Informer(ctx, "widgets."+w.group, informer.WithEventHandler(free.Handler()))
			require.NoError(t, err)
			defer inf.Release()
			// At the version, in a factory of its own (without snapshots).
			pinF := mode.start(t, nil, dynamicinformer.Options{Namespace: w.ns})
			pin, err := pinF.Informer(ctx, "widgets.v1."+w.group, informer.WithEventHandler(pinned.Handler()))
			require.NoError(t, err)
			defer pin.Release()
			waitSync(t, inf)
			waitSync(t, pin)
			require.Equal(t, w.v1, inf.Status().Resource.GVR)

			w.addV2(t, false) // v2 served and stored; v1 no longer served
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				st := inf.Status()
				return st.Resource.GVR == w.v2 && st.Phase == informer.PhaseSynced
			}, func() string { return fx.log.String() })
			followedAt := time.Now()
			objs := must(inf.List(nil))
			require.Len(t, objs, 3)
			for _, o := range objs {
				assert.Equal(t, w.group+"/v2", o.GetAPIVersion(), "%s is read at the version followed", o.GetName())
			}
			assert.Equal(t, w.v1, inf.Key().GVR, "the key is the one it was made for")
			// Asked for again, without a version or at v2: the same informer, not a second
			// list of the resource.
			for _, input := range []string{"widgets." + w.group, "widgets.v2." + w.group} {
				again, err := fx.f.Informer(ctx, input)
				require.NoError(t, err, input)
				assert.Equal(t, w.v1, again.Key().GVR, "%s shares the informer that followed", input)
				assert.Len(t, must(again.List(nil)), 3, input)
				again.Release()
			}
			assert.Len(t, fx.f.Statuses(), 1, "one informer in the factory")
			_, err = cp.Dynamic(t).Resource(w.v2).Namespace(w.ns).Create(ctx, s52Widget(w.group, "v2", "w9", nil, map[string]any{"size": 9}), metav1.CreateOptions{})
			require.NoError(t, err)
			testenv.Eventually(t, 30*time.Second, func() bool { a, _, _ := free.Get(); return len(a) == 4 }, "the add made at v2")
			adds, updates, deletes := free.Get()
			assert.Equal(t, []string{"w0", "w1", "w2", "w9"}, adds)
			assert.Equal(t, []string{"w0", "w1", "w2"}, updates, "each object read again at v2")
			assert.Empty(t, deletes, "no object was deleted")
			assert.Equal(t, 1, fx.log.Count("Version no longer served: following"), "%s", fx.log)

			testenv.Eventually(t, 30*time.Second, func() bool {
				st := pin.Status()
				return st.Phase == informer.PhaseParked && st.Reason == informer.ReasonNotFound
			}, "the informer at v1 parks: %+v", pin.Status())
			testenv.Eventually(t, 10*time.Second, func() bool { _, _, d := pinned.Get(); return len(d) == 3 }, "its objects deleted")
			_, _, deletes = pinned.Get()
			assert.Equal(t, []string{"w0", "w1", "w2"}, deletes)
			assert.Equal(t, w.v1, pin.Status().Resource.GVR, "it stays at its version")

			// Its snapshot file is of v1: a clean stop after the move does not write v2's
			// objects into it.
			fx.f.Shutdown()
			files, err := filepath.Glob(filepath.Join(dir, "*.snap"))
			require.NoError(t, err)
			require.LessOrEqual(t, len(files), 1, "the informer's file, if written before the move")
			for _, f := range files {
				st, err := os.Stat(f)
				require.NoError(t, err)
				assert.True(t, st.ModTime().Before(followedAt), "%s written after the move", filepath.Base(f))
			}
		})
	}
}

// A watch-all set across a CRD's version retired: its member follows the resource until
// the set has moved to the version served, so that the handler is told no delete of an
// object that still exists, whether the member found its version gone before discovery
// reported the move or after; the set ends at the new version with every object.
func TestRetiredVersionWatchAllTellsNoDelete(t *testing.T) {
	t.Parallel()
	for _, mode := range s52Modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			w := s52NewWidgets(t, 3, func(i int) int64 { return int64(i) })
			gr := w.v1.GroupResource()
			fx := mode.startRec(t, nil, dynamicinformer.Options{Namespace: w.ns})
			ws, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{w.group}})
			require.NoError(t, err)
			t.Cleanup(ws.Stop)
			ev := &testsupport.Events{}
			reg, err := ws.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler { return ev.Handler() })
			require.NoError(t, err)
			require.NoError(t, ws.WaitForSync(ctx))
			testenv.Eventually(t, 30*time.Second, func() bool { return reg.MemberSynced(gr) }, "handler synced")

			w.addV2(t, false) // v2 served and stored; v1 no longer served
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				inf, ok := ws.Informer(gr)
				return ok && inf.Key().GVR == w.v2 && inf.HasSynced() && reg.MemberSynced(gr)
			}, func() string { return fx.log.String() })
			_, err = cp.Dynamic(t).Resource(w.v2).Namespace(w.ns).Create(ctx, s52Widget(w.group, "v2", "w9", nil, map[string]any{"size": 9}), metav1.CreateOptions{})
			require.NoError(t, err)
			testenv.Eventually(t, 30*time.Second, func() bool {
				a, _, _ := ev.Get()
				return slices.Contains(a, "w9")
			}, "the add made at v2")
			_, _, deletes := ev.Get()
			assert.Empty(t, deletes, "no object was deleted: %s", fx.log)
			inf, ok := ws.Informer(gr)
			require.True(t, ok)
			objs := must(inf.List(nil))
			require.Len(t, objs, 4)
			for _, o := range objs {
				assert.Equal(t, w.group+"/v2", o.GetAPIVersion(), o.GetName())
			}
		})
	}
}
