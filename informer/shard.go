package informer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/watchfwd"
)

// ShardField is the metadata field whose hash places an object in a shard, in the
// field-path form of the API's shard selectors.
type ShardField string

const (
	// ShardByUID hashes metadata.uid: objects spread evenly whatever their names and
	// namespaces. The default.
	ShardByUID ShardField = "object.metadata.uid"
	// ShardByNamespace hashes metadata.namespace: every object of a namespace falls in the
	// same shard (cluster-scoped objects hash the empty string). An informer of one
	// namespace outside the shard holds nothing, which it logs once.
	ShardByNamespace ShardField = "object.metadata.namespace"
)

// ShardFilter says who applies an informer's shard (Status.ShardFilter).
type ShardFilter string

const (
	// ShardFilterServer: the apiserver honoured the shard selector.
	ShardFilterServer ShardFilter = "server"
	// ShardFilterClient: the apiserver ignored it; kindex filters what it receives.
	ShardFilterClient ShardFilter = "client"
)

// ShardRange is a contiguous range of the 64-bit FNV-1a hash space, both ends included:
// {0, math.MaxUint64} is the whole space.
type ShardRange struct {
	Start, Last uint64
}

// Shard selects the objects whose 64-bit FNV-1a hash of Field (the API server's hash,
// k8s.io/apimachinery/pkg/sharding) falls in one of Ranges. The zero Shard selects
// everything.
//
// An informer with a shard sends it as ListOptions.ShardSelector
// (shardRange(object.metadata.uid, '0x...', '0x...') || ...) on every list and watch.
// Kubernetes 1.36 and later filter on the server when the feature gate
// ShardedListAndWatch is on, and say so by echoing the selector in the list's
// ListMeta.ShardInfo (except for custom resources, whose lists they filter without echoing
// anything, as of 1.37); older servers, or the gate off, ignore the parameter. kindex asks
// once per run (one JSON LIST with limit=1 through the dynamic client, whatever the storage
// mode: the same cost in every mode, watch-list included, where no list response exists to
// read ShardInfo from; not through the metadata client, whose lists come without ShardInfo;
// a second one where the first answer neither echoes the selector nor shows it ignored, as
// for custom resources: see newShardProber) and reports the answer in Status.ShardFilter.
// Whatever the answer, every
// listed object and watch event is checked against the shard before it reaches the store
// (one FNV-1a hash of a UID, well under a microsecond): where the server filtered, nothing
// is dropped; where it did not, kindex drops what is outside. So an informer holds the same
// objects either way. An object never changes shard: its UID and namespace are immutable.
type Shard struct {
	// Field is what is hashed; "" means ShardByUID.
	Field ShardField
	// Ranges may overlap or touch; they are merged. None means no shard. At most about
	// 1,200 once merged: the API server refuses a longer selector (maxShardSelector).
	Ranges []ShardRange
}

// FullRange is the whole hash space.
var FullRange = ShardRange{Start: 0, Last: math.MaxUint64}

// IsZero reports whether s selects everything without a shard selector.
func (s Shard) IsZero() bool { return len(s.Ranges) == 0 }

func (s Shard) field() ShardField {
	if s.Field == "" {
		return ShardByUID
	}
	return s.Field
}

