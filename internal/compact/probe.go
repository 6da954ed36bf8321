package compact

import (
	"context"

	"github.com/kindex/kindex/internal/storage"
)

var _ storage.ResourceVersionProber = (*ListerWatcher)(nil)

// CurrentResourceVersion learns the server's current resourceVersion for lw's resource and
// namespace without a LIST: the probe watch of storage.ProbeOptions, whose
// initial-events-end bookmark carries a resourceVersion at least as recent as every change
// the server had accepted when the request arrived (storage.InitialEventsEnd). The watch
// is closed before returning.
func (lw *ListerWatcher) CurrentResourceVersion(ctx context.Context) (string, error) {
	if lw == nil || lw.client == nil {
		return "", errNoClient
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := storage.ProbeOptions()
	w, err := lw.client.Get().AbsPath(lw.path...).
		SpecificallyVersionedParams(&opts, storage.ParameterCodec, storage.ParamsVersion).
		Watch(ctx)
	if err != nil {
		return "", err
	}
	defer w.Stop()
	return storage.InitialEventsEnd(ctx, w)
}
