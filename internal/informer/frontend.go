package informer

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/httpsafe"
)

// New is what a front end's NewFactory calls: it makes cfg refuse cross-host redirects,
// builds the storage mode's clients from that config, and creates (and later starts and
// stops) a discovery client when opts.Discovery is nil.
func New[T Object](cfg *rest.Config, opts Options[T], newMode func(*rest.Config) (StorageMode, error)) (*Factory[T], error) {
	if cfg == nil {
		return nil, errors.New("kindex: nil rest.Config")
	}
	safe := httpsafe.Config(cfg)
	mode, err := newMode(safe)
	if err != nil {
		return nil, fmt.Errorf("kindex: %w", err)
	}
	var in Internal
	if opts.Discovery == nil {
		d, err := discovery.New(safe, discovery.Options{Logger: opts.Logger})
		if err != nil {
			return nil, fmt.Errorf("kindex: %w", err)
		}
		opts.Discovery = d
		in.StartDiscovery = func(ctx context.Context) error { return d.Start(ctx) }
		in.WaitDiscovery = d.Wait
	}
	return NewFactory(safe, mode, opts, in)
}
