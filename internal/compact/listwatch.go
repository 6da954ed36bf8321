package compact

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/internal/storage"
)

// NewClient returns a rest client for compact lists and watches: cfg's host, credentials,
// transport (wrappers included), rate limits and user agent, with JSON requested and
// decoded by d. It is what the dynamic client builds (dynamic.ConfigFor), with this
// package's serializer instead of the unstructured one; like it, it never asks for CBOR.
func NewClient(cfg *rest.Config, d *Decoder) (rest.Interface, error) {
	if cfg == nil {
		return nil, errors.New("compact: nil rest.Config")
	}
	if d == nil {
		return nil, errors.New("compact: nil Decoder")
	}
	config := rest.CopyConfig(cfg)
	config.ContentType = "application/json"
	config.AcceptContentTypes = "application/json"
	config.NegotiatedSerializer = newNegotiatedSerializer(d)
	config.GroupVersion = nil
	config.APIPath = "/compact-client-uses-absolute-paths"
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	client, err := rest.UnversionedRESTClientForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	return client, nil
}

var errNoClient = errors.New("compact: ListerWatcher without a client (use NewListerWatcher with a client from NewClient)")

// ListerWatcher lists and watches one target with a client from NewClient, making the
// requests the dynamic client makes for the same options (path, namespace, selectors,
// timeoutSeconds, resourceVersion, limit/continue, watch-list parameters), and returns
// compact objects: LISTs return a *List, watches stream *Object events (and *metav1.Status
// for ERROR events).
//
// By default it supports client-go's watch-list, so a Reflector makes its initial sync a
// WATCH with sendInitialEvents=true when the WatchListClient feature is on (the default),
// and falls back to paged LISTs otherwise or when the server refuses.
//
// StreamingLists turns it into a streaming lister instead: it declines watch-list
// (IsWatchListSemanticsUnSupported), so the Reflector lists and then watches, and each LIST
// is one consistent request (resourceVersion "" where the Reflector asks for "0", no page
// limit) whose body is decoded while it arrives (Decoder.DecodeListFrom), never held whole.
// Why: on kube-apiserver 1.37 a watch-list stream of N objects costs the apiserver about
// twice the CPU time of a LIST of the same objects (each initial event is encoded,
// framed and flushed on its own), which on a busy control plane, or a small one, is what a
// sync waits for. The LIST is served from the apiserver's watch cache (consistent reads
// from the cache, Kubernetes 1.31 and later) and streamed by its JSON list encoder (1.33
// and later), so it costs neither a quorum read of every object from etcd nor the
// apiserver memory of the whole response that watch-list was introduced to avoid. The
// figures are in bench/README.md (make bench-compare shows the apiserver's CPU time).
//
// One LIST of everything must end within the apiserver's request timeout
// (--request-timeout, a minute by default), which cuts it wherever it is: a client that
// reads slower than that (a large resource, a CPU-throttled process) would never sync,
// relisting into the same cut. So after streamCutLimit streamed LISTs in a row whose body
// was cut before its end, a streaming lister lists in pages instead (consistent, 500
// objects a page unless the Reflector asks for another size), for the rest of its life (one
// run of an informer), and says so once in its log.
type ListerWatcher struct {
	client rest.Interface
	path   []string
	label  string
	field  string
	shard  string
	stream *Decoder // non-nil: streaming lists (StreamingLists)
	// cuts counts the streamed LISTs in a row whose body failed after the response began
	// (streaming listers only).
	cuts *atomic.Int32
}

// streamCutLimit is how many streamed LISTs in a row may be cut before a streaming lister
// lists in pages (see ListerWatcher); streamPageSize is the page size then, client-go's.
const (
	streamCutLimit = 2
	streamPageSize = 500
)

var (
	_ cache.ListerWatcherWithContext = (*ListerWatcher)(nil)
	_ cache.ListerWatcher            = (*ListerWatcher)(nil)
)

