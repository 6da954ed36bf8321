package dynamicinformer_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
)

// aggregatedAPI is an aggregated API server in the test process: group <group>/v1beta1 with
// one namespaced resource, foos, holding one object. While down it answers 503 to
// everything, as an aggregated API whose pods are not ready does through the aggregator.
type aggregatedAPI struct {
	group string
	srv   *httptest.Server
	down  atomic.Bool
}

func newAggregatedAPI(t *testing.T, group string) *aggregatedAPI {
	a := &aggregatedAPI{group: group}
	gv := group + "/v1beta1"
	item := fmt.Sprintf(`{"apiVersion":%q,"kind":"Foo","metadata":{"name":"foo1","namespace":"default","resourceVersion":"5","uid":"u1"}}`, gv)
	a.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/" + gv:
			fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[`+
				`{"name":"foos","singularName":"foo","namespaced":true,"kind":"Foo","verbs":["get","list","watch"]}]}`, gv)
		case "/apis/" + gv + "/foos":
			if r.URL.Query().Get("watch") != "true" {
				fmt.Fprintf(w, `{"apiVersion":%q,"kind":"FooList","metadata":{"resourceVersion":"5"},"items":[%s]}`, gv, item)
				return
			}
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", item)
				fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"apiVersion":%q,"kind":"Foo","metadata":{"resourceVersion":"5",`+
					`"annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", gv)
			}
			w.(http.Flusher).Flush()
			select { // nothing changes; the watch ends as a server's watch times out
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			http.NotFound(w, r) // the aggregator then falls back from aggregated discovery
		}
	}))
	a.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the aggregator's probes hang up mid-handshake
	a.srv.StartTLS()
	t.Cleanup(func() {
		a.srv.CloseClientConnections()
		a.srv.Close()
	})
	return a
}

// register makes the aggregator proxy the group to the server, through a Service of type
// ExternalName (the aggregator resolves it without endpoints or a cluster IP), and removes
// the APIService when the test ends, waiting until discovery is whole again.
func (a *aggregatedAPI) register(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	_, err := cp.Clientset(t).CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "agg"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, p, err := net.SplitHostPort(a.srv.Listener.Addr().String())
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	port := int32(n)
	_, err = a.apiServices(t).Create(ctx, &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1." + a.group},
		Spec: apiregv1.APIServiceSpec{Group: a.group, Version: "v1beta1",
			Service:               &apiregv1.ServiceReference{Namespace: ns, Name: "agg", Port: &port},
			InsecureSkipTLSVerify: true, GroupPriorityMinimum: 100, VersionPriority: 10},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		a.unregister(t)
		testenv.Eventually(t, 30*time.Second, func() bool { return !slices.Contains(cp.FailedGroups(t), a.group) },
			"discovery still reports %s as failed", a.group)
	})
}

func (a *aggregatedAPI) unregister(t *testing.T) {
	err := a.apiServices(t).Delete(context.Background(), "v1beta1."+a.group, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete APIService: %v", err)
	}
}

func (a *aggregatedAPI) apiServices(t *testing.T) interface {
	Create(context.Context, *apiregv1.APIService, metav1.CreateOptions) (*apiregv1.APIService, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
} {
	c, err := aggregatorclient.NewForConfig(cp.AdminConfig())
	require.NoError(t, err)
	return c.ApiregistrationV1().APIServices()
}

// TestWatchAllWithBrokenAggregatedAPI: an aggregated API that is down when the sets start
// (metrics-server not ready) holds up nothing. A set over everything syncs every other
// resource, and a set whose filter selects only that group (or a resource not served yet)
// starts empty instead of failing; both take the group's resource in when the API comes
// up, without having asked the broken group for anything meanwhile, and let it go when
// the APIService is deleted.
func TestWatchAllWithBrokenAggregatedAPI(t *testing.T) {
	ctx := context.Background()
	group := testenv.UniqueName(t) + ".kindex.test"
	api := newAggregatedAPI(t, group)
	api.down.Store(true)
	api.register(t)
	testenv.Eventually(t, 30*time.Second, func() bool { return slices.Contains(cp.FailedGroups(t), group) },
		"discovery does not report %s as failed", group)

	fx := start(t, nil, dynamicinformer.Options{})
	all, err := fx.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	only, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}})
	require.NoError(t, err, "a set of the broken group alone starts, empty")
	notYet, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"widgets.notyet.kindex.test"}})
	require.NoError(t, err, "a broken group elsewhere does not fail a set of a resource not served yet")
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, w := range []*informer.WatchAll[dynamicinformer.Object]{all, only, notYet} {
		require.NoError(t, w.WaitForSync(wctx))
	}
	require.NoError(t, fx.f.WaitForSync(wctx))
	_, ok := all.Informer(schema.GroupResource{Resource: "pods"})
	assert.True(t, ok, "pods is a member")
	assert.Greater(t, len(all.Informers()), 20, "every healthy resource is a member")
	foos := schema.GroupResource{Group: group, Resource: "foos"}
	_, ok = all.Informer(foos)
	assert.False(t, ok, "the broken group's resource is not a member while it is down")
	assert.Empty(t, only.Informers())
	assert.Contains(t, fx.log.String(), group, "the log names the broken group")
	assert.Contains(t, unavailable(t, all), group, "the set says which group it lacks")
	assert.Contains(t, unavailable(t, only), group)
	assert.NotContains(t, unavailable(t, notYet), group, "a group the filter leaves out is not this set's concern")

	// The API comes up: its resource joins both sets.
	api.down.Store(false)
	for _, w := range []*informer.WatchAll[dynamicinformer.Object]{all, only} {
		testenv.Eventually(t, 60*time.Second, func() bool { _, ok := w.Informer(foos); return ok },
			"%s did not join when the aggregated API came up", foos)
		require.NoError(t, w.WaitForSync(wctx))
		inf, _ := w.Informer(foos)
		assert.Equal(t, []string{"foo1"}, names(must(inf.List(labels.Everything()))))
		testenv.Eventually(t, 30*time.Second, func() bool { return !slices.Contains(unavailable(t, w), group) },
			"the set still says %s is unavailable", group)
	}
	// Down for the seconds the aggregator takes to notice (its availability check runs
	// every few seconds), the factory sent the group a handful of discovery requests, and
	// none to list or watch it: no loop on it.
	var before []string
	for _, r := range fx.rec.Requests("/apis/" + group) {
		if r.Status != http.StatusOK {
			before = append(before, r.Method+" "+r.Path+" "+strconv.Itoa(r.Status))
		}
	}
	assert.LessOrEqual(t, len(before), 6, "requests to the group while it was down: %v", before)

	// The APIService is deleted: the resource leaves, and every set is synced.
	api.unregister(t)
	for _, w := range []*informer.WatchAll[dynamicinformer.Object]{all, only} {
		testenv.Eventually(t, 60*time.Second, func() bool { _, ok := w.Informer(foos); return !ok },
			"%s did not leave when its APIService was deleted", foos)
		require.NoError(t, w.WaitForSync(wctx))
	}
	only.Stop()
	_, err = only.Unavailable(ctx)
	assert.ErrorIs(t, err, informer.ErrReleased, "a stopped set says why")
}

// unavailable returns the groups w.Unavailable names, checking that each error is a group's.
func unavailable(t *testing.T, w *informer.WatchAll[dynamicinformer.Object]) []string {
	t.Helper()
	errs, err := w.Unavailable(context.Background())
	require.NoError(t, err)
	var groups []string
	for _, e := range errs {
		require.ErrorIs(t, e, discovery.ErrGroupUnavailable)
		groups = append(groups, e.Group)
	}
	return groups
}
