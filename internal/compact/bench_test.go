package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// Benchmarks of the measurement, without a server: 20,000 realistic pods (about
// 7.6 KB of JSON each, 44% managedFields from two managers) decoded by the compact
// serializer and by the dynamic client's own serializer (what client-go's dynamic informer
// runs), through the same rest client code paths:
//
//	go test -run '^$' -bench . -benchtime 1x ./internal/compact/
//
// Each reports ns/op, MB/s of JSON and heapB/obj: the heap the decoded objects keep after
// a GC, divided by the number of objects (the objects only: the informer's store adds the
// same per-object overhead in every mode).

const benchPods = 20000

var (
	benchOnce   sync.Once
	benchList   []byte // a PodList body as the API server writes it
	benchStream []byte // the watch-list stream of the same pods: ADDED events and the bookmark
)

func benchData(b *testing.B) {
	benchOnce.Do(func() {
		benchList = podListBody(b, benchPods)
		var s bytes.Buffer
		for i := range benchPods {
			s.WriteString(`{"type":"ADDED","object":`)
			data, err := json.Marshal(realisticPod(fmt.Sprintf("team-%d", i%20), i))
			if err != nil {
				b.Fatal(err)
			}
			s.Write(data)
			s.WriteString("}\n")
		}
		s.WriteString(frameBookmark + "\n")
		benchStream = s.Bytes()
	})
}

// clientGoSerializer is the dynamic client's JSON serializer info.
func clientGoSerializer() kruntime.SerializerInfo {
	return dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer.SupportedMediaTypes()[0]
}

func compactSerializer(d *Decoder) kruntime.SerializerInfo {
	return newNegotiatedSerializer(d).SupportedMediaTypes()[0]
}

// benchHeap runs decode once per iteration and reports the heap its result keeps.
func benchHeap(b *testing.B, size int, decode func() (keep any, n int)) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var heap, objs float64
	for b.Loop() {
		b.StopTimer()
		base := heapAfterGC()
		b.StartTimer()
		keep, n := decode()
		b.StopTimer()
		heap += float64(heapAfterGC()) - float64(base)
		objs += float64(n)
		runtime.KeepAlive(keep)
		b.StartTimer()
	}
	b.ReportMetric(heap/objs, "heapB/obj")
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkList decodes the 20,000-pod LIST body as Result.Into does.
func BenchmarkList(b *testing.B) {
	benchData(b)
	b.Run("compact", func(b *testing.B) {
		dec := compactSerializer(&Decoder{}).Serializer
		benchHeap(b, len(benchList), func() (any, int) {
			var l List
			if _, _, err := dec.Decode(benchList, nil, &l); err != nil || len(l.Items) != benchPods {
				b.Fatal(err, len(l.Items))
			}
			return &l, len(l.Items)
		})
	})
	b.Run("compact-keep-managedFields", func(b *testing.B) {
		dec := compactSerializer(&Decoder{keep: true}).Serializer
		benchHeap(b, len(benchList), func() (any, int) {
			var l List
			if _, _, err := dec.Decode(benchList, nil, &l); err != nil || len(l.Items) != benchPods {
				b.Fatal(err, len(l.Items))
			}
			return &l, len(l.Items)
		})
	})
	b.Run("client-go", func(b *testing.B) {
		dec := clientGoSerializer().Serializer
		benchHeap(b, len(benchList), func() (any, int) {
			var l unstructured.UnstructuredList
			if _, _, err := dec.Decode(benchList, nil, &l); err != nil || len(l.Items) != benchPods {
				b.Fatal(err, len(l.Items))
			}
			return &l, len(l.Items)
		})
	})
	b.Run("client-go-strip-managedFields", func(b *testing.B) {
		dec := clientGoSerializer().Serializer
		benchHeap(b, len(benchList), func() (any, int) {
			var l unstructured.UnstructuredList
			if _, _, err := dec.Decode(benchList, nil, &l); err != nil || len(l.Items) != benchPods {
				b.Fatal(err, len(l.Items))
			}
			for i := range l.Items {
				unstructured.RemoveNestedField(l.Items[i].Object, "metadata", "managedFields")
			}
			return &l, len(l.Items)
		})
	})
}

// BenchmarkWatchStream decodes the watch-list stream of the same pods through the rest
// client's watch pipeline (framer, streaming decoder, rest/watch decoder, StreamWatcher).
func BenchmarkWatchStream(b *testing.B) {
	benchData(b)
	run := func(b *testing.B, info kruntime.SerializerInfo) {
		benchHeap(b, len(benchStream), func() (any, int) {
			fr := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(benchStream)))
			dec := restclientwatch.NewDecoder(streaming.NewDecoder(fr, info.StreamSerializer.Serializer), info.Serializer)
			w := watch.NewStreamWatcher(dec, nil)
			objs := make([]kruntime.Object, 0, benchPods)
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added {
					objs = append(objs, ev.Object)
				}
			}
			if len(objs) != benchPods {
				b.Fatal(len(objs))
			}
			return objs, len(objs)
		})
	}
	b.Run("compact", func(b *testing.B) { run(b, compactSerializer(&Decoder{})) })
	b.Run("client-go", func(b *testing.B) { run(b, clientGoSerializer()) })
}

// BenchmarkObjectReads measures what reading a cached object costs.
func BenchmarkObjectReads(b *testing.B) {
	o := mustDecode(b, &Decoder{}, podJSON(b, 3))
	b.Run("GetName", func(b *testing.B) {
		for b.Loop() {
			_ = o.GetName()
		}
	})
	b.Run("GetLabels", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = o.GetLabels()
		}
	})
	b.Run("Unstructured", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(o.RawJSON())))
		for b.Loop() {
			if _, err := o.Unstructured(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScanners measures the passes over one pod's JSON.
func BenchmarkScanners(b *testing.B) {
	data := podJSON(b, 4)
	b.Run("validate", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := skipValue(data, 0, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("frame", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f := frameReader{in: true, depth: 0}
			if n, done := f.scan(data); !done || n != len(data) {
				b.Fatal("frame", n, done)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		d := &Decoder{}
		for b.Loop() {
			if _, err := d.DecodeObject(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
