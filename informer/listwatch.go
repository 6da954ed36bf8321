package informer

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/watchfwd"
)

// op is the kind of request a list/watch error came from.
type op int

const (
	opList      op = iota // a LIST (initial, relist, or the fallback after a failed watch-list)
	opWatchList           // a WATCH with sendInitialEvents=true (the streaming initial list)
	opWatch               // a WATCH from a resourceVersion
)

func (o op) String() string {
	switch o {
	case opList:
		return "list"
	case opWatchList:
		return "watch-list"
	}
	return "watch"
}

// lwHooks is what the classifying ListerWatcher reports to; the run implements it.
type lwHooks interface {
	// failed is called with every list or watch error. It returns true if the run parks
	// because of it; the run's context is then cancelled (or about to be).
	failed(ctx context.Context, o op, err error) (park bool)
	// succeeded is called when a list returns or a watch starts.
	succeeded(o op)
	// streamFailed is called with an error event of an open watch (410 after a compaction,
	// a 500); the reflector handles it.
	streamFailed(err error)
}

// classifyingLW wraps a storage mode's ListerWatcher. It sees every real list and watch
// error, including those of watch-list streams, before the reflector does, and turns the
// ones that must not be retried (404 of a deleted resource, 403, 400) into a park: it tells
// the run, waits for the run's context to end, and then answers so that the reflector exits
// without a retry and without a log line (a List returns its error: the reflector waits for
// the list and its context together and may pick either, so it may hand the error to
// client-go's watch error handler, whose line is filtered, before it sees its context done;
// a Watch returns a watcher that never delivers, and the reflector sees its context done
// first). Errors it hands back are wrapped in observedError so that the reflector's own
// error line is filtered (logfilter.go).
//
// A failed watch-list request is never parked on: the reflector then falls back to a LIST,
// whose answer decides. That is how "list allowed, watch forbidden" is told apart from
// "forbidden".
//
// It implements IsWatchListSemanticsUnSupported by asking the wrapped ListerWatcher, so that
// wrapping never turns client-go's streaming initial list off (nor on, for fake clients).
type classifyingLW struct {
	inner cache.ListerWatcherWithContext
	hooks lwHooks
	// known, if set, is the cache's lookup, passed to lists (storage.WithKnownObjects) so
	// that a relist can answer unchanged objects with the cached ones.
	known func(key string) (any, bool)
}

var (
	_ cache.ListerWatcherWithContext = (*classifyingLW)(nil)
	_ cache.ListerWatcher            = (*classifyingLW)(nil)
)

// List and Watch satisfy the older interface NewReflectorWithOptions takes; the reflector
// calls the context-aware methods.
func (lw *classifyingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *classifyingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw *classifyingLW) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(lw.inner)
}

func (lw *classifyingLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	lctx := ctx
	if lw.known != nil {
		lctx = storage.WithKnownObjects(ctx, lw.known)
	}
	obj, err := lw.inner.ListWithContext(lctx, opts)
	if err != nil {
		if lw.hooks.failed(ctx, opList, err) {
			<-ctx.Done()
		}
		return nil, &observedError{err: err}
	}
	lw.hooks.succeeded(opList)
	return obj, nil
}

func (lw *classifyingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	o := opWatch
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		o = opWatchList
	}
	w, err := lw.inner.WatchWithContext(ctx, opts)
	if err != nil {
		if lw.hooks.failed(ctx, o, err) {
			<-ctx.Done()
			return newDeadWatch(), nil
		}
		return nil, &observedError{err: err}
	}
	lw.hooks.succeeded(o)
	return newObservedWatch(w, lw.hooks), nil
}

// newObservedWatch forwards an open watch's events and reports its error events, which the
// reflector handles without telling anyone (410 Expired is how a compaction shows up).
func newObservedWatch(inner watch.Interface, hooks lwHooks) watch.Interface {
	return watchfwd.New(inner, watchfwd.Options{Keep: func(ev watch.Event) bool {
		if ev.Type == watch.Error {
			hooks.streamFailed(apierrors.FromObject(ev.Object))
		}
		return true
	}})
}

// deadWatch never delivers an event; Stop closes it. It is returned only once the run's
// context has ended, so the reflector's select picks the context.
type deadWatch struct {
	ch   chan watch.Event
	once sync.Once
}

func newDeadWatch() *deadWatch { return &deadWatch{ch: make(chan watch.Event)} }

func (d *deadWatch) Stop()                          { d.once.Do(func() { close(d.ch) }) }
func (d *deadWatch) ResultChan() <-chan watch.Event { return d.ch }
