package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/storage"
)

// jsonSnapMode is the fake mode with snapshots that round-trip: records are the objects'
// JSON. If gate is set, each decode waits until it is closed, after telling loading once.
type jsonSnapMode struct {
	snapModeFake
	gate    chan struct{}
	loading chan struct{}
	once    sync.Once
}

func (*jsonSnapMode) SnapshotIdentity() string { return "json" }
func (*jsonSnapMode) AppendSnapshot(dst []byte, item any) ([]byte, bool) {
	b, err := json.Marshal(item)
	return append(dst, b...), err == nil
}
func (m *jsonSnapMode) SnapshotDecode(data []byte) (any, error) {
	if m.gate != nil {
		m.once.Do(func() { close(m.loading) })
		<-m.gate
	}
	o := &metav1.PartialObjectMetadata{}
	return o, json.Unmarshal(data, o)
}
func (*jsonSnapMode) SnapshotList(items []any, rv string) runtime.Object {
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, it := range items {
		l.Items = append(l.Items, *it.(obj))
	}
	return l
}

// snapshotFactory returns a started factory of mode with SnapshotDir dir and the cancel of
// its context.
func snapshotFactory(t *testing.T, mode storage.Mode, dir string) (*Factory[obj], context.CancelFunc) {
	t.Helper()
	return snapshotFactoryWith(t, mode, Options[obj]{SnapshotDir: dir})
}

// snapshotFactoryWith is snapshotFactory with opts, whose SnapshotDir is set.
func snapshotFactoryWith(t *testing.T, mode storage.Mode, opts Options[obj]) (*Factory[obj], context.CancelFunc) {
	t.Helper()
	in := hooks{Access: &fakeAccess{}, ReflectorBackoff: &wait.Backoff{Duration: 10 * time.Millisecond, Cap: 50 * time.Millisecond, Steps: 100, Factor: 2},
		RecheckInitial: 20 * time.Millisecond, RecheckMax: 100 * time.Millisecond}
	opts.Discovery, opts.Logger = newFakeDiscovery(widgets), (&logLines{}).logger()
	f, err := newFactory(&rest.Config{Host: "https://fake.invalid"}, opts, func(*rest.Config, storage.Config) (storage.Mode, error) { return mode, nil }, in)
	require.NoError(t, err)
	f.c.opts.snapshot.cluster = nil // no server to identify
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, f.Start(ctx))
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	return f, cancel
}

// An informer stopped while its snapshot loads never takes the watch started from the
// snapshot's version as soon as the file's header was read. That watch is stopped with the
// run: it stayed open, its goroutines blocked for good on the changes it had to deliver.
func TestSnapshotStoppedWhileLoadingStopsItsWatch(t *testing.T) {
	fm := newFakeMode()
	srv := fm.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	dir := t.TempDir()

	first := &jsonSnapMode{snapModeFake: snapModeFake{fm}}
	f, _ := snapshotFactory(t, first, dir)
	inf, err := f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(t.Context()))
	inf.Release()
	f.Shutdown() // writes the snapshot
	require.Zero(t, srv.watching())
	srv.add(newObj("ns", "b", nil)) // changed while the process was down

	second := &jsonSnapMode{snapModeFake: snapModeFake{fm}, gate: make(chan struct{}), loading: make(chan struct{})}
	f, cancel := snapshotFactory(t, second, dir)
	inf, err = f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	defer inf.Release()
	<-second.loading
	eventually(t, func() bool { return srv.watching() == 1 }, "the watch from the snapshot's version started during the load")
	cancel()
	close(second.gate)
	f.Shutdown()
	eventually(t, func() bool { return srv.watching() == 0 }, "the watch nobody took is stopped")
}

// probingSnapMode is jsonSnapMode whose ListerWatcher learns the server's resourceVersion
// without a list (storage.ResourceVersionProber), as the compact and metadata modes' do.
type probingSnapMode struct{ jsonSnapMode }

type probingFakeLW struct {
	noWatchListLW
	s *fakeServer
}

func (lw probingFakeLW) CurrentResourceVersion(context.Context) (string, error) {
	lw.s.mu.Lock()
	defer lw.s.mu.Unlock()
	return strconv.Itoa(lw.s.rv), nil
}

func (m *probingSnapMode) ListerWatcher(t storage.Target) cache.ListerWatcherWithContext {
	return probingFakeLW{m.fakeMode.ListerWatcher(t).(noWatchListLW), m.server(t.Resource.GVR)}
}

// A snapshot ahead of the server (etcd restored from a backup older than the snapshot)
// holds objects of versions the server has not reached. The relist that replaces them
// deletes them with tombstones of those versions; the version saved next took them for
// the server's, and once the server passed it, a restart watched from it and missed every
// change made in between, for good.
func TestSnapshotAheadOfTheServerSavesNoVersionOfIts(t *testing.T) {
	snapshotAhead(t, func(m *fakeMode) storage.Mode { return &probingSnapMode{jsonSnapMode{snapModeFake: snapModeFake{m}}} })
}

