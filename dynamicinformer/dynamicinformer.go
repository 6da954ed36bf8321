package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/compact"
	"github.com/kindex/kindex/internal/storage"
)

// The types of this front end: package informer's, for unstructured objects. Everything
// else (Status, Phase, errors, options of one informer) is package informer's.
type (
	// Object is the type this front end hands out.
	Object = *unstructured.Unstructured
	// Options configures a Factory (informer.Options). The zero value is valid.
	Options = informer.Options[Object]
	// Factory creates shared informers on demand (informer.Factory); see NewFactory.
	Factory = informer.Factory[Object]
	// Informer is one reference to a shared informer (informer.Informer); Release it.
	Informer = informer.Informer[Object]
)

// NewFactory returns a factory of unstructured informers for cfg. Lists and watches are
// JSON, as with client-go's dynamic client, but on kindex's own wire path: the bodies are split
// into objects, managedFields are cut from the bytes unless Options.KeepManagedFields, and
// each object is decoded once by a decoder that builds the same maps as apimachinery's in
// well under half the time, with shared strings. Every client it builds (discovery when
// Options.Discovery is nil, access reviews) refuses redirects to another host. Call Start
// before requesting informers.
func NewFactory(cfg *rest.Config, opts Options) (*Factory, error) {
	return informer.New(cfg, opts, func(cfg *rest.Config, sc storage.Config) (storage.Mode, error) {
		m, err := compact.NewUnstructured(cfg, sc.KeepManagedFields)
		if err != nil {
			return nil, err // keep a typed nil out of the interface
		}
		return m, nil
	})
}

// NewClientGoFactory is NewFactory on client-go's dynamic client, which decodes with
// apimachinery's JSON decoder: slower and larger, kept for comparison and as a fallback.
func NewClientGoFactory(cfg *rest.Config, opts Options) (*Factory, error) {
	return informer.New(cfg, opts, func(cfg *rest.Config, sc storage.Config) (storage.Mode, error) {
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return storage.NewDynamicMode(client, sc), nil
	})
}
