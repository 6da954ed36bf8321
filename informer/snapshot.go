package informer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/storage"
)

// DefaultSnapshotInterval is Options.SnapshotInterval's default.
const DefaultSnapshotInterval = 5 * time.Minute

// minSnapshotRetention is the shortest positive Options.SnapshotRetention NewFactory
// accepts: shorter, the files of another process sharing the directory would go between
// two of its writes.
const minSnapshotRetention = time.Minute

// minSnapshotInterval is the shortest Options.SnapshotInterval NewFactory accepts.
const minSnapshotInterval = time.Millisecond

var secretsGR = schema.GroupResource{Resource: "secrets"}

// snapshotConfig is the validated form of the Snapshot options.
type snapshotConfig struct {
	// server is the API server's address (rest.Config.Host), part of every identity: one
	// directory used with two clusters must not serve one's objects as the other's.
	server       string
	dir          string
	interval     time.Duration
	retention    time.Duration // Options.SnapshotRetention (0: files are never pruned)
	key          []byte
	plainSecrets bool
	snapshotter  storage.Snapshotter
	// cluster identifies the cluster behind server (nil in tests of fakes: "").
	cluster *clusterIdentity
}

// newSnapshotConfig validates the Snapshot options; nil when snapshots are off.
func newSnapshotConfig(mode storage.Mode, server, dir string, interval, retention time.Duration, key []byte, keyFile string, plainSecrets bool) (*snapshotConfig, error) {
	if dir == "" {
		if key != nil || keyFile != "" {
			return nil, errors.New("kindex: SnapshotKey or SnapshotKeyFile without SnapshotDir")
		}
		if retention != 0 {
			return nil, errors.New("kindex: SnapshotRetention without SnapshotDir")
		}
		return nil, nil
	}
	s, ok := mode.(storage.Snapshotter)
	if !ok {
		return nil, fmt.Errorf("kindex: Options.SnapshotDir: the %s storage mode cannot write snapshots (the compact and metadata-only modes can)", mode.Name())
	}
	if interval < 0 {
		return nil, fmt.Errorf("kindex: SnapshotInterval must not be negative, got %v", interval)
	}
	if interval > 0 && interval < minSnapshotInterval {
		// The background writer wakes up every interval, with or without changes to save.
		return nil, fmt.Errorf("kindex: SnapshotInterval must be at least %v, got %v (a time.Duration counts nanoseconds: write 30 * time.Second, not 30)", minSnapshotInterval, interval)
	}
	if interval == 0 {
		interval = DefaultSnapshotInterval
	}
	if retention < 0 || retention > 0 && retention < minSnapshotRetention {
		return nil, fmt.Errorf("kindex: SnapshotRetention must be 0 (keep every file) or at least %v, got %v", minSnapshotRetention, retention)
	}
	if key != nil && keyFile != "" {
		return nil, errors.New("kindex: set SnapshotKey or SnapshotKeyFile, not both")
	}
	if keyFile != "" {
		var err error
		if key, err = snapshot.ReadKeyFile(keyFile); err != nil {
			return nil, fmt.Errorf("kindex: %w", err)
		}
	}
	if key != nil {
		switch len(key) {
		case 16, 24, 32:
		default:
			return nil, fmt.Errorf("kindex: SnapshotKey must have 16, 24 or 32 bytes, got %d", len(key))
		}
		key = append([]byte(nil), key...)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kindex: Options.SnapshotDir: %w", err)
	}
	return &snapshotConfig{server: server, dir: dir, interval: interval, retention: retention, key: key, plainSecrets: plainSecrets, snapshotter: s}, nil
}

// snapState is one entry's snapshot file: its identity, what was applied since the last
// write, and the background writer.
type snapState struct {
	e        *entry
	cfg      *snapshotConfig
	identity string
	path     string
	refused  bool // a Secret informer without encryption: neither read nor written

	used      atomic.Bool   // the first run has been built (the snapshot is only read once)
	appliedRV atomic.Uint64 // the highest resourceVersion applied (0: unknown)
	badRV     atomic.Bool   // a resourceVersion was not a number: never write
	dirty     atomic.Bool   // something was applied since the last write
	everSync  atomic.Bool   // the informer has been current since it started
	writeMu   sync.Mutex    // one write at a time
	loopOn    atomic.Bool   // the background writer was started
	loopDone  chan struct{}
	lastWrite atomic.Int64 // nanoseconds the last write took, for tests and logs
	failure   string       // the last write's error ("" after a success), under writeMu
}

