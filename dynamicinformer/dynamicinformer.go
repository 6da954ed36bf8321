package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/compact"
	"github.com/kindex/kindex/internal/informer"
)

type (
	// Object is the type this front end hands out.
	Object = *unstructured.Unstructured
	// Options configures a Factory; see the field docs. The zero value is valid.
	Options = informer.Options[Object]
	// Factory creates shared informers on demand; see NewFactory.
	Factory = informer.Factory[Object]
	// Informer is one reference to a shared informer; Release it when done.
	Informer = informer.Informer[Object]
	// NamespaceLister lists and gets one namespace's cached objects.
	NamespaceLister = informer.NamespaceLister[Object]
	// WatchAll is a set of informers that follows discovery.
	WatchAll = informer.WatchAll[Object]
	// Dependent is an object found by Factory.Dependents, with its resource.
	Dependent = informer.Dependent[Object]
	// Orphan is an object found by Factory.Orphans, with its dangling and unknown owners.
	Orphan = informer.Orphan[Object]
)

// NewFactory returns a factory of unstructured informers for cfg. Lists and watches are
// JSON, as with client-go's dynamic client, but on kindex's own wire path: the bodies are split
// into objects, managedFields are cut from the bytes unless Options.KeepManagedFields, and
// each object is decoded once by a decoder that builds the same maps as apimachinery's in
// well under half the time, with shared strings. Every client it builds (discovery when
// Options.Discovery is nil, access reviews) refuses redirects to another host. Call Start
// before requesting informers.
func NewFactory(cfg *rest.Config, opts Options) (*Factory, error) {
	return informer.New(cfg, opts, func(cfg *rest.Config) (informer.StorageMode, error) {
		m, err := compact.NewUnstructured(cfg, opts.KeepManagedFields)
		if err != nil {
			return nil, err // keep a typed nil out of the interface
		}
		return m, nil
	})
}

// NewClientGoFactory is NewFactory on client-go's dynamic client, which decodes with
// apimachinery's JSON decoder: slower and larger, kept for comparison and as a fallback.
func NewClientGoFactory(cfg *rest.Config, opts Options) (*Factory, error) {
	return informer.New(cfg, opts, func(cfg *rest.Config) (informer.StorageMode, error) {
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return informer.NewDynamicMode(client), nil
	})
}
