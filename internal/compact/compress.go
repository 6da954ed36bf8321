package compact

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// Compression (Options.Compress) keeps each object's JSON zstd-compressed against a
// dictionary of its informer: the first objects the informer stores, concatenated (a raw
// dictionary: zstd uses it as history, so an object compresses to what differs from
// objects already seen). Objects of one resource are alike, so a 4.3 KB Pod (managedFields
// cut) compresses to about 300 bytes (doc.go has the measurements).
//
// The compressor of an informer (Mode.Transform makes one per call) first collects
// samples: the objects it sees until they add up to 32 KiB, or 16 of them (dictLimits).
// They stay uncompressed. It then builds the dictionary, once: immutable bytes with a
// decoder of their own (encoders come from a pool shared by every dictionary: encoders).
// Every later object is compressed with it and points to it, so that it always decompresses
// with the dictionary it was compressed with, whatever happens to the informer afterwards
// (the dictionary lives as long as an object needs it).
//
// Only the JSON is compressed: the key text (namespace, name, resourceVersion, uid) stays
// after it in the same allocation, so the key getters and StoreKey stay free. Reading the
// JSON (RawJSON, Unstructured, MarshalJSON, the metadata getters other than the key ones)
// decompresses it. The dictionary remembers its last few decompressions (recentSize
// objects, and the object it compressed last), so that the index functions the store runs
// on an object one after the other decompress it once, even while handlers decompress
// other objects.

// dictLimits say when a compressor builds its dictionary: once its samples add up to bytes,
// or there are samples of them. bytes also bounds the dictionary's size (the last sample is
// cut).
type dictLimits struct{ bytes, samples int }

// defaultDictLimits: 32 KiB, or 16 objects. On realistic Pods, 8 Pods (32 KiB) compress
// each Pod to 315 bytes where one Pod (4 KiB) gives 396 and 16 (64 KiB) 308 (doc.go).
var defaultDictLimits = dictLimits{bytes: 32 << 10, samples: 16}

const (
	// maxCompressed is the largest JSON that is compressed; larger objects stay as they are,
	// and the decoder refuses to produce more than this (a corrupted frame cannot make it
	// allocate more).
	maxCompressed = 64 << 20
	// encoderWindow is the encoder's window: room for the dictionary and an object.
	encoderWindow = 1 << 17
)

// compressor compresses the objects of one informer. Safe for concurrent use.
type compressor struct {
	limits dictLimits
	dict   atomic.Pointer[dictionary] // nil until built

	mu      sync.Mutex
	samples [][]byte // the JSON of the objects seen before the dictionary (shared, immutable)
	size    int
	failed  bool // building the dictionary failed: objects stay uncompressed
}

// dictionary is an immutable compression dictionary with its decoder (zstd's DecodeAll is
// safe for concurrent use). Its objects are compressed by encoders of the process's pool.
type dictionary struct {
	content []byte
	dec     *zstd.Decoder
	// recent holds the last decompressions (and compressions), written round robin at
	// next; inflations counts decompressions (for tests and measurements).
	recent     [recentSize]atomic.Pointer[inflated]
	next       atomic.Uint32
	inflations atomic.Int64
}

// recentSize is how many decompressed objects a dictionary keeps: a few, so that the
// index functions run on one object (by the store, under its lock) still find it while
// other goroutines (handlers, readers) decompress others.
const recentSize = 4

// inflated is a decompressed object: src is the first byte of its compressed form (which it
// keeps alive, so the address cannot be reused while it is cached), n its length.
type inflated struct {
	src  *byte
	n    int
	json []byte
}

// compress returns o compressed, or o itself if it is compressed already, is a sample of
// the dictionary, or does not get smaller.
func (c *compressor) compress(o *Object) *Object {
	if o == nil || o.z != nil || len(o.raw) == 0 || len(o.raw) > maxCompressed {
		return o
	}
	d := c.dict.Load()
	if d == nil {
		if d = c.sample(o.json()); d == nil {
			return o
		}
	}
	return d.compress(o)
}

// sample records raw as a sample and returns the dictionary once there are enough.
func (c *compressor) sample(raw []byte) *dictionary {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.dict.Load(); d != nil || c.failed {
		return d
	}
	c.samples = append(c.samples, raw)
	c.size += len(raw)
	limits := c.limits
	if limits.bytes <= 0 || limits.samples <= 0 {
		limits = defaultDictLimits
	}
	if c.size < limits.bytes && len(c.samples) < limits.samples {
		return nil
	}
	content := make([]byte, 0, min(c.size, limits.bytes))
	for _, s := range c.samples {
		content = append(content, s[:min(len(s), limits.bytes-len(content))]...)
	}
	c.samples, c.size = nil, 0
	d, err := newDictionary(content)
	if err != nil {
		c.failed = true // cannot happen with valid options; objects stay uncompressed
		return nil
	}
	c.dict.Store(d)
	return d
}

// newDictionary builds the decoder of content (about 60 KB once used, with lowmem).
func newDictionary(content []byte) (*dictionary, error) {
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderDictRaw(0, content),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(maxCompressed))
	if err != nil {
		return nil, err
	}
	return &dictionary{content: content, dec: dec}, nil
}

