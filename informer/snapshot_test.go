package informer

import (
	"context"
	"errors"
	"github.com/kindex/kindex/internal/snapshot"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

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
	require.NoError(t, os.WriteFile(keyFile, []byte(strings.Repeat("0f", 32)+"\n"), 0o600))
	openKeyFile := filepath.Join(t.TempDir(), "open-key")
	require.NoError(t, os.WriteFile(openKeyFile, []byte(strings.Repeat("0f", 32)), 0o600))
	require.NoError(t, os.Chmod(openKeyFile, 0o644))
	rawKeyFile := filepath.Join(t.TempDir(), "raw-key")
	require.NoError(t, os.WriteFile(rawKeyFile, make([]byte, 32), 0o600))
	sm := snapModeFake{newFakeMode()}
	for _, tc := range []struct {
		name    string
		mode    storage.Mode
		dir     string
		key     []byte
		keyFile string
		iv      time.Duration
		keep    time.Duration
		err     string
	}{
		{name: "off", mode: sm},
		{name: "key without dir", mode: sm, key: make([]byte, 32), err: "without SnapshotDir"},
		{name: "mode without snapshots", mode: newFakeMode(), dir: dir, err: "cannot write snapshots"},
		{name: "bad key length", mode: sm, dir: dir, key: make([]byte, 10), err: "16, 24 or 32"},
		{name: "key and key file", mode: sm, dir: dir, key: make([]byte, 16), keyFile: keyFile, err: "not both"},
		{name: "missing key file", mode: sm, dir: dir, keyFile: keyFile + ".missing", err: "key file"},
		{name: "negative interval", mode: sm, dir: dir, iv: -time.Second, err: "negative"},
		// 30 meant as seconds is 30 ns: the background writer woke up without pause.
		{name: "interval of nanoseconds", mode: sm, dir: dir, iv: 30, err: "at least 1ms"},
		{name: "key file readable by others", mode: sm, dir: dir, keyFile: openKeyFile, err: "accessible by others or writable by its group"},
		{name: "raw key file", mode: sm, dir: dir, keyFile: rawKeyFile, err: "not hexadecimal text"},
		{name: "retention without dir", mode: sm, keep: time.Hour, err: "SnapshotRetention without SnapshotDir"},
		{name: "negative retention", mode: sm, dir: dir, keep: -time.Hour, err: "SnapshotRetention must be 0"},
		// 24 meant as hours is 24 ns: every file but the factory's own would go at Start.
		{name: "retention of nanoseconds", mode: sm, dir: dir, keep: 24, err: "at least 1m0s"},
		{name: "retention", mode: sm, dir: dir, keep: time.Minute},
		{name: "key file", mode: sm, dir: dir, keyFile: keyFile},
		{name: "plain", mode: sm, dir: dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := newSnapshotConfig(tc.mode, "https://server", tc.dir, tc.iv, tc.keep, tc.key, tc.keyFile, false)
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
			assert.Equal(t, tc.keep, cfg.retention)
			fi, err := os.Stat(dir)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		})
	}
}