func newSnapState(e *entry) *snapState {
	cfg := e.core.opts.snapshot
	if cfg == nil {
		return nil
	}
	k := e.key
	identity := strings.Join([]string{
		"kindex informer snapshot",
		"group=" + k.GVR.Group, "version=" + k.GVR.Version, "resource=" + k.GVR.Resource,
		"namespace=" + k.Namespace, "labelSelector=" + k.LabelSelector, "fieldSelector=" + k.FieldSelector,
		"mode=" + k.Mode, "shard=" + k.Shard, "server=" + cfg.server, cfg.snapshotter.SnapshotIdentity(),
	}, "\n")
	sum := sha256.Sum256([]byte(identity))
	name := fmt.Sprintf("%s_%s_%s_%s.snap", safeName(k.GVR.Group), safeName(k.GVR.Version), safeName(k.GVR.Resource), hex.EncodeToString(sum[:8]))
	s := &snapState{e: e, cfg: cfg, identity: identity, path: filepath.Join(cfg.dir, name), loopDone: make(chan struct{})}
	if k.GVR.GroupResource() == secretsGR && !cfg.plainSecrets {
		if cfg.key == nil {
			s.refused = true
			e.logger.Info("Snapshots of Secrets are refused without encryption (Options.SnapshotKey or SnapshotKeyFile; SnapshotPlainSecrets overrides): this informer neither reads nor writes one")
		}
		s.removePlaintext()
	}
	return s
}

// removePlaintext removes the plaintext snapshot of a Secret informer without
// SnapshotPlainSecrets, written by an earlier run with it: turning the option off takes
// the Secrets off the disk at once, also when a key is set (the file cannot be read with
// it, and the informer may never write the encrypted one that would replace it: a sync
// that fails, a 403). An encrypted one is kept (the key may be set again).
func (s *snapState) removePlaintext() {
	plain, err := snapshot.Plaintext(s.path)
	if err != nil || !plain {
		return
	}
	if err := os.Remove(s.path); err != nil {
		s.e.logger.Info("Cannot remove a plaintext snapshot of Secrets", "path", s.path, "err", err.Error())
		return
	}
	s.e.logger.Info("Removed a plaintext snapshot of Secrets written with SnapshotPlainSecrets", "path", s.path)
}

func safeName(s string) string {
	if s == "" {
		return "core"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// mappedSnapshots holds the paths of the snapshot files this process has mapped for good
// (the compact mode's objects are views of them, see "Warm restart" in the package doc):
// a path is mapped once per process, so that an informer released and created again
// does not map every version of its file; later loads of it read and copy.
var mappedSnapshots sync.Map

// load reads the snapshot; ok false (with at most one log line) when there is none usable.
// onMeta, if set, is called with the snapshot's meta once it is known and before its
// objects are read (they may still turn out invalid).
func (s *snapState) load(ctx context.Context, onMeta func(snapshot.Meta)) (items []any, meta snapshot.Meta, ok bool) {
	start := time.Now()
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		s.e.logger.V(1).Info("No snapshot to start from", "path", s.path)
		return nil, meta, false
	}
	identity, err := s.fullIdentity(ctx)
	if err != nil {
		s.e.logger.Info("Snapshot ignored", "path", s.path, "err", err.Error())
		return nil, meta, false
	}
	viewer, canView := s.cfg.snapshotter.(storage.SnapshotViewer)
	_, mappedBefore := mappedSnapshots.Load(s.path)
	r, err := snapshot.Open(s.path, identity, snapshot.Options{Key: s.cfg.key, Map: canView && viewer.SnapshotViews() && !mappedBefore})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			s.e.logger.V(1).Info("No snapshot to start from", "path", s.path)
		} else {
			s.e.logger.Info("Snapshot ignored", "path", s.path, "err", err.Error())
		}
		return nil, meta, false
	}
	defer func() { _ = r.Close() }()
	meta = r.Meta()
	if n, err := strconv.ParseUint(meta.ResourceVersion, 10, 64); err != nil || n == 0 {
		// "0" is no version: a watch from it means "from any version", which starts with
		// the server's objects as adds and never tells of the snapshot's objects deleted
		// since (kindex never writes it: write skips a cache consistent with no version).
		s.e.logger.Info("Snapshot ignored", "path", s.path, "err", "resourceVersion "+strconv.Quote(meta.ResourceVersion)+" is not a positive number")
		return nil, meta, false
	}
	if onMeta != nil {
		onMeta(meta)
	}
	decode := s.cfg.snapshotter.SnapshotDecode
	if r.Mapped() > 0 {
		decode = viewer.SnapshotView
	}
	items = make([]any, 0, min(r.Count(), 1<<20))
	for {
		b, err := r.Next()
		if err == io.EOF {
			if r.Keep() {
				mappedSnapshots.Store(s.path, true)
				s.e.update(func(st *Status) { st.SnapshotMapped = int64(r.Mapped()) })
			}
			break
		}
		if err == nil {
			var obj any
			if obj, err = decode(b); err == nil {
				items = append(items, obj)
				continue
			}
		}
		s.e.logger.Info("Snapshot ignored", "path", s.path, "err", err.Error())
		return nil, meta, false
	}
	s.e.logger.V(1).Info("Loaded a snapshot", "objects", len(items), "mapped", r.Mapped() > 0, "resourceVersion", meta.ResourceVersion,
		"age", time.Since(meta.Time).Round(time.Second).String(), "took", time.Since(start).String())
	return items, meta, true
}

