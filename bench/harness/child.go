package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// childEnv marks a process that the harness started to measure one subject.
const childEnv = "KINDEX_HARNESS_CHILD"

// resultPrefix starts the one stdout line that carries a child's result, so that stray
// output on stdout cannot be mistaken for it.
const resultPrefix = "KINDEX-HARNESS-RESULT "

// Measurement is what one child reports for one Sync of one subject.
type Measurement struct {
	// Count is the number of objects the subject holds after Sync.
	Count int `json:"count"`
	// Seconds is the time Sync took (for the LIST floors: until the last body byte).
	Seconds float64 `json:"seconds"`
	// HeapBytes is runtime.MemStats.HeapAlloc after Sync minus before it, each read after
	// two forced GCs: the live heap the subject's cache holds.
	HeapBytes int64 `json:"heap_bytes"`
	// HeapPerObject is HeapBytes / Count.
	HeapPerObject float64 `json:"heap_per_object"`
	// AllocBytes is runtime.MemStats.TotalAlloc during Sync: the garbage the sync made.
	AllocBytes uint64 `json:"alloc_bytes"`
	// CPUSeconds is the user plus system CPU time the child spent during Sync. On a shared
	// machine it is steadier than wall time.
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakRSSBytes is the child's peak resident set (VmHWM) when Sync returned.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// BodyBytes is the number of response body bytes the subject read (after gzip).
	BodyBytes int64 `json:"body_bytes"`
	// Gzip is true if any response came gzip-compressed.
	Gzip bool `json:"gzip,omitempty"`
	// Requests lists the subject's requests, e.g. to show whether watch-list was used.
	Requests []string `json:"requests,omitempty"`
	// ListRequests is the number of LIST requests the subject made on the resource's
	// collection (GETs without watch=true), as sent on the wire.
	ListRequests int `json:"list_requests"`
	// RSSBeforeBytes is the child's resident set (VmRSS) right before Sync: what the
	// process held before the subject's cache.
	RSSBeforeBytes int64 `json:"rss_before_bytes,omitempty"`
	// MappedBytes is how much the child's file-backed resident set (RssFile) grew during
	// Sync: memory the subject holds as mapped files outside the Go heap (the compact
	// mode's restart keeps its objects as views of the snapshot file it mapped).
	MappedBytes int64 `json:"mapped_bytes,omitempty"`
	// Warm holds the figures of a restart subject (Annotator), nil for others.
	Warm *WarmFigures `json:"warm,omitempty"`
	// ServerCPUSeconds is the CPU time the apiserver and etcd spent while the child ran
	// (Options.ServerPIDs; 0 when unknown). The child's start and its heap readings are
	// included, but the server is idle during them: on a 2-core machine the server's CPU
	// competes with the client's, so this shows how much of the sync time the server needs.
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
}

// childRequest is what the parent sends a child on stdin.
type childRequest struct {
	Subject   string                      `json:"subject"`
	Config    clientConfig                `json:"config"`
	GVR       schema.GroupVersionResource `json:"gvr"`
	Namespace string                      `json:"namespace"`
	Timeout   time.Duration               `json:"timeout"`
	// CPUProfile, if set, is where the child writes a CPU profile of the Sync.
	CPUProfile string `json:"cpu_profile,omitempty"`
	// HeapProfile, if set, is where the child writes a heap profile of what the subject
	// holds after the Sync (sampled every 4 KB allocated, which slows the Sync down).
	HeapProfile string `json:"heap_profile,omitempty"`
	// Phase is phasePrepare for a Staged subject's first child, else "".
	Phase string `json:"phase,omitempty"`
	// StateDir is a Staged subject's directory (StateDir).
	StateDir string `json:"state_dir,omitempty"`
}

const phasePrepare = "prepare"

// childResult is what a child writes on stdout, after resultPrefix.
type childResult struct {
	Measurement  *Measurement `json:"measurement,omitempty"`
	Error        string       `json:"error,omitempty"`
	NotSupported bool         `json:"not_supported,omitempty"`
}

