package testsupport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/query"
)

// StartFactory builds a factory with newFactory (a front end's NewFactory) on cfg, whose
// requests the returned Recorder records, with opts.Logger defaulting to the returned
// Lines, starts it, and stops it when the test ends.
func StartFactory[T informer.Object](t testing.TB, cfg *rest.Config, opts informer.Options[T],
	newFactory func(*rest.Config, informer.Options[T]) (*informer.Factory[T], error),
) (*informer.Factory[T], *Recorder, *Lines) {
	t.Helper()
	rec, log := NewRecorder(), &Lines{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(rec.Wrap)
	if opts.Logger.GetSink() == nil {
		opts.Logger = log.Logger(0)
	}
	f, err := newFactory(cfg, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, f.Start(ctx))
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	return f, rec, log
}

// Keys returns "namespace/name" of each object, never nil.
func Keys[T informer.Object](objs []T) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

// QueryKeys queries inf and returns the keys of the result, failing the test on an error.
func QueryKeys[T informer.Object](t testing.TB, inf *informer.Informer[T], q query.Query) []string {
	t.Helper()
	res, err := inf.Query(context.Background(), q)
	require.NoError(t, err)
	return Keys(res.Items)
}

// EventuallyQueryKeys waits up to timeout until q returns want.
func EventuallyQueryKeys[T informer.Object](t testing.TB, timeout time.Duration, inf *informer.Informer[T], q query.Query, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	var got []string
	testenv.EventuallyWith(t, timeout, func() bool {
		got = QueryKeys(t, inf, q)
		return assert.ObjectsAreEqual(want, got)
	}, func() string { return fmt.Sprintf("query %v: want %v, got %v", q.Conditions, want, got) })
}