// snapshotAhead writes a snapshot at version 1001, restarts on a server restored to 500
// (the snapshot's object gone), with the mode mode makes of a fake server: the snapshot's
// objects go, the snapshot saved then is at most at 500, and once the server has passed
// 1001 a restart holds the object created while it was down, not the snapshot's.
func snapshotAhead(t *testing.T, mode func(*fakeMode) storage.Mode) {
	t.Helper()
	dir := t.TempDir()
	before := newFakeMode()
	srv := before.server(widgets.GVR)
	srv.rv = 1000
	srv.add(newObj("ns", "a", nil)) // at 1001, after the backup
	f, _ := snapshotFactory(t, mode(before), dir)
	inf, err := f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(t.Context()))
	inf.Release() // writes the snapshot

	restored := newFakeMode()
	srv = restored.server(widgets.GVR)
	srv.rv = 500 // the backup's version: no widget yet
	start := func() (*Informer[obj], func()) {
		f, cancel := snapshotFactory(t, mode(restored), dir)
		inf, err := f.InformerForGVR(t.Context(), widgets.GVR)
		require.NoError(t, err)
		require.NoError(t, inf.WaitForSync(t.Context()))
		return inf, func() { inf.Release(); cancel(); f.Shutdown() }
	}
	inf, stop := start()
	eventually(t, func() bool { objs, err := inf.List(labels.Everything()); return err == nil && len(objs) == 0 },
		"the snapshot's objects are gone")
	stop()
	files, err := filepath.Glob(filepath.Join(dir, "*.snap"))
	require.NoError(t, err)
	for _, f := range files {
		rv, err := snapshot.PeekResourceVersion(f)
		require.NoError(t, err)
		n, err := strconv.Atoi(rv)
		require.NoError(t, err)
		require.LessOrEqual(t, n, 500, "a snapshot saved at a version the server has not reached")
	}
	srv.add(newObj("ns", "c", nil)) // at 501, while down
	srv.mu.Lock()
	srv.rv = 2000 // the server passes the snapshot's version
	srv.mu.Unlock()
	inf, stop = start()
	defer stop()
	objs, err := inf.List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, objs, 1, "the change made while down")
	require.Equal(t, "c", objs[0].Name, "the change made while down, not the snapshot's object")
}

// tooLargeSnapMode is jsonSnapMode whose server answers a watch from a version it has not
// reached as a kube-apiserver without the probe does: "Too large resource version".
type tooLargeSnapMode struct{ jsonSnapMode }

func (m *tooLargeSnapMode) ListerWatcher(t storage.Target) cache.ListerWatcherWithContext {
	s := m.server(t.Resource.GVR)
	return noWatchListLW{&cache.ListWatch{ListWithContextFunc: s.list,
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			s.mu.Lock()
			now := s.rv
			s.mu.Unlock()
			if from, err := strconv.Atoi(o.ResourceVersion); err == nil && from > now {
				err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", from, now), 1)
				err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
				return nil, err
			}
			return s.watch(ctx, o)
		}}}
}

// A snapshot ahead of a server that cannot be probed is found by the watch from its
// version ("Too large resource version"), and the relist replaces its objects. The version
// saved next is never the snapshot's: a relist that found nothing left it in place, and
// once the server passed it a restart watched from it and missed every change made before.
func TestSnapshotAheadOfAServerWithoutProbe(t *testing.T) {
	snapshotAhead(t, func(m *fakeMode) storage.Mode { return &tooLargeSnapMode{jsonSnapMode{snapModeFake: snapModeFake{m}}} })
}

// A snapshot of another timeline (etcd restored from a backup without a revision bump) may
// hold, at the resourceVersion of one of the server's objects, other content. Found ahead
// by a watch refused as "too large" (a server without the probe), the relist tells handlers
// of the server's content as an update: it took equal versions for equal objects, so the
// handlers kept the snapshot's content, which the server never had.
func TestSnapshotAheadOfAServerWithoutProbeTellsOfTheServersContent(t *testing.T) {
	mode := func(m *fakeMode) storage.Mode { return &tooLargeSnapMode{jsonSnapMode{snapModeFake: snapModeFake{m}}} }
	dir := t.TempDir()
	before := newFakeMode()
	srv := before.server(widgets.GVR)
	srv.rv = 1000
	srv.add(newObj("ns", "a", map[string]string{"v": "snapshot"})) // at 1001
	srv.add(newObj("ns", "b", nil))                                // at 1002
	f, _ := snapshotFactory(t, mode(before), dir)
	inf, err := f.InformerForGVR(t.Context(), widgets.GVR)
	require.NoError(t, err)
	require.NoError(t, inf.WaitForSync(t.Context()))
	inf.Release() // writes the snapshot
	f.Shutdown()

	restored := newFakeMode()
	srv = restored.server(widgets.GVR)
	srv.rv = 1000
	srv.add(newObj("ns", "a", map[string]string{"v": "server"})) // at 1001 too
	rec := newRecorder()
	f, _ = snapshotFactory(t, mode(restored), dir)
	inf, err = f.InformerForGVR(t.Context(), widgets.GVR, WithEventHandler(rec))
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(t.Context()))
	a, err := inf.Get("ns", "a")
	require.NoError(t, err)
	require.Equal(t, "server", a.Labels["v"])
	eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.updates == 1 && rec.deletes["ns/b"]
	}, "handlers learn the server's a (an update) and that b is gone")
}
