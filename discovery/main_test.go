package discovery_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

// One control plane for the package. The integration tests that change what every client
// sees (a broken APIService) or that count requests of a started client are not parallel.
var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

// request is one request a client sent, as the counting transport saw it.
type request struct {
	Method, Path, Query, Accept string
	Status                      int
	ContentType                 string
}

// recorder is an http.RoundTripper wrapper that records requests and can hold them.
type recorder struct {
	mu   sync.Mutex
	reqs []request
	gate chan struct{} // when non-nil, discovery requests wait for it to close
}

func (rec *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return &recordingRT{rec: rec, next: rt}
}

type recordingRT struct {
	rec  *recorder
	next http.RoundTripper
}

func (r *recordingRT) WrappedRoundTripper() http.RoundTripper { return r.next }

func (r *recordingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.rec.mu.Lock()
	gate := r.rec.gate
	r.rec.mu.Unlock()
	if gate != nil && isDiscoveryPath(req.URL.Path) {
		<-gate
	}
	resp, err := r.next.RoundTrip(req)
	rq := request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Accept: req.Header.Get("Accept")}
	if resp != nil {
		rq.Status = resp.StatusCode
		rq.ContentType = resp.Header.Get("Content-Type")
	}
	r.rec.mu.Lock()
	r.rec.reqs = append(r.rec.reqs, rq)
	r.rec.mu.Unlock()
	return resp, err
}

// isDiscoveryPath: /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>.
func isDiscoveryPath(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

func (rec *recorder) all() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]request(nil), rec.reqs...)
}

// discovery returns the discovery requests as "GET /path".
func (rec *recorder) discovery() []string {
	var out []string
	for _, r := range rec.all() {
		if isDiscoveryPath(r.Path) {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.reqs = nil
}

// newClient returns a client that records its requests. It is not started.
func newClient(t *testing.T, cfg *rest.Config, opts discovery.Options) (*discovery.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts.WrapTransport = rec.wrap
	c, err := discovery.New(cfg, opts)
	require.NoError(t, err)
	return c, rec
}

// startClient starts a recording client; it stops when the test ends.
func startClient(t *testing.T, cfg *rest.Config, opts discovery.Options) (*discovery.Client, *recorder) {
	t.Helper()
	c, rec := newClient(t, cfg, opts)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		c.Wait()
	})
	start := time.Now()
	require.NoError(t, c.Start(ctx))
	t.Logf("Start took %v", time.Since(start).Round(time.Millisecond))
	return c, rec
}

// timedEvent is an event and when the subscriber received it.
type timedEvent struct {
	discovery.Event
	At time.Time
}

// events subscribes to c and records every event.
type events struct {
	mu  sync.Mutex
	all []timedEvent
}

func subscribe(t *testing.T, c *discovery.Client) *events {
	e := &events{}
	unsubscribe, err := c.Subscribe(func(ev discovery.Event) {
		e.mu.Lock()
		e.all = append(e.all, timedEvent{Event: ev, At: time.Now()})
		e.mu.Unlock()
	})
	require.NoError(t, err)
	t.Cleanup(unsubscribe)
	return e
}

// forGR returns the events of one group resource.
func (e *events) forGR(gr schema.GroupResource) []timedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []timedEvent
	for _, ev := range e.all {
		if ev.Resource.GVR.GroupResource() == gr {
			out = append(out, ev)
		}
	}
	return out
}

// waitFor waits until an event of gr satisfies match and returns it.
func (e *events) waitFor(t *testing.T, gr schema.GroupResource, timeout time.Duration, what string, match func(timedEvent) bool) timedEvent {
	t.Helper()
	var found timedEvent
	testenv.Eventually(t, timeout, func() bool {
		for _, ev := range e.forGR(gr) {
			if match(ev) {
				found = ev
				return true
			}
		}
		return false
	}, "no %s event for %s; got %v", what, gr, e.forGR(gr))
	return found
}

// suffix returns n random lower-case letters, for names that must be unique in the cluster.
func suffix(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return string(b)
}

// crdSpec describes a test CRD.
type crdSpec struct {
	group, kind, plural string
	shortNames          []string
	categories          []string
	versions            []string
}

func (s crdSpec) build() *apiextv1.CustomResourceDefinition {
	crd := testenv.NewCRD(s.group, s.kind, s.plural, s.versions...)
	crd.Spec.Names.ShortNames = s.shortNames
	crd.Spec.Names.Categories = s.categories
	return crd
}

func (s crdSpec) gr() schema.GroupResource {
	return schema.GroupResource{Group: s.group, Resource: s.plural}
}

// uniqueCRD returns a CRD spec in a group of its own with names unique in the cluster.
func uniqueCRD(t *testing.T, kind string) crdSpec {
	sfx := suffix(6)
	return crdSpec{
		group:      sfx + ".kindex.io",
		kind:       kind + strings.ToUpper(sfx[:1]) + sfx[1:],
		plural:     strings.ToLower(kind) + sfx + "s",
		shortNames: []string{"k" + sfx},
		categories: []string{"cat" + sfx},
	}
}

// errOf formats *p when the message is printed, not when it is built: testenv.Eventually
// evaluates its arguments once, before polling.
type errOf struct{ p *error }

func (e errOf) String() string {
	if *e.p == nil {
		return "<nil>"
	}
	return (*e.p).Error()
}
