package compact

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/kindex/kindex/indexfuncs"
)

// BenchmarkCompression measures compression on realistic pods (managedFields cut, 4.3 KB
// of JSON), with the default dictionary (the first 8 pods, 32 KiB):
//
//	go test -run '^$' -bench Compression -benchtime 20000x ./internal/compact/
//
// "compress" is what the transform adds per object at sync (heapB/obj: the object kept,
// header and bytes with key text, rounded to size classes; zB/obj the compressed JSON);
// "RawJSON" a read that decompresses; "RawJSON-last" a read of the object the dictionary
// decompressed last; the other reads compare a compressed object with a plain one.
func BenchmarkCompression(b *testing.B) {
	const n = 2000
	d := &Decoder{}
	plain := make([]*Object, n)
	for i := range plain {
		plain[i] = mustDecode(b, d, podJSON(b, i))
	}
	c := &compressor{}
	for _, o := range plain[:defaultDictLimits.samples] {
		if c.compress(o); c.dict.Load() != nil {
			break
		}
	}
	if c.dict.Load() == nil {
		b.Fatal("no dictionary")
	}
	z := make([]*Object, n)
	for i, o := range plain {
		z[i] = c.compress(o)
	}
	b.Run("compress", func(b *testing.B) {
		b.ReportAllocs()
		var zb, heap, objs float64
		keep := make([]*Object, 0, n)
		base := heapAfterGC()
		i := 0
		for b.Loop() {
			o := c.compress(plain[i%n])
			zb += float64(len(o.raw))
			keep = append(keep, o)
			if i++; len(keep) == n {
				b.StopTimer()
				heap += float64(heapAfterGC()) - float64(base)
				objs += n
				clear(keep)
				keep = keep[:0]
				base = heapAfterGC()
				b.StartTimer()
			}
		}
		runtime.KeepAlive(keep)
		b.ReportMetric(zb/float64(i), "zB/obj")
		if objs > 0 {
			b.ReportMetric(heap/objs, "heapB/obj")
		}
	})
	read := func(name string, objs []*Object, cold bool, fn func(o *Object)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				o := objs[i%len(objs)]
				if cold {
					forget(o)
				}
				fn(o)
				i++
			}
		})
	}
	rawJSON := func(o *Object) {
		if o.RawJSON() == nil {
			b.Fatal("no JSON")
		}
	}
	read("RawJSON", z, true, rawJSON)
	read("RawJSON-last", z[:1], false, rawJSON)
	read("plain/GetName", plain, false, func(o *Object) { _ = o.GetName() })
	read("compressed/GetName", z, true, func(o *Object) { _ = o.GetName() })
	read("plain/GetLabels", plain, false, func(o *Object) { _ = o.GetLabels() })
	read("compressed/GetLabels", z, true, func(o *Object) { _ = o.GetLabels() })
	read("plain/Unstructured", plain, false, func(o *Object) { _, _ = o.Unstructured() })
	read("compressed/Unstructured", z, true, func(o *Object) { _, _ = o.Unstructured() })
	fn, err := indexfuncs.JSONPath("{.spec.containers[*].image}")
	if err != nil {
		b.Fatal(err)
	}
	read("plain/index", plain, false, func(o *Object) { _, _ = fn(o) })
	read("compressed/index", z, true, func(o *Object) { _, _ = fn(o) })
}

// TestDictionaryMemory reports what a dictionary costs: four informers in turn each make
// one of 40 pods; the heap each adds beyond its compressed objects is its dictionary, its
// decoder's state and its last decompression, plus, for the first ones, the process's
// pooled encoder (made, then switched to a second dictionary, which sets up its stream
// state once). KINDEX_DICT_MEMORY=1 runs it.
func TestDictionaryMemory(t *testing.T) {
	if os.Getenv("KINDEX_DICT_MEMORY") == "" {
		t.Skip("KINDEX_DICT_MEMORY=1 runs it")
	}
	d := &Decoder{}
	pods := make([]*Object, 40)
	for i := range pods {
		pods[i] = mustDecode(t, d, podJSON(t, i))
	}
	var keep []any
	for k := range 4 {
		base := heapAfterGC()
		c := &compressor{}
		var z []*Object
		objects := 0
		for _, p := range pods {
			o := c.compress(p)
			z = append(z, o)
			if o.Compressed() {
				objects += cap(o.raw) + int(unsafe.Sizeof(Object{}))
			}
		}
		for _, o := range z {
			forget(o)
			_ = o.RawJSON()
		}
		used := heapAfterGC()
		encoders.mu.Lock()
		pooled := len(encoders.free)
		encoders.mu.Unlock()
		t.Logf("informer %d: dictionary of %d bytes, %d bytes of heap beyond its compressed objects; %d pooled encoder(s)",
			k+1, len(c.dict.Load().content), int64(used)-int64(base)-int64(objects), pooled)
		keep = append(keep, c, z)
	}
	runtime.KeepAlive(keep)
}
