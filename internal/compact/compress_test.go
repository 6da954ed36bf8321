package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/indexfuncs"
)

// compressedPods decodes n realistic pods with d and passes them through a compressing
// transform of a Mode with limits; it returns the plain and the transformed objects.
func compressedPods(t testing.TB, d *Decoder, limits dictLimits, n int) (plain, out []*Object) {
	t.Helper()
	tr := (&Mode{dec: d, compress: true, dict: limits}).Transform(nil)
	for i := range n {
		o := mustDecode(t, d, podJSON(t, i))
		got, err := tr(o)
		require.NoError(t, err)
		plain = append(plain, o)
		out = append(out, got.(*Object))
	}
	return plain, out
}

// oneSample makes the dictionary of the first object.
var oneSample = dictLimits{bytes: 1 << 15, samples: 1}

// forget empties the dictionary's cache of its last decompression, so that the next read
// decompresses.
func forget(o *Object) {
	if o.z != nil {
		o.z.forget()
	}
}

// assertSameObject: every read of got gives what the same read of want gives.
func assertSameObject(t *testing.T, want, got *Object, msg string) {
	t.Helper()
	forget(got)
	require.Equal(t, want.RawJSON(), got.RawJSON(), msg)
	forget(got)
	assert.Equal(t, metaOf(want), metaOf(got), msg)
	assert.Equal(t, want.StoreKey(), got.StoreKey(), msg)
	assert.Equal(t, want.GroupVersionKind(), got.GroupVersionKind(), msg)
	assert.Equal(t, want.HasManagedFields(), got.HasManagedFields(), msg)
	forget(got)
	wu, werr := want.Unstructured()
	gu, gerr := got.Unstructured()
	require.NoError(t, werr, msg)
	require.NoError(t, gerr, msg)
	assert.Equal(t, wu, gu, msg)
	forget(got)
	wj, _ := want.MarshalJSON()
	gj, err := got.MarshalJSON()
	require.NoError(t, err, msg)
	assert.Equal(t, wj, gj, msg)
}

// TestCompressRoundTrip: realistic pods, managedFields cut or kept, compress to a fraction
// of their size past the dictionary's samples, and every read of a compressed pod (RawJSON
// byte for byte, every getter, Unstructured, MarshalJSON) equals the uncompressed pod's.
func TestCompressRoundTrip(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprint("keepManagedFields=", keep), func(t *testing.T) {
			d := &Decoder{keep: keep}
			plain, out := compressedPods(t, d, dictLimits{}, 60)
			var plainBytes, packedBytes int
			for i := range out {
				assertSameObject(t, plain[i], out[i], fmt.Sprint("pod ", i))
				if out[i].Compressed() {
					plainBytes += len(plain[i].raw)
					packedBytes += len(out[i].raw)
				}
			}
			compressed := 0
			for _, o := range out {
				if o.Compressed() {
					compressed++
				}
			}
			assert.Greater(t, compressed, 45, "past the samples, every pod is compressed")
			assert.Less(t, float64(packedBytes)/float64(plainBytes), 0.2, "compressed to a fraction")
		})
	}
}

