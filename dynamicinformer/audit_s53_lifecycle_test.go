package dynamicinformer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/query"
)

func auditCreateCM(t *testing.T, ns, name string) {
	t.Helper()
	_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// A forbidden informer parks without listing or watching again while parked, a grant
// takes effect within a few access re-checks, and a revoke parks it again, keeping the
// cache, again without requests for the resource.
func TestAuditForbiddenParkIsQuietAndGrantsTakeEffect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "a")
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	fx := start(t, cfg, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	st := inf.Status()
	require.Equal(t, informer.ReasonForbidden, st.Reason)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	l0, w0 := fx.rec.Count(path)
	reviews := len(fx.rec.Requests("selfsubjectaccessreviews"))
	testenv.Eventually(t, 20*time.Second, func() bool { return len(fx.rec.Requests("selfsubjectaccessreviews")) >= reviews+3 },
		"re-checked with access reviews")
	l1, w1 := fx.rec.Count(path)
	assert.Equal(t, l0, l1, "no list while parked")
	assert.Equal(t, w0, w1, "no watch while parked")

	revoke := cp.Grant(t, user, ns, rule("configmaps", "list", "watch"))
	granted := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, inf.WaitForSync(sctx))
	assert.Less(t, time.Since(granted), 6*time.Second, "a grant takes effect within about AccessRecheckInterval")
	assert.Equal(t, []string{"a"}, names(must(inf.List(nil))))

	revoke()
	testenv.Eventually(t, 30*time.Second, func() bool {
		fx.rec.Cut("/configmaps")
		return inf.Status().Phase == informer.PhaseParked
	}, "parked again: %v", inf.Status())
	st = inf.Status()
	assert.Equal(t, informer.ReasonForbidden, st.Reason, "%v", st)
	assert.Equal(t, 1, st.Objects, "the cache is kept on a 403")
	objs, err := inf.List(nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, names(objs))
	l2, w2 := fx.rec.Count(path)
	reviews = len(fx.rec.Requests("selfsubjectaccessreviews"))
	testenv.Eventually(t, 20*time.Second, func() bool { return len(fx.rec.Requests("selfsubjectaccessreviews")) >= reviews+3 },
		"re-checked with access reviews")
	l3, w3 := fx.rec.Count(path)
	assert.Equal(t, l2, l3, "no list while parked again")
	assert.Equal(t, w2, w3, "no watch while parked again")
}

// Shutdown while WaitForSync waits on a parked informer ends the wait promptly with an
// error naming the shutdown.
func TestAuditShutdownEndsWaitForSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	_, cfg, err := cp.NewUser()
	require.NoError(t, err)
	f, _, _ := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Namespace: ns}, dynamicinformer.NewFactory)
	inf, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	done := make(chan error, 2)
	go func() { done <- inf.WaitForSync(context.Background()) }()
	go func() { done <- f.WaitForSync(context.Background()) }()
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked }, "parked")
	f.Shutdown()
	for range 2 {
		select {
		case err := <-done:
			require.Error(t, err)
			assert.ErrorIs(t, err, informer.ErrShutdown)
		case <-time.After(5 * time.Second):
			t.Fatal("WaitForSync did not return after Shutdown")
		}
	}
}

type auditFuncs struct {
	add func(obj any)
	upd func(old, obj any)
	del func(obj any)
}

func (h auditFuncs) OnAdd(obj any, _ bool) {
	if h.add != nil {
		h.add(obj)
	}
}
func (h auditFuncs) OnUpdate(old, obj any) {
	if h.upd != nil {
		h.upd(old, obj)
	}
}
func (h auditFuncs) OnDelete(obj any) {
	if h.del != nil {
		h.del(obj)
	}
}

