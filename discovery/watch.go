package discovery

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/go-logr/logr"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kindex/kindex/internal/watchfwd"
)

// watcher runs one informer (CRDs or APIServices). When the server refuses it (403, or the
// API is not served) the informer is stopped rather than left retrying, the follower falls
// back to periodic re-discovery, and every RefreshInterval the informer is tried again.
// While its watch is down (before the first one opens, and from the end of one until the
// next opens: an apiserver restarting, client-go's backoff between attempts), the follower
// polls too, and the client does not count as following (Client.Following).
type watcher struct {
	f        *follower
	resource string
	log      logr.Logger // the client's, with the resource
	newInf   func() cache.SharedIndexInformer

	mu       sync.Mutex
	refused  bool
	running  bool
	informer cache.SharedIndexInformer
	// watching: the running informer has a watch open; lastWatch numbers the watches it
	// opened, so that the end of one reported late never marks a newer one down.
	watching  bool
	lastWatch uint64
}

func (w *watcher) isRefused() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

// isDown reports whether the watcher's informer runs without a watch open: changes made now
// reach the client only when a watch opens again (its list, or its events from the last
// resourceVersion), which client-go's backoff may put off for a minute.
func (w *watcher) isDown() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running && !w.refused && !w.watching
}

// watchOpened records that the informer running with ctx opened a watch and returns the
// watch's number. Nothing is recorded once ctx has ended: the informer is stopping.
func (w *watcher) watchOpened(ctx context.Context) uint64 {
	if ctx.Err() != nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastWatch++
	w.watching = true
	return w.lastWatch
}

// watchDown records that the informer running with ctx has no watch open: watch n ended
// (unless a newer one opened meanwhile), or, with n 0, the informer lists or failed to open
// one. It wakes the follower, which polls while the watch is down. Nothing is recorded once
// ctx has ended: the informer is stopping.
func (w *watcher) watchDown(ctx context.Context, n uint64) {
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	closed := w.watching && (n == 0 || n == w.lastWatch)
	if closed {
		w.watching = false
	}
	w.mu.Unlock()
	if closed {
		w.f.signal()
	}
}

func (w *watcher) start(ctx context.Context) {
	w.mu.Lock()
	if w.running {
		w.mu.Unlock()
		return
	}
	ictx, cancel := context.WithCancel(ctx)
	// client-go's informer, reflector and requests log through the context's logger (klog's
	// global logger otherwise): give them the client's, one level more verbose, since a
	// dropped watch is routine and resumes by itself.
	ictx = klog.NewContext(ictx, w.log.V(1))
	inf := w.newInf()
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.watchFailed(ictx, cancel, inf, err)
	})
	w.informer, w.running, w.watching = inf, true, false
	w.mu.Unlock()
	w.f.c.following.Add(1)
	go func() {
		defer w.f.c.following.Done()
		defer cancel()
		inf.RunWithContext(ictx)
		w.mu.Lock()
		if w.informer == inf {
			w.running, w.informer = false, nil
		}
		w.mu.Unlock()
	}()
}

// watchFailed handles a failed list or watch of inf, which runs with ctx: a refusal
// stops it (periodic re-discovery follows changes instead), anything else is logged and
// retried. Once ctx has ended nothing is: a request cut by the client's own end is no
// failure (a command that exits at once printed one to its user).
func (w *watcher) watchFailed(ctx context.Context, cancel context.CancelFunc, inf cache.SharedIndexInformer, err error) {
	if ctx.Err() != nil {
		return
	}
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		cancel()
		w.refuse(inf, err)
		return
	}
	w.logError(err)
}

// logError logs a failed list and watch, which the informer retries with backoff, at the
// levels client-go's default handler uses, but through the client's logger rather than
// client-go's global error handlers.
func (w *watcher) logError(err error) {
	switch {
	case errors.Is(err, io.EOF): // closed normally
	case errors.Is(err, io.ErrUnexpectedEOF):
		w.log.V(1).Info("watch closed with unexpected EOF; resuming", "err", err.Error())
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		w.log.V(4).Info("watch closed: resource version expired; listing again", "err", err.Error())
	default:
		w.log.Error(err, "list and watch failed; retrying with backoff")
	}
}