// dropVersion is called when the snapshot's version turned out unusable: ahead of the
// server (found by the probe, or refused as too large by the watch from it), or compacted
// (410). It is no version the cache will be consistent with: none is written until the
// relist's (or a later change's). The file is removed: a relist that finds no object
// records no version, so it would stay, and a restart once the server has passed an ahead
// version would watch from there, serving its objects and missing every change made before,
// for good (a compacted one is relisted anyway).
func (s *snapState) dropVersion() {
	s.appliedRV.Store(0)
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.e.logger.Info("Cannot remove a snapshot whose version is unusable", "path", s.path, "err", err.Error())
	}
}

// applied records what the processing loop applied, after it was applied: the snapshot's
// resourceVersion is the highest one applied, a lower bound of what the cache is
// consistent with (see Options.SnapshotDir). A list's items do not count: its own version,
// recorded once all of it is applied, covers them, and the items of the run's first list
// when it is the snapshot may be ahead of the server (dropVersion). A resync
// (cache.Sync: a cached object handed to the handlers again) changes nothing to save.
func (s *snapState) applied(deltas cache.Deltas) {
	changed := false
	for _, d := range deltas {
		if d.Type == cache.Sync {
			continue
		}
		changed = true
		if d.Type == cache.Replaced {
			continue
		}
		rv := deltaRV(d)
		if rv == "" {
			continue
		}
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			if s.badRV.CompareAndSwap(false, true) {
				s.e.logger.Info("Snapshots disabled: the server's resourceVersions are not numbers", "resourceVersion", rv)
			}
			continue
		}
		s.raise(n)
	}
	if changed {
		s.dirty.Store(true)
	}
}

// deltaRV returns the resourceVersion of a delta's object ("" if it has none). A
// tombstone (cache.DeletedFinalStateUnknown: an object a list no longer holds) has none:
// its object is the cache's, at a version the server never said it has reached (a snapshot
// ahead of the server holds objects of versions to come).
func deltaRV(d cache.Delta) string {
	obj := d.Object
	if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return ""
	}
	if o, ok := obj.(interface{ GetResourceVersion() string }); ok {
		return o.GetResourceVersion()
	}
	return ""
}

// listConsistentRV returns the resourceVersion the cache is consistent with once a batch
// of deltas that ends a list (of version listRV) is applied: the list's, or higher where the
// batch goes on past the list's last item with the watch's events, which come after it.
func listConsistentRV(listRV uint64, batch []cache.Delta) uint64 {
	rv := listRV
	for i := len(batch) - 1; i >= 0 && batch[i].Type != cache.Replaced && !isListEnd(batch[i]); i-- {
		if n, err := strconv.ParseUint(deltaRV(batch[i]), 10, 64); err == nil && n > rv {
			rv = n
		}
	}
	return rv
}

// bookmarked records the version of a watch bookmark (0: none), applied in order after
// the events before it: the cache is consistent with it. One that moves the applied
// version is news to save at the next write, as a change is.
func (s *snapState) bookmarked(rv uint64) {
	if rv > s.appliedRV.Load() {
		s.raise(rv)
		s.dirty.Store(true)
	}
}

