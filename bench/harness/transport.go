package harness

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// meter wraps the child's transport: it counts response body bytes (after the transport has
// undone any gzip) and records the requests a subject made, so that the report shows, for
// instance, whether an informer used watch-list.
type meter struct {
	bytes atomic.Int64

	mu       sync.Mutex
	requests []string
	gzip     bool
}

func (m *meter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		m.record(req, resp)
		if err == nil && resp.Body != nil {
			resp.Body = &countingBody{ReadCloser: resp.Body, n: &m.bytes}
		}
		return resp, err
	})
}

func (m *meter) record(req *http.Request, resp *http.Response) {
	desc := req.Method + " " + req.URL.Path
	if q := req.URL.RawQuery; q != "" {
		desc += "?" + q
	}
	if resp != nil {
		desc += " -> " + resp.Status
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			desc += " (" + strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]) + ")"
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, desc)
	m.gzip = m.gzip || (resp != nil && resp.Uncompressed)
}

func (m *meter) snapshot() (requests []string, gzip bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...), m.gzip
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