// TestCompressAdversarialInputs: objects unlike the dictionary (random bytes in strings,
// escapes, non-ASCII, deep nesting, empty and huge values, duplicate keys) round-trip
// exactly, whether or not they get smaller; what does not get smaller stays uncompressed.
func TestCompressAdversarialInputs(t *testing.T) {
	d := &Decoder{}
	c := &compressor{limits: oneSample}
	// The dictionary: one pod.
	c.compress(mustDecode(t, d, podJSON(t, 0)))
	require.NotNil(t, c.dict.Load())
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		s, _ := json.Marshal(string(b))
		return string(s)
	}
	inputs := append([]string{}, fuzzSeeds...)
	inputs = append(inputs,
		`{"metadata":{"name":"r","namespace":"n"},"data":`+random(5000)+`}`,
		`{"metadata":{"name":"big","namespace":"n"},"data":`+random(300000)+`}`,
		`{"metadata":{"name":"caf\u00e9","namespace":"\u00fc"},"a":"\ud83d\ude00\\n\"\u0000"}`,
		`{"metadata":{"name":"deep"},"a":`+strings.Repeat("[", 9000)+strings.Repeat("]", 9000)+`}`,
		`{"metadata":{"name":"dup","name":"dup2","labels":{"a":"1","a":"2"}},"metadata":{"name":"last"}}`,
		`{"metadata":{"name":"same"},"x":"`+strings.Repeat("a", 200000)+`"}`,
		` {"metadata":{}} `,
	)
	inputs = append(inputs, string(podJSON(t, 1)), strings.Replace(string(podJSON(t, 2)), `"Running"`, `"Pending"`, 1))
	for _, in := range inputs {
		o, err := d.DecodeObject([]byte(in))
		if err != nil {
			continue // not an object: the decoder refuses it
		}
		z := c.compress(o)
		if z.Compressed() {
			assert.Less(t, len(z.raw), len(o.raw), "%.60s", in)
		} else {
			assert.True(t, o == z, "%.60s: kept as it is", in)
		}
		assertSameObject(t, o, z, fmt.Sprintf("%.60s", in))
	}
}

// TestDictionaryLifecycle: the first objects are samples, kept uncompressed; the dictionary
// is built once, from them, and never changes; each compressed object points to the
// dictionary it was compressed with, and still decompresses with it once its compressor is
// gone; another informer's compressor has a dictionary of its own; compressing a compressed
// object (the transform applied twice) returns it.
func TestDictionaryLifecycle(t *testing.T) {
	d := &Decoder{}
	pods := make([]*Object, 40)
	for i := range pods {
		pods[i] = mustDecode(t, d, podJSON(t, i))
	}
	limits := dictLimits{bytes: 1 << 20, samples: 3}
	c := &compressor{limits: limits}
	var out []*Object
	for i, p := range pods[:2] {
		o := c.compress(p)
		assert.True(t, p == o, "sample %d stays as it is", i)
		assert.Nil(t, c.dict.Load(), "no dictionary before enough samples")
	}
	third := c.compress(pods[2])
	assert.True(t, third.Compressed(), "the last sample is compressed with the dictionary it completes")
	dict := c.dict.Load()
	require.NotNil(t, dict, "built from the samples")
	cut := &compressor{limits: dictLimits{bytes: 1000, samples: 100}}
	assert.True(t, cut.compress(pods[0]).Compressed())
	require.NotNil(t, cut.dict.Load(), "one object of more than the limit is enough")
	assert.Equal(t, string(pods[0].raw[:1000]), string(cut.dict.Load().content), "cut to the limit")
	assert.Equal(t, string(pods[0].raw), string(dict.content[:len(pods[0].raw)]), "made of the first samples")
	content := bytes.Clone(dict.content)
	for _, p := range pods[3:] {
		o := c.compress(p)
		require.True(t, o.Compressed())
		assert.True(t, dict == o.z, "one dictionary")
		assert.True(t, o == c.compress(o), "compressing a compressed object returns it")
		out = append(out, o)
	}
	assert.Equal(t, content, dict.content, "the dictionary never changes")
	assert.Nil(t, c.samples, "samples are released")

	other := &compressor{limits: limits}
	for _, p := range pods[3:10] {
		other.compress(p)
	}
	require.NotNil(t, other.dict.Load())
	assert.True(t, dict != other.dict.Load(), "a dictionary per compressor")

	c = nil // the compressor is gone; its objects keep their dictionary
	for i, o := range out {
		assertSameObject(t, pods[3+i], o, fmt.Sprint("pod ", 3+i))
	}

	// The same through a Mode's transform, applied twice as client-go does for watch-list.
	tr := (&Mode{dec: d, compress: true, dict: oneSample}).Transform(nil)
	once, err := tr(pods[1])
	require.NoError(t, err)
	twice, err := tr(once)
	require.NoError(t, err)
	assert.True(t, once.(*Object).Compressed())
	assert.True(t, once == twice)
	tomb := cache.DeletedFinalStateUnknown{Key: "a/b", Obj: once}
	passed, err := tr(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, passed, "tombstones pass through")
}

