package harness

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Report is everything one run of the harness measured. It marshals to the JSON results file.
type Report struct {
	Command       string    `json:"command"`
	Started       time.Time `json:"started"`
	TotalSeconds  float64   `json:"total_seconds"`
	Machine       Machine   `json:"machine"`
	KubeAPIServer string    `json:"kube_apiserver"`
	N             int       `json:"n"`
	M             int       `json:"m"`
	Runs          int       `json:"runs"`
	Seed          SeedStats `json:"seed"`
	Datasets      []Dataset `json:"datasets"`
}

// SeedStats describes the seeded objects.
type SeedStats struct {
	Namespace        string    `json:"namespace"`
	Pods             int       `json:"pods"`
	Databases        int       `json:"databases"`
	CreatedPods      int       `json:"created_pods"`
	CreatedDatabases int       `json:"created_databases"`
	Seconds          float64   `json:"seconds"`
	PodSizes         SizeStats `json:"pod_sizes"`
	DatabaseSizes    SizeStats `json:"database_sizes"`
}

// Dataset is the measurements of every subject on one resource.
type Dataset struct {
	Resource string                      `json:"resource"`
	GVR      schema.GroupVersionResource `json:"gvr"`
	Count    int                         `json:"count"`
	Subjects []SubjectResult             `json:"subjects"`
}

// SubjectResult is one subject on one resource: every run, their medians and the ratios.
type SubjectResult struct {
	Name         string        `json:"name"`
	NotSupported bool          `json:"not_supported,omitempty"`
	Error        string        `json:"error,omitempty"`
	Path         string        `json:"path,omitempty"`
	Runs         []Measurement `json:"runs,omitempty"`
	// Median holds the median of every figure over Runs; Requests are left out.
	Median           Measurement `json:"median"`
	MinSeconds       float64     `json:"min_seconds"`
	MaxSeconds       float64     `json:"max_seconds"`
	MinHeapPerObject float64     `json:"min_heap_per_object"`
	MaxHeapPerObject float64     `json:"max_heap_per_object"`
	MinCPUSeconds    float64     `json:"min_cpu_seconds"`
	MaxCPUSeconds    float64     `json:"max_cpu_seconds"`
	// Ratios of the medians against client-go's dynamic informer and the JSON LIST floor in
	// the same run; 0 when either side is missing.
	TimeVsDynamic  float64 `json:"time_vs_dynamic,omitempty"`
	HeapVsDynamic  float64 `json:"heap_vs_dynamic,omitempty"`
	CPUVsDynamic   float64 `json:"cpu_vs_dynamic,omitempty"`
	TimeVsJSONList float64 `json:"time_vs_json_list,omitempty"`
}

