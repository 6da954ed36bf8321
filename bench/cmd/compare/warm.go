package main

// Restart subjects: the compact mode (and, optionally, the metadata-only mode) restarting
// from a snapshot (Options.SnapshotDir).
// Each is measured in two children (harness.Staged): the first syncs cold and writes the
// snapshot on a clean Shutdown, the second restarts from it and is measured.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/bench/harness"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/metadataonly"
)

// What kindex-compact-restart-410 changes while the process is down.
const (
	goneUpdates = 100 // seeded pods updated (an annotation)
	goneDeletes = 10  // extra pods created before the snapshot, deleted while down
	goneAdds    = 10  // extra pods created while down (deleted again after the measurement)
)

func init() {
	compactF := func(ctx context.Context, cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns, SnapshotDir: harness.StateDir(ctx)},
			dynamicinformer.CompactOptions{})
	}
	// The same with the start's garbage left to the runtime (Options.DisableStartGC).
	compactNoGC := func(ctx context.Context, cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns, SnapshotDir: harness.StateDir(ctx), DisableStartGC: true},
			dynamicinformer.CompactOptions{})
	}
	metadataF := func(ctx context.Context, cfg *rest.Config, ns string) (*metadataonly.Factory, error) {
		return metadataonly.NewFactory(cfg, metadataonly.Options{Namespace: ns, SnapshotDir: harness.StateDir(ctx)})
	}
	harness.Register(&warmSubject[dynamicinformer.Object]{name: "kindex-compact-restart", newFactory: compactF})
	harness.Register(&warmSubject[dynamicinformer.Object]{name: "kindex-compact-restart-410", gone: true, handler: true, newFactory: compactF})
	// Optional: a second kube-apiserver restart per run, each.
	harness.Register(&warmSubject[dynamicinformer.Object]{name: "kindex-compact-restart-410-nohandler", gone: true, optional: true, newFactory: compactF})
	harness.Register(&warmSubject[dynamicinformer.Object]{name: "kindex-compact-restart-410-items", gone: true, handler: true, items: true, optional: true, newFactory: compactF})
	harness.Register(&warmSubject[dynamicinformer.Object]{name: "kindex-compact-restart-410-nogc", gone: true, handler: true, optional: true, newFactory: compactNoGC})
	harness.Register(&warmSubject[dynamicinformer.Object]{name: "kindex-compact-restart-410-memlimit", gone: true, handler: true, memLimit: memLimitFactor, optional: true, newFactory: compactF})
	// Optional: the metadata-only mode's restart within the watch window.
	harness.Register(&warmSubject[metadataonly.Object]{name: "kindex-metadata-restart", optional: true, newFactory: metadataF})
}

// warmSubject restarts from a snapshot. Without gone, nothing changes while it is down
// (a restart within the watch window). With gone (pods only), the parent changes
// goneUpdates+goneDeletes+goneAdds pods, compacts etcd and restarts kube-apiserver, so
// that the snapshot's resourceVersion is older than the watch window (410 Gone) and the
// restart relists. With handler, an event handler counts what the restart announces: the
// compact front end decodes every object it hands a handler (the snapshot's included), so
// its garbage shows in the RSS; the subjects without one show the restart's own memory.
// The -nogc subject sets Options.DisableStartGC: the start's garbage is left to the Go
// runtime's default pacing. With items, the handler is an informer.ItemHandlerFuncs, which
// decodes nothing. With memLimit, the restart runs under a Go memory limit (debug.SetMemoryLimit, as GOMEMLIMIT
// sets it) of memLimit times the heap the first child held once synced: what a user who
// knows the steady heap of the process does to keep the garbage of a handler's decoded
// objects from doubling it.
type warmSubject[T informer.Object] struct {
	name       string
	gone       bool
	handler    bool
	items      bool
	memLimit   float64
	optional   bool
	newFactory func(ctx context.Context, cfg *rest.Config, ns string) (*informer.Factory[T], error)

	queryable time.Duration
	snapshot  int // objects the snapshot held
	adds      atomic.Int64
	updates   atomic.Int64
	deletes   atomic.Int64
	cleanup   func()
}

func (s *warmSubject[T]) Name() string { return s.name }

// Optional keeps the subject out of the default list (harness.Optional).
func (s *warmSubject[T]) Optional() bool { return s.optional }

// Check refuses the restart after 410 on other resources than pods, and without the
// harness's own control plane (it compacts etcd and restarts kube-apiserver).
func (s *warmSubject[T]) Check(env harness.ParentEnv, gvr schema.GroupVersionResource) error {
	if !s.gone {
		return nil
	}
	if gvr != harness.PodsGVR {
		return fmt.Errorf("%w: changes are made to pods only", harness.ErrNotSupported)
	}
	if env.CompactEtcd == nil || env.RestartAPIServer == nil {
		return fmt.Errorf("%w: needs the harness's own control plane (not -server)", harness.ErrNotSupported)
	}
	return nil
}

