package discovery_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

// lines is a logr sink's output, one entry per line.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.all = append(l.all, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: 10, LogCaller: funcr.None})
}

func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

func (l *lines) containing(s string) []string {
	var out []string
	for _, line := range l.get() {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// captureGlobalKlog sends everything logged through klog's global logger (klog.Info,
// klog.Background(), klog.FromContext of a context without a logger) to the returned lines,
// at every verbosity, until the test ends.
func captureGlobalKlog(t *testing.T) *lines {
	// client-go logs the states of its feature gates through the global logger, once per
	// process, when they are first read (it says it cannot do otherwise): read them first.
	clientgofeatures.FeatureGates().Enabled(clientgofeatures.WatchListClient)
	global := &lines{}
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	oldV := fs.Lookup("v").Value.String()
	require.NoError(t, fs.Set("v", "10"))
	klog.SetLogger(global.logger())
	t.Cleanup(func() {
		klog.ClearLogger()
		_ = fs.Set("v", oldV)
	})
	return global
}

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
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
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

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

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
		logger func(*lines) logr.Logger
	}{
		{"caller's logger", (*lines).logger},
		{"discard", func(*lines) logr.Logger { return logr.Discard() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			global := captureGlobalKlog(t)
			own := &lines{}
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
				assert.Empty(t, own.get())
			} else {
				ended := own.containing("watch ended with error")
				for _, r := range []string{"customresourcedefinitions.apiextensions.k8s.io", "apiservices.apiregistration.k8s.io"} {
					assert.NotEmpty(t, own.containing(`"resource"="`+r+`"`), "no line about %s", r)
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
			assert.Empty(t, global.get(), "lines that reached klog's global logger:\n%s", strings.Join(global.get(), "\n"))
			if t.Failed() {
				for _, line := range own.get() {
					t.Logf("%.300s", line)
				}
			}
		})
	}
}
