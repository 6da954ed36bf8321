package crcache

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
)

// reportWatchErrors calls h, controller-runtime's cache.Options.DefaultWatchErrorHandler,
// with each list or watch error an informer of f records (Status.LastError): once per
// error, from the status subscription's goroutine, in order. A parked informer (a deleted
// CRD, a 403) makes no request while parked, so h hears of it once, not in a loop.
//
// kindex has no client-go Reflector; h gets a stand-in per informer, named after it
// (namespace, selectors and storage mode included) and typed as the informer's resource,
// which is what handlers read (client-go's own DefaultWatchErrorHandler logs its name and
// type). It is never run.
func reportWatchErrors[T informer.Object](ctx context.Context, f *informer.Factory[T], h toolscache.WatchErrorHandlerWithContext) error {
	// SubscribeStatus calls from one goroutine, in order: the maps need no lock.
	last := map[informer.Key]time.Time{}
	stand := map[informer.Key]*toolscache.Reflector{}
	_, err := f.SubscribeStatus(func(st informer.Status) {
		if st.LastError == nil || !st.LastErrorTime.After(last[st.Key]) {
			return
		}
		last[st.Key] = st.LastErrorTime
		r := stand[st.Key]
		if r == nil {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(st.Resource.GVK)
			r = toolscache.NewReflectorWithOptions(&toolscache.ListWatch{}, u, toolscache.NewStore(toolscache.MetaNamespaceKeyFunc),
				toolscache.ReflectorOptions{Name: "kindex " + st.Key.String(), TypeDescription: st.Key.GVR.String()})
			stand[st.Key] = r
		}
		h(ctx, r, st.LastError)
	})
	return err
}
