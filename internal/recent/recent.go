package recent

import (
	"strconv"
	"sync"
	"time"
)

// Cap is how many decoded objects an Objects keeps at most, and Bytes how much JSON they may
// come from: objects of 10 KB or
// less are kept by the 1,024, larger ones fewer (16 of 1 MB).
const (
	Cap   = 1024
	Bytes = 16 << 20
)

// Idle is how long kept objects outlive the last decode.
const Idle = time.Second

// Objects is a small cache of decoded objects by key, at two resourceVersions each (an
// update hands each handler the old version and the new), which forgets the key stored
// least recently first.
type Objects struct {
	mu    sync.Mutex
	objs  map[string]*object
	queue []store // the stores, oldest first from head: a ring of Cap
	head  int
	n     int
	seq   uint64 // stores so far
	bytes int    // JSON size of the versions kept

	last  time.Time   // of the last store
	timer *time.Timer // drops everything Idle after the last store
}

type store struct {
	key string
	seq uint64
}

type object struct {
	versions [2]version
	last     int    // the version stored last
	seq      uint64 // which store put the key last
}

type version struct {
	rv   string
	obj  any
	size int // of its JSON
}

// Get returns the object kept for key at resourceVersion rv, or nil.
func (r *Objects) Get(key, rv string) any {
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

// Keep stores obj, decoded from size bytes of JSON, for key at rv and returns it, or
// returns the object another caller stored for the same version first (so that every
// caller shares one). Of a key's versions it keeps the two newest (by resourceVersion,
// which the API server makes comparable; in the order stored where one does not parse); an
// older one is returned without being kept. The keys stored least recently are forgotten
// beyond Cap keys or Bytes.
func (r *Objects) Keep(key, rv string, obj any, size int) any {
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
		e.versions[old], e.last = version{rv: rv, obj: obj, size: size}, old
	} else {
		if r.objs == nil {
			r.objs = make(map[string]*object)
			r.queue = make([]store, Cap)
		}
		e = &object{versions: [2]version{{rv: rv, obj: obj, size: size}}}
		r.objs[key] = e
	}
	r.bytes += size
	e.seq = r.seq
	if r.n == Cap {
		r.evictOldest()
	}
	r.queue[(r.head+r.n)%Cap] = store{key: key, seq: r.seq}
	r.n++
	r.seq++
	for r.bytes > Bytes && r.n > 1 {
		r.evictOldest()
	}
	r.last = time.Now()
	if r.timer == nil {
		r.timer = time.AfterFunc(Idle, r.expire)
	}
	return obj
}

// evictOldest forgets the oldest store: its key, unless the key was stored again since.
func (r *Objects) evictOldest() {
	s := r.queue[r.head]
	r.queue[r.head] = store{}
	r.head = (r.head + 1) % Cap
	r.n--
	if e, ok := r.objs[s.key]; ok && e.seq == s.seq {
		r.bytes -= e.versions[0].size + e.versions[1].size
		delete(r.objs, s.key)
	}
}

// expire drops everything if nothing was stored for Idle, and otherwise looks again
// when that will be the case.
func (r *Objects) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		return // reset
	}
	if wait := Idle - time.Since(r.last); wait > 0 {
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

// Reset forgets everything (the access stopped).
func (r *Objects) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLocked()
}

func (r *Objects) clearLocked() {
	if r.timer != nil {
		r.timer.Stop()
	}
	r.objs, r.queue, r.head, r.n, r.seq, r.bytes, r.timer = nil, nil, 0, 0, 0, 0, nil
}
