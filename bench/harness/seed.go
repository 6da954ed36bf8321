package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// seeder writes the seeded objects. Every object is a pure function of its index, and an
// object counts as seeded once its status manager has written status, so a seed that was
// interrupted resumes where it stopped and a complete seed is skipped.
type seeder struct {
	ns      string
	workers int
	log     func(format string, args ...any)
	cs      kubernetes.Interface
	dyn     dynamic.Interface
	meta    metadata.Interface
	apiext  apiextclient.Interface
	httpc   *http.Client
	cfg     *rest.Config
}

func newSeeder(cfg *rest.Config, ns string, workers int, log func(string, ...any)) (*seeder, error) {
	s := &seeder{ns: ns, workers: workers, log: log, cfg: cfg}
	var err error
	if s.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.meta, err = metadata.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.apiext, err = apiextclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.httpc, err = rest.HTTPClientFor(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// seedKind is one resource to seed: n objects named name(i), written by ensure(ctx, i).
type seedKind struct {
	what          string
	gvr           schema.GroupVersionResource
	n             int
	name          func(int) string
	statusManager string
	ensure        func(ctx context.Context, i int) error
}

func (s *seeder) pods(n int) seedKind {
	return seedKind{what: "pods", gvr: PodsGVR, n: n, name: PodName, statusManager: podStatusManager, ensure: s.ensurePod}
}

func (s *seeder) databases(n int) seedKind {
	return seedKind{what: "databases", gvr: DatabasesGVR, n: n, name: DatabaseName, statusManager: crStatusManager, ensure: s.ensureDatabase}
}

// seed makes sure that the namespace holds exactly objects 0..n-1 of k, each with status,
// and returns how many it had to write.
func (s *seeder) seed(ctx context.Context, k seedKind) (int, error) {
	done, total, err := s.seeded(ctx, k.gvr, k.statusManager)
	if err != nil {
		return 0, fmt.Errorf("listing seeded %s: %w", k.what, err)
	}
	if total > k.n {
		return 0, fmt.Errorf("namespace %s already holds %d %s, more than the %d wanted; use another namespace", s.ns, total, k.what, k.n)
	}
	var todo []int
	for i := range k.n {
		if !done[k.name(i)] {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		s.log("%s: namespace %s already holds all %d, skipping the seed", k.what, s.ns, k.n)
		return 0, nil
	}
	s.log("%s: seeding %d of %d with %d workers", k.what, len(todo), k.n, s.workers)

	var written atomic.Int64
	start := time.Now()
	stopProgress := s.progress(k.what, len(todo), &written, start)
	defer stopProgress()
	g, gctx := errgroup.WithContext(ctx)
	next := make(chan int)
	g.Go(func() error {
		defer close(next)
		for _, i := range todo {
			select {
			case next <- i:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range s.workers {
		g.Go(func() error {
			for i := range next {
				if err := retry.OnError(seedBackoff, transient, func() error { return k.ensure(gctx, i) }); err != nil {
					return fmt.Errorf("seeding %s %s: %w", k.what, k.name(i), err)
				}
				written.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return int(written.Load()), err
	}
	elapsed := time.Since(start)
	s.log("%s: seeded %d in %s (%.0f/s)", k.what, len(todo), elapsed.Round(time.Millisecond), float64(len(todo))/elapsed.Seconds())
	return len(todo), nil
}

// progress logs every 5 seconds until the returned function is called.
func (s *seeder) progress(what string, total int, written *atomic.Int64, start time.Time) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				n := written.Load()
				s.log("%s: %d/%d seeded (%.0f/s)", what, n, total, float64(n)/time.Since(start).Seconds())
			}
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}

// seeded returns the names of the objects of gvr whose status statusManager has written, and
// how many objects of gvr the namespace holds. It lists metadata only, as protobuf.
func (s *seeder) seeded(ctx context.Context, gvr schema.GroupVersionResource, statusManager string) (map[string]bool, int, error) {
	done := map[string]bool{}
	total := 0
	opts := metav1.ListOptions{Limit: 5000}
	for {
		list, err := s.meta.Resource(gvr).Namespace(s.ns).List(ctx, opts)
		if err != nil {
			return nil, 0, err
		}
		total += len(list.Items)
		for _, item := range list.Items {
			for _, mf := range item.ManagedFields {
				if mf.Manager == statusManager && mf.Subresource == "status" {
					done[item.Name] = true
				}
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return done, total, nil
		}
	}
}

// ensurePod creates the i-th pod (or finds it) and writes its status as the kubelet would.
func (s *seeder) ensurePod(ctx context.Context, i int) error {
	pods := s.cs.CoreV1().Pods(s.ns)
	pod, err := pods.Create(ctx, newPod(s.ns, i), metav1.CreateOptions{FieldManager: podCreateManager})
	if apierrors.IsAlreadyExists(err) {
		pod, err = pods.Get(ctx, PodName(i), metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	pod.Status = newPodStatus(pod, i)
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{FieldManager: podStatusManager})
	return err
}

// ensureDatabase creates the i-th Database (or finds it) and writes its status as its
// operator would.
func (s *seeder) ensureDatabase(ctx context.Context, i int) error {
	dbs := s.dyn.Resource(DatabasesGVR).Namespace(s.ns)
	db, err := dbs.Create(ctx, newDatabase(s.ns, i), metav1.CreateOptions{FieldManager: crManager})
	if apierrors.IsAlreadyExists(err) {
		db, err = dbs.Get(ctx, DatabaseName(i), metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	db.Object["status"] = newDatabaseStatus(i)
	_, err = dbs.UpdateStatus(ctx, db, metav1.UpdateOptions{FieldManager: crStatusManager})
	return err
}

func (s *seeder) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}
	_, err := s.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", s.ns, err)
	}
	return nil
}

// ensureCRD installs the Database CRD if needed and waits until its resource is served.
func (s *seeder) ensureCRD(ctx context.Context) error {
	crds := s.apiext.ApiextensionsV1().CustomResourceDefinitions()
	crd := newCRD()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
	}
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		established := false
		for _, c := range got.Status.Conditions {
			established = established || (c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue)
		}
		if !established {
			lastErr = errors.New("not Established")
			return false, nil
		}
		_, lastErr = s.dyn.Resource(DatabasesGVR).Namespace(s.ns).List(ctx, metav1.ListOptions{Limit: 1})
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not served: %w (last: %v)", crd.Name, err, lastErr)
	}
	return nil
}

var seedBackoff = wait.Backoff{Steps: 8, Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.2, Cap: 5 * time.Second}

// transient reports errors worth retrying while seeding a busy apiserver.
func transient(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || errors.Is(err, io.ErrUnexpectedEOF)
}

// seedAll seeds the namespace, the pods, the CRD and the Databases, and samples their sizes.
func seedAll(ctx context.Context, s *seeder, opts Options) (SeedStats, error) {
	st := SeedStats{Namespace: opts.Namespace, Pods: opts.N, Databases: opts.M}
	start := time.Now()
	if err := s.ensureNamespace(ctx); err != nil {
		return st, err
	}
	var err error
	if st.CreatedPods, err = s.seed(ctx, s.pods(opts.N)); err != nil {
		return st, err
	}
	if opts.M > 0 {
		if err := s.ensureCRD(ctx); err != nil {
			return st, err
		}
		if st.CreatedDatabases, err = s.seed(ctx, s.databases(opts.M)); err != nil {
			return st, err
		}
	}
	st.Seconds = time.Since(start).Seconds()
	if st.PodSizes, err = s.sampleSizes(ctx, PodsGVR, opts.N, PodName); err != nil {
		return st, fmt.Errorf("sampling pod sizes: %w", err)
	}
	if st.DatabaseSizes, err = s.sampleSizes(ctx, DatabasesGVR, opts.M, DatabaseName); err != nil {
		return st, fmt.Errorf("sampling Database sizes: %w", err)
	}
	s.log("pods: %.0f B of compact JSON on average, %.0f%% of it managedFields (%d sampled; managers: %v)",
		st.PodSizes.AvgJSONBytes, 100*st.PodSizes.ManagedFieldsShare, st.PodSizes.Sampled, st.PodSizes.Managers)
	if opts.M > 0 {
		s.log("databases: %.0f B of compact JSON on average, %.0f%% of it managedFields",
			st.DatabaseSizes.AvgJSONBytes, 100*st.DatabaseSizes.ManagedFieldsShare)
	}
	return st, nil
}