// raise makes rv the applied resourceVersion if it is higher.
func (s *snapState) raise(rv uint64) {
	for {
		cur := s.appliedRV.Load()
		if rv <= cur || s.appliedRV.CompareAndSwap(cur, rv) {
			return
		}
	}
}

// snapshotWriteGap bounds the share of time background writes take, whatever
// SnapshotInterval: a write is a whole file, so after one that took d the next waits at
// least snapshotWriteGap·d (at most a tenth of the time is spent writing).
const snapshotWriteGap = 9

// loop writes a snapshot every interval while the informer changed and is current.
func (s *snapState) loop(ctx context.Context) {
	defer close(s.loopDone)
	t := time.NewTimer(s.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			var took time.Duration
			if s.e.isSynced() {
				took = s.write(ctx, "interval")
			}
			t.Reset(max(s.cfg.interval, snapshotWriteGap*took))
		}
	}
}

// write writes the snapshot if something changed since the last one, and returns how long
// the attempt took (0 if nothing was written). The store is read under the entry's
// dispatch lock only to copy the item pointers (items are immutable); encoding and I/O
// happen outside it.
func (s *snapState) write(ctx context.Context, why string) time.Duration {
	// An entry that followed its resource to another version (entry.follow) writes no
	// more: the file is of the key's version.
	if s.refused || s.e.followed.Load() || s.badRV.Load() || !s.everSync.Load() {
		return 0
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if !s.dirty.Load() {
		return 0
	}
	e := s.e
	e.dispatchMu.Lock()
	if e.stopped || (e.cur != nil && e.cur.listing()) {
		// Mid-list, the cache is consistent with no version: the next write saves it.
		e.dispatchMu.Unlock()
		return 0
	}
	s.dirty.Store(false)
	rv := s.appliedRV.Load()
	items := e.store.List()
	e.dispatchMu.Unlock()
	if rv == 0 {
		s.dirty.Store(true)
		return 0
	}
	identity, err := s.fullIdentity(ctx)
	if err != nil {
		s.dirty.Store(true)
		s.failed(err)
		return 0
	}
	start := time.Now()
	sn := s.cfg.snapshotter
	skipped := 0
	var buf []byte
	err = snapshot.Write(s.path, snapshot.Meta{Identity: identity, ResourceVersion: strconv.FormatUint(rv, 10), Time: start},
		len(items), func(i int) []byte {
			var ok bool
			if buf, ok = sn.AppendSnapshot(buf[:0], items[i]); !ok {
				// A file without this item must never be in place (the informer would
				// resume without it, for good): abort, and keep the previous file.
				skipped++
				return nil
			}
			if buf == nil {
				buf = []byte{}
			}
			return buf
		}, snapshot.Options{Key: s.cfg.key})
	took := time.Since(start)
	s.lastWrite.Store(int64(took))
	if skipped > 0 {
		err = fmt.Errorf("an item of another type: %w", err)
	}
	if err != nil {
		s.dirty.Store(true)
		s.failed(err)
		return took
	}
	if s.failure != "" {
		s.failure = ""
		e.logger.Info("Wrote a snapshot again", "path", s.path)
		e.update(func(st *Status) { st.SnapshotError = nil })
	}
	e.logger.V(2).Info("Wrote a snapshot", "why", why, "objects", len(items), "resourceVersion", rv, "took", took.String())
	return took
}

// failed records a failed write in the status; it logs the failure unless the previous
// write failed the same way (a directory in the file's place fails every interval).
// Called under writeMu.
func (s *snapState) failed(err error) {
	now := time.Now()
	if msg := err.Error(); msg != s.failure {
		s.failure = msg
		s.e.logger.Info("Cannot write a snapshot; retrying every SnapshotInterval, logged again only if the failure changes", "path", s.path, "err", msg)
	}
	s.e.update(func(st *Status) { st.SnapshotError, st.SnapshotErrorTime = err, now })
}

// isSynced reports whether the current run is synced.
func (e *entry) isSynced() bool {
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	return e.synced
}

// startSnapshots starts the background writer.
func (e *entry) startSnapshots() {
	if e.snap == nil || e.snap.refused {
		return
	}
	e.snap.loopOn.Store(true)
	go e.snap.loop(e.ctx)
}

// finishSnapshots writes the last snapshot on a clean stop; the runs have ended.
func (e *entry) finishSnapshots() {
	if e.snap == nil || e.snap.refused {
		return
	}
	if e.snap.loopOn.Load() {
		<-e.snap.loopDone
	}
	// The cluster is known by now unless every request for it failed: ask once more,
	// briefly, since the context of the informer has ended.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	e.snap.write(ctx, "stop")
}

// snapshotApplied is called by the processing loop after each applied change.
func (e *entry) snapshotApplied(deltas cache.Deltas) {
	if e.snap != nil {
		e.snap.applied(deltas)
	}
}

// snapRun is a run that starts from a snapshot.
type snapRun struct {
	meta    snapshot.Meta
	current chan struct{} // closed once the watch has been found current with the server
	once    sync.Once
	// probe asks the server for its current resourceVersion without a LIST (nil when the
	// mode's ListerWatcher cannot).
	probe  func(context.Context) (string, error)
	logger klog.Logger
	// Set before current is closed: what the cache must have applied before the run counts
	// as synced. targetRV is the highest resourceVersion of the objects the watch handed to
	// the reflector when it was found current; targetReplaced the number of objects the
	// run's lists had queued (a relist after 410 included).
	targetRV       uint64
	targetReplaced int64
	// unusable is called when the snapshot's version is found ahead of the server or
	// refused by the watch from it, before the relist (snapState.dropVersion).
	unusable func()
	// ahead is set, before the relist, once the probe found the snapshot ahead of the
	// server, or a watch from its version was refused as too large: see foreign.
	ahead atomic.Bool
}

// foreign marks the snapshot as ahead of the server: another timeline's (etcd restored
// from a backup without a revision bump), whose objects may hold, at the resourceVersion
// and uid of the server's, what the server no longer has. The relist then answers no item
// with the cached object (storage.WithKnownObjects), so that the server's content replaces
// the snapshot's, and for the rest of the run a relisted object at the cached one's
// resourceVersion is an update when its content differs (entry.apply's trustRV), so that
// handlers, which were handed the snapshot's, learn the server's.
func (sr *snapRun) foreign() {
	sr.ahead.Store(true)
}

// trustsRV says whether equal resourceVersions mean equal content in the run: false once
// its snapshot was found to be another timeline's (foreign).
func (sr *snapRun) trustsRV() bool {
	return sr == nil || !sr.ahead.Load()
}

func (sr *snapRun) markCurrent(rv uint64, replaced int64) {
	sr.once.Do(func() {
		sr.targetRV, sr.targetReplaced = rv, replaced
		close(sr.current)
	})
}

// snapshotLW returns the ListerWatcher of r: inner without snapshots; else a snapshotLW
// that records the resourceVersion of the run's first list and, for the entry's first run
// with a usable snapshot, answers that list with the snapshot.
func (e *entry) snapshotLW(r *run, inner cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
	s := e.snap
	if s == nil || s.refused {
		return inner
	}
	r.slw = &snapshotLW{inner: inner, replaced: r.fifo.replacedQueued}
	if !s.used.CompareAndSwap(false, true) {
		return r.slw
	}
	var sr *snapRun
	items, meta, ok := s.load(e.ctx, func(meta snapshot.Meta) {
		rv, _ := strconv.ParseUint(meta.ResourceVersion, 10, 64)
		s.appliedRV.Store(rv)
		sr = &snapRun{meta: meta, current: make(chan struct{}), logger: e.logger,
			unusable: s.dropVersion}
		if p, ok := inner.(storage.ResourceVersionProber); ok {
			sr.probe = p.CurrentResourceVersion
		}
		r.slw.pre = startEarlyWatch(r.ctx, inner, sr, r.slw.replaced)
	})
	if !ok {
		if sr != nil { // the objects were invalid
			s.appliedRV.Store(0)
			r.slw.pre.stop()
			r.slw.pre = nil
		}
		return r.slw
	}
	r.snap = sr
	r.fifo.fromSnapshot = true
	list := s.cfg.snapshotter.SnapshotList(items, meta.ResourceVersion)
	e.update(func(st *Status) { st.SnapshotTime, st.SnapshotResourceVersion = meta.Time, meta.ResourceVersion })
	r.slw.first, r.slw.sr = list, r.snap
	e.holdHandlers() // until the snapshot is served (run.waitCurrent), or the run ends (run.watchSynced)
	return r.slw
}

// snapshotLW records the resourceVersion of the first list of a run: once that list is
// applied, the cache is consistent with it (an informer with no object has no other).
// With a snapshot (sr set), it also answers the reflector's first List with the snapshot
// (no request) and passes every later call to inner; it then declines watch-list, so that
// the reflector calls List first (a watch-list would re-send everything), and marks the run
// current once a watch is established (snapshotWatch). Without one, it keeps inner's
// watch-list support.
type snapshotLW struct {
	inner   cache.ListerWatcherWithContext
	mu      sync.Mutex
	first   runtime.Object // nil once served
	firstRV string         // of the run's first list
	listed  bool
	sr      *snapRun
	pre     *earlyWatch // the watch from the snapshot's version, started during the load
	// replaced returns how many objects the run's lists have queued so far.
	replaced func() int64
}

func (lw *snapshotLW) IsWatchListSemanticsUnSupported() bool {
	return lw.sr != nil || watchlist.DoesClientNotSupportWatchListSemantics(lw.inner)
}

// firstListRV returns the resourceVersion of the run's first list ("" if none yet).
func (lw *snapshotLW) firstListRV() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.firstRV
}

