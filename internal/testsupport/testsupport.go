// Package testsupport holds helpers shared by the integration tests of kindex's front ends:
// an HTTP recorder that counts and can hold list and watch requests, and a logger that
// collects lines. It is imported by tests only.
package testsupport

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/klog/v2"
)

// Request is one request the Recorder saw.
type Request struct {
	Method string
	Path   string
	Query  string
	Accept string
	// Watch is true for watch requests (watch=true or watch=1).
	Watch bool
	// InitialEvents is true for watch-list requests (sendInitialEvents=true).
	InitialEvents bool
	// InitialEventsEnded is true for a watch-list whose stream said its initial events had
	// ended (the bookmark annotated k8s.io/initial-events-end), as far as it was read.
	InitialEventsEnded bool
	// Status is the response status code, 0 if the request failed.
	Status int
	// ContentType is the response content type.
	ContentType string
}

// Recorder is an http.RoundTripper wrapper (install with rest.Config.Wrap) that records
// requests, can hold watch requests for a path, and can cut open watches.
type Recorder struct {
	mu     sync.Mutex
	reqs   []Request
	holdOn string // substring of paths whose watches are held
	hold   chan struct{}
	bodies map[*cutBody]string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{bodies: map[*cutBody]string{}} }

// Wrap is a transport.WrapperFunc.
func (r *Recorder) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &roundTripper{next: rt, RoundTripFunc: func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		rec := Request{
			Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Accept: req.Header.Get("Accept"),
			Watch:         q.Get("watch") == "true" || q.Get("watch") == "1",
			InitialEvents: q.Get("sendInitialEvents") == "true",
		}
		if rec.Watch {
			r.mu.Lock()
			hold := r.hold
			held := hold != nil && strings.Contains(rec.Path, r.holdOn)
			r.mu.Unlock()
			if held {
				select {
				case <-hold:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
		}
		resp, err := rt.RoundTrip(req)
		idx := -1 // the request's place in reqs, set under mu once appended
		if resp != nil {
			rec.Status = resp.StatusCode
			rec.ContentType = resp.Header.Get("Content-Type")
			if rec.Watch && resp.Body != nil {
				b := &cutBody{ReadCloser: resp.Body}
				if rec.InitialEvents {
					b.onData = r.endScanner(&idx)
				}
				r.mu.Lock()
				r.bodies[b] = rec.Path
				r.mu.Unlock()
				b.onClose = func() {
					r.mu.Lock()
					delete(r.bodies, b)
					r.mu.Unlock()
				}
				resp.Body = b
			}
		}
		r.mu.Lock()
		idx = len(r.reqs)
		r.reqs = append(r.reqs, rec)
		r.mu.Unlock()
		return resp, err
	}}
}

// initialEventsEnd is the annotation of the bookmark that ends a watch-list's initial
// events; its key reads the same in JSON and protobuf streams.
const initialEventsEnd = "k8s.io/initial-events-end"

// endScanner returns what a watch-list's body calls with each read: it marks the request
// (at *idx in reqs) once the stream carried initialEventsEnd, across read boundaries.
func (r *Recorder) endScanner(idx *int) func([]byte) {
	var tail []byte
	done := false
	return func(p []byte) {
		if done {
			return
		}
		buf := append(tail, p...)
		if bytes.Contains(buf, []byte(initialEventsEnd)) {
			done = true
			r.mu.Lock()
			if *idx >= 0 {
				r.reqs[*idx].InitialEventsEnded = true
			}
			r.mu.Unlock()
			return
		}
		keep := min(len(buf), len(initialEventsEnd)-1)
		tail = append(tail[:0:0], buf[len(buf)-keep:]...)
	}
}

// Listings returns the initial listings made for pathPart, in order: "list" for a LIST,
// "watch-list" for a watch-list whose initial events ended, and "watch-list-unended" for
// one whose stream ended or failed before (client-go's reflector then falls back to one
// LIST, which an apiserver too loaded to serve a consistent read in time makes happen).
func (r *Recorder) Listings(pathPart string) []string {
	var out []string
	for _, q := range r.Requests(pathPart) {
		switch {
		case q.InitialEvents && q.InitialEventsEnded:
			out = append(out, "watch-list")
		case q.InitialEvents:
			out = append(out, "watch-list-unended")
		case !q.Watch && q.Method == http.MethodGet:
			out = append(out, "list")
		}
	}
	return out
}

// Requests returns the recorded requests whose path contains pathPart.
func (r *Recorder) Requests(pathPart string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.reqs {
		if strings.Contains(q.Path, pathPart) {
			out = append(out, q)
		}
	}
	return out
}

// Count returns how many lists (watch false) and watches were made for pathPart.
func (r *Recorder) Count(pathPart string) (lists, watches int) {
	for _, q := range r.Requests(pathPart) {
		if q.Method != http.MethodGet {
			continue
		}
		if q.Watch {
			watches++
		} else {
			lists++
		}
	}
	return lists, watches
}

