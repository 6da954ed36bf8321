package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Versions of the control plane the integration tests run. The Makefile builds exactly these
// from the build modules under controlplane/ and keeps them in the binary cache directory.
const (
	KubeAPIServerVersion = "v1.37.1"
	EtcdVersion          = "v3.6.16"
)

// ErrBinaryMissing is returned when a control-plane binary has not been built.
var ErrBinaryMissing = errors.New("testenv: control-plane binary missing (run `make controlplane`)")

// BinDir is where the control-plane binaries are cached, outside any clone so that a second
// clone or a second run does not rebuild them: $KINDEX_CONTROLPLANE_DIR, or
// $XDG_CACHE_HOME/kindex/controlplane, or ~/.cache/kindex/controlplane.
func BinDir() string {
	if d := os.Getenv("KINDEX_CONTROLPLANE_DIR"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "kindex", "controlplane")
}

// KubeAPIServerPath is the path of the cached kube-apiserver binary.
func KubeAPIServerPath() string {
	return filepath.Join(BinDir(), "kube-apiserver-"+KubeAPIServerVersion, "kube-apiserver")
}

// EtcdPath is the path of the cached etcd binary.
func EtcdPath() string {
	return filepath.Join(BinDir(), "etcd-"+EtcdVersion, "etcd")
}

func checkBinaries() error {
	for _, p := range []string{KubeAPIServerPath(), EtcdPath()} {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%w: %s", ErrBinaryMissing, p)
		}
	}
	return nil
}
