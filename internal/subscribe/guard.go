package subscribe

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Guard orders a subscription's events against the initial list (see the package doc). The
// zero value is ready: Touch from the event callback, Apply for each listed resource, then
// Done. Safe for concurrent use.
type Guard struct {
	mu      sync.Mutex
	done    bool
	touched map[schema.GroupResource]struct{}
}

// Touch records that an event concerns grs; call it before handling the event. After Done
// it records nothing.
func (g *Guard) Touch(grs ...schema.GroupResource) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	if g.touched == nil {
		g.touched = map[schema.GroupResource]struct{}{}
	}
	for _, gr := range grs {
		g.touched[gr] = struct{}{}
	}
}

// Apply calls fn, the application of a listed resource gr, unless an event touched gr; it
// reports whether fn ran. fn runs under the guard's lock, so that no event is marked between
// the check and fn: an event that arrives meanwhile is handled after fn, over it. fn must
// not wait for the subscription's callback.
func (g *Guard) Apply(gr schema.GroupResource, fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.touched[gr]; ok {
		return false
	}
	fn()
	return true
}

// Done ends the initial list: the marks are dropped and Touch records nothing more.
func (g *Guard) Done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	g.touched = nil
}