// clientConfig is the part of a rest.Config a child needs (a rest.Config does not marshal:
// it holds functions). Exec and auth-provider plugins are not carried over.
type clientConfig struct {
	Host            string  `json:"host"`
	APIPath         string  `json:"api_path,omitempty"`
	BearerToken     string  `json:"bearer_token,omitempty"`
	BearerTokenFile string  `json:"bearer_token_file,omitempty"`
	Username        string  `json:"username,omitempty"`
	Password        string  `json:"password,omitempty"`
	Insecure        bool    `json:"insecure,omitempty"`
	ServerName      string  `json:"server_name,omitempty"`
	CAFile          string  `json:"ca_file,omitempty"`
	CertFile        string  `json:"cert_file,omitempty"`
	KeyFile         string  `json:"key_file,omitempty"`
	CAData          []byte  `json:"ca_data,omitempty"`
	CertData        []byte  `json:"cert_data,omitempty"`
	KeyData         []byte  `json:"key_data,omitempty"`
	QPS             float32 `json:"qps,omitempty"`
	Burst           int     `json:"burst,omitempty"`
}

func toClientConfig(c *rest.Config) (clientConfig, error) {
	if c.ExecProvider != nil || c.AuthProvider != nil {
		return clientConfig{}, errors.New("harness: exec and auth-provider credentials cannot be passed to child processes")
	}
	t := c.TLSClientConfig
	return clientConfig{
		Host: c.Host, APIPath: c.APIPath, BearerToken: c.BearerToken, BearerTokenFile: c.BearerTokenFile,
		Username: c.Username, Password: c.Password, Insecure: t.Insecure, ServerName: t.ServerName,
		CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, CAData: t.CAData, CertData: t.CertData, KeyData: t.KeyData,
		QPS: c.QPS, Burst: c.Burst,
	}, nil
}

func (c clientConfig) restConfig() *rest.Config {
	return &rest.Config{
		Host: c.Host, APIPath: c.APIPath, BearerToken: c.BearerToken, BearerTokenFile: c.BearerTokenFile,
		Username: c.Username, Password: c.Password,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure: c.Insecure, ServerName: c.ServerName, CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile,
			CAData: c.CAData, CertData: c.CertData, KeyData: c.KeyData,
		},
		QPS: c.QPS, Burst: c.Burst,
	}
}

// IsChild reports whether this process was started by the harness to measure one subject.
// A program (or TestMain) that runs the harness calls it first thing:
//
//	if harness.IsChild() {
//		os.Exit(harness.RunChild())
//	}
func IsChild() bool { return os.Getenv(childEnv) != "" }

// RunChild measures the subject named in the request on stdin, writes the result on stdout
// and returns the process exit code.
func RunChild() int {
	var req childRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "harness child: reading the request: %v\n", err)
		return 2
	}
	ctx := context.Background()
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	var res childResult
	m, err := measure(ctx, req)
	if err != nil {
		res.Error = err.Error()
		res.NotSupported = errors.Is(err, ErrNotSupported)
	} else {
		res.Measurement = m
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness child: encoding the result: %v\n", err)
		return 2
	}
	w := bufio.NewWriter(os.Stdout)
	_, _ = w.WriteString("\n" + resultPrefix)
	_, _ = w.Write(out)
	_ = w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return 2
	}
	return 0
}

