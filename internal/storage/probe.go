package storage

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// probeFieldSelector matches no object: the probe's initial events are none.
const probeFieldSelector = "metadata.name=a,metadata.name!=a"

// ErrNoProbe is returned by a probe whose watch ended without an initial-events-end
// bookmark (a server that does not support watch-list, or ended the watch early).
var ErrNoProbe = errors.New("kindex: the server sent no initial-events-end bookmark")

// ProbeOptions are the options of a watch that learns the server's current
// resourceVersion without a LIST (ResourceVersionProber): sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan and resourceVersion "" (a consistent read: the
// apiserver's watch cache first catches up with etcd's current revision), with a field
// selector that matches no object, so that its initial events are none and the bookmark
// that ends them carries a resourceVersion at least as recent as every change the server
// had accepted when the request arrived.
func ProbeOptions() metav1.ListOptions {
	send := true
	timeout := int64(60)
	return metav1.ListOptions{
		Watch:                true,
		SendInitialEvents:    &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
		FieldSelector:        probeFieldSelector,
		TimeoutSeconds:       &timeout,
	}
}

// InitialEventsEnd reads a probe watch (ProbeOptions) until the bookmark that ends its
// initial events and returns that bookmark's resourceVersion. The caller stops w.
func InitialEventsEnd(ctx context.Context, w watch.Interface) (string, error) {
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
					return "", fmt.Errorf("kindex: probe: %s (%s, code %d)", st.Message, st.Reason, st.Code)
				}
				return "", fmt.Errorf("kindex: probe: error event %T", ev.Object)
			case watch.Bookmark:
				o, err := meta.Accessor(ev.Object)
				if err != nil || o.GetResourceVersion() == "" {
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
