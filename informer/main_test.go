package informer

import (
	"context"
	"os"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// TestMain drops apimachinery's process-wide error rate limit from utilruntime.ErrorHandlers
// for this package's tests, keeping the log line. The limit sleeps for "1ms minus the time
// since the last error", and the last error's time is taken on whatever clock the caller
// had: the real one (at init, or in a test outside a synctest bubble), or a bubble's, which
// starts in 2000. A reflector in a bubble whose error reaches it (client-go's
// DefaultWatchErrorHandler does, for a list error: a parked List's may, see classifyingLW)
// then sleeps about 26 virtual years, never sees its run cancelled, and the informer never
// shows the park the test waits for. Production code runs on one clock, where the limit
// sleeps a millisecond at most.
func TestMain(m *testing.M) {
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{logError}
	os.Exit(m.Run())
}

// logError logs as apimachinery's own first ErrorHandler does: to the caller's contextual
// logger (a reflector's is the run's filtered logger, logfilter.go).
func logError(ctx context.Context, err error, msg string, keysAndValues ...any) {
	klog.LoggerWithName(klog.FromContext(ctx), "UnhandledError").Error(err, msg, keysAndValues...)
}