func (lw *snapshotLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *snapshotLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw *snapshotLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	first := lw.first
	lw.first = nil
	lw.mu.Unlock()
	obj := first
	if obj == nil {
		if lw.sr != nil && opts.Continue == "" && opts.ResourceVersion == lw.sr.meta.ResourceVersion {
			// The reflector relists from the snapshot's version: the watch from it was
			// refused (410, the version compacted) or the snapshot is ahead of the server.
			// Either way a list at that version cannot be served (an ahead one is answered
			// "too large" only after the client's retries, about 40 s): read the current
			// state instead, as the reflector would next. The snapshot's version is not
			// saved again (the watch may have been refused as too large, with no probe to
			// say so first).
			opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
			if lw.sr.unusable != nil {
				lw.sr.unusable()
			}
			if !lw.sr.trustsRV() {
				ctx = storage.WithKnownObjects(ctx, nil) // see snapRun.foreign
			}
		}
		var err error
		if obj, err = lw.inner.ListWithContext(ctx, opts); err != nil {
			return nil, err
		}
	}
	if m, err := meta.ListAccessor(obj); err == nil {
		lw.mu.Lock()
		if !lw.listed {
			lw.listed, lw.firstRV = true, m.GetResourceVersion()
		}
		lw.mu.Unlock()
	}
	return obj, nil
}