// NewListerWatcher returns the ListerWatcher of t. client must come from NewClient. The
// namespace applies to namespaced resources only; t's selectors replace those of the
// options the Reflector passes, as in kindex's dynamic mode.
func NewListerWatcher(client rest.Interface, t storage.Target) *ListerWatcher {
	ns := ""
	if t.Resource.Namespaced {
		ns = t.Namespace
	}
	return &ListerWatcher{client: client, path: storage.ResourcePath(t.Resource.GVR, ns), label: t.LabelSelector, field: t.FieldSelector,
		shard: t.ShardSelector}
}

// StreamingLists returns a copy of lw that lists with one streamed, consistent request
// decoded by d, and declines watch-list (see ListerWatcher).
func (lw *ListerWatcher) StreamingLists(d *Decoder) *ListerWatcher {
	c := *lw
	c.stream = d
	c.cuts = new(atomic.Int32)
	return &c
}

// IsWatchListSemanticsUnSupported reports whether lw declines watch-list: true for a
// streaming lister (client-go's Reflector then lists and watches).
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool {
	return lw != nil && lw.stream != nil
}

// ListWithContext makes one LIST request (one page when opts.Limit is set, except for a
// streaming lister, which asks for everything at once).
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if lw == nil || lw.client == nil {
		return nil, errNoClient
	}
	lw.apply(&opts)
	if lw.stream != nil {
		if lw.cuts.Load() < streamCutLimit {
			return lw.streamList(ctx, opts)
		}
		// Streamed LISTs were cut: pages, each a request of its own. A first page asks for
		// a consistent read ("0" may be served whole from the apiserver's cache, ignoring
		// the limit).
		if opts.Continue == "" && opts.ResourceVersion == "0" {
			opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
		}
		if opts.Limit <= 0 {
			opts.Limit = streamPageSize
		}
	}
	list := &List{}
	err := lw.client.Get().AbsPath(lw.path...).
		SpecificallyVersionedParams(&opts, storage.ParameterCodec, storage.ParamsVersion).
		Do(ctx).Into(list)
	if err != nil {
		return nil, err
	}
	return list, nil
}

// streamList makes one LIST and decodes its body as it arrives; with the cache's objects in
// ctx (storage.WithKnownObjects: a relist), unchanged items are the cached objects. The Reflector's first list
// asks for resourceVersion "0" (any cached state, possibly stale) in pages of 500; here it
// becomes a consistent read ("") of everything at once. A continuation (a page after a
// continue token, which a streaming lister never asks for) is left as it is.
func (lw *ListerWatcher) streamList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if opts.Continue == "" {
		opts.Limit = 0
		if opts.ResourceVersion == "0" {
			opts.ResourceVersion = ""
			opts.ResourceVersionMatch = ""
		}
	}
	body, err := lw.client.Get().AbsPath(lw.path...).
		SpecificallyVersionedParams(&opts, storage.ParameterCodec, storage.ParamsVersion).
		Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }()
	var list *List
	if known := storage.KnownObjectsFrom(ctx); known != nil {
		list, err = lw.stream.DecodeListFromReusing(body, known)
	} else {
		list, err = lw.stream.DecodeListFrom(body)
	}
	switch {
	case err == nil:
		lw.cuts.Store(0)
		return list, nil
	case ctx.Err() == nil && lw.cuts.Add(1) == streamCutLimit:
		klog.FromContext(ctx).Info("Streamed LISTs were cut before their end twice in a row (the apiserver's --request-timeout?): listing in pages from now on",
			"pageSize", streamPageSize, "err", err.Error())
	}
	return nil, err
}

// WatchWithContext starts a WATCH (a watch-list stream when opts.SendInitialEvents is set).
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if lw == nil || lw.client == nil {
		return nil, errNoClient
	}
	lw.apply(&opts)
	opts.Watch = true
	return lw.client.Get().AbsPath(lw.path...).
		SpecificallyVersionedParams(&opts, storage.ParameterCodec, storage.ParamsVersion).
		Watch(ctx)
}

// List is ListWithContext without a context, for APIs that take a cache.ListerWatcher.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context, for APIs that take a cache.ListerWatcher.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw *ListerWatcher) apply(o *metav1.ListOptions) {
	o.LabelSelector = lw.label
	o.FieldSelector = lw.field
	o.ShardSelector = lw.shard
}
