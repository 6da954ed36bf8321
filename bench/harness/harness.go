package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// APIServerArgs are the kube-apiserver flags the harness wants: seeding 20,000 pods with 32
// workers must not queue behind the default in-flight limits.
var APIServerArgs = []string{"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000"}

// Options configures Run. Only N is required.
type Options struct {
	// N is the number of pods to seed and measure.
	N int
	// M is the number of Database custom resources; 0 means N/10 (at least 1), negative none.
	M int
	// Runs is how many times each subject is measured, each time in a fresh child. Default 3.
	Runs int
	// Subjects limits the run to these subject names; empty means every registered subject.
	Subjects []string
	// Namespace holds the seeded objects. Default "kindex-bench-<N>", so that runs with
	// different N against one cluster do not mix.
	Namespace string
	// Workers is the seeding concurrency. Default 32.
	Workers int
	// ChildTimeout bounds one child (one Sync). Default 15 minutes.
	ChildTimeout time.Duration
	// NoWarmup skips the unrecorded JSON LIST that warms the apiserver before the runs.
	NoWarmup bool
	// Executable is the binary started as a child; it must call RunChild when IsChild.
	// Default os.Executable().
	Executable string
	// Command is recorded in the report as the command that produced it.
	Command string
	// APIServer names the apiserver in the report. Default: the GitVersion it reports
	// (a kube-apiserver built from source without version stamps says v0.0.0-master).
	APIServer string
	// Log receives progress lines. Default io.Discard.
	Log io.Writer
	// CPUProfileDir, if set, makes every child write a CPU profile of its Sync there, named
	// <subject>-<resource>-<run>.pprof.
	CPUProfileDir string
	// HeapProfileDir, if set, makes every child write a heap profile of what its subject
	// holds after the Sync there, named <subject>-<resource>-<run>.heap.pprof. Sampling
	// makes the Sync slower: do not quote times from such a run.
	HeapProfileDir string
	// ServerPIDs, if set, returns the processes serving the apiserver (kube-apiserver and
	// etcd, on this machine); their CPU time during each child is reported as server CPU.
	ServerPIDs func() []int
	// Parent is what Staged subjects may do between their children (Config is set by Run).
	Parent ParentEnv
}

