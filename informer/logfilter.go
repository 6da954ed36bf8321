package informer

import (
	"errors"

	"github.com/go-logr/logr"
)

// reflectorLogger returns the logger handed to a run's reflector: the factory's logger,
// minus the reflector's "Failed to watch" error lines for errors kindex's ListerWatcher has
// already classified. Those errors are in Status, in metrics, and logged once per
// transition by the informer; without the filter the reflector would log each retry, which
// is the log flood kindex exists to avoid. Every other reflector line passes through.
func reflectorLogger(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	// The filter adds one frame between logr.Logger and the wrapped sink.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&filterSink{next: sink})
}

type filterSink struct{ next logr.LogSink }

// Init does nothing: the wrapped sink was initialised when its logger was created.
func (s *filterSink) Init(logr.RuntimeInfo) {}

func (s *filterSink) Enabled(level int) bool { return s.next.Enabled(level) }

func (s *filterSink) Info(level int, msg string, kv ...any) { s.next.Info(level, msg, kv...) }

func (s *filterSink) Error(err error, msg string, kv ...any) {
	var oe *observedError
	if errors.As(err, &oe) {
		return
	}
	s.next.Error(err, msg, kv...)
}

func (s *filterSink) WithValues(kv ...any) logr.LogSink {
	return &filterSink{next: s.next.WithValues(kv...)}
}

func (s *filterSink) WithName(name string) logr.LogSink {
	return &filterSink{next: s.next.WithName(name)}
}
