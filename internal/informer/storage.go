package informer

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/query"
)

// Store holds one informer's objects (as the storage mode stores them). It outlives runs:
// a park and a resume keep it, and it is the FIFO's KnownObjects, so a relist emits
// Deleted for whatever vanished meanwhile. Only the informer's processing loop writes it
// (Add, Update, Delete, Replace); queries read it concurrently, so implementations must be
// safe for concurrent use. Keys are cache.DeletionHandlingMetaNamespaceKeyFunc keys
// ("namespace/name" or "name").
//
// kindex's indexed store (JSONPath indexes added and removed at run time) implements this
// interface and is plugged in through Internal.NewStore; the optional NamespacedStore lets
// queries by namespace avoid a full scan.
type Store interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Get(obj any) (item any, exists bool, err error)
	GetByKey(key string) (item any, exists bool, err error)
	List() []any
	ListKeys() []string
	Replace(items []any, resourceVersion string) error
	Resync() error
}

// NamespacedStore is implemented by stores that list one namespace without a full scan.
type NamespacedStore interface {
	ByNamespace(namespace string) []any
}

// IndexedStore is a Store with indexes added and removed at run time and a query planner:
// kindex's *store.Store. Informer indexes, queries and the owner index (Dependents, Orphans)
// need it; on an informer whose store is a plain Store, AddIndex and Query return
// ErrIndexesUnsupported and Dependents and Orphans scan.
type IndexedStore interface {
	Store
	NamespacedStore
	AddIndex(name string, fn store.IndexFunc) error
	RemoveIndex(name string) (gone bool, err error)
	IndexStats(name string) (store.IndexStats, error)
	IndexKeysIn(index, value, namespace string, allNamespaces bool) ([]string, error)
	Query(q query.Query, opts store.QueryOptions) ([]store.Item, string, query.Plan, error)
}

var _ IndexedStore = (*store.Store)(nil)

// NewIndexedStore returns kindex's indexed store (package internal/store), the store of the
// dynamic and metadata modes.
func NewIndexedStore() Store { return store.New(store.Options{}) }

// NewIndexerStore returns client-go's thread-safe Indexer with a namespace index: a plain
// Store, without run-time indexes or queries.
func NewIndexerStore() Store {
	return &indexerStore{Indexer: cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
}

type indexerStore struct {
	cache.Indexer
}

func (s *indexerStore) ByNamespace(namespace string) []any {
	items, err := s.Indexer.ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil
	}
	return items
}

// Target is what one informer lists and watches.
type Target struct {
	Resource      discovery.Resource
	Namespace     string // "" for all namespaces or a cluster-scoped resource
	LabelSelector string
	FieldSelector string
}

// StorageMode is how one kind of informer talks to the server and keeps objects: the dynamic
// mode lists and watches JSON into *unstructured.Unstructured and stores them as they are;
// the metadata mode uses the metadata client (protobuf) and *metav1.PartialObjectMetadata; a
// compact mode can decode raw JSON itself, store compact bytes and decode lazily in Object,
// without the front ends changing: they only see Object's result.
type StorageMode interface {
	// Name identifies the mode in keys, metrics and logs.
	Name() string
	// ListerWatcher lists and watches one target. It must keep client-go's watch-list
	// support: return a ListerWatcher that does not claim IsWatchListSemanticsUnSupported
	// unless the client really lacks it (fake clients).
	ListerWatcher(t Target) cache.ListerWatcherWithContext
	// ExampleObject is the reflector's expected type; nil accepts anything.
	ExampleObject() runtime.Object
	// Transform returns the FIFO's transform: it turns what the ListerWatcher delivers into
	// what the store holds. It strips managedFields unless keepManagedFields, then applies
	// user (nil for none), which sees the user-facing object type. It is applied twice to
	// objects of a watch-list initial stream (client-go does so), so it must be idempotent.
	Transform(keepManagedFields bool, user cache.TransformFunc) cache.TransformFunc
	// NewStore returns an empty store for one informer.
	NewStore() Store
	// Object turns a stored item into the object users and handlers see. It must be cheap
	// or cache its result: List calls it for every item.
	Object(item any) (any, error)
}
