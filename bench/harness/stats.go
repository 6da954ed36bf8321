package harness

import (
	"slices"
	"strconv"
	"strings"
)

// median returns the median of xs (the mean of the middle two for an even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// summarize fills the median, the ranges and the access path of r from its runs.
func (r *SubjectResult) summarize(resource string) {
	if len(r.Runs) == 0 {
		return
	}
	col := func(f func(Measurement) float64) []float64 {
		out := make([]float64, len(r.Runs))
		for i, m := range r.Runs {
			out[i] = f(m)
		}
		return out
	}
	first := r.Runs[0]
	secs := col(func(m Measurement) float64 { return m.Seconds })
	perObj := col(func(m Measurement) float64 { return m.HeapPerObject })
	cpu := col(func(m Measurement) float64 { return m.CPUSeconds })
	r.Median = Measurement{
		Count:            first.Count,
		Seconds:          median(secs),
		HeapBytes:        int64(median(col(func(m Measurement) float64 { return float64(m.HeapBytes) }))),
		HeapPerObject:    median(perObj),
		AllocBytes:       uint64(median(col(func(m Measurement) float64 { return float64(m.AllocBytes) }))),
		CPUSeconds:       median(cpu),
		ServerCPUSeconds: median(col(func(m Measurement) float64 { return m.ServerCPUSeconds })),
		PeakRSSBytes:     int64(median(col(func(m Measurement) float64 { return float64(m.PeakRSSBytes) }))),
		BodyBytes:        int64(median(col(func(m Measurement) float64 { return float64(m.BodyBytes) }))),
		Gzip:             slices.ContainsFunc(r.Runs, func(m Measurement) bool { return m.Gzip }),
		RSSBeforeBytes:   int64(median(col(func(m Measurement) float64 { return float64(m.RSSBeforeBytes) }))),
		MappedBytes:      int64(median(col(func(m Measurement) float64 { return float64(m.MappedBytes) }))),
	}
	r.Median.ListRequests = int(slices.Max(col(func(m Measurement) float64 { return float64(m.ListRequests) })))
	if first.Warm != nil {
		w := func(f func(*WarmFigures) float64) float64 {
			return median(col(func(m Measurement) float64 {
				if m.Warm == nil {
					return 0
				}
				return f(m.Warm)
			}))
		}
		r.Median.Warm = &WarmFigures{
			QueryableSeconds: w(func(x *WarmFigures) float64 { return x.QueryableSeconds }),
			Events:           int(slices.Max(col(func(m Measurement) float64 { return float64(m.Warm.Events) }))),
			Changes:          first.Warm.Changes,
		}
	}
	r.MinSeconds, r.MaxSeconds = slices.Min(secs), slices.Max(secs)
	r.MinHeapPerObject, r.MaxHeapPerObject = slices.Min(perObj), slices.Max(perObj)
	r.MinCPUSeconds, r.MaxCPUSeconds = slices.Min(cpu), slices.Max(cpu)
	r.Path = accessPath(first, resource)
}

// accessPath describes how a subject got its objects, from the requests of one run:
// "watch-list" (one WATCH with sendInitialEvents), "list+watch" or "list", with the content
// type of the first response. Only requests for resource count: discovery and the watches a
// front end keeps on CRDs and APIServices are not part of the path.
func accessPath(m Measurement, resource string) string {
	var lists, watches int
	watchList := false
	contentType := ""
	for _, r := range m.Requests {
		if !requestFor(r, resource) {
			continue
		}
		if strings.Contains(r, "sendInitialEvents=true") {
			watchList = true
		}
		if strings.Contains(r, "watch=true") {
			watches++
		} else if strings.HasPrefix(r, "GET ") {
			lists++
		}
		if contentType == "" {
			if i := strings.LastIndex(r, " ("); i >= 0 && strings.HasSuffix(r, ")") {
				contentType = strings.TrimPrefix(r[i+2:len(r)-1], "application/")
			}
		}
	}
	var path string
	switch {
	case watchList:
		path = "watch-list"
	case lists > 0 && watches > 0:
		path = "list+watch"
	case lists > 0:
		path = "list"
	default:
		path = "?"
	}
	if lists > 1 {
		path += ", " + strconv.Itoa(lists) + " lists"
	}
	if contentType != "" {
		path += ", " + contentType
	}
	if m.Gzip {
		path += ", gzip"
	}
	return path
}

// requestFor reports whether a request line ("GET /api/v1/namespaces/x/pods?... -> ...")
// is for resource (a plural resource name).
func requestFor(line, resource string) bool {
	_, p, _ := strings.Cut(line, " ")
	p, _, _ = strings.Cut(p, " ")
	p, _, _ = strings.Cut(p, "?")
	return strings.HasSuffix(p, "/"+resource)
}
