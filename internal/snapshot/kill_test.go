package snapshot

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const childEnv = "KINDEX_SNAPSHOT_KILL_CHILD"

// The child rewrites the snapshot in a loop until it is killed.
func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		objs := sample(20000)
		for i := 0; ; i++ {
			if err := Write(path, Meta{Identity: "id", ResourceVersion: "child"}, len(objs), func(i int) []byte { return objs[i] }, Options{Key: testKey}); err != nil {
				os.Exit(3)
			}
		}
	}
	os.Exit(m.Run())
}

// kill -9 of a process in the middle of writing a snapshot leaves a loadable file: the
// previous one or the new one, whole.
func TestSnapshotKill9DuringWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	write(t, path, Meta{Identity: "id", ResourceVersion: "parent"}, sample(10), Options{Key: testKey})
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		require.NoError(t, cmd.Start())
		// Kill it while a temporary file is being written.
		deadline := time.Now().Add(20 * time.Second)
		for {
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			busy := false
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), tmpPrefix) {
					if fi, err := e.Info(); err == nil && fi.Size() > 0 {
						busy = true
					}
				}
			}
			if busy || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		m, objs, err := readAll(path, "id", Options{Key: testKey})
		require.NoError(t, err, "round %d", round)
		switch m.ResourceVersion {
		case "parent":
			require.Len(t, objs, 10)
		case "child":
			require.Len(t, objs, 20000)
		default:
			t.Fatalf("resourceVersion %q", m.ResourceVersion)
		}
	}
}