// TestFreeGettersDoNotDecompress: namespace, name, resourceVersion, uid and StoreKey of a
// compressed object read the key text: no allocation, no decompression.
func TestFreeGettersDoNotDecompress(t *testing.T) {
	_, out := compressedPods(t, &Decoder{}, oneSample, 3)
	o := out[2]
	require.True(t, o.Compressed())
	require.Nil(t, o.SharedJSON(), "a compressed object's JSON is decompressed into reused buffers: not shared")
	forget(o)
	free := func() {
		_ = o.GetNamespace()
		_ = o.GetName()
		_ = o.GetResourceVersion()
		_ = o.GetUID()
		_ = o.StoreKey()
	}
	before := o.z.inflations.Load()
	free()
	key, err := cache.MetaNamespaceKeyFunc(o) // client-go's key function: the getters
	require.NoError(t, err)
	assert.Equal(t, key, o.StoreKey())
	assert.Equal(t, before, o.z.inflations.Load(), "the key getters decompressed the object")
	assert.Equal(t, "default", o.GetNamespace())
	assert.Equal(t, "default/"+o.GetName(), o.StoreKey())
	if !raceEnabled {
		assert.Equal(t, 0.0, testing.AllocsPerRun(100, free))
	}
	// Other reads decompress, once for a run of reads of the same object.
	_ = o.GetLabels()
	require.Equal(t, before+1, o.z.inflations.Load())
	if !raceEnabled {
		assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() { _ = o.RawJSON() }), "the last decompression is reused")
	}
}

// TestCorruptCompressedObject: a compressed object whose bytes changed (each byte flipped,
// truncated, emptied) never panics: JSON returns an error wrapping ErrCorrupt (or, should a
// change not matter, the right JSON), RawJSON nil, the getters zero values, Unstructured
// and MarshalJSON the error, and a snapshot skips it.
func TestCorruptCompressedObject(t *testing.T) {
	plain, out := compressedPods(t, &Decoder{}, oneSample, 2)
	good, want := out[1], plain[1].RawJSON()
	require.True(t, good.Compressed())
	m := &Mode{dec: &Decoder{}}
	// with returns good with raw as its compressed bytes, the key text after them.
	with := func(raw []byte) *Object {
		o := *good
		o.raw = append(raw[:len(raw):len(raw)], good.keyText()...)[:len(raw)]
		forget(&o)
		return &o
	}
	check := func(raw []byte, what string) {
		o := *with(raw)
		b, err := o.JSON()
		if err == nil {
			assert.Equal(t, want, b, what)
			return
		}
		assert.ErrorIs(t, err, ErrCorrupt, what)
		assert.Nil(t, o.RawJSON(), what)
		assert.Nil(t, o.GetLabels(), what)
		assert.Empty(t, o.GetGenerateName(), what)
		assert.Empty(t, o.GroupVersionKind().Kind, what)
		_ = metaOf(&o)
		_, err = o.Unstructured()
		assert.ErrorIs(t, err, ErrCorrupt, what)
		_, err = o.MarshalJSON()
		assert.ErrorIs(t, err, ErrCorrupt, what)
		_, ok := m.AppendSnapshot(nil, &o)
		assert.False(t, ok, what)
		assert.Equal(t, good.StoreKey(), o.StoreKey(), "%s: the key text is not compressed", what)
		o.SetName("x") // a setter on an object it cannot read does nothing
	}
	errs := 0
	for i := range good.raw {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			raw := bytes.Clone(good.raw)
			raw[i] ^= flip
			check(raw, fmt.Sprintf("byte %d ^ %#x", i, flip))
			if _, err := with(raw).JSON(); err != nil {
				errs++
			}
		}
		check(bytes.Clone(good.raw[:i]), fmt.Sprint("truncated to ", i))
	}
	assert.Greater(t, errs, len(good.raw)*2, "most changes are detected")
	var e error = fmt.Errorf("wrapped: %w", ErrCorrupt)
	assert.True(t, errors.Is(e, ErrCorrupt))
}

