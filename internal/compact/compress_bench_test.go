package compact

import (
	"os"
	"runtime"
	"testing"

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
				o := objs[i%n]
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

// TestDictionaryMemory reports what a dictionary costs its informer: the dictionary, and
// the encoder's and decoder's state once used (a fixed cost per informer with enough
// objects to make a dictionary). KINDEX_DICT_MEMORY=1 runs it.
func TestDictionaryMemory(t *testing.T) {
	if os.Getenv("KINDEX_DICT_MEMORY") == "" {
		t.Skip("KINDEX_DICT_MEMORY=1 runs it")
	}
	d := &Decoder{}
	pods := make([]*Object, 40)
	for i := range pods {
		pods[i] = mustDecode(t, d, podJSON(t, i))
	}
	base := heapAfterGC()
	c := &compressor{}
	var z []*Object
	for _, p := range pods {
		z = append(z, c.compress(p))
	}
	for _, o := range z {
		forget(o)
		_ = o.RawJSON()
	}
	used := heapAfterGC()
	var zb int
	for _, o := range z {
		if o.Compressed() {
			zb += cap(o.raw)
		}
	}
	t.Logf("dictionary of %d bytes: %d bytes of heap with its encoder and decoder used (40 pods, %d of them in compressed bytes)",
		len(c.dict.Load().content), int64(used)-int64(base)-int64(zb), zb)
	runtime.KeepAlive(z)
	runtime.KeepAlive(c)
}
