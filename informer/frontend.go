package informer

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/httpsafe"
	"github.com/kindex/kindex/internal/storage"
)

// ModeBuilder builds a storage mode from the factory's redirect-safe config and its
// validated options. The front ends supply it (dynamicinformer.NewFactory,
// NewCompactFactory, NewClientGoFactory, metadataonly.NewFactory); the mode itself is
// internal to kindex.
type ModeBuilder = func(cfg *rest.Config, sc storage.Config) (storage.Mode, error)

// New is what a front end's constructor calls; programs call the front end's. It makes cfg
// refuse cross-host redirects, builds the storage mode from that config, and creates (and
// later starts and stops) a discovery client when opts.Discovery is nil.
func New[T Object](cfg *rest.Config, opts Options[T], newMode ModeBuilder) (*Factory[T], error) {
	if cfg == nil {
		return nil, errors.New("kindex: nil rest.Config")
	}
	safe := httpsafe.Config(cfg)
	var in hooks
	if opts.Discovery == nil {
		d, err := discovery.New(safe, discovery.Options{Logger: opts.Logger})
		if err != nil {
			return nil, fmt.Errorf("kindex: %w", err)
		}
		opts.Discovery = d
		in.StartDiscovery = func(ctx context.Context) error { return d.Start(ctx) }
		in.WaitDiscovery = d.Wait
	}
	return newFactory(safe, opts, newMode, in)
}