// TestSnapshotOfCompressedObjects: a snapshot record of a compressed object holds its plain
// JSON: a process without the dictionary (a mode that does not compress) loads it, and a
// compressing mode's transform compresses it again with a dictionary of its own.
func TestSnapshotOfCompressedObjects(t *testing.T) {
	plain, out := compressedPods(t, &Decoder{}, oneSample, 5)
	m := &Mode{dec: &Decoder{}, compress: true}
	loader := &Mode{dec: &Decoder{}}
	tr := (&Mode{dec: &Decoder{}, compress: true, dict: oneSample}).Transform(nil)
	for i, o := range out[1:] {
		require.True(t, o.Compressed())
		rec, ok := m.AppendSnapshot(nil, o)
		require.True(t, ok)
		want, _ := plain[1+i].AppendSnapshot(nil)
		assert.Equal(t, want, rec, "the record of the plain object")
		back, err := loader.SnapshotDecode(rec)
		require.NoError(t, err)
		assertSameObject(t, plain[1+i], back.(*Object), "loaded")
		again, err := tr(back)
		require.NoError(t, err)
		assertSameObject(t, plain[1+i], again.(*Object), "recompressed")
	}
}

// AppendSnapshot is a test helper: the record a non-compressing mode writes for o.
func (o *Object) AppendSnapshot(dst []byte) ([]byte, bool) {
	return (&Mode{dec: &Decoder{}}).AppendSnapshot(dst, o)
}

