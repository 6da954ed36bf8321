package discovery_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

func saw(rec *recorder, pathSuffix string, status int) bool {
	for _, r := range rec.all() {
		if strings.HasSuffix(r.Path, pathSuffix) && r.Status == status {
			return true
		}
	}
	return false
}

// TestRestrictedUser: a user who may not list CRDs or APIServices still gets discovery
// (every authenticated user may read the discovery endpoints); the refused watches fall back
// to re-discovery every RefreshInterval, which finds new CRDs; once the user is granted
// list and watch, the client switches to watching and stops polling.
func TestRestrictedUser(t *testing.T) {
	ctx := context.Background()
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	const interval = 300 * time.Millisecond
	c, rec := startClient(t, cfg, discovery.Options{RefreshInterval: interval, NegativeCacheTTL: time.Hour})
	ev := subscribe(t, c)

	for _, in := range []string{"pods", "deploy.apps", "crd", "apiservices"} {
		_, err := c.Resolve(ctx, in)
		require.NoError(t, err, in)
	}
	testenv.Eventually(t, 5*time.Second, func() bool {
		return saw(rec, "/customresourcedefinitions", 403) && saw(rec, "/apiservices", 403)
	}, "the restricted user's CRD and APIService watches were not refused")

	// A new CRD shows up through polling.
	spec := uniqueCRD(t, "Widget")
	t0 := time.Now()
	cp.InstallCRD(t, spec.build())
	added := ev.waitFor(t, spec.gr(), 10*time.Second, "Added", func(e timedEvent) bool { return e.Type == discovery.Added })
	latency := added.At.Sub(t0)
	t.Logf("restricted user, RefreshInterval %v: CRD create -> Added %v", interval, latency.Round(time.Millisecond))
	assert.Less(t, latency, interval+bound)
	rec.reset()
	r, err := c.Resolve(ctx, spec.shortNames[0])
	require.NoError(t, err)
	assert.Equal(t, spec.plural, r.GVR.Resource)
	assert.Empty(t, rec.discovery(), "resolved from the cache")

	t0 = time.Now()
	cp.DeleteCRD(t, spec.plural+"."+spec.group)
	removed := ev.waitFor(t, spec.gr(), 10*time.Second, "Removed", func(e timedEvent) bool { return e.Type == discovery.Removed })
	t.Logf("restricted user: CRD delete -> Removed %v", removed.At.Sub(t0).Round(time.Millisecond))
	_, err = c.Resolve(ctx, spec.plural)
	assert.True(t, meta.IsNoMatchError(err))

	// Grant list and watch: the next probe starts watching, and polling stops.
	cp.Grant(t, user, "",
		rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"apiregistration.k8s.io"}, Resources: []string{"apiservices"}, Verbs: []string{"list", "watch"}})
	testenv.Eventually(t, 10*time.Second, func() bool {
		return saw(rec, "/customresourcedefinitions", 200) && saw(rec, "/apiservices", 200)
	}, "the client did not start watching after the grant")
	// The probe after the informers synced clears the fallback: polling stops, which shows
	// as a quiet window of several intervals. Windows are tried until one is quiet, so that a
	// probe late on a loaded machine is waited for; a client that polls on fails.
	var polled []string
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		rec.reset()
		time.Sleep(5 * interval) // the window: nothing to await, requests must not come
		polled = rec.discovery()
		return len(polled) == 0
	}, func() string {
		return fmt.Sprintf("no polling once watching is permitted; the last window: %v", polled)
	})

	spec2 := uniqueCRD(t, "Widget")
	t0 = time.Now()
	cp.InstallCRD(t, spec2.build())
	added = ev.waitFor(t, spec2.gr(), 10*time.Second, "Added", func(e timedEvent) bool { return e.Type == discovery.Added })
	t.Logf("restricted user after the grant: CRD create -> Added %v", added.At.Sub(t0).Round(time.Millisecond))
	assert.Less(t, added.At.Sub(t0), bound)
	assert.NotContains(t, rec.discovery(), "GET /apis", "followed by watching, per group")
}

// TestStopLeavesNoGoroutines: when Start's context ends and subscriptions are cancelled,
// every goroutine the clients created stops (Wait returns). One client watches; the other (a
// restricted user) polls and restarts refused informers. The read loops of pooled HTTP
// connections are not the clients' goroutines: client-go shares one transport per TLS
// configuration across the process (here with the admin clients of other tests), and a
// connection whose last stream is still being reset is not idle yet when Wait closes the idle
// ones. Everything above the transport (reflectors, watch decoders, workers, subscribers) is
// checked.
func TestStopLeavesNoGoroutines(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	_, restricted, err := cp.NewUser()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var stops []func()
	for _, cfg := range []*rest.Config{cp.AdminConfig(), restricted} {
		c, _ := newClient(t, cfg, discovery.Options{RefreshInterval: 50 * time.Millisecond})
		require.NoError(t, c.Start(ctx))
		unsubscribe, err := c.Subscribe(func(discovery.Event) {})
		require.NoError(t, err)
		_, err = c.Resolve(ctx, "pods")
		require.NoError(t, err)
		_, err = c.Resolve(ctx, "nosuchthing")
		require.True(t, meta.IsNoMatchError(err))
		stops = append(stops, func() {
			unsubscribe()
			c.Wait()
		})
	}
	time.Sleep(300 * time.Millisecond) // let the restricted client poll and probe
	cancel()
	for _, stop := range stops {
		stop()
	}
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}