// A handler that panics on every event and one that blocks for seconds hold back neither
// the informer nor another handler; the panic is reported in Status.
func TestAuditPanickingAndBlockingHandlers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "a")
	for _, mode := range []string{"unstructured", "compact"} {
		t.Run(mode, func(t *testing.T) {
			newF := dynamicinformer.NewFactory
			if mode == "compact" {
				newF = func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
					return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
				}
			}
			f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(), dynamicinformer.Options{Namespace: ns}, newF)
			inf, err := f.Informer(ctx, "configmaps")
			require.NoError(t, err)
			defer inf.Release()
			var panics atomic.Int64
			_, err = inf.AddEventHandler(auditFuncs{
				add: func(any) { panics.Add(1); panic("boom") },
				upd: func(any, any) { panics.Add(1); panic(errors.New("boom update")) },
				del: func(any) { var m map[string]int; m["x"] = 1 },
			})
			require.NoError(t, err)
			unblock := make(chan struct{})
			var blockOnce sync.Once
			defer blockOnce.Do(func() { close(unblock) })
			blocked, err := inf.AddEventHandler(auditFuncs{add: func(any) { <-unblock }})
			require.NoError(t, err)
			var mu sync.Mutex
			seen := map[string]int{}
			_, err = inf.AddEventHandler(auditFuncs{
				add: func(o any) { mu.Lock(); seen["add "+o.(*unstructured.Unstructured).GetName()]++; mu.Unlock() },
				del: func(o any) {
					if u, ok := o.(*unstructured.Unstructured); ok {
						mu.Lock()
						seen["del "+u.GetName()]++
						mu.Unlock()
					}
				},
			})
			require.NoError(t, err)
			waitSync(t, inf)
			name := "b-" + mode
			auditCreateCM(t, ns, name)
			require.NoError(t, cp.Clientset(t).CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}))
			testenv.Eventually(t, 10*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return seen["add a"] == 1 && seen["add "+name] == 1 && seen["del "+name] == 1
			}, "events reach the good handler: %v", seen)
			assert.Positive(t, blocked.Backlog(), "the blocked handler has its own queue")
			// The panicking handler has its own queue: its panics are counted when it got there.
			testenv.Eventually(t, 10*time.Second, func() bool {
				var pe *informer.PanicError
				return inf.Status().CallbackErrors > 0 && errors.As(inf.Status().LastCallbackError, &pe)
			}, "the panics are counted: %v", inf.Status())
			st := inf.Status()
			assert.Equal(t, informer.PhaseSynced, st.Phase)
			var pe *informer.PanicError
			require.ErrorAs(t, st.LastCallbackError, &pe, "%v", st.LastCallbackError)
			blockOnce.Do(func() { close(unblock) })
			testenv.Eventually(t, 10*time.Second, func() bool { return blocked.Backlog() == 0 }, "blocked handler drains")
		})
	}
}

// Releasing one reference (twice) leaves another reference of the same informer working,
// its index included, even when both registered the same index name.
func TestAuditReleaseOneReferenceKeepsTheOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	for i := range 3 {
		auditCreateCM(t, ns, fmt.Sprintf("c%d", i))
	}
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	a, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	b, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer b.Release()
	waitSync(t, a)
	require.NoError(t, a.AddIndex("name", "{.metadata.name}"))
	require.NoError(t, b.AddIndex("name", ".metadata.name"))
	require.NoError(t, a.AddIndex("onlya", "{.metadata.namespace}"))
	var conflict *informer.IndexConflictError
	require.ErrorAs(t, b.AddIndex("name", "{.metadata.uid}"), &conflict)

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var readErrs atomic.Int64
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := b.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "c1")}})
				if err != nil || len(res.Items) != 1 {
					readErrs.Add(1)
				}
			}
		}()
	}
	a.Release()
	a.Release()
	close(stop)
	readers.Wait()
	assert.Zero(t, readErrs.Load())
	_, err = a.List(nil)
	assert.ErrorIs(t, err, informer.ErrReleased)
	assert.ErrorIs(t, a.AddIndex("x", "{.metadata.name}"), informer.ErrReleased)
	assert.Equal(t, []string{"name"}, b.IndexNames(), "a's own index went with it")
	n, err := b.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "c2")}})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = b.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("onlya", ns)}})
	assert.ErrorIs(t, err, informer.ErrIndexNotFound)
	assert.Equal(t, informer.PhaseSynced, b.Status().Phase)
	auditCreateCM(t, ns, "late")
	testenv.Eventually(t, 10*time.Second, func() bool {
		n, err := b.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("name", "late")}})
		return err == nil && n == 1
	}, "b follows changes")
}

