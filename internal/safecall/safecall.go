package safecall

import (
	"testing"
	"time"
)

// Timeout is how long Call waits for fn.
const Timeout = 5 * time.Second

// Call runs fn and returns its error; it fails t if fn panics or does not return within
// Timeout.
func Call(t testing.TB, fn func() error) error {
	t.Helper()
	type outcome struct {
		err   error
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{panic: r}
			}
		}()
		done <- outcome{err: fn()}
	}()
	select {
	case o := <-done:
		if o.panic != nil {
			t.Fatalf("panicked: %v", o.panic)
		}
		return o.err
	case <-time.After(Timeout):
		t.Fatalf("did not return within %v", Timeout)
	}
	return nil
}
