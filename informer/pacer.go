package informer

import (
	"runtime"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
)

// startPacer keeps the garbage of informers' starts from doubling the process's heap (see
// Options.DisableStartGC). It is one per process, as the heap and the collector are.
var startPacer = newPacer(readHeap, runtime.GC)

// pacer runs the collector when the heap holds more than pacerSlack over what the last
// collection found live. tick is called once per object of a start that makes garbage (see
// below); every pacerEvery ticks it reads two runtime metrics (about a microsecond) and,
// over the slack, collects.
//
// Why not leave it to the runtime: with the default GOGC=100 the collector lets the heap
// grow to twice what was live before it runs, whatever makes the garbage. A compact cache
// is mostly bytes and its start makes garbage several times its own size (a handler of
// decoded objects gets every object decoded, 4-5x its JSON, and drops it), so the process
// peaks at about twice its steady heap exactly when it starts, which is when processes are
// OOM-killed. GOMEMLIMIT does better (the runtime also returns memory to the system
// sooner) but needs the steady heap known in advance, and GOGC lower than 100 costs
// collections for the process's whole life; the pacer runs only while informers start or
// relist.
// What it costs: one collection per live/8 bytes of garbage, each marking the live heap,
// which in the compact mode is mostly bytes without pointers (bench/README.md measures it).
//
// Ticks come only from what makes garbage: an object of a list that replaces a cached one
// (a relist's, or a restart's relist over its snapshot) and an initial add decoded for a
// handler of objects (or for a handler of Items that says it decodes them,
// ItemHandlerFuncs.Decodes). An object that fills the cache (a cold start's list, a snapshot
// loading) does not tick: a heap that grows because what it holds is live is not garbage,
// and collecting it would mark the growing heap again and again for nothing.
type pacer struct {
	read    func() (live, objects uint64)
	collect func()
	floor   uint64 // no collection while the heap's objects take less than this

	n  atomic.Int64
	mu sync.Mutex // one reader and collector at a time; others go on
}

const (
	pacerEvery = 32
	pacerSlack = 8 // collect when objects > live + live/pacerSlack
	pacerFloor = 16 << 20
)

func newPacer(read func() (live, objects uint64), collect func()) *pacer {
	return &pacer{read: read, collect: collect, floor: pacerFloor}
}

// tick counts one object of a start and reports whether it started a collection. With
// wait, the collection runs on the caller's goroutine, which it pauses (a handler's
// listener: pausing it pauses the garbage it makes); without, on a goroutine of its own
// (the processing loop, which holds the FIFO's lock: it must not wait for a collection).
// Either way no other collection starts until it ends.
func (p *pacer) tick(wait bool) bool {
	if p.n.Add(1)%pacerEvery != 0 || !p.mu.TryLock() {
		return false
	}
	live, objects := p.read()
	if objects < p.floor || objects <= live+live/pacerSlack {
		p.mu.Unlock()
		return false
	}
	if !wait {
		go func() {
			defer p.mu.Unlock()
			p.collect()
		}()
		return true
	}
	defer p.mu.Unlock()
	p.collect()
	return true
}

var heapSamples = sync.Pool{New: func() any {
	return &[2]rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
}}

// readHeap returns the heap that the last collection marked live and the heap's objects
// now (live, and dead ones not freed yet).
func readHeap() (live, objects uint64) {
	s := heapSamples.Get().(*[2]rtmetrics.Sample)
	defer heapSamples.Put(s)
	rtmetrics.Read(s[:])
	if s[0].Value.Kind() != rtmetrics.KindUint64 || s[1].Value.Kind() != rtmetrics.KindUint64 {
		return 0, 0 // metrics this runtime does not have: never collect
	}
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}