// Markdown renders the report: the setup, the seeded objects and one table per resource
// with ratios against client-go's dynamic informer and the JSON LIST floor of the same run.
// Sizes are decimal: 1 KB = 1000 bytes.
func (r *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("### N=%d pods, %d Databases, %d runs per subject\n\n", r.N, r.M, r.Runs)
	p("- command: `%s`\n", r.Command)
	p("- %s %s/%s, %s, %d CPUs, load average %s at the start of the measurements, %s at the end; %s on the same machine\n",
		r.Machine.GoVersion, r.Machine.GOOS, r.Machine.GOARCH, r.Machine.CPUModel, r.Machine.NumCPU, r.Machine.LoadAvg, r.Machine.LoadAvgEnd, r.KubeAPIServer)
	p("- started %s, took %.0f s (seeding %.0f s: %d pods and %d Databases written, the rest already there)\n",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.TotalSeconds, r.Seed.Seconds, r.Seed.CreatedPods, r.Seed.CreatedDatabases)
	sizeLine := func(what string, s SizeStats) {
		if s.Sampled == 0 {
			return
		}
		p("- %s as stored (GET, compact JSON, %d sampled): %s on average, managedFields %s (%.0f%%), status %s; managers: %s\n",
			what, s.Sampled, kb(s.AvgJSONBytes), kb(s.AvgManagedFieldsBytes), 100*s.ManagedFieldsShare, kb(s.AvgStatusBytes), strings.Join(s.Managers, ", "))
	}
	sizeLine("pods", r.Seed.PodSizes)
	sizeLine("Databases", r.Seed.DatabaseSizes)
	for _, d := range r.Datasets {
		p("\n**%s** (%d objects). Medians (min-max) of sync time, heap held per object and client CPU time during the sync; "+
			"server CPU s = CPU time of kube-apiserver and etcd while the child ran; "+
			"x dyn = ratio to `%s`, x LIST = ratio to `%s`.\n\n", d.Resource, d.Count, SubjectDynamic, SubjectListJSON)
		p("| subject | path | sync s | x dyn | x LIST | heap/object | x dyn | CPU s | x dyn | server CPU s | allocated | peak RSS | body |\n")
		p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range d.Subjects {
			switch {
			case s.NotSupported:
				p("| %s | n/a | | | | | | | | | | | |\n", s.Name)
				continue
			case len(s.Runs) == 0:
				p("| %s | FAILED: %s | | | | | | | | | | | |\n", s.Name, oneLine(s.Error))
				continue
			}
			m := s.Median
			p("| %s | %s | %.2f (%.2f-%.2f) | %s | %s | %s (%s-%s) | %s | %.2f (%.2f-%.2f) | %s | %s | %s | %s | %s |\n",
				s.Name, s.Path, m.Seconds, s.MinSeconds, s.MaxSeconds, x(s.TimeVsDynamic), x(s.TimeVsJSONList),
				kb(m.HeapPerObject), kb(s.MinHeapPerObject), kb(s.MaxHeapPerObject), x(s.HeapVsDynamic),
				m.CPUSeconds, s.MinCPUSeconds, s.MaxCPUSeconds, x(s.CPUVsDynamic), serverCPU(m.ServerCPUSeconds),
				mb(float64(m.AllocBytes)), mb(float64(m.PeakRSSBytes)), mb(float64(m.BodyBytes)))
		}
		warmTable(p, d)
	}
	return b.String()
}

// WarmBaseline names the subject a restart's time is compared with: the cold sync of the
// same storage mode (registered by bench/cmd/compare).
const WarmBaseline = "kindex-compact"

// warmTable renders the restart subjects of d, if any.
func warmTable(p func(string, ...any), d Dataset) {
	var cold float64
	for _, s := range d.Subjects {
		if s.Name == WarmBaseline && len(s.Runs) > 0 {
			cold = s.Median.Seconds
		}
	}
	header := false
	for _, s := range d.Subjects {
		m := s.Median
		if len(s.Runs) == 0 || m.Warm == nil {
			continue
		}
		if !header {
			header = true
			p("\n**%s, restarts from a snapshot.** Medians. queryable/synced s = from the start of the restart until reads answer / until synced; "+
				"x cold = synced time / `%s`'s sync time; LISTs = LIST requests on the wire; events = handler events after the snapshot's adds, "+
				"changes = objects changed while down; mapped = file-backed memory the restart holds (the snapshot file it mapped: page cache, outside the heap); "+
				"peak/held = (peak RSS - RSS before the restart) / (heap held + mapped) after it.\n\n", d.Resource, WarmBaseline)
			p("| subject | queryable s | synced s | x cold | LISTs | events / changes | heap held | mapped | RSS before | peak RSS | peak/held |\n")
			p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		}
		ev := "no handler"
		if m.Warm.Changes > 0 || m.Warm.Events > 0 {
			ev = fmt.Sprintf("%d / %d", m.Warm.Events, m.Warm.Changes)
		}
		p("| %s | %.3f | %.3f (%.3f-%.3f) | %s | %d | %s | %s | %s | %s | %s | %s |\n", s.Name, m.Warm.QueryableSeconds, m.Seconds, s.MinSeconds, s.MaxSeconds,
			x(ratio(m.Seconds, cold)), m.ListRequests, ev, mb(float64(m.HeapBytes)), mb(float64(m.MappedBytes)), mb(float64(m.RSSBeforeBytes)), mb(float64(m.PeakRSSBytes)),
			x(ratio(float64(m.PeakRSSBytes-m.RSSBeforeBytes), float64(m.HeapBytes+m.MappedBytes))))
	}
}

func serverCPU(v float64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", v)
}

func kb(v float64) string { return fmt.Sprintf("%.1f KB", v/1e3) }

func mb(v float64) string { return fmt.Sprintf("%.0f MB", v/1e6) }

func x(v float64) string {
	if v == 0 {
		return ""
	}
	if v < 0.1 {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return strings.ReplaceAll(s, "|", "\\|")
}