// TestConcurrentReadsOfCompressedObjects: goroutines reading the same and different
// compressed objects at once (run with -race) all read the right JSON.
func TestConcurrentReadsOfCompressedObjects(t *testing.T) {
	plain, out := compressedPods(t, &Decoder{}, oneSample, 30)
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(out))
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 20 {
				i := (g*7 + r*3) % len(out)
				if !bytes.Equal(out[i].RawJSON(), plain[i].RawJSON()) || out[i].GetLabels()["app.kubernetes.io/name"] != plain[i].GetLabels()["app.kubernetes.io/name"] {
					errs <- fmt.Sprint("object ", i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestEncoderPoolAcrossDictionaries: compressions with several dictionaries at once, from
// several goroutines, share the pool's encoders (switching them between dictionaries) and
// every object still decompresses to its JSON with its own dictionary.
func TestEncoderPoolAcrossDictionaries(t *testing.T) {
	d := &Decoder{}
	pods := make([]*Object, 60)
	for i := range pods {
		pods[i] = mustDecode(t, d, podJSON(t, i))
	}
	// Four informers, each with a dictionary of a different pod.
	cs := make([]*compressor, 4)
	for i := range cs {
		cs[i] = &compressor{limits: oneSample}
		cs[i].compress(pods[i])
	}
	var wg sync.WaitGroup
	out := make([][]*Object, len(cs))
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cs[g%len(cs)]
			var mine []*Object
			for i := range pods {
				mine = append(mine, c.compress(pods[(i+g)%len(pods)]))
			}
			if g < len(cs) {
				out[g] = mine
			}
		}()
	}
	wg.Wait()
	for g, objs := range out {
		for i, o := range objs {
			require.True(t, o.Compressed())
			require.True(t, o.z == cs[g].dict.Load())
			forget(o)
			require.Equal(t, pods[(i+g)%len(pods)].RawJSON(), o.RawJSON(), "informer %d, pod %d", g, i)
		}
	}
	encoders.mu.Lock()
	pooled := len(encoders.free)
	encoders.mu.Unlock()
	assert.LessOrEqual(t, pooled, encoders.max, "the pool stays bounded")
}

// FuzzCompress: any object the decoder accepts round-trips through compression with a
// dictionary of realistic pods (RawJSON equals its JSON, the key getters are unchanged), and
// any change to its compressed bytes gives an error wrapping ErrCorrupt or the same JSON,
// never a panic.
func FuzzCompress(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint16(0), byte(1))
	}
	f.Add(podJSON(f, 7), uint16(40), byte(0x80))
	d := &Decoder{}
	c := &compressor{limits: dictLimits{bytes: 1 << 15, samples: 2}}
	c.compress(mustDecode(f, d, podJSON(f, 0)))
	c.compress(mustDecode(f, d, podJSON(f, 1)))
	if c.dict.Load() == nil {
		f.Fatal("no dictionary")
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint16, flip byte) {
		o, err := d.DecodeObject(data)
		if err != nil {
			return
		}
		z := c.compress(o)
		forget(z)
		if !bytes.Equal(o.RawJSON(), z.RawJSON()) {
			t.Fatalf("round trip: %q", data)
		}
		if z.StoreKey() != o.StoreKey() || z.GetUID() != o.GetUID() || z.GetResourceVersion() != o.GetResourceVersion() {
			t.Fatal("key text changed")
		}
		if !z.Compressed() || flip == 0 {
			return
		}
		raw := bytes.Clone(z.raw)
		raw[int(at)%len(raw)] ^= flip
		bad := *z
		bad.raw = append(raw, z.keyText()...)[:len(raw)]
		forget(&bad)
		b, err := bad.JSON()
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		if err == nil && !bytes.Equal(b, o.RawJSON()) {
			t.Fatalf("a changed byte decompressed to other JSON without an error")
		}
		_ = bad.GetLabels()
		_, _ = bad.Unstructured()
	})
}

// TestIndexesDecompressOnce: the index functions the store runs on an object at ingest, one
// after the other, decompress it at most once: not at all right after the transform
// compressed it (it remembers the JSON it compressed), once when it was forgotten, and
// still once while other goroutines decompress other objects in between.
func TestIndexesDecompressOnce(t *testing.T) {
	d := &Decoder{}
	tr := (&Mode{dec: d, compress: true, dict: oneSample}).Transform(nil)
	var fns []func(obj any) ([]string, error)
	for _, expr := range []string{"{.spec.nodeName}", "{.spec.containers[*].image}", "{.status.phase}",
		"{.metadata.labels.app\\.kubernetes\\.io/name}", "{.status.containerStatuses[*].restartCount}"} {
		fn, err := indexfuncs.JSONPath(expr)
		require.NoError(t, err)
		fns = append(fns, fn)
	}
	index := func(o *Object) {
		for _, fn := range fns {
			vals, err := fn(o)
			require.NoError(t, err)
			_ = vals
		}
	}
	var objs []*Object
	for i := range 10 {
		out, err := tr(mustDecode(t, d, podJSON(t, i)))
		require.NoError(t, err)
		objs = append(objs, out.(*Object))
	}
	o := objs[9]
	require.True(t, o.Compressed())
	dict := o.z
	n := dict.inflations.Load()
	index(o)
	assert.Equal(t, n, dict.inflations.Load(), "right after compression: no decompression")
	forget(o)
	index(o)
	assert.Equal(t, n+1, dict.inflations.Load(), "once for five index functions")

	// Others decompressing at the same time (handlers): still about once per object.
	forget(o)
	n = dict.inflations.Load()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, other := range objs[1:4] {
			_ = other.RawJSON()
		}
	}()
	index(o)
	<-done
	assert.LessOrEqual(t, dict.inflations.Load()-n, int64(4), "one for the indexes, three for the others")
}
