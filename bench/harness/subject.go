package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Subject is one way of getting every object of a resource into a client: a client-go
// informer, a kindex front end, or a plain LIST that sets the server-bound floor.
//
// Sync starts from nothing, fills the subject's cache with every object of gvr in namespace
// and returns once the cache is synced (for an informer: once HasSynced is true), with the
// number of objects it holds. Everything the cache needs must stay reachable until stop is
// called: the harness measures the heap between Sync returning and stop. stop releases it
// all and returns once the subject's goroutines have ended. Sync must honour ctx.
//
// Each Sync runs in a child process of its own, so a subject may change process-wide state
// (client-go feature gates, klog flags) without affecting other subjects.
//
// cfg talks to the apiserver through a transport that counts response bytes; use it (or a
// copy) for every request. A subject that cannot serve gvr (the protobuf LIST of a custom
// resource) returns an error wrapping ErrNotSupported, and the harness reports it as n/a.
type Subject interface {
	Name() string
	Sync(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) (count int, stop func(), err error)
}

// ErrNotSupported marks a subject that cannot serve a resource at all (as opposed to
// failing): the harness reports n/a for it instead of an error.
var ErrNotSupported = errors.New("not supported for this resource")

// SubjectFunc adapts a name and a function to Subject, for subjects without state.
type SubjectFunc struct {
	SubjectName string
	SyncFunc    func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) (int, func(), error)
}

// Name returns SubjectName.
func (s SubjectFunc) Name() string { return s.SubjectName }

// Sync calls SyncFunc.
func (s SubjectFunc) Sync(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) (int, func(), error) {
	return s.SyncFunc(ctx, cfg, gvr, namespace)
}

var (
	registryMu sync.Mutex
	registry   []Subject
)

// Register adds a subject to the comparison. Subjects are measured in registration order;
// the built-in ones (apiserver floors, client-go informers) register first. Register from an
// init function or from main before Main runs: the child process that measures a subject
// finds it by name in its own registry, so the parent and the child must register the same
// subjects. Register panics on an empty or duplicate name.
func Register(s Subject) {
	registryMu.Lock()
	defer registryMu.Unlock()
	name := s.Name()
	if name == "" {
		panic("harness: Register: subject with an empty name")
	}
	if slices.ContainsFunc(registry, func(r Subject) bool { return r.Name() == name }) {
		panic(fmt.Sprintf("harness: Register: duplicate subject %q", name))
	}
	registry = append(registry, s)
}

// Subjects returns the registered subjects in registration order.
func Subjects() []Subject {
	registryMu.Lock()
	defer registryMu.Unlock()
	return slices.Clone(registry)
}

func lookup(name string) (Subject, error) {
	for _, s := range Subjects() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("harness: no subject named %q is registered in this binary", name)
}
