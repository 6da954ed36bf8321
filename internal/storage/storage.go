package storage

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/jsonpath"
)

// Target is what one informer lists and watches.
type Target struct {
	Resource  discovery.Resource
	Namespace string // "" for all namespaces or a cluster-scoped resource
	// Restricted is the namespace the informer was asked to keep to when Namespace is ""
	// because the resource was cluster-scoped then: were it served namespaced later (a CRD
	// re-created with the other scope), the informer must not list every namespace.
	Restricted    string
	LabelSelector string
	FieldSelector string
	// ShardSelector is sent as ListOptions.ShardSelector ("" for none): see
	// informer.Shard.
	ShardSelector string
}

// Apply sets the target's selectors on list or watch options.
func (t Target) Apply(o *metav1.ListOptions) {
	o.LabelSelector = t.LabelSelector
	o.FieldSelector = t.FieldSelector
	o.ShardSelector = t.ShardSelector
}

// Config is what the informer core tells a storage mode when it is built: the factory's
// Options, validated and compiled once.
type Config struct {
	// KeepManagedFields keeps metadata.managedFields; by default the mode strips them
	// before anything is stored.
	KeepManagedFields bool
	// Indexes are the factory's Options.Indexes, compiled (name -> path): a mode that keeps
	// part of each object keeps what they read when asked to.
	Indexes map[string]*jsonpath.Path
}

// Mode is how one kind of informer talks to the server and keeps objects: the dynamic mode
// lists and watches JSON into *unstructured.Unstructured and stores them as they are; the
// metadata mode uses the metadata client (protobuf) and *metav1.PartialObjectMetadata; the
// compact mode decodes raw JSON itself, stores compact bytes and decodes in Object. Every
// mode's objects are kept in kindex's indexed store (internal/store).
type Mode interface {
	// Name identifies the mode in keys, metrics and logs.
	Name() string
	// ListerWatcher lists and watches one target. It must keep client-go's watch-list
	// support: return a ListerWatcher that does not claim IsWatchListSemanticsUnSupported
	// unless the client really lacks it (fake clients).
	ListerWatcher(t Target) cache.ListerWatcherWithContext
	// ExampleObject is the reflector's expected type; nil accepts anything.
	ExampleObject() runtime.Object
	// Transform returns the FIFO's transform: it turns what the ListerWatcher delivers into
	// what the store holds (managedFields stripped unless Config.KeepManagedFields), then
	// applies user (nil for none), which sees the user-facing object type. It is applied
	// twice to objects of a watch-list initial stream (client-go does so), so it must be
	// idempotent.
	Transform(user cache.TransformFunc) cache.TransformFunc
	// Object turns a stored item into the object users and handlers see. It must be cheap
	// or say what it costs: List calls it for every item.
	Object(item any) (any, error)
}

// Decoding is implemented by storage modes whose Object decodes a new object on every call
// (the compact mode): a handler of objects turns every stored item it is given into
// garbage, which the informer's start paces (informer.Options.DisableStartGC).
type Decoding interface {
	ObjectDecodes() bool
}

// PathChecker is implemented by storage modes that keep only part of each object:
// CheckPath returns an error if the expression reads a field they drop.
type PathChecker interface {
	CheckPath(p *jsonpath.Path) error
}
