package compact

import (
	"flag"
	"os"
	"testing"

	"github.com/kindex/kindex/internal/testenv"
)

// cp is the package's control plane (integration_test.go). ConfigMaps have no watch cache,
// so that a watch from a compacted resourceVersion reaches etcd and fails with 410 Gone;
// pods and custom resources keep theirs (watch-list is served from it).
var cp *testenv.ControlPlane

var apiServerArgs = []string{"--watch-cache-sizes=configmaps#0"}

func TestMain(m *testing.M) {
	flag.Parse()
	// Fuzz workers only run the fuzz function: they need no control plane.
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: apiServerArgs})
}
