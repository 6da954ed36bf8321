package refs_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/refs"
)

// The graph logged through klog when Options.Logger was the zero Logger, so logr.Discard()
// could not silence it, unlike the informer factories. Now the zero Logger logs nothing,
// and a Logger given receives the graph's lines.
func TestGraphLogsOnlyThroughTheCallersLogger(t *testing.T) {
	global := testsupport.CaptureGlobalKlog(t)
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
	require.Zero(t, global.Count(line), "the zero Logger logs nothing, through klog neither")

	own := &testsupport.Lines{}
	// Verbose, but below client-go's V(9): from there its debugging round tripper (there
	// since the capture raises klog's -v) traces each request's timing, and reads the trace
	// without its lock once the request returns, while a request canceled by Shutdown before
	// its response can still be written by the HTTP/2 read loop: a data race in client-go,
	// reported under -race now and then.
	start(own.Logger(8))
	require.Equal(t, 1, own.Count(line), "the caller's Logger receives the graph's lines")
	require.Zero(t, global.Count(line))
}
