package dynamicinformer_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// deletes counts delete notifications by name.
type deletes struct {
	mu    sync.Mutex
	names map[string]bool
}

func (d *deletes) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(o any) {
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(o)
		d.mu.Lock()
		d.names[key[strings.LastIndex(key, "/")+1:]] = true
		d.mu.Unlock()
	}}
}

func (d *deletes) has(names ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range names {
		if !d.names[n] {
			return false
		}
	}
	return true
}

// A synced informer whose CRD is deleted parks within seconds (one log line, no requests
// while parked, handlers told of the deletions) and resumes when the CRD is created again,
// with exactly the new objects.
func TestCRDDeletedAfterSyncParksAndResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, crd, gvr := installWidgets(t)
	dyn := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	for i := range 3 {
		_, err := dyn.Create(ctx, widget(group, fmt.Sprint("old", i), 1), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "widgets."+group)
	require.NoError(t, err)
	defer inf.Release()
	del := &deletes{names: map[string]bool{}}
	_, err = inf.AddEventHandler(del.handler())
	require.NoError(t, err)
	waitSync(t, inf)
	require.Len(t, must(inf.List(nil)), 3)

	var mu sync.Mutex
	transitions := map[informer.Phase]time.Time{}
	unsub, err := fx.f.SubscribeStatus(func(st informer.Status) {
		mu.Lock()
		transitions[st.Phase] = time.Now()
		mu.Unlock()
	})
	require.NoError(t, err)
	defer unsub()
	at := func(p informer.Phase) time.Time {
		mu.Lock()
		defer mu.Unlock()
		return transitions[p]
	}

	deleting := time.Now()
	cp.DeleteCRD(t, crd.Name)
	gone := time.Now()
	testenv.Eventually(t, 20*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked after CRD delete: %v", inf.Status())
	testenv.Eventually(t, 5*time.Second, func() bool { return !at(informer.PhaseParked).IsZero() }, "status delivered")
	t.Logf("park latency: %v after the delete request, %v after the CRD was gone",
		at(informer.PhaseParked).Sub(deleting).Round(time.Millisecond), at(informer.PhaseParked).Sub(gone).Round(time.Millisecond))
	st := inf.Status()
	assert.Equal(t, informer.ReasonNotFound, st.Reason)
	assert.Equal(t, 0, st.Objects)
	assert.Empty(t, must(inf.List(nil)))
	testenv.Eventually(t, 5*time.Second, func() bool { return del.has("old0", "old1", "old2") }, "handlers saw the deletions")

	// Parked means quiet: no list or watch of the resource, no new log lines.
	path := "/apis/" + group + "/"
	lists, watches := fx.rec.Count(path)
	// The line is written before subscribers are told; awaited all the same, then held.
	testenv.Eventually(t, 5*time.Second, func() bool { return fx.log.Count("Informer parked", "widgets."+group) > 0 },
		"a log line for the park:\n%s", fx.log)
	parkLines := fx.log.Count("Informer parked", "widgets."+group)
	assert.Equal(t, 1, parkLines, "one log line for the park:\n%s", fx.log)
	time.Sleep(3 * time.Second)
	l2, w2 := fx.rec.Count(path)
	assert.Equal(t, lists, l2, "no LIST while parked")
	assert.Equal(t, watches, w2, "no WATCH while parked")
	assert.Equal(t, parkLines, fx.log.Count("Informer parked", "widgets."+group))
	assert.Zero(t, fx.log.Count("Failed to watch"), "no reflector error lines:\n%s", fx.log)

	// The CRD comes back: discovery reports it, the informer resumes and syncs the new
	// objects only.
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	recreated := time.Now()
	_, err = dyn.Create(ctx, widget(group, "new0", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		return inf.Status().Phase == informer.PhaseSynced && len(must(inf.List(nil))) == 1
	}, "resumed: %v", inf.Status())
	t.Logf("resume latency after the CRD was re-created and served: resuming after %v, synced after %v",
		at(informer.PhaseSyncing).Sub(recreated).Round(time.Millisecond), at(informer.PhaseSynced).Sub(recreated).Round(time.Millisecond))
	assert.Equal(t, []string{"new0"}, names(must(inf.List(nil))))
	assert.Equal(t, 1, fx.log.Count("Informer parked", "widgets."+group))
	assert.Equal(t, 1, fx.log.Count("Informer resuming", "widgets."+group))
}

// A deletion that discovery's cache missed (here a discovery client that is not started, so
// no watch tells it; in a started one, a round that read the aggregated document just before
// the apiserver rebuilt it) does not keep the informer retrying: the server's 404 makes it
// ask discovery afresh, which corrects the cache, and it parks. With that client, nothing
// would ever report the CRD's return either: the park's timed re-checks ask afresh.
func TestCRDDeletedBehindDiscoveryParks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, crd, gvr := installWidgets(t)
	_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, widget(group, "w0", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	disc, err := discovery.New(cp.AdminConfig(), discovery.Options{})
	require.NoError(t, err)
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns, Discovery: disc})
	inf, err := fx.f.Informer(ctx, "widgets."+group)
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	require.Len(t, must(inf.List(nil)), 1)

	cp.DeleteCRD(t, crd.Name)
	_, err = disc.ResolveGVR(ctx, gvr)
	require.NoError(t, err, "the client's cache still shows the deleted resource")
	testenv.Eventually(t, 30*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	st := inf.Status()
	assert.Equal(t, informer.ReasonNotFound, st.Reason)
	assert.Equal(t, 0, st.Objects)
	_, err = disc.ResolveGVR(ctx, gvr)
	assert.True(t, meta.IsNoMatchError(err), "the recheck corrected discovery's cache: %v", err)

	// The CRD comes back. No event can tell a client that follows nothing, and nobody calls
	// Recheck: the parked informer's timed re-checks ask discovery afresh and it resumes.
	require.False(t, disc.Following())
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	_, err = cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(ctx, widget(group, "w1", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 60*time.Second, func() bool {
		return inf.Status().Phase == informer.PhaseSynced && len(must(inf.List(nil))) == 1
	}, "resumed without Recheck: %v", inf.Status())
	assert.Equal(t, []string{"w1"}, names(must(inf.List(nil))))
}

// A CRD deleted while the informer's initial sync is in flight: the informer parks instead
// of retrying forever, and syncs once the CRD is back.
func TestCRDDeletedDuringSyncParksAndResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, crd, gvr := installWidgets(t)
	dyn := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	_, err := dyn.Create(ctx, widget(group, "old", 1), metav1.CreateOptions{})
	require.NoError(t, err)

	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	path := "/apis/" + group + "/"
	fx.rec.Hold(path) // the initial watch-list waits until the CRD is gone
	inf, err := fx.f.Informer(ctx, "widgets."+group)
	require.NoError(t, err)
	defer inf.Release()
	assert.Equal(t, informer.PhaseSyncing, inf.Status().Phase)
	cp.DeleteCRD(t, crd.Name)
	fx.rec.Release()
	testenv.Eventually(t, 20*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	assert.Equal(t, informer.ReasonNotFound, inf.Status().Reason)
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var se *informer.SyncError
	require.ErrorAs(t, inf.WaitForSync(wctx), &se)
	assert.Equal(t, informer.ReasonNotFound, se.Failures[0].Reason)

	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	_, err = dyn.Create(ctx, widget(group, "new", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool {
		return inf.Status().Phase == informer.PhaseSynced && len(must(inf.List(nil))) == 1
	}, "resumed: %v", inf.Status())
	assert.Equal(t, []string{"new"}, names(must(inf.List(nil))))
}