// Normalize returns s with Field defaulted and Ranges sorted and merged.
func (s Shard) Normalize() Shard {
	if s.IsZero() {
		return Shard{}
	}
	rs := slices.Clone(s.Ranges)
	slices.SortFunc(rs, func(a, b ShardRange) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	out := []ShardRange{rs[0]}
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if last.Last == math.MaxUint64 || r.Start <= last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return Shard{Field: s.field(), Ranges: out}
}

// Contains reports whether hash falls in one of s's ranges (always true for the zero Shard).
func (s Shard) Contains(hash uint64) bool {
	if s.IsZero() {
		return true
	}
	for _, r := range s.Ranges {
		if hash >= r.Start && hash <= r.Last {
			return true
		}
	}
	return false
}

// Matches reports whether an object whose Field is value belongs to s.
func (s Shard) Matches(value string) bool { return s.Contains(Hash(value)) }

// Covers reports whether every hash in o is in s.
func (s Shard) Covers(o Shard) bool {
	if s.IsZero() {
		return true
	}
	if o.IsZero() {
		o = Shard{Ranges: []ShardRange{FullRange}}
	}
	n := s.Normalize()
	for _, r := range o.Normalize().Ranges {
		ok := false
		for _, c := range n.Ranges {
			if r.Start >= c.Start && r.Last <= c.Last {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Union is the shard of both s's and o's ranges (on s's field; o's must be the same).
func (s Shard) Union(o Shard) Shard {
	f := s.Field
	if f == "" {
		f = o.Field
	}
	return Shard{Field: f, Ranges: append(slices.Clone(s.Ranges), o.Ranges...)}.Normalize()
}

// Equal reports whether s and o select the same objects the same way.
func (s Shard) Equal(o Shard) bool {
	a, b := s.Normalize(), o.Normalize()
	return a.Field == b.Field && slices.Equal(a.Ranges, b.Ranges)
}

// String is the shard selector sent to the server ("" for the zero Shard).
func (s Shard) String() string {
	sel, err := s.selector()
	if err != nil {
		return "invalid shard: " + err.Error()
	}
	return sel
}

// Hash is the 64-bit FNV-1a hash of value, as the API server computes it for shard
// selectors (k8s.io/apimachinery/pkg/sharding.HashField).
func Hash(value string) uint64 {
	h, err := strconv.ParseUint(sharding.HashField(value), 16, 64)
	if err != nil {
		panic(fmt.Sprintf("kindex: sharding.HashField returned %q", sharding.HashField(value))) // 16 hex digits by contract
	}
	return h
}

// requirements is s in apimachinery's form: [Start, End) with End up to 2^64.
func (s Shard) requirements() []sharding.ShardRangeRequirement {
	n := s.Normalize()
	reqs := make([]sharding.ShardRangeRequirement, 0, len(n.Ranges))
	for _, r := range n.Ranges {
		end := "0x10000000000000000"
		if r.Last != math.MaxUint64 {
			end = fmt.Sprintf("0x%016x", r.Last+1)
		}
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: string(n.Field),
			Start: fmt.Sprintf("0x%016x", r.Start), End: end})
	}
	return reqs
}

// selector validates s and returns its canonical selector ("" for the zero Shard): the
// form the server parses and echoes in ListMeta.ShardInfo.
// A Field other than the two is refused even without Ranges, rather than taken for no shard.
func (s Shard) selector() (string, error) {
	switch s.field() {
	case ShardByUID, ShardByNamespace:
	default:
		return "", fmt.Errorf("kindex: invalid shard field %s (want %q or %q)", quote(string(s.Field)), ShardByUID, ShardByNamespace)
	}
	if s.IsZero() {
		return "", nil
	}
	for _, r := range s.Ranges {
		if r.Start > r.Last {
			return "", fmt.Errorf("kindex: invalid shard range [%#x, %#x]: start after last", r.Start, r.Last)
		}
	}
	sel := sharding.NewSelector(s.requirements()...).String()
	if len(sel) > maxShardSelector {
		return "", fmt.Errorf("kindex: a shard of %d ranges (merged) is a selector of %d characters; the API server parses at most %d",
			len(s.Normalize().Ranges), len(sel), maxShardSelector)
	}
	return sel, nil
}

// maxShardSelector is the longest shard selector kube-apiserver accepts: its CEL parser
// refuses an expression over 100,000 code points (the selector is ASCII), with an error that
// a list retries forever, where the feature gate is on. About 1,200 ranges.
const maxShardSelector = 100_000

// WithShard sets the informer's shard, overriding Options.Shard; the zero Shard removes it.
// Informers of different shards are different informers.
func WithShard(s Shard) Option {
	return func(o *callOptions) { o.shard = &s }
}

// shardMatcher is the client-side filter: apimachinery's selector (the server's hash and
// comparison), with a fallback for objects that are not full metav1.Objects.
type shardMatcher struct {
	field ShardField
	sel   sharding.Selector
	shard Shard
}

func newShardMatcher(s Shard) *shardMatcher {
	return &shardMatcher{field: s.field(), sel: sharding.NewSelector(s.requirements()...), shard: s.Normalize()}
}

type uidNamespacer interface {
	GetUID() types.UID
	GetNamespace() string
}

// match reports whether obj belongs to the shard. An object whose field cannot be read is
// kept: nothing is dropped on a guess.
func (m *shardMatcher) match(obj any) bool {
	if ro, ok := obj.(runtime.Object); ok {
		if _, err := meta.Accessor(ro); err == nil {
			if ok, err := m.sel.Matches(ro); err == nil {
				return ok
			}
		}
	}
	o, ok := obj.(uidNamespacer)
	if !ok {
		return true
	}
	v := o.GetNamespace()
	if m.field == ShardByUID {
		v = string(o.GetUID())
	}
	return m.shard.Matches(v)
}

// shardProber answers whether the server honours shard selectors on field for t.
type shardProber func(ctx context.Context, t storage.Target, field ShardField) (bool, error)

// probeShard is the shard the probe asks for: the single hash 0 of the informer's field, a
// range no object is expected to fall in, so that a server that filters answers with nothing
// and one that ignores the selector with an object of the collection.
func probeShard(field ShardField) Shard {
	return Shard{Field: field, Ranges: []ShardRange{{Start: 0, Last: 0}}}
}

// newShardProber probes with JSON LISTs of limit 1 through the dynamic client, with the
// informer's namespace and selectors and probeShard's selector. The server echoes the
// selector it applied in ListMeta.ShardInfo: server. An object outside probeShard in the
// answer: the server ignored the selector (client). An answer with neither: the server
// filters without echoing (kube-apiserver 1.36-1.37 filters custom resources but their
// UnstructuredList carries no ShardInfo), or there is nothing to list; a second LIST without
// a shard selector tells them apart (an empty collection teaches nothing: client, as kindex
// filters anyway). Not through the metadata client: kube-apiserver 1.37 drops ShardInfo when
// it turns a list into a PartialObjectMetadataList (it copies only resourceVersion and
// continue), although it filtered the items.
func newShardProber(client dynamic.Interface) shardProber {
	return func(ctx context.Context, t storage.Target, field ShardField) (bool, error) {
		var ri dynamic.ResourceInterface = client.Resource(t.Resource.GVR)
		if t.Resource.Namespaced && t.Namespace != "" {
			ri = client.Resource(t.Resource.GVR).Namespace(t.Namespace)
		}
		probe := probeShard(field)
		var o metav1.ListOptions
		t.Apply(&o)
		o.Limit = 1
		o.ShardSelector = probe.String()
		l, err := ri.List(ctx, o)
		if err != nil {
			return false, err
		}
		if sel, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector"); sel != "" {
			return sel == o.ShardSelector, nil
		}
		m := newShardMatcher(probe)
		for i := range l.Items {
			if !m.match(&l.Items[i]) {
				return false, nil // an object the selector excludes: not filtered
			}
		}
		o.ShardSelector = ""
		if rv := l.GetResourceVersion(); rv != "" {
			// The same state as the first answer: an object created between the two is not
			// taken for one the server filtered out.
			o.ResourceVersion, o.ResourceVersionMatch = rv, metav1.ResourceVersionMatchExact
		}
		all, err := ri.List(ctx, o)
		if err != nil {
			return false, err
		}
		for i := range all.Items {
			if !m.match(&all.Items[i]) {
				return true, nil // excluded from the first answer, as the server filtered
			}
		}
		return false, nil
	}
}

// shardLW wraps a mode's ListerWatcher for an informer with a shard: it asks the server
// once per run whether it filters (Status.ShardFilter), and drops listed objects and watch
// events outside the shard in every case (see Shard).
type shardLW struct {
	inner cache.ListerWatcherWithContext
	e     *entry
	m     *shardMatcher

	mu     sync.Mutex
	probed bool
}

// shardLW returns inner wrapped for the entry's shard, or inner without one.
func (e *entry) shardLW(inner cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
	if e.target.ShardSelector == "" {
		return inner
	}
	sh, ok := e.core.shards.Load(e.target.ShardSelector)
	if !ok {
		return inner // cannot happen: keyFor records every selector it builds
	}
	m := newShardMatcher(sh.(Shard))
	if ns := e.target.Namespace; m.field == ShardByNamespace && ns != "" && !m.shard.Matches(ns) &&
		e.outsideLogged.CompareAndSwap(false, true) {
		// Right, and surprising: every object of the namespace hashes alike.
		e.logger.Info("The informer's namespace is outside the factory's shard: it holds no object",
			"namespace", ns, "shard", e.target.ShardSelector)
	}
	return &shardLW{inner: inner, e: e, m: m}
}

var (
	_ cache.ListerWatcherWithContext = (*shardLW)(nil)
	_ cache.ListerWatcher            = (*shardLW)(nil)
)

func (lw *shardLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *shardLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw *shardLW) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(lw.inner)
}

// probe asks the server once per run, before the run's first list or watch-list; a failed
// probe is asked again before the next one (the list itself reports the error).
func (lw *shardLW) probe(ctx context.Context) {
	lw.mu.Lock()
	done := lw.probed
	lw.mu.Unlock()
	if done || lw.e.core.probeShard == nil {
		return
	}
	server, err := lw.e.core.probeShard(ctx, lw.e.targetNow(), lw.m.field)
	if err != nil {
		return
	}
	lw.mu.Lock()
	lw.probed = true
	lw.mu.Unlock()
	f := ShardFilterClient
	if server {
		f = ShardFilterServer
	}
	lw.e.update(func(st *Status) { st.ShardFilter = f })
}

func (lw *shardLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	lw.probe(ctx)
	obj, err := lw.inner.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return obj, nil // the reflector reports what it cannot read
	}
	kept := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		if lw.m.match(it) {
			kept = append(kept, it)
		}
	}
	if len(kept) != len(items) {
		if err := meta.SetList(obj, kept); err != nil {
			return nil, fmt.Errorf("kindex: filter a list by shard: %w", err)
		}
	}
	return obj, nil
}

func (lw *shardLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return lw.watchFiltered(ctx, opts, nil)
}

// watchFiltered is WatchWithContext telling dropped (if not nil) of each event it drops.
func (lw *shardLW) watchFiltered(ctx context.Context, opts metav1.ListOptions, dropped *droppedProgress) (watch.Interface, error) {
	// Before a watch-list, and before the watch of a run whose first list made no request
	// (a snapshot's): once per run either way.
	lw.probe(ctx)
	w, err := lw.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watchfwd.New(w, watchfwd.Options{Keep: func(ev watch.Event) bool {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if lw.m.match(ev.Object) {
				return true
			}
			dropped.dropped(ev.Object)
			return false
		}
		return true
	}}), nil
}

// CurrentResourceVersion asks inner for the server's resourceVersion (a snapshot run's
// probe, which sits above the shard filter), if inner can.
func (lw *shardLW) CurrentResourceVersion(ctx context.Context) (string, error) {
	p, ok := lw.inner.(storage.ResourceVersionProber)
	if !ok {
		return "", errors.New("kindex: the mode cannot learn the server's resourceVersion without a LIST")
	}
	return p.CurrentResourceVersion(ctx)
}
