package informer

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kindex/kindex/internal/storage"
)

// snapModeFake is the fake mode with snapshot support, for option validation.
type snapModeFake struct{ *fakeMode }

func (snapModeFake) SnapshotIdentity() string                        { return "fake" }
func (snapModeFake) AppendSnapshot(dst []byte, _ any) ([]byte, bool) { return dst, false }
func (snapModeFake) SnapshotDecode([]byte) (any, error)              { return nil, nil }
func (snapModeFake) SnapshotList([]any, string) runtime.Object       { return nil }

func TestSnapshotConfigValidation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snaps")
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, make([]byte, 32), 0o600))
	sm := snapModeFake{newFakeMode()}
	for _, tc := range []struct {
		name    string
		mode    storage.Mode
		dir     string
		key     []byte
		keyFile string
		iv      time.Duration
		err     string
	}{
		{name: "off", mode: sm},
		{name: "key without dir", mode: sm, key: make([]byte, 32), err: "without SnapshotDir"},
		{name: "mode without snapshots", mode: newFakeMode(), dir: dir, err: "cannot write snapshots"},
		{name: "bad key length", mode: sm, dir: dir, key: make([]byte, 10), err: "16, 24 or 32"},
		{name: "key and key file", mode: sm, dir: dir, key: make([]byte, 16), keyFile: keyFile, err: "not both"},
		{name: "missing key file", mode: sm, dir: dir, keyFile: keyFile + ".missing", err: "key file"},
		{name: "negative interval", mode: sm, dir: dir, iv: -time.Second, err: "negative"},
		{name: "key file", mode: sm, dir: dir, keyFile: keyFile},
		{name: "plain", mode: sm, dir: dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := newSnapshotConfig(tc.mode, tc.dir, tc.iv, tc.key, tc.keyFile, false)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if tc.dir == "" {
				assert.Nil(t, cfg)
				return
			}
			assert.Equal(t, DefaultSnapshotInterval, cfg.interval)
			fi, err := os.Stat(dir)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		})
	}
}

// A watch from a snapshot's resourceVersion makes the informer current on its first event
// unless that is an error (410), or after the quiet period without one.
func TestSnapshotWatchMarksCurrent(t *testing.T) {
	old := snapshotQuiet
	snapshotQuiet = 100 * time.Millisecond
	defer func() { snapshotQuiet = old }()
	current := func(sr *snapRun) bool {
		select {
		case <-sr.current:
			return true
		default:
			return false
		}
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "5"}}

	t.Run("event", func(t *testing.T) {
		sr := &snapRun{current: make(chan struct{})}
		fw := watch.NewFake()
		w := newSnapshotWatch(fw, sr)
		defer w.Stop()
		go fw.Modify(obj)
		ev := <-w.ResultChan()
		assert.Equal(t, watch.Modified, ev.Type)
		assert.True(t, current(sr))
	})
	t.Run("error first", func(t *testing.T) {
		sr := &snapRun{current: make(chan struct{})}
		fw := watch.NewFake()
		w := newSnapshotWatch(fw, sr)
		defer w.Stop()
		go fw.Error(&metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired})
		ev := <-w.ResultChan()
		assert.Equal(t, watch.Error, ev.Type)
		time.Sleep(3 * snapshotQuiet)
		assert.False(t, current(sr), "a 410 is not current, even after the quiet period")
	})
	t.Run("quiet", func(t *testing.T) {
		sr := &snapRun{current: make(chan struct{})}
		fw := watch.NewFake()
		w := newSnapshotWatch(fw, sr)
		defer w.Stop()
		assert.False(t, current(sr))
		select {
		case <-sr.current:
		case <-time.After(5 * time.Second):
			t.Fatal("not current after the quiet period")
		}
	})
	t.Run("closed early", func(t *testing.T) {
		sr := &snapRun{current: make(chan struct{})}
		fw := watch.NewFake()
		w := newSnapshotWatch(fw, sr)
		fw.Stop()
		for range w.ResultChan() {
		}
		time.Sleep(2 * snapshotQuiet)
		assert.False(t, current(sr), "a watch that ended before the quiet period proves nothing")
		w.Stop()
	})
}

func TestSnapshotSafeName(t *testing.T) {
	assert.Equal(t, "core", safeName(""))
	assert.Equal(t, "apps", safeName("apps"))
	assert.Equal(t, "a_b_c", safeName("a/b\\c"))
	assert.Equal(t, "x.example.com", safeName("x.example.com"))
}
