package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Main is a TestMain for a package of integration tests: it starts one control plane for the
// package, stores it in *cp, runs the tests and stops the control plane. If the control plane
// cannot start, the package fails (exit code 1): integration tests never skip silently.
//
//	var cp *testenv.ControlPlane
//
//	func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }
func Main(m *testing.M, cp **ControlPlane, opts Options) {
	os.Exit(run(m, cp, opts))
}

func run(m *testing.M, cp **ControlPlane, opts Options) int {
	started, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the test control plane: %v\n", err)
		return 1
	}
	*cp = started
	// Deferred so that the processes are stopped even if m.Run panics in this goroutine; a
	// panic in a test goroutine kills the binary, and Pdeathsig then stops the children.
	defer started.Stop()
	code := m.Run()
	if code != 0 && os.Getenv("KINDEX_KEEP_TESTENV") != "" {
		fmt.Fprintf(os.Stderr, "test control plane kept in %s\n", started.Dir())
	}
	return code
}
