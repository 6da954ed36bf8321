package crcache

import (
	"strconv"
	"sync"
	"time"
)

// The handlers and index functions of one access share the object decoded for each version
// of a cached object, as controller-runtime's informer hands its one stored object to all
// of them. The compact store holds bytes, so each of them would otherwise decode the object
// again: a Pod type with three IndexField indexes and two controllers watching it decoded
// every Pod five times during the initial sync, for 2.5x controller-runtime's client CPU
// (README.md, "Controllers"). An access with two or more of them keeps the objects it
// decoded last, by key and resourceVersion (eventObject): the index functions of one object
// run one after the other, and handlers, fed the same events on goroutines of their own,
// are seldom more than a few hundred events apart (counted once, with a temporary counter,
// in that benchmark: with 128 objects kept its two handlers shared an object in 6% of the
// initial adds, with 1,024 in all of them). What is kept is bounded in number and in bytes,
// and dropped a second after the last decode, so that an idle cache holds only bytes; a
// handler further behind decodes again. Objects handed to handlers and index functions are
// shared in controller-runtime too: they must not be modified.
//
// kindex's own compact mode does not share its handlers' objects: they are
// *unstructured.Unstructured, four to five times their JSON where a typed object is about
// twice, and sharing them between two handlers on 20,000 Pods saved 2% of the CPU for 31 MB
// more peak RSS (kindex's bench/README.md, "Two handlers of decoded objects").

// recentCap is how many decoded objects an access keeps for its handlers and index
// functions at most, and recentBytes how much JSON they may come from: objects of 10 KB or
// less are kept by the 1,024, larger ones fewer (16 of 1 MB).
const (
	recentCap   = 1024
	recentBytes = 16 << 20
)

// recentIdle is how long kept objects outlive the last decode.
const recentIdle = time.Second

// recentObjects is a small cache of decoded objects by key, at two resourceVersions each (an
// update hands each handler the old version and the new), which forgets the key stored
// least recently first.
type recentObjects struct {
	mu    sync.Mutex
	objs  map[string]*recentObject
	queue []recentStore // the stores, oldest first from head: a ring of recentCap
	head  int
	n     int
	seq   uint64 // stores so far
	bytes int    // JSON size of the versions kept

	last  time.Time   // of the last store
	timer *time.Timer // drops everything recentIdle after the last store
}

type recentStore struct {
	key string
	seq uint64
}

type recentObject struct {
	versions [2]recentVersion
	last     int    // the version stored last
	seq      uint64 // which store put the key last
}

type recentVersion struct {
	rv   string
	obj  any
	size int // of its JSON
}

// get returns the object kept for key at resourceVersion rv, or nil.
func (r *recentObjects) get(key, rv string) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.objs[key]; ok {
		for _, v := range e.versions {
			if v.obj != nil && v.rv == rv {
				return v.obj
			}
		}
	}
	return nil
}

// keep stores obj, decoded from size bytes of JSON, for key at rv and returns it, or
// returns the object another caller stored for the same version first (so that every
// caller shares one). Of a key's versions it keeps the two newest (by resourceVersion,
// which the API server makes comparable; in the order stored where one does not parse); an
// older one is returned without being kept. The keys stored least recently are forgotten
// beyond recentCap keys or recentBytes.
func (r *recentObjects) keep(key, rv string, obj any, size int) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.objs[key]
	if ok {
		for _, v := range e.versions {
			if v.obj != nil && v.rv == rv {
				return v.obj
			}
		}
		// Replace the older of the two (the one not stored last where they do not
		// compare), unless obj is older than both.
		old := 1 - e.last
		switch v := e.versions; {
		case v[1].obj == nil:
			old = 1
		case newer(v[0].rv, v[1].rv):
			old = 1
		case newer(v[1].rv, v[0].rv):
			old = 0
		}
		if v := e.versions[old]; v.obj != nil && newer(v.rv, rv) {
			return obj
		}
		r.bytes -= e.versions[old].size
		e.versions[old], e.last = recentVersion{rv: rv, obj: obj, size: size}, old
	} else {
		if r.objs == nil {
			r.objs = make(map[string]*recentObject)
			r.queue = make([]recentStore, recentCap)
		}
		e = &recentObject{versions: [2]recentVersion{{rv: rv, obj: obj, size: size}}}
		r.objs[key] = e
	}
	r.bytes += size
	e.seq = r.seq
	if r.n == recentCap {
		r.evictOldest()
	}
	r.queue[(r.head+r.n)%recentCap] = recentStore{key: key, seq: r.seq}
	r.n++
	r.seq++
	for r.bytes > recentBytes && r.n > 1 {
		r.evictOldest()
	}
	r.last = time.Now()
	if r.timer == nil {
		r.timer = time.AfterFunc(recentIdle, r.expire)
	}
	return obj
}

// evictOldest forgets the oldest store: its key, unless the key was stored again since.
func (r *recentObjects) evictOldest() {
	s := r.queue[r.head]
	r.queue[r.head] = recentStore{}
	r.head = (r.head + 1) % recentCap
	r.n--
	if e, ok := r.objs[s.key]; ok && e.seq == s.seq {
		r.bytes -= e.versions[0].size + e.versions[1].size
		delete(r.objs, s.key)
	}
}

// expire drops everything if nothing was stored for recentIdle, and otherwise looks again
// when that will be the case.
func (r *recentObjects) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		return // reset
	}
	if wait := recentIdle - time.Since(r.last); wait > 0 {
		r.timer.Reset(wait)
		return
	}
	r.clearLocked()
}

// newer reports whether resourceVersion a is newer than b: as integers where both parse,
// otherwise never.
func newer(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// reset forgets everything (the access stopped).
func (r *recentObjects) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLocked()
}

func (r *recentObjects) clearLocked() {
	if r.timer != nil {
		r.timer.Stop()
	}
	r.objs, r.queue, r.head, r.n, r.seq, r.bytes, r.timer = nil, nil, 0, 0, 0, 0, nil
}