// compress returns o compressed with d, in one allocation with its key text, or o if the
// compressed form is not smaller.
func (d *dictionary) compress(o *Object) (out *Object) {
	plain := o.json()
	keys := o.keyText()
	enc, err := encoders.get(d)
	if err != nil {
		return o // cannot happen with valid options: the object stays uncompressed
	}
	defer func() {
		if recover() != nil {
			// The encoder panicked (it documents no panic on any input): the object stays
			// uncompressed and the encoder is dropped, not pooled.
			out = o
			return
		}
		encoders.put(enc)
	}()
	z := enc.enc.EncodeAll(plain, enc.buf[:0])
	enc.buf = z
	if len(z) >= len(plain) {
		return o
	}
	raw := make([]byte, len(z), len(z)+len(keys))
	copy(raw, z)
	raw = append(raw, keys...)[:len(z)]
	n := &Object{raw: raw, nsEnd: o.nsEnd, keyEnd: o.keyEnd, rvEnd: o.rvEnd,
		metaStart: o.metaStart, metaEnd: o.metaEnd, flags: o.flags, z: d}
	// The store reads the object right away (its indexes): remember its JSON.
	d.remember(&inflated{src: &raw[0], n: len(raw), json: plain})
	return n
}

// inflate returns the JSON of raw, compressed with d.
func (d *dictionary) inflate(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("compact: %w: empty compressed object", ErrCorrupt)
	}
	for i := range d.recent {
		if l := d.recent[i].Load(); l != nil && l.src == &raw[0] && l.n == len(raw) {
			return l.json, nil
		}
	}
	d.inflations.Add(1)
	out, err := d.decodeAll(raw)
	if err != nil {
		return nil, fmt.Errorf("compact: %w: %w", ErrCorrupt, err)
	}
	if len(out) == 0 || out[0] != '{' {
		return nil, fmt.Errorf("compact: %w: not a JSON object", ErrCorrupt)
	}
	out = out[:len(out):len(out)]
	d.remember(&inflated{src: &raw[0], n: len(raw), json: out})
	return out, nil
}

// remember keeps in as one of the recent decompressions.
func (d *dictionary) remember(in *inflated) {
	d.recent[(d.next.Add(1)-1)%recentSize].Store(in)
}

// forget empties the recent decompressions (tests: the next read decompresses).
func (d *dictionary) forget() {
	for i := range d.recent {
		d.recent[i].Store(nil)
	}
}

// decodeAll decompresses raw, turning a panic of the decoder (it documents none, on any
// input) into an error.
func (d *dictionary) decodeAll(raw []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("zstd decoder panic: %v", r)
		}
	}()
	return d.dec.DecodeAll(raw, nil)
}

// encoders is the process's pool of zstd encoders, shared by every dictionary. An encoder
// set to a dictionary holds about 800 KB (the match tables of the fast level, twice: for
// EncodeAll and for streams, and their copies of the dictionary's state): one per
// dictionary would cost that per informer, for the whole life of the informer, where a
// pool costs it per compression running at once. Switching an encoder to another
// dictionary rebuilds its tables (tens of microseconds), so get prefers an encoder set to
// the dictionary already: an informer syncing keeps its encoder.
var encoders = encoderPool{max: min(4, max(2, runtime.GOMAXPROCS(0)))}

type encoderPool struct {
	mu   sync.Mutex
	free []*pooledEncoder
	max  int
}

// pooledEncoder is an encoder, the dictionary it is set to, and an output buffer.
type pooledEncoder struct {
	enc  *zstd.Encoder
	dict *dictionary
	buf  []byte
}

// get returns an encoder set to d, for the caller's exclusive use until put.
func (p *encoderPool) get(d *dictionary) (*pooledEncoder, error) {
	p.mu.Lock()
	var e *pooledEncoder
	for i := len(p.free) - 1; i >= 0; i-- {
		if p.free[i].dict == d {
			e = p.free[i]
			p.free = slices.Delete(p.free, i, i+1)
			p.mu.Unlock()
			return e, nil
		}
	}
	if n := len(p.free); n > 0 {
		e = p.free[n-1]
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	if e == nil {
		// SpeedFastest: measured on realistic Pods (doc.go), it compresses within a few
		// percent of the better levels for a fraction of their time, because the
		// dictionary, not the search, finds the matches.
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderDictRaw(0, d.content),
			zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(encoderWindow),
			zstd.WithLowerEncoderMem(true),
			zstd.WithEncoderCRC(true))
		if err != nil {
			return nil, err
		}
		return &pooledEncoder{enc: enc, dict: d}, nil
	}
	if err := e.enc.ResetWithOptions(nil, zstd.WithEncoderDictRaw(0, d.content)); err != nil {
		return nil, err
	}
	e.dict = d
	return e, nil
}

// put returns e to the pool, or drops it when the pool is full.
func (p *encoderPool) put(e *pooledEncoder) {
	if cap(e.buf) > 1<<20 {
		e.buf = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < p.max {
		p.free = append(p.free, e)
	}
}