func (o *Options) defaults() error {
	if o.N <= 0 {
		return errors.New("harness: Options.N must be positive")
	}
	if o.M == 0 {
		o.M = max(1, o.N/10)
	}
	o.M = max(o.M, 0)
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Namespace == "" {
		o.Namespace = "kindex-bench-" + strconv.Itoa(o.N)
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.ChildTimeout <= 0 {
		o.ChildTimeout = 15 * time.Minute
	}
	if o.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("harness: finding this executable for child processes: %w", err)
		}
		o.Executable = exe
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Run seeds the objects through cfg (an admin of the cluster), then measures every selected
// subject Options.Runs times on pods and on Databases, each Sync in a fresh child process.
// It returns the report even when some subjects failed; the error then lists them.
func Run(ctx context.Context, cfg *rest.Config, opts Options) (*Report, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	subjects, err := selectSubjects(opts.Subjects)
	if err != nil {
		return nil, err
	}
	ccfg, err := toClientConfig(cfg)
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		_, _ = fmt.Fprintf(opts.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	rep := &Report{Command: opts.Command, Started: time.Now(), N: opts.N, M: opts.M, Runs: opts.Runs}
	s, err := newSeeder(cfg, opts.Namespace, opts.Workers, logf)
	if err != nil {
		return nil, err
	}
	rep.KubeAPIServer = opts.APIServer
	if rep.KubeAPIServer == "" {
		if v, err := s.cs.Discovery().ServerVersion(); err == nil {
			rep.KubeAPIServer = "kube-apiserver " + v.GitVersion
		}
	}
	if rep.Seed, err = seedAll(ctx, s, opts); err != nil {
		return nil, err
	}

	datasets := []Dataset{{Resource: "pods", GVR: PodsGVR, Count: opts.N}}
	if opts.M > 0 {
		datasets = append(datasets, Dataset{Resource: "databases." + crdGroup, GVR: DatabasesGVR, Count: opts.M})
	}
	rep.Machine = thisMachine()
	opts.Parent.Config = cfg
	m := &measurer{opts: opts, cfg: ccfg, logf: logf}
	if !opts.NoWarmup {
		for _, d := range datasets {
			if r := m.run(ctx, SubjectListJSON, d, 0); r.err != nil {
				return nil, fmt.Errorf("warm-up LIST of %s: %w", d.Resource, r.err)
			}
		}
	}
	for i := range datasets {
		for _, name := range subjects {
			datasets[i].Subjects = append(datasets[i].Subjects, SubjectResult{Name: name})
		}
	}
	// Round-robin over runs, so that a noisy minute on a shared machine hits every subject
	// once rather than all runs of one.
	for run := 1; run <= opts.Runs; run++ {
		for di := range datasets {
			d := &datasets[di]
			for si := range d.Subjects {
				m.measureOnce(ctx, d, &d.Subjects[si], run)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	var errs []error
	for di := range datasets {
		d := &datasets[di]
		for si := range d.Subjects {
			d.Subjects[si].summarize(d.GVR.Resource)
			if e := d.Subjects[si].Error; e != "" {
				errs = append(errs, fmt.Errorf("%s on %s: %s", d.Subjects[si].Name, d.Resource, e))
			}
		}
		d.ratios()
	}
	rep.Datasets = datasets
	rep.TotalSeconds = time.Since(rep.Started).Seconds()
	rep.Machine.LoadAvgEnd = loadAvg()
	return rep, errors.Join(errs...)
}

// Optional is a subject measured only when named in Options.Subjects (one that is slow to
// measure and adds little to the default report).
type Optional interface {
	Optional() bool
}

func selectSubjects(names []string) ([]string, error) {
	var all, defaults []string
	for _, s := range Subjects() {
		all = append(all, s.Name())
		if o, ok := s.(Optional); !ok || !o.Optional() {
			defaults = append(defaults, s.Name())
		}
	}
	if len(names) == 0 {
		return defaults, nil
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("harness: unknown subject %q (registered: %v)", n, all)
		}
	}
	// Registration order, whatever order the names came in.
	return slices.DeleteFunc(all, func(n string) bool { return !slices.Contains(names, n) }), nil
}

// measurer runs children.
type measurer struct {
	opts Options
	cfg  clientConfig
	logf func(string, ...any)
}

func (m *measurer) run(ctx context.Context, subject string, d Dataset, run int) childRun {
	if s, err := lookup(subject); err == nil {
		if st, ok := s.(Staged); ok {
			return m.runStaged(ctx, st, d, run)
		}
	}
	return m.runWith(ctx, subject, d, run, "")
}

// runWith runs one measured child, with a Staged subject's directory.
func (m *measurer) runWith(ctx context.Context, subject string, d Dataset, run int, stateDir string) childRun {
	req := childRequest{
		Subject: subject, Config: m.cfg, GVR: d.GVR, Namespace: m.opts.Namespace, Timeout: m.opts.ChildTimeout,
		StateDir: stateDir,
	}
	if m.opts.CPUProfileDir != "" {
		req.CPUProfile = filepath.Join(m.opts.CPUProfileDir, fmt.Sprintf("%s-%s-%d.pprof", subject, d.Resource, run))
	}
	if m.opts.HeapProfileDir != "" {
		req.HeapProfile = filepath.Join(m.opts.HeapProfileDir, fmt.Sprintf("%s-%s-%d.heap.pprof", subject, d.Resource, run))
	}
	var pids []int
	if m.opts.ServerPIDs != nil {
		pids = m.opts.ServerPIDs()
	}
	before := processesCPU(pids)
	res := runChild(ctx, m.opts.Executable, req)
	if res.m != nil && len(pids) > 0 {
		res.m.ServerCPUSeconds = (processesCPU(pids) - before).Seconds()
	}
	return res
}

// measureOnce runs one child for r on d, unless r has already failed or is not supported.
func (m *measurer) measureOnce(ctx context.Context, d *Dataset, r *SubjectResult, run int) {
	if r.NotSupported || r.Error != "" || ctx.Err() != nil {
		return
	}
	res := m.run(ctx, r.Name, *d, run)
	switch {
	case res.notSupported:
		r.NotSupported = true
		m.logf("run %d/%d %s %s: n/a (%v)", run, m.opts.Runs, d.Resource, r.Name, res.err)
	case res.err != nil:
		r.Error = res.err.Error()
		m.logf("run %d/%d %s %s: FAILED: %v", run, m.opts.Runs, d.Resource, r.Name, res.err)
	case res.m.Count != d.Count:
		r.Error = fmt.Sprintf("synced %d objects, want %d", res.m.Count, d.Count)
		m.logf("run %d/%d %s %s: FAILED: %s", run, m.opts.Runs, d.Resource, r.Name, r.Error)
	default:
		r.Runs = append(r.Runs, *res.m)
		m.logf("run %d/%d %s %s: %d objects in %.3f s, %.1f KB heap per object, %.2f s CPU",
			run, m.opts.Runs, d.Resource, r.Name, res.m.Count, res.m.Seconds, res.m.HeapPerObject/1000, res.m.CPUSeconds)
	}
}

// ratios compares every subject's medians with client-go's dynamic informer and the JSON
// LIST floor of the same dataset.
func (d *Dataset) ratios() {
	find := func(name string) *SubjectResult {
		for i := range d.Subjects {
			if d.Subjects[i].Name == name && len(d.Subjects[i].Runs) > 0 {
				return &d.Subjects[i]
			}
		}
		return nil
	}
	dyn, floor := find(SubjectDynamic), find(SubjectListJSON)
	for i := range d.Subjects {
		r := &d.Subjects[i]
		if len(r.Runs) == 0 {
			continue
		}
		if dyn != nil {
			r.TimeVsDynamic = ratio(r.Median.Seconds, dyn.Median.Seconds)
			r.HeapVsDynamic = ratio(r.Median.HeapPerObject, dyn.Median.HeapPerObject)
			r.CPUVsDynamic = ratio(r.Median.CPUSeconds, dyn.Median.CPUSeconds)
		}
		if floor != nil {
			r.TimeVsJSONList = ratio(r.Median.Seconds, floor.Median.Seconds)
		}
	}
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