func (w *watcher) refuse(inf cache.SharedIndexInformer, err error) {
	w.mu.Lock()
	first := w.informer == inf && !w.refused
	if w.informer == inf {
		w.refused = true
	}
	w.mu.Unlock()
	if first {
		w.log.Info("cannot watch; following changes by periodic re-discovery instead",
			"interval", w.f.c.opts.RefreshInterval.String(), "err", err.Error())
		w.f.signal()
	}
}

// probe, while refused, notices an informer that has synced (permission granted) or starts
// a new attempt.
func (w *watcher) probe(ctx context.Context) {
	w.mu.Lock()
	if w.refused && w.running && w.informer.HasSynced() {
		w.refused = false
		w.log.Info("watching again")
	}
	restart := w.refused && !w.running
	w.mu.Unlock()
	if restart {
		w.start(ctx)
	}
}

func newCRDWatcher(f *follower) *watcher {
	client := f.c.crds.ApiextensionsV1().CustomResourceDefinitions()
	return newTypedWatcher(f, "customresourcedefinitions.apiextensions.k8s.io", client.List, client.Watch,
		&apiextv1.CustomResourceDefinition{}, stripCRD, func(obj any, deleted bool) {
			if crd, ok := obj.(*apiextv1.CustomResourceDefinition); ok {
				group, expect := crdExpectation(crd, deleted)
				f.mark(group, "crd/"+crd.Name, expect)
			}
		})
}

func newAPIServiceWatcher(f *follower) *watcher {
	client := f.c.services.ApiregistrationV1().APIServices()
	return newTypedWatcher(f, "apiservices.apiregistration.k8s.io", client.List, client.Watch,
		&apiregv1.APIService{}, stripAPIService, func(obj any, deleted bool) {
			if svc, ok := obj.(*apiregv1.APIService); ok {
				group, expect := apiServiceExpectation(svc, deleted)
				f.mark(group, "apiservice/"+svc.Name, expect)
			}
		})
}

// newTypedWatcher returns a watcher whose informers list and watch with a typed client's
// List and Watch, keep what transform leaves of each object and report changes to onEvent.
func newTypedWatcher[L runtime.Object](f *follower, resource string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	example runtime.Object, transform cache.TransformFunc, onEvent func(obj any, deleted bool),
) *watcher {
	log := f.log.WithValues("resource", resource)
	handlerLog := log.V(1)
	w := &watcher{f: f, resource: resource, log: log}
	w.newInf = func() cache.SharedIndexInformer {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				w.watchDown(ctx, 0) // a reflector lists only without a watch
				return list(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				wi, err := watchFn(ctx, o)
				if err != nil {
					w.watchDown(ctx, 0)
					return nil, err
				}
				n := w.watchOpened(ctx)
				return watchfwd.New(wi, watchfwd.Options{OnEnd: func() { w.watchDown(ctx, n) }}), nil
			},
		}
		inf := cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
		_ = inf.SetTransform(transform)
		_, _ = inf.AddEventHandlerWithOptions(handlerFuncs(onEvent), cache.HandlerOptions{Logger: &handlerLog})
		return inf
	}
	return w
}

// handlerFuncs adapts onEvent to informer callbacks. Adds from the initial list are handled
// like any other: their expectations are checked against the snapshot, which catches what
// changed between the first discovery and the watch.
func handlerFuncs(onEvent func(obj any, deleted bool)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onEvent(obj, false) },
		UpdateFunc: func(_, obj any) { onEvent(obj, false) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			onEvent(obj, true)
		},
	}
}

// stripCRD drops what discovery does not need from cached CRDs (schemas dominate their size).
func stripCRD(obj any) (any, error) {
	crd, ok := obj.(*apiextv1.CustomResourceDefinition)
	if !ok {
		return obj, nil
	}
	crd.ManagedFields = nil
	crd.Annotations = nil
	crd.Spec.Conversion = nil
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		v.Schema, v.AdditionalPrinterColumns, v.SelectableFields, v.Subresources = nil, nil, nil, nil
	}
	return crd, nil
}

func stripAPIService(obj any) (any, error) {
	if svc, ok := obj.(*apiregv1.APIService); ok {
		svc.ManagedFields = nil
		svc.Annotations = nil
		svc.Spec.CABundle = nil
	}
	return obj, nil
}
