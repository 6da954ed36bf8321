package metadataonly

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/storage"
)

// The types of this front end: package informer's, for metadata-only objects. Everything
// else (Status, Phase, errors, options of one informer) is package informer's.
type (
	// Object is the type this front end hands out.
	Object = *metav1.PartialObjectMetadata
	// Options configures a Factory (informer.Options). The zero value is valid.
	Options = informer.Options[Object]
	// Factory creates shared informers on demand (informer.Factory); see NewFactory.
	Factory = informer.Factory[Object]
	// Informer is one reference to a shared informer (informer.Informer); Release it.
	Informer = informer.Informer[Object]
)

// ErrNotMetadata is matched (errors.Is) by the error for an index or query on a field
// metadata-only objects do not hold (anything outside apiVersion, kind and metadata;
// metadata.managedFields unless Options.KeepManagedFields): it would find nothing where the
// server's objects have values.
var ErrNotMetadata = storage.ErrNotMetadata

// NewFactory returns a factory of metadata-only informers for cfg: objects are
// *metav1.PartialObjectMetadata fetched as protobuf through the metadata client. Every
// client it builds refuses redirects to another host. Call Start before requesting
// informers.
func NewFactory(cfg *rest.Config, opts Options) (*Factory, error) {
	return informer.New(cfg, opts, func(cfg *rest.Config, sc storage.Config) (storage.Mode, error) {
		client, err := storage.NewMetadataClient(cfg, sc.KeepManagedFields)
		if err != nil {
			return nil, err
		}
		return storage.NewMetadataMode(client, sc), nil
	})
}