// An index function that calls the informer back gets ErrCalledFromCallback for the calls
// that would wait for the cache's lock, and Release and Shutdown from it return at once.
func TestAuditIndexFuncCallsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "a")
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	waitSync(t, inf)
	other, err := fx.f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	var mu sync.Mutex
	got := map[string]error{}
	var calls atomic.Int64
	require.NoError(t, inf.AddIndexFunc("cb", func(x any) ([]string, error) {
		o := x.(*unstructured.Unstructured)
		if calls.Add(1) > 1 {
			return []string{o.GetName()}, nil
		}
		rec := func(k string, err error) { mu.Lock(); got[k] = err; mu.Unlock() }
		_, err := inf.Query(ctx, query.Query{})
		rec("query", err)
		_, err = inf.Count(ctx, query.Query{})
		rec("count", err)
		rec("addindex", inf.AddIndex("x", "{.metadata.name}"))
		rec("removeindex", inf.RemoveIndex("cb"))
		_, err = inf.List(nil)
		rec("list", err)
		_ = inf.Status()
		other.Release()
		return []string{o.GetName()}, nil
	}))
	mu.Lock()
	for _, k := range []string{"query", "count", "addindex", "removeindex", "list"} {
		assert.ErrorIs(t, got[k], informer.ErrCalledFromCallback, k)
	}
	mu.Unlock()
	_, err = other.List(nil)
	assert.ErrorIs(t, err, informer.ErrReleased)
	assert.Equal(t, []string{"cb"}, inf.IndexNames())
	n, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("cb", "a")}})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// After Factory.Shutdown nothing the factory started is left, with handlers that were
// blocked, panicking and parked informers.
func TestAuditShutdownLeavesNoGoroutines(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "a")
	disc, err := discovery.New(cp.AdminConfig(), discovery.Options{})
	require.NoError(t, err)
	_, err = disc.Resolve(ctx, "configmaps")
	require.NoError(t, err)
	_, err = disc.Resolve(ctx, "secrets")
	require.NoError(t, err)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns, rule("configmaps", "list", "watch"))
	_, err = cp.Clientset(t).CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	ignore := goleak.IgnoreCurrent()
	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{Namespace: ns, Discovery: disc})
	require.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	require.NoError(t, f.Start(fctx))
	cms, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	secrets, err := f.Informer(ctx, "secrets")
	require.NoError(t, err)
	_, err = cms.AddEventHandler(auditFuncs{add: func(any) { panic("x") }})
	require.NoError(t, err)
	release := make(chan struct{})
	_, err = cms.AddEventHandler(auditFuncs{add: func(any) {
		select {
		case <-release:
		case <-time.After(time.Second):
		}
	}})
	require.NoError(t, err)
	waitSync(t, cms)
	testenv.Eventually(t, 10*time.Second, func() bool { return secrets.Status().Phase == informer.PhaseParked }, "parked")
	f.Shutdown()
	close(release)
	goleak.VerifyNone(t, ignore)
}

var _ cache.ResourceEventHandler = auditFuncs{}

// An informer of one object by name (a field selector metadata.name=x, as the kubelet
// watches a Secret), parked Forbidden, resumes once the user is granted list and watch on
// that object alone (an RBAC rule with resourceNames): the apiserver authorizes such a list
// and watch as a request for the name, and the access re-check must ask for it too, or it
// is refused forever while the server would answer.
func TestAuditGrantByResourceNameResumesANameSelectedInformer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "mine")
	auditCreateCM(t, ns, "other")
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	fx := start(t, cfg, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps", informer.WithFieldSelector("metadata.name=mine"))
	require.NoError(t, err)
	defer inf.Release()
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	require.Equal(t, informer.ReasonForbidden, inf.Status().Reason)

	r := rule("configmaps", "list", "watch")
	r.ResourceNames = []string{"mine"}
	cp.Grant(t, user, ns, r)
	// What the server now allows: the informer's own request, made by the same user.
	_, err = must(kubernetes.NewForConfig(cfg)).CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=mine"})
	require.NoError(t, err, "the server allows the list by name")
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	require.NoError(t, inf.WaitForSync(sctx), "the grant takes effect: %v", inf.Status())
	assert.Equal(t, []string{"mine"}, names(must(inf.List(nil))))
}

// Granted list but not watch on the one object it selects by name, the informer lists it,
// keeps it and parks as WatchForbidden, as with a grant of the whole resource.
func TestAuditListOnlyGrantByResourceNameParksWatchForbidden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	auditCreateCM(t, ns, "mine")
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	r := rule("configmaps", "list")
	r.ResourceNames = []string{"mine"}
	cp.Grant(t, user, ns, r)
	fx := start(t, cfg, dynamicinformer.Options{Namespace: ns})
	inf, err := fx.f.Informer(ctx, "configmaps", informer.WithFieldSelector("metadata.name=mine"))
	require.NoError(t, err)
	defer inf.Release()
	testenv.Eventually(t, 10*time.Second, func() bool { return inf.Status().Phase == informer.PhaseParked },
		"parked: %v", inf.Status())
	st := inf.Status()
	assert.Equal(t, informer.ReasonWatchForbidden, st.Reason, "%v", st)
	assert.Equal(t, 1, st.Objects)
}
