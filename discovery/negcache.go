package discovery

import (
	"sync"
	"time"
)

// maxNegative bounds the negative cache; a client fed random names forgets the oldest misses
// rather than growing without bound.
const maxNegative = 4096

// negativeCache remembers misses until they expire or discovery changes. Its generation
// changes on every clear, so that a miss computed before a change is not stored after it.
type negativeCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]negEntry
}

type negEntry struct {
	err     error
	expires time.Time
}

func (n *negativeCache) get(key string, now time.Time) (error, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.m[key]
	if !ok || !now.Before(e.expires) {
		return nil, false
	}
	return e.err, true
}

func (n *negativeCache) generation() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen
}

// put stores a miss unless the cache was cleared since gen was read.
func (n *negativeCache) put(key string, err error, expires time.Time, gen uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if gen != n.gen {
		return
	}
	if n.m == nil {
		n.m = map[string]negEntry{}
	}
	if len(n.m) >= maxNegative {
		n.m = map[string]negEntry{}
	}
	n.m[key] = negEntry{err: err, expires: expires}
}

func (n *negativeCache) clear() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	n.m = nil
}

func (n *negativeCache) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.m)
}
