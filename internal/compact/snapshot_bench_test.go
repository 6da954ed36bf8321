package compact

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/jsonpath"
)

// BenchmarkSnapshotLoad reads a snapshot of 20,000 realistic Pods as the informer does on a
// warm restart (open, read every record, rebuild every object). With -cpuprofile it shows
// where the load's time goes.
func BenchmarkSnapshotLoad(b *testing.B) {
	const n = 20000
	d, err := NewDecoder(Options{})
	if err != nil {
		b.Fatal(err)
	}
	m := &Mode{dec: d}
	objs := make([]*Object, n)
	for i := range n {
		if objs[i], err = d.DecodeObject(podJSON(b, i)); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "pods.snap")
	var buf []byte
	meta := snapshot.Meta{Identity: "bench", ResourceVersion: "1", Time: time.Now()}
	if err := snapshot.Write(path, meta, n, func(i int) []byte {
		buf, _ = m.AppendSnapshot(buf[:0], objs[i])
		return buf
	}, snapshot.Options{}); err != nil {
		b.Fatal(err)
	}
	objs = nil
	for _, mapped := range []bool{false, true} {
		name := "read"
		if mapped {
			name = "mapped"
		}
		b.Run(name, func(b *testing.B) { benchmarkLoad(b, m, path, n, mapped, nil) })
	}
}

// benchmarkLoad loads the snapshot at path: read and copied into each object's allocation,
// or mapped (Linux; read elsewhere), each object a view of the mapping, which is unmapped
// after each iteration (the informer keeps it). each, if set, is called with every object
// as it is loaded.
func benchmarkLoad(b *testing.B, m *Mode, path string, n int, mapped bool, each func(*Object)) {
	cpu := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op") }()
	for range b.N {
		r, err := snapshot.Open(path, "bench", snapshot.Options{Map: mapped})
		if err != nil {
			b.Fatal(err)
		}
		decode := m.SnapshotDecode
		if r.Mapped() > 0 {
			decode = m.SnapshotView
		}
		items := make([]any, 0, n)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			o, err := decode(rec)
			if err != nil {
				b.Fatal(err)
			}
			if each != nil {
				each(o.(*Object))
			}
			items = append(items, o)
		}
		_ = r.Close()
		if len(items) != n {
			b.Fatalf("%d items", len(items))
		}
	}
}

// cpuTime is this process's user plus system CPU time in nanoseconds: on a shared machine
// steadier than the wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkFirstTouch allocates what a snapshot load of 20,000 Pods allocates (20,000 byte
// slices of 5,100 bytes, about 100 MB) from memory the process has never used: run alone,
// one sub-benchmark per process, with -benchtime 1x, it measures what the machine charges
// for giving a process fresh memory (page faults), which a restart pays once for the whole
// cache and BenchmarkSnapshotLoad, whose iterations reuse the heap, does not show. With
// goroutines=2 the same allocations are made by two goroutines (two cores faulting at once).
func BenchmarkFirstTouch(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			for b.Loop() {
				b.ReportMetric(firstTouch(g), "MB/op")
			}
		})
	}
}

// firstTouch allocates 20,000 slices of 5,100 bytes from goroutines goroutines and
// returns the megabytes allocated.
func firstTouch(goroutines int) float64 {
	body := make([]byte, 5100)
	kept := make([][][]byte, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range 20000 / goroutines {
				kept[g] = append(kept[g], append([]byte(nil), body...))
			}
		})
	}
	wg.Wait()
	return float64(20000*len(body)) / 1e6
}

// BenchmarkSnapshotLoadIndexed loads 20,000 realistic Pods from a snapshot and evaluates five
// index paths on each, as an informer with JSONPath indexes does on a warm restart before it
// is queryable, the file mapped: "spans" with Options.Spans, which such informers turn on
// (each object gets the spans its record holds, beside the mapping), "no-spans" without
// (the paths scan each object's JSON).
func BenchmarkSnapshotLoadIndexed(b *testing.B) {
	const n = 20000
	paths := []*jsonpath.Path{jsonpath.MustCompile("{.spec.nodeName}"), jsonpath.MustCompile("{.status.phase}"),
		jsonpath.MustCompile("{.spec.containers[*].image}"), jsonpath.MustCompile("{.metadata.labels.app}"),
		jsonpath.MustCompile("{.spec.serviceAccountName}")}
	for _, spans := range []bool{true, false} {
		d, err := NewDecoder(Options{Spans: spans})
		if err != nil {
			b.Fatal(err)
		}
		m := &Mode{dec: d}
		path := filepath.Join(b.TempDir(), "pods.snap")
		var buf []byte
		meta := snapshot.Meta{Identity: "bench", ResourceVersion: "1", Time: time.Now()}
		if err := snapshot.Write(path, meta, n, func(i int) []byte {
			o, err := d.DecodeObject(podJSON(b, i))
			if err != nil {
				b.Fatal(err)
			}
			buf, _ = m.AppendSnapshot(buf[:0], o)
			return buf
		}, snapshot.Options{}); err != nil {
			b.Fatal(err)
		}
		name := map[bool]string{true: "spans", false: "no-spans"}[spans]
		b.Run(name, func(b *testing.B) {
			values := 0
			benchmarkLoad(b, m, path, n, m.SnapshotViews(), func(o *Object) {
				src := o.JSONSource()
				for _, p := range paths {
					if err := p.Each(src, func(jsonpath.Value) bool { values++; return true }); err != nil {
						b.Fatal(err)
					}
				}
			})
			if values < 5*n*b.N {
				b.Fatalf("%d values", values)
			}
		})
	}
}