// Hold makes new watch requests whose path contains pathPart wait until Release.
func (r *Recorder) Hold(pathPart string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holdOn, r.hold = pathPart, make(chan struct{})
}

// Release lets held watch requests through.
func (r *Recorder) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
}

// Cut ends every open watch whose path contains pathPart as a server closing it does (the
// reader sees EOF). It returns how many were cut.
func (r *Recorder) Cut(pathPart string) int {
	r.mu.Lock()
	var cut []*cutBody
	for b, p := range r.bodies {
		if strings.Contains(p, pathPart) {
			cut = append(cut, b)
		}
	}
	r.mu.Unlock()
	for _, b := range cut {
		b.cut()
	}
	return len(cut)
}

// RoundTripFunc is an http.RoundTripper made of a function: the transport wrappers of tests
// (rest.Config.Wrap) that change or count what passes.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// roundTripper is a RoundTripFunc that client-go can see through to the transport below.
type roundTripper struct {
	RoundTripFunc
	next http.RoundTripper
}

// WrappedRoundTripper lets client-go reach the transport below.
func (r *roundTripper) WrappedRoundTripper() http.RoundTripper { return r.next }

// errCut is what a cut watch's reader sees: a clean end of stream.
var errCut = io.EOF

type cutBody struct {
	io.ReadCloser
	mu      sync.Mutex
	isCut   bool
	onClose func()
	onData  func([]byte) // each read's bytes, from the reading goroutine
	once    sync.Once
}

func (b *cutBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	isCut := b.isCut
	b.mu.Unlock()
	if isCut {
		return 0, errCut
	}
	n, err := b.ReadCloser.Read(p)
	if b.onData != nil && n > 0 {
		b.onData(p[:n])
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.isCut {
		return 0, errCut
	}
	return n, err
}

func (b *cutBody) cut() {
	b.mu.Lock()
	b.isCut = true
	b.mu.Unlock()
	_ = b.ReadCloser.Close() // unblocks a pending Read
}

func (b *cutBody) Close() error {
	b.once.Do(func() {
		if b.onClose != nil {
			b.onClose()
		}
	})
	return b.ReadCloser.Close()
}

// Lines collects log lines written through Logger.
type Lines struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger writing to l at verbosity v.
func (l *Lines) Logger(v int) logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: v})
}

// Count returns how many lines contain every one of parts.
func (l *Lines) Count(parts ...string) int { return len(l.Matching(parts...)) }

// Matching returns the lines that contain every one of parts (every line without parts).
func (l *Lines) Matching(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range l.lines {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

// CaptureGlobalKlog sends everything logged through klog's global logger (klog.Info,
// klog.Background(), klog.FromContext of a context without a logger) to the returned
// Lines, at every verbosity, until the test ends: what reaches it bypassed the caller's
// Logger.
func CaptureGlobalKlog(t testing.TB) *Lines {
	// client-go logs the states of its feature gates through the global logger, once per
	// process, when they are first read (it says it cannot do otherwise): read them first.
	clientgofeatures.FeatureGates().Enabled(clientgofeatures.WatchListClient)
	global := &Lines{}
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	oldV := fs.Lookup("v").Value.String()
	if err := fs.Set("v", "10"); err != nil {
		t.Fatal(err)
	}
	klog.SetLogger(global.Logger(10))
	t.Cleanup(func() {
		klog.ClearLogger()
		_ = fs.Set("v", oldV)
	})
	return global
}

// String returns every line.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// Must returns v, panicking on err: for List calls inside assertions and conditions.
func Must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// CreateN calls create(i) for i in [0, n), 16 at a time (objects for a benchmark, created
// against the test apiserver), and fails tb with the first error.
func CreateN(tb testing.TB, n int, create func(i int) error) {
	tb.Helper()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error { return create(i) })
	}
	if err := g.Wait(); err != nil {
		tb.Fatal(err)
	}
}

// BigConfigMapData returns the data of a large ConfigMap: keys entries key-0000... of random
// base-36 values, the same for the same seed. Decoded, each entry costs far more than its
// JSON: tests of memory and garbage use it.
func BigConfigMapData(seed uint64, keys int) map[string]string {
	rnd := rand.New(rand.NewPCG(seed, 7))
	data := make(map[string]string, keys)
	for k := range keys {
		data[fmt.Sprintf("key-%04d", k)] = strconv.FormatUint(rnd.Uint64(), 36)
	}
	return data
}

// MetricSum sums every sample (counter or gauge) of the metric family name in g.
func MetricSum(tb testing.TB, g prometheus.Gatherer, name string) float64 {
	tb.Helper()
	mfs, err := g.Gather()
	if err != nil {
		tb.Fatalf("gathering metrics: %v", err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}
