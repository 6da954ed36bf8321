package compact

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kindex/kindex/internal/storage"
)

var _ storage.ResourceVersionProber = (*ListerWatcher)(nil)

// probeFieldSelector matches no object: the probe's initial events are none.
const probeFieldSelector = "metadata.name=a,metadata.name!=a"

// ErrNoProbe is returned by CurrentResourceVersion when the server's answer carries no
// resourceVersion (a server that does not support watch-list, or ended the watch early).
var ErrNoProbe = errors.New("compact: the server sent no initial-events-end bookmark")

// CurrentResourceVersion learns the server's current resourceVersion for lw's resource and
// namespace without a LIST: it opens a WATCH with sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan and resourceVersion "" (a consistent read: the
// apiserver's watch cache first catches up with etcd's current revision), with a field
// selector that matches no object, and returns the resourceVersion of the bookmark that
// ends its (empty) initial events. That version is at least as recent as every change the
// server had accepted when the request arrived. The watch is closed before returning.
func (lw *ListerWatcher) CurrentResourceVersion(ctx context.Context) (string, error) {
	if lw == nil || lw.client == nil {
		return "", errNoClient
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	send := true
	timeout := int64(60)
	opts := metav1.ListOptions{
		Watch:                true,
		SendInitialEvents:    &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
		FieldSelector:        probeFieldSelector,
		TimeoutSeconds:       &timeout,
	}
	w, err := lw.client.Get().AbsPath(lw.path...).
		SpecificallyVersionedParams(&opts, parameterCodec, versionV1).
		Watch(ctx)
	if err != nil {
		return "", err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return "", ErrNoProbe
			}
			switch ev.Type {
			case watch.Error:
				if st, ok := ev.Object.(*metav1.Status); ok {
					return "", fmt.Errorf("compact: probe: %s (%s, code %d)", st.Message, st.Reason, st.Code)
				}
				return "", fmt.Errorf("compact: probe: error event %T", ev.Object)
			case watch.Bookmark:
				o, ok := ev.Object.(*Object)
				if !ok || o.GetResourceVersion() == "" {
					return "", ErrNoProbe
				}
				if o.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				return o.GetResourceVersion(), nil
			}
			// An object would mean the selector matched one: ignore it, wait for the end.
		}
	}
}