func (s *warmSubject[T]) Prepare(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) error {
	if s.gone {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		for i := range goneDeletes {
			p := harness.ExtraPod(ns, fmt.Sprint("restart-gone-", i), i)
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
	}
	f, err := s.newFactory(ctx, cfg, ns)
	if err != nil {
		return err
	}
	fctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(fctx); err != nil {
		return err
	}
	inf, err := f.InformerForGVR(ctx, gvr)
	if err != nil {
		f.Shutdown()
		return err
	}
	if err := inf.WaitForSync(ctx); err != nil {
		f.Shutdown()
		return err
	}
	if s.memLimit > 0 {
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		if err := os.WriteFile(filepath.Join(harness.StateDir(ctx), heapFile), []byte(strconv.FormatUint(ms.HeapAlloc, 10)), 0o600); err != nil {
			f.Shutdown()
			return err
		}
	}
	f.Shutdown() // writes the snapshot
	return nil
}

// memLimitFactor is kindex-compact-restart-410-memlimit's memory limit, in steady heaps.
const memLimitFactor = 1.25

// heapFile, in the state directory, holds the heap the first child held once synced.
const heapFile = "steady-heap"

// setMemoryLimit sets the Go memory limit to s.memLimit times the heap Prepare recorded.
func (s *warmSubject[T]) setMemoryLimit(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join(harness.StateDir(ctx), heapFile))
	if err != nil {
		return err
	}
	heap, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return err
	}
	debug.SetMemoryLimit(int64(float64(heap) * s.memLimit))
	return nil
}

func (s *warmSubject[T]) Between(ctx context.Context, env harness.ParentEnv, gvr schema.GroupVersionResource, ns string) error {
	if !s.gone {
		return nil
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	pods := cs.CoreV1().Pods(ns)
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)} // no kubelet confirms a graceful delete
	for i := range goneUpdates {
		p, err := pods.Get(ctx, harness.PodName(i), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations["bench.kindex.io/touched"] = time.Now().UTC().Format(time.RFC3339Nano)
		if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	for i := range goneDeletes {
		if err := pods.Delete(ctx, fmt.Sprint("restart-gone-", i), now); err != nil {
			return err
		}
	}
	for i := range goneAdds {
		if _, err := pods.Create(ctx, harness.ExtraPod(ns, fmt.Sprint("restart-new-", i), i), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if err := env.CompactEtcd(ctx); err != nil {
		return err
	}
	return env.RestartAPIServer(ctx)
}

func (s *warmSubject[T]) Sync(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
	if s.memLimit > 0 {
		if err := s.setMemoryLimit(ctx); err != nil {
			return 0, nil, err
		}
	}
	start := time.Now()
	f, err := s.newFactory(ctx, cfg, ns)
	if err != nil {
		return 0, nil, err
	}
	inf, stop, err := startInformer(ctx, f, gvr)
	if err != nil {
		return 0, nil, err
	}
	if s.handler {
		var h cache.ResourceEventHandler = cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.adds.Add(1) },
			UpdateFunc: func(any, any) { s.updates.Add(1) },
			DeleteFunc: func(any) { s.deletes.Add(1) },
		}
		if s.items {
			h = informer.ItemHandlerFuncs[T]{
				AddFunc:    func(informer.Item[T], bool) { s.adds.Add(1) },
				UpdateFunc: func(_, _ informer.Item[T]) { s.updates.Add(1) },
				DeleteFunc: func(informer.Item[T], bool) { s.deletes.Add(1) },
			}
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			stop()
			return 0, nil, err
		}
	}
	var once sync.Once
	done := make(chan struct{})
	go func() { // time to queryable, polled every millisecond
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if inf.Queryable() {
				once.Do(func() { s.queryable = time.Since(start) })
				close(done)
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				close(done)
				return
			}
		}
	}()
	if err := inf.WaitForSync(ctx); err != nil {
		inf.Release()
		stop()
		return 0, nil, err
	}
	<-done
	st := inf.Status()
	count := st.Objects
	release := func() { inf.Release(); stop() }
	if s.gone {
		count -= goneAdds // the extra pods are not part of the seed
		s.snapshot = int(count) + goneDeletes
		s.cleanup = func() {
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return
			}
			for i := range goneAdds {
				_ = cs.CoreV1().Pods(ns).Delete(context.Background(), fmt.Sprint("restart-new-", i), metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			}
		}
		release = func() { inf.Release(); stop(); s.cleanup() }
	}
	return int(count), release, nil
}

// Annotate reports the restart's figures once the handler received the snapshot's adds
// and what the changes should give (or 10 s passed), and 500 ms more for anything beyond.
func (s *warmSubject[T]) Annotate(m *harness.Measurement) {
	w := &harness.WarmFigures{QueryableSeconds: s.queryable.Seconds()}
	if !s.handler {
		m.Warm = w
		return
	}
	if s.gone {
		w.Changes = goneUpdates + goneDeletes + goneAdds
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (int(s.adds.Load()) < s.snapshot || s.events() < w.Changes) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	w.Events = s.events()
	w.Adds, w.Updates, w.Deletes = int(s.adds.Load())-s.snapshot, int(s.updates.Load()), int(s.deletes.Load())
	m.Warm = w
}

// events is the handler events beyond the snapshot's adds.
func (s *warmSubject[T]) events() int {
	return int(s.adds.Load()) - s.snapshot + int(s.updates.Load()) + int(s.deletes.Load())
}
