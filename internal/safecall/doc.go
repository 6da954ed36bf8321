// Package safecall runs a call of the code under test the way a hostile-input test needs:
// under a recover and a deadline, so that bad input that panics or hangs fails the test
// with what happened instead of crashing or stalling the run. It imports nothing of kindex,
// so that every package's internal tests can use it.
package safecall
