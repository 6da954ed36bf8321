package refs_test

import (
	"context"
	"flag"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/refs"
)

// logLines collects what a logr sink receives.
type logLines struct {
	mu  sync.Mutex
	all []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.all = append(l.all, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: 10})
}

func (l *logLines) containing(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.all {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// The graph logged through klog when Options.Logger was the zero Logger, so logr.Discard()
// could not silence it, unlike the informer factories. Now the zero Logger logs nothing,
// and a Logger given receives the graph's lines.
func TestGraphLogsOnlyThroughTheCallersLogger(t *testing.T) {
	clientgofeatures.FeatureGates().Enabled(clientgofeatures.WatchListClient) // logs once, globally
	global := &logLines{}
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	oldV := fs.Lookup("v").Value.String()
	require.NoError(t, fs.Set("v", "10"))
	klog.SetLogger(global.logger())
	t.Cleanup(func() {
		klog.ClearLogger()
		_ = fs.Set("v", oldV)
	})

	// A rule naming a resource the server does not serve logs one line at start.
	rules := append(refs.BuiltinRules(), refs.Rule{Name: "later",
		From: schema.GroupResource{Group: "later.example.com", Resource: "things"}, Path: "{.spec.s}", To: secretsGR})
	const line = "Rules name resources the server does not serve"
	start := func(l logr.Logger) {
		g, err := refs.New(cp.AdminConfig(), refs.Options{Rules: rules, Logger: l})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		require.NoError(t, g.Start(ctx))
		require.NoError(t, g.WaitForSync(ctx))
		g.Shutdown()
	}

	start(logr.Discard())
	require.Zero(t, global.containing(line), "the zero Logger logs nothing, through klog neither")

	own := &logLines{}
	start(own.logger())
	require.Equal(t, 1, own.containing(line), "the caller's Logger receives the graph's lines")
	require.Zero(t, global.containing(line))
}
