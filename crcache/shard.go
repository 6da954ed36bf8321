package crcache

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// shard is one kindex informer reference, whatever its object type: compact
// (*unstructured.Unstructured over JSON bytes) or metadata-only
// (*metav1.PartialObjectMetadata).
type shard interface {
	config() *shardConfig
	status() informer.Status
	// resource is the resource as discovery last described it to the kindex informer (its
	// scope is the live one, which the plan's may no longer be: replan.go).
	resource() discovery.Resource
	hasSynced() bool
	waitForSync(ctx context.Context) error
	waitForSyncOrPark(ctx context.Context) error
	getItem(ns, name string) (item, error)
	// queryItems returns every match of q (q.Limit and q.Continue unset), in (namespace,
	// name) order.
	queryItems(ctx context.Context, q query.Query) ([]item, error)
	addHandler(h toolscache.ResourceEventHandler) (*informer.Registration, error)
	removeHandler(r *informer.Registration) error
	// handOff removes r once what is queued for it is delivered (informer's
	// HandOffEventHandler): it returns the items the handler then holds, by key, and a
	// channel closed once they are delivered.
	handOff(r *informer.Registration) (map[string]item, <-chan struct{}, error)
	addIndexFunc(name string, fn toolscache.IndexFunc) error
	addIndexPath(name string, p *jsonpath.Path) error
	removeIndex(name string) error
	indexNames() []string
	release()
}

// item is one cached object, not decoded.
type item interface {
	Key() string
	Namespace() string
	Name() string
	ResourceVersion() string
	// Raw is the stored JSON (compact mode) or nil.
	Raw() []byte
	// DecodeInto decodes the item into a typed struct (informer.Item.DecodeInto): from
	// the stored bytes in compact mode, with strings that are views of them when the
	// store keeps them uncompressed.
	DecodeInto(v any) error
	// object decodes the item into the informer's object type (a new object in compact mode;
	// the cached, shared object in metadata-only mode).
	object() (runtime.Object, error)
	// compact reports whether the item is of a compact informer (its JSON bytes stored),
	// not of a metadata-only one.
	compact() bool
}

type kshard[T informer.Object] struct {
	inf *informer.Informer[T]
	cfg *shardConfig
}

type kitem[T informer.Object] struct{ informer.Item[T] }

func (it kitem[T]) object() (runtime.Object, error) { return it.Object() }

func (it kitem[T]) compact() bool {
	var zero T
	_, ok := any(zero).(*unstructured.Unstructured)
	return ok
}

func (s *kshard[T]) config() *shardConfig                  { return s.cfg }
func (s *kshard[T]) status() informer.Status               { return s.inf.Status() }
func (s *kshard[T]) resource() discovery.Resource          { return s.inf.Resource() }
func (s *kshard[T]) hasSynced() bool                       { return s.inf.HasSynced() }
func (s *kshard[T]) waitForSync(ctx context.Context) error { return s.inf.WaitForSync(ctx) }
func (s *kshard[T]) waitForSyncOrPark(ctx context.Context) error {
	return s.inf.WaitForSyncOrPark(ctx)
}

func (s *kshard[T]) getItem(ns, name string) (item, error) {
	it, err := s.inf.GetItem(ns, name)
	if err != nil {
		return nil, err
	}
	return kitem[T]{it}, nil
}

func (s *kshard[T]) queryItems(ctx context.Context, q query.Query) ([]item, error) {
	res, err := s.inf.QueryItems(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]item, len(res.Items))
	for i, it := range res.Items {
		out[i] = kitem[T]{it}
	}
	return out, nil
}

// addHandler adds h as a handler of Items (informer.ItemHandlerFuncs): h receives each
// object as an item, which the access decodes straight into its kind (eventObject), not
// first into the informer's *unstructured.Unstructured.
func (s *kshard[T]) addHandler(h toolscache.ResourceEventHandler) (*informer.Registration, error) {
	return s.inf.AddEventHandler(informer.ItemHandlerFuncs[T]{
		AddFunc:    func(it informer.Item[T], initial bool) { h.OnAdd(kitem[T]{it}, initial) },
		UpdateFunc: func(old, cur informer.Item[T]) { h.OnUpdate(kitem[T]{old}, kitem[T]{cur}) },
		DeleteFunc: func(it informer.Item[T], finalStateUnknown bool) {
			if finalStateUnknown {
				h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: it.Key(), Obj: kitem[T]{it}})
				return
			}
			h.OnDelete(kitem[T]{it})
		},
		// The handlers crcache adds hand controller-runtime typed objects, decoded from
		// each item (convertingHandler): kindex paces the start's garbage for them.
		Decodes: true,
	})
}

func (s *kshard[T]) removeHandler(r *informer.Registration) error { return s.inf.RemoveEventHandler(r) }

func (s *kshard[T]) handOff(r *informer.Registration) (map[string]item, <-chan struct{}, error) {
	seen, done, err := s.inf.HandOffEventHandler(r)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]item, len(seen))
	for key, it := range seen {
		out[key] = kitem[T]{it}
	}
	return out, done, nil
}

// addIndexFunc registers fn on Items (informer.Informer.AddItemIndexFunc): fn receives
// each object as an item, which the access decodes straight into its kind (eventObject).
func (s *kshard[T]) addIndexFunc(name string, fn toolscache.IndexFunc) error {
	return s.inf.AddItemIndexFunc(name, func(it informer.Item[T]) ([]string, error) { return fn(kitem[T]{it}) })
}
func (s *kshard[T]) addIndexPath(name string, p *jsonpath.Path) error {
	return s.inf.AddIndexPath(name, p)
}
func (s *kshard[T]) removeIndex(name string) error { return s.inf.RemoveIndex(name) }
func (s *kshard[T]) indexNames() []string          { return s.inf.IndexNames() }
func (s *kshard[T]) release()                      { s.inf.Release() }
