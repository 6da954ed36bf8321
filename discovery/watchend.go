package discovery

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// endWatch is a watch.Interface that calls onEnd once its events end: the wrapped watch's
// result channel closed (the server ended it, the connection broke) or Stop was called.
// One goroutine forwards the events; it ends with them.
type endWatch struct {
	watch.Interface
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

// notifyEnd wraps w so that onEnd is called when its events end.
func notifyEnd(w watch.Interface, onEnd func()) watch.Interface {
	e := &endWatch{Interface: w, ch: make(chan watch.Event), stop: make(chan struct{})}
	go e.forward(onEnd)
	return e
}

// forward forwards the events until they end; onEnd runs before the consumer sees the end.
func (e *endWatch) forward(onEnd func()) {
	defer close(e.ch)
	defer onEnd()
	in := e.Interface.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			select {
			case e.ch <- ev:
			case <-e.stop:
				return
			}
		case <-e.stop:
			return
		}
	}
}

// ResultChan returns the forwarded events; it is closed when they end.
func (e *endWatch) ResultChan() <-chan watch.Event { return e.ch }

// Stop stops the wrapped watch and the forwarding.
func (e *endWatch) Stop() {
	e.once.Do(func() { close(e.stop) })
	e.Interface.Stop()
}