func (lw *snapshotLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	pre := lw.pre
	lw.pre = nil
	lw.mu.Unlock()
	if pre != nil {
		if opts.ResourceVersion == pre.rv {
			w, err := pre.get(ctx)
			lw.refused(opts, err)
			return w, err
		}
		pre.stop()
	}
	w, dropped, err := watchWithProgress(ctx, lw.inner, opts)
	lw.refused(opts, err)
	if err != nil || lw.sr == nil {
		return w, err
	}
	select {
	case <-lw.sr.current:
		return w, nil
	default:
	}
	return newSnapshotWatch(ctx, w, lw.sr, opts.ResourceVersion, lw.replaced, dropped), nil
}

// refused marks the run's snapshot as another timeline's (snapRun.foreign) when err is a
// watch from its version refused as "too large": the snapshot is ahead of a server the
// probe could not ask, and the relist that follows must not take its objects for the
// server's.
func (lw *snapshotLW) refused(opts metav1.ListOptions, err error) {
	if err != nil && lw.sr != nil && opts.ResourceVersion == lw.sr.meta.ResourceVersion &&
		apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		lw.sr.foreign()
	}
}

// dropEarly stops the early watch if the reflector never took it: a run that ends before
// its first watch (stopped while the snapshot loaded) would leave it open, its goroutines
// blocked for good on the changes it has to deliver.
func (lw *snapshotLW) dropEarly() {
	lw.mu.Lock()
	pre := lw.pre
	lw.pre = nil
	lw.mu.Unlock()
	pre.stop()
}

// snapshotSynced is called after a run synced: snapshots may be written from now on.
func (e *entry) snapshotSynced() {
	if e.snap != nil {
		e.snap.everSync.Store(true)
	}
}