// measure runs one Sync between two heap readings, each after two forced GCs.
func measure(ctx context.Context, req childRequest) (*Measurement, error) {
	subject, err := lookup(req.Subject)
	if err != nil {
		return nil, err
	}
	cfg := req.Config.restConfig()
	if req.StateDir != "" {
		ctx = context.WithValue(ctx, stateDirKey{}, req.StateDir)
	}
	if req.Phase == phasePrepare {
		s, ok := subject.(Staged)
		if !ok {
			return nil, fmt.Errorf("%s is not a staged subject", req.Subject)
		}
		if err := s.Prepare(ctx, cfg, req.GVR, req.Namespace); err != nil {
			return nil, err
		}
		return &Measurement{}, nil
	}
	var mt meter
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return mt.wrap(rt) })

	if req.HeapProfile != "" {
		runtime.MemProfileRate = 4 << 10
	}
	before := heapAfterGC()
	rssBefore, fileBefore := procStatus("VmRSS:"), procStatus("RssFile:")
	stopProfile := func() error { return nil }
	if req.CPUProfile != "" {
		if stopProfile, err = startCPUProfile(req.CPUProfile); err != nil {
			return nil, err
		}
	}
	cpuBefore := cpuTime()
	start := time.Now()
	count, stop, err := subject.Sync(ctx, cfg, req.GVR, req.Namespace)
	end := syncEndNow(start)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: sync %s: %w", req.Subject, req.GVR, err)
	}
	if p, ok := subject.(partSyncer); ok && p.syncEnd().elapsed > 0 {
		end = p.syncEnd()
	}
	after := heapAfterGC()
	mapped := max(procStatus("RssFile:")-fileBefore, 0)
	if req.HeapProfile != "" {
		if err := writeHeapProfile(req.HeapProfile); err != nil {
			return nil, err
		}
	}
	requests, gzip := mt.snapshot()
	m := &Measurement{
		Count:          count,
		Seconds:        end.elapsed.Seconds(),
		HeapBytes:      int64(after.HeapAlloc) - int64(before.HeapAlloc),
		AllocBytes:     end.totalAlloc - before.TotalAlloc,
		CPUSeconds:     (end.cpu - cpuBefore).Seconds(),
		PeakRSSBytes:   end.peakRSS,
		BodyBytes:      mt.bytes.Load(),
		Gzip:           gzip,
		Requests:       requests,
		ListRequests:   countLists(requests, req.GVR, req.Namespace),
		RSSBeforeBytes: rssBefore,
		MappedBytes:    mapped,
	}
	if a, ok := subject.(Annotator); ok {
		a.Annotate(m)
	}
	if count > 0 {
		m.HeapPerObject = float64(m.HeapBytes) / float64(count)
	}
	if stop != nil {
		stop()
	}
	return m, nil
}

// syncEnd is the state of the process when the measured part of a Sync ended.
type syncEnd struct {
	elapsed    time.Duration
	cpu        time.Duration // cpuTime()
	totalAlloc uint64        // runtime.MemStats.TotalAlloc
	peakRSS    int64         // peakRSS()
}

func syncEndNow(start time.Time) syncEnd {
	elapsed := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return syncEnd{elapsed: elapsed, cpu: cpuTime(), totalAlloc: ms.TotalAlloc, peakRSS: peakRSS()}
}

// partSyncer is a subject whose Sync does work after the part that is measured (the LIST
// floors count the items after the last body byte).
type partSyncer interface {
	syncEnd() syncEnd
}

func heapAfterGC() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// cpuTime is the user plus system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is VmHWM from /proc/self/status in bytes, or 0 where there is none.
func peakRSS() int64 { return procStatus("VmHWM:") }

// procStatus is the field (a size in kB) of /proc/self/status in bytes, or 0.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	return parseStatusField(f, field)
}

func parseVmHWM(r io.Reader) int64 { return parseStatusField(r, "VmHWM:") }

func parseStatusField(r io.Reader, field string) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// startCPUProfile writes a CPU profile to path until the returned function is called.
func startCPUProfile(path string) (func() error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("harness: CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// writeHeapProfile writes the in-use heap (as of the last GC) to path.
func writeHeapProfile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("harness: heap profile: %w", err)
	}
	return f.Close()
}

// processesCPU is the user plus system CPU time of the processes pids so far (from
// /proc/<pid>/stat; a process that cannot be read counts 0).
func processesCPU(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		total += parseStatCPU(string(b))
	}
	return total
}

// parseStatCPU reads utime and stime (fields 14 and 15, in clock ticks of 1/100 s on
// Linux) from a /proc/<pid>/stat line; the command name, field 2, may hold spaces.
func parseStatCPU(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+st) * 10 * time.Millisecond
}

// countLists counts the LIST requests on gvr's collection in namespace among requests (as
// recorded by meter: "GET /path?query -> status").
func countLists(requests []string, gvr schema.GroupVersionResource, namespace string) int {
	path := "/" + strings.Join(resourcePath(gvr, namespace), "/")
	n := 0
	for _, r := range requests {
		target, ok := strings.CutPrefix(r, "GET ")
		if !ok {
			continue
		}
		target, _, _ = strings.Cut(target, " ")
		p, q, _ := strings.Cut(target, "?")
		if p != path {
			continue
		}
		watching := false
		for _, kv := range strings.Split(q, "&") {
			if kv == "watch=true" || kv == "watch=1" {
				watching = true
			}
		}
		if !watching {
			n++
		}
	}
	return n
}
