package testsupport

import (
	"os/exec"
	"testing"
)

// GoTool returns the go command on PATH, for tests that build a program (an example, the
// plugin) and run it as a user would. `go test` and `make test` run with it on PATH.
func GoTool(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		tb.Fatalf("this test builds a program and needs the go command on PATH: %v", err)
	}
	return path
}