// A watch from a snapshot's resourceVersion makes the run current once it delivered an
// object at or beyond the probe's resourceVersion, or stayed quiet after the probe's
// answer; never after an error event (410); after the quiet period without a probe or when
// the probe fails. The run's targets are what the watch had forwarded.
func TestSnapshotWatchMarksCurrent(t *testing.T) {
	oldQuiet, oldSettle := snapshotQuiet, snapshotSettleMin
	defer func() { snapshotQuiet, snapshotSettleMin = oldQuiet, oldSettle }()
	current := func(sr *snapRun) bool {
		select {
		case <-sr.current:
			return true
		default:
			return false
		}
	}
	waitCurrent := func(t *testing.T, sr *snapRun) {
		t.Helper()
		select {
		case <-sr.current:
		case <-time.After(10 * time.Second):
			t.Fatal("not current")
		}
	}
	obj := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: rv}}
	}
	replaced := func() int64 { return 7 }
	// probeAt returns a probe that answers rv once released.
	probeAt := func(rv string) (func(context.Context) (string, error), chan struct{}) {
		release := make(chan struct{})
		return func(ctx context.Context) (string, error) {
			select {
			case <-release:
				return rv, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}, release
	}

	t.Run("event at the probe's version", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin = time.Hour, time.Hour // only the event can decide
		probe, release := probeAt("10")
		sr := &snapRun{current: make(chan struct{}), probe: probe}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
		defer w.Stop()
		go fw.Modify(obj("5"))
		<-w.ResultChan()
		close(release)
		go fw.Modify(obj("10"))
		<-w.ResultChan()
		waitCurrent(t, sr)
		assert.Equal(t, uint64(10), sr.targetRV)
		assert.Equal(t, int64(7), sr.targetReplaced)
	})
	t.Run("quiet after the probe", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin = time.Hour, 10*time.Millisecond
		probe, release := probeAt("10")
		sr := &snapRun{current: make(chan struct{}), probe: probe}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
		defer w.Stop()
		go fw.Add(obj("6"))
		<-w.ResultChan()
		assert.False(t, current(sr), "no decision before the probe answered")
		close(release)
		waitCurrent(t, sr)
		assert.Equal(t, uint64(6), sr.targetRV, "what was forwarded must be applied first")
	})
	t.Run("error first", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin = 50*time.Millisecond, 10*time.Millisecond
		probe, release := probeAt("10")
		close(release)
		sr := &snapRun{current: make(chan struct{}), probe: probe}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
		defer w.Stop()
		go fw.Error(&metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired})
		ev := <-w.ResultChan()
		assert.Equal(t, watch.Error, ev.Type)
		time.Sleep(5 * snapshotQuiet) // nothing to await: the run must stay not current
		assert.False(t, current(sr), "a 410 is not current, whatever the probe says")
	})
	// A snapshot ahead of the server (another cluster's, or etcd restored without a revision
	// bump) was trusted: the watch from its version was accepted and stayed quiet, and the
	// run counted as current with the snapshot's objects and none of the server's.
	t.Run("snapshot ahead of the server", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin = 50*time.Millisecond, 10*time.Millisecond
		probe, release := probeAt("370")
		close(release)
		sr := &snapRun{current: make(chan struct{}), probe: probe, logger: klog.Background(),
			meta: snapshot.Meta{ResourceVersion: "558"}}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
		defer w.Stop()
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-w.ResultChan():
		case <-time.After(10 * time.Second):
			t.Fatal("the watch of a snapshot ahead of the server goes on")
		}
		require.True(t, ok)
		require.Equal(t, watch.Error, ev.Type)
		st := ev.Object.(*metav1.Status)
		assert.Equal(t, metav1.StatusReasonExpired, st.Reason, "the reflector relists")
		_, ok = <-w.ResultChan()
		assert.False(t, ok, "the watch ends")
		time.Sleep(5 * snapshotQuiet) // nothing to await: the run must stay not current
		assert.False(t, current(sr))
	})
	t.Run("no probe: quiet period", func(t *testing.T) {
		snapshotQuiet = 50 * time.Millisecond
		sr := &snapRun{current: make(chan struct{})}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
		defer w.Stop()
		waitCurrent(t, sr)
	})
	t.Run("probe fails: quiet period", func(t *testing.T) {
		snapshotQuiet, snapshotSettleMin = 50*time.Millisecond, time.Hour
		sr := &snapRun{current: make(chan struct{}), logger: klog.Background(),
			probe: func(context.Context) (string, error) { return "", errors.New("no watch-list here") }}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
		defer w.Stop()
		waitCurrent(t, sr)
	})
	t.Run("closed early", func(t *testing.T) {
		snapshotQuiet = 50 * time.Millisecond
		sr := &snapRun{current: make(chan struct{})}
		fw := watch.NewFake()
		w := newSnapshotWatch(context.Background(), fw, sr, sr.meta.ResourceVersion, replaced, nil)
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

// One directory used with two clusters: each informer's file is the cluster's own (the
// identity holds the server's address), and so is each shard's.
func TestSnapshotIdentityHoldsServerAndShard(t *testing.T) {
	dir := t.TempDir()
	path := func(server, shard string) string {
		cfg, err := newSnapshotConfig(snapModeFake{newFakeMode()}, server, dir, 0, 0, nil, "", false)
		require.NoError(t, err)
		e := &entry{key: Key{GVR: widgets.GVR, Mode: "compact", Shard: shard}, core: &core{opts: config{snapshot: cfg}}}
		return newSnapState(e).path
	}
	a := path("https://a.example.com:6443", "")
	assert.Equal(t, a, path("https://a.example.com:6443", ""))
	assert.NotEqual(t, a, path("https://b.example.com:6443", ""))
	assert.NotEqual(t, a, path("https://a.example.com:6443", "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"))
}
