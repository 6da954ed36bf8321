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
// collection found live. tick is called once per object of a start (an object of an
// initial list applied, an initial add decoded for a handler); every pacerEvery ticks it
// reads two runtime metrics (about a microsecond) and, over the slack, collects.
//
// Why not leave it to the runtime: with the default GOGC=100 the collector lets the heap
// grow to twice what was live before it runs, whatever makes the garbage. A compact cache
// is mostly bytes and its start makes garbage several times its own size (a handler of
// decoded objects gets every object decoded, 4-5x its JSON, and drops it), so the process
// peaks at about twice its steady heap exactly when it starts, which is when processes are
// OOM-killed. GOMEMLIMIT does better (the runtime also returns memory to the system
// sooner) but needs the steady heap known in advance, and GOGC lower than 100 costs
// collections for the process's whole life; the pacer runs only while informers start.
// What it costs: one collection per live/8 bytes of garbage, each marking the live heap,
// which in the compact mode is mostly bytes without pointers (bench/README.md measures it).
//
// A heap that grows because the cache fills (a cold start's list) is not garbage: no
// collection makes it smaller. After each collection the pacer compares what it freed with
// what the live heap grew by since the previous one; while growth dominates, it doubles its
// slack (up to the runtime's own GOGC=100, where it never runs before the runtime does),
// and halves it again once garbage dominates. A start that mostly fills the cache pays a
// few collections, not one per eighth of growth.
type pacer struct {
	read    func() (live, objects uint64)
	collect func()
	floor   uint64 // no collection while the heap's objects take less than this

	n    atomic.Int64
	mu   sync.Mutex // one reader and collector at a time; others go on
	mult uint64     // the slack is live/pacerSlack*mult (guarded by mu)
}

const (
	pacerEvery   = 32
	pacerSlack   = 8 // collect when objects > live + live/pacerSlack (times mult)
	pacerMaxMult = pacerSlack
	pacerFloor   = 16 << 20
)

func newPacer(read func() (live, objects uint64), collect func()) *pacer {
	return &pacer{read: read, collect: collect, floor: pacerFloor, mult: 1}
}

// tick counts one object of a start and reports whether it ran a collection.
func (p *pacer) tick() bool {
	if p.n.Add(1)%pacerEvery != 0 || !p.mu.TryLock() {
		return false
	}
	defer p.mu.Unlock()
	live, objects := p.read()
	if objects < p.floor || objects <= live+live/pacerSlack*p.mult {
		return false
	}
	p.collect()
	after, _ := p.read()
	freed, grown := objects-min(after, objects), after-min(after, live)
	if freed < grown {
		p.mult = min(2*p.mult, pacerMaxMult)
	} else {
		p.mult = max(p.mult/2, 1)
	}
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
