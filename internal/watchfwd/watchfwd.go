package watchfwd

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// Options says what New does with the events.
type Options struct {
	// Keep, if set, sees each event in turn (it may change the object the event holds) and
	// says whether to pass it on. nil: every event passes.
	Keep func(watch.Event) bool
	// OnEnd, if set, runs once when the events end (the inner watch's result channel
	// closed, or Stop was called), before the result channel closes.
	OnEnd func()
}

// Watch is a watch.Interface forwarding another's events.
type Watch struct {
	inner   watch.Interface
	out     chan watch.Event
	stopped chan struct{}
	done    chan struct{} // closed when the forwarding goroutine has returned
	once    sync.Once
}

// New forwards inner's events as o says, from one goroutine that ends with them.
func New(inner watch.Interface, o Options) *Watch {
	w := &Watch{inner: inner, out: make(chan watch.Event), stopped: make(chan struct{}), done: make(chan struct{})}
	go w.forward(o)
	return w
}

func (w *Watch) forward(o Options) {
	defer close(w.done)
	defer close(w.out)
	if o.OnEnd != nil {
		defer o.OnEnd()
	}
	in := w.inner.ResultChan()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-w.stopped:
			return
		}
		if !ok {
			return
		}
		if o.Keep != nil && !o.Keep(ev) {
			continue
		}
		select {
		case w.out <- ev:
		case <-w.stopped:
			return
		}
	}
}

// ResultChan returns the forwarded events; it is closed when they end.
func (w *Watch) ResultChan() <-chan watch.Event { return w.out }

// Stop stops the inner watch and returns once the forwarding goroutine has (OnEnd run), so
// that nothing of an informer runs after the informer's own shutdown returns; it ends at
// once even while an event waits that nobody reads.
func (w *Watch) Stop() {
	w.once.Do(func() {
		close(w.stopped)
		w.inner.Stop()
	})
	<-w.done
}
