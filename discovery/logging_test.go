package discovery_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// errStreamReset is what reading a watch gives when a proxy or the server resets the HTTP/2
// stream; client-go's reflector logs "watch ended with error" at V(0) for it.
var errStreamReset = errors.New("stream error: stream ID 7; INTERNAL_ERROR; received from peer")

// watchCutter is a transport wrapper that can reset the watches in flight.
type watchCutter struct {
	mu      sync.Mutex
	bodies  map[*cuttableBody]bool
	watches map[string]int // by resource (last path element)
}

func (wc *watchCutter) wrap(rt http.RoundTripper) http.RoundTripper {
	return testsupport.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || req.URL.Query().Get("watch") != "true" || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		b := &cuttableBody{ReadCloser: resp.Body}
		resp.Body = b
		parts := strings.Split(req.URL.Path, "/")
		wc.mu.Lock()
		wc.bodies[b] = true
		wc.watches[parts[len(parts)-1]]++
		wc.mu.Unlock()
		return resp, nil
	})
}

func (wc *watchCutter) count(resource string) int {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.watches[resource]
}

// cut resets every watch in flight and returns how many it reset.
func (wc *watchCutter) cut() int {
	wc.mu.Lock()
	bodies := wc.bodies
	wc.bodies = map[*cuttableBody]bool{}
	wc.mu.Unlock()
	for b := range bodies {
		b.cut()
	}
	return len(bodies)
}

// cuttableBody is a watch response body whose reads fail with errStreamReset once cut.
type cuttableBody struct {
	io.ReadCloser
	isCut atomic.Bool
}

func (b *cuttableBody) Read(p []byte) (int, error) {
	if b.isCut.Load() {
		return 0, errStreamReset
	}
	n, err := b.ReadCloser.Read(p)
	if b.isCut.Load() {
		return 0, errStreamReset
	}
	return n, err
}

func (b *cuttableBody) cut() {
	b.isCut.Store(true)
	_ = b.ReadCloser.Close() // wakes a read in progress
}

// TestLogsGoThroughTheCallersLogger: when the CRD and APIService watches drop, client-go's
// "watch ended with error" (and everything else) reaches Options.Logger and nothing reaches
// klog's global logger, where it used to go at V(0) once per dropped connection. With
// logr.Discard(), nothing is logged at all.
func TestLogsGoThroughTheCallersLogger(t *testing.T) {
	for _, tt := range []struct {
		name   string
		logger func(*testsupport.Lines) logr.Logger
	}{
		// V(8), not more: from V(9) client-go's debugging round tripper (there since the capture
		// raises klog's -v) traces each request's timing and reads the trace without its lock,
		// which a canceled request's HTTP/2 read loop may still write: a data race in client-go
		// (refs' logging test met it). Its request lines go on reaching the caller's Logger.
		{"caller's logger", func(l *testsupport.Lines) logr.Logger { return l.Logger(8) }},
		{"discard", func(*testsupport.Lines) logr.Logger { return logr.Discard() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			global := testsupport.CaptureGlobalKlog(t)
			own := &testsupport.Lines{}
			wc := &watchCutter{bodies: map[*cuttableBody]bool{}, watches: map[string]int{}}
			c, err := discovery.New(cp.AdminConfig(), discovery.Options{Logger: tt.logger(own), WrapTransport: wc.wrap})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(func() {
				cancel()
				c.Wait()
			})
			require.NoError(t, c.Start(ctx))
			testenv.Eventually(t, 10*time.Second, func() bool {
				return wc.count("customresourcedefinitions") > 0 && wc.count("apiservices") > 0
			}, "the client did not watch CRDs and APIServices")
			time.Sleep(time.Second) // past the watches' initial events

			for round := 1; round <= 2; round++ {
				crds, services := wc.count("customresourcedefinitions"), wc.count("apiservices")
				require.Positive(t, wc.cut(), "round %d: no watch to cut", round)
				testenv.Eventually(t, 20*time.Second, func() bool {
					return wc.count("customresourcedefinitions") > crds && wc.count("apiservices") > services
				}, "round %d: the watches did not resume", round)
				time.Sleep(time.Second) // past the new watches' initial events
			}
			_, err = c.Resolve(ctx, "pods") // a request, for its log lines too
			require.NoError(t, err)
			cancel()
			c.Wait()

			if tt.name == "discard" {
				assert.Empty(t, own.Matching())
			} else {
				ended := own.Matching("watch ended with error")
				for _, r := range []string{"customresourcedefinitions.apiextensions.k8s.io", "apiservices.apiregistration.k8s.io"} {
					assert.NotEmpty(t, own.Matching(`"resource"="`+r+`"`), "no line about %s", r)
					n := 0
					for _, line := range ended {
						if strings.Contains(line, r) {
							n++
						}
					}
					assert.GreaterOrEqual(t, n, 1, "client-go's line for a dropped watch of %s", r)
				}
				for _, line := range ended {
					assert.Contains(t, line, `"level"=1`, "one level more verbose than client-go's V(0)")
					assert.Contains(t, line, `"resource"=`)
				}
			}
			assert.Empty(t, global.Matching(), "lines that reached klog's global logger:\n%s", strings.Join(global.Matching(), "\n"))
			if t.Failed() {
				for _, line := range own.Matching() {
					t.Logf("%.300s", line)
				}
			}
		})
	}
}
