package crcache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// Get reads the object key from the cache into out: a typed object (decoded from the
// stored JSON straight into out), an *unstructured.Unstructured or a
// *metav1.PartialObjectMetadata with its GVK set. The first read of a resource starts its
// informer and waits until it has synced (unless ReaderFailOnMissingInformer). Errors:
// apierrors.IsNotFound for a missing object (naming the kind, as controller-runtime's cache
// does); apierrors.IsTimeout when ctx ends before the informer syncs; the server's refusal
// (apierrors.IsForbidden, IsNotFound) at once when the informer is parked before its first
// sync; *cache.ErrCacheNotStarted before Start.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, out client.Object, opts ...client.GetOption) error {
	return c.again(func() error { return c.get(ctx, key, out, opts...) })
}

// maxReadAttempts bounds how often a read starts again after RemoveInformer stopped the
// informer it read: each attempt waits for a new informer's list, so a caller removing
// informers in a loop slows reads down but cannot make them spin.
const maxReadAttempts = 10

// again runs a read, and runs it again (maxReadAttempts in all) if RemoveInformer stopped the
// informer it was reading while the cache runs on: the read then starts a new informer,
// as a read after RemoveInformer does (or fails as one does with
// ReaderFailOnMissingInformer), instead of reporting the removal it raced with.
//
// A read of a resource planned again for a new scope meanwhile (replan.go, errReplanned)
// starts again too, with the new plan.
//
// A read never meets informer.ErrShutdown while the cache runs, so it is not retried: the
// cache shuts a resource's factories down only when it stops, or once every access has
// released their informers for a new plan's (a read of those says ErrReleased, which a
// released informer says even once its factory stopped too); and an access acquiring from
// a resource a new plan replaced acquires again from the new one (materialize).
func (c *Cache) again(read func() error) error {
	for attempt := 0; ; attempt++ {
		err := read()
		if attempt == maxReadAttempts-1 && errors.Is(err, errReplanned) {
			return fmt.Errorf("%w: its informers were planned again %d times during the read", ErrScopeChanged, maxReadAttempts)
		}
		if attempt == maxReadAttempts-1 || !(errors.Is(err, errAccessStopped) || errors.Is(err, informer.ErrReleased) || errors.Is(err, errReplanned)) {
			return err
		}
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if stopping {
			return err
		}
	}
}

func (c *Cache) get(ctx context.Context, key client.ObjectKey, out client.Object, opts ...client.GetOption) error {
	gvk, kind, err := c.gvkOf(out, false)
	if err != nil {
		return err
	}
	a, err := c.accessFor(gvk, kind, c.opts.ReaderFailOnMissingInformer)
	if err != nil {
		return c.refusal(err, gvk, key.Namespace, true, func() error {
			return fmt.Errorf("unable to get: %v because of unknown namespace for the cache", key)
		})
	}
	res := a.resource()
	p := res.plan
	ns := key.Namespace
	if !p.namespaced {
		ns = ""
	}
	i := p.shardFor(ns)
	if i < 0 {
		return fmt.Errorf("unable to get: %v because of unknown namespace for the cache", key)
	}
	if !c.isStarted() {
		return errCacheNotStarted
	}
	if err := c.syncedFor(ctx, a, res, i); err != nil {
		return err
	}
	shards, err := a.currentFor(p)
	if err != nil {
		return err
	}
	it, err := shards[i].getItem(ns, key.Name)
	if c.checkScope(res, shards) {
		return c.replanned(a.key.gvk) // the answer may be the old scope's
	}
	if apierrors.IsNotFound(err) {
		// As controller-runtime's cache says it: the kind where the server says the resource.
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	if err != nil {
		return err
	}
	getOpts := client.GetOptions{}
	getOpts.ApplyOptions(opts)
	noCopy := shards[i].config().noCopy
	if getOpts.UnsafeDisableDeepCopy != nil {
		noCopy = *getOpts.UnsafeDisableDeepCopy
	}
	return a.read(it, out, noCopy)
}

// List reads the cached objects that match opts into list, in (namespace, name) order.
//
//   - Namespace, LabelSelector: as in controller-runtime.
//   - FieldSelector: equality on IndexField names as in controller-runtime, and != as well;
//     a plain selector (client.MatchingFields, fields.ParseSelector) on a name that is not
//     an IndexField or IndexJSONPath index is an ErrInvalidFieldSelector. A *FieldSelector
//     (ParseFields) adds set membership, existence and numeric ranges, on index names or on
//     any JSONPath, indexed on first use up to 16 paths per resource and evaluated on each
//     object after that.
//   - Limit returns at most Limit objects and, when more match, a Continue token; passing it
//     back (client.Continue) returns the next page. Pages follow (namespace, name) order, so
//     an object present throughout is returned exactly once whatever changes in between. The
//     list's RemainingItemCount says how many matches follow the page. A token of another
//     cache or list, or of informers since stopped, is refused (ErrContinueExpired). Without Limit, the
//     list's Continue is "continue-not-supported" and passing that back is an error, as
//     with controller-runtime's cache.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.again(func() error { return c.list(ctx, list, opts...) })
}

func (c *Cache) list(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, kind, err := c.gvkOf(list, true)
	if err != nil {
		return err
	}
	listOpts := client.ListOptions{}
	listOpts.ApplyOptions(opts)
	if listOpts.Continue == continueNotSupported {
		return errContinueNotSupported
	}
	a, err := c.accessFor(gvk, kind, c.opts.ReaderFailOnMissingInformer)
	if err != nil {
		return c.refusal(err, gvk, listOpts.Namespace, listOpts.Namespace != "", func() error {
			return fmt.Errorf("unable to list: %v because of unknown namespace for the cache", listOpts.Namespace)
		})
	}
	res := a.resource()
	p := res.plan
	ns := listOpts.Namespace
	if !p.namespaced {
		ns = ""
	}
	shard := -1
	if ns != "" {
		if shard = p.shardFor(ns); shard < 0 {
			return fmt.Errorf("unable to list: %v because of unknown namespace for the cache", ns)
		}
	}
	if !c.isStarted() {
		return errCacheNotStarted
	}
	if err := c.syncedFor(ctx, a, res, shard); err != nil {
		return err
	}
	shards, err := a.currentFor(p)
	if err != nil {
		return err
	}
	scope := shards
	if shard >= 0 {
		scope = shards[shard : shard+1]
	}
	conds, anyOf, err := a.conditions(listOpts.FieldSelector)
	if errors.Is(err, errMatchesNothing) {
		scope = nil // fields.Nothing(): an empty list
	} else if err != nil {
		return err
	}
	q := query.Query{Namespace: ns, Conditions: conds, AnyOf: anyOf, Scan: true}
	if listOpts.LabelSelector != nil && !listOpts.LabelSelector.Empty() {
		q.Labels = listOpts.LabelSelector
	}
	after, err := decodeContinue(q, res.tokenSource(), listOpts.Continue)
	if err != nil {
		return err
	}
	var items []item
	for _, s := range scope {
		// From memory, once synced: as with controller-runtime's cache, a context that has
		// ended does not fail the read.
		got, err := s.queryItems(context.WithoutCancel(ctx), q)
		if err != nil {
			return fmt.Errorf("crcache: listing %s: %w", gvk, err)
		}
		items = append(items, got...)
	}
	if c.checkScope(res, shards) {
		return c.replanned(gvk) // the answer may be the old scope's
	}
	if len(scope) > 1 {
		slices.SortFunc(items, func(x, y item) int { return compareKeys(x.Key(), y.Key()) })
	}
	if after != "" {
		n, _ := slices.BinarySearchFunc(items, after, func(x item, k string) int { return compareKeys(x.Key(), k) })
		for n < len(items) && compareKeys(items[n].Key(), after) <= 0 {
			n++
		}
		items = items[n:]
	}
	next := ""
	if listOpts.Limit <= 0 {
		next = continueNotSupported // what controller-runtime's cache says of an unlimited list
	}
	var remaining *int64
	if listOpts.Limit > 0 && int64(len(items)) > listOpts.Limit {
		rest := int64(len(items)) - listOpts.Limit
		items = items[:listOpts.Limit]
		next = encodeContinue(q, res.tokenSource(), items[len(items)-1].Key())
		remaining = &rest
	}
	if err := a.fillList(list, items, listShares(p, shards, scope, listOpts.UnsafeDisableDeepCopy)); err != nil {
		return err
	}
	list.SetContinue(next)
	list.SetRemainingItemCount(remaining)
	return nil
}

// refusal returns what a read refused by ReaderFailOnMissingInformer (err, any other error
// is returned as it is) answers in a cache over namespaces (DefaultNamespaces, or the type's
// ByObject Namespaces), as controller-runtime's cache over namespaces looks the type's scope
// up, and then the namespace (when checkNS), before it looks for an informer: the mapper's
// error for a kind the server does not serve (meta.IsNoMatchError), unknown() for a
// namespace outside those of the type; err otherwise.
func (c *Cache) refusal(err error, gvk schema.GroupVersionKind, ns string, checkNS bool, unknown func() error) error {
	var notCached *cache.ErrResourceNotCached
	if !errors.As(err, &notCached) {
		return err
	}
	nsConfigs := c.opts.DefaultNamespaces
	if bo, ok := c.byObject[gvk]; ok && bo.Namespaces != nil {
		nsConfigs = bo.Namespaces
	}
	if len(nsConfigs) == 0 {
		return err
	}
	mapping, merr := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if merr != nil {
		return merr
	}
	if checkNS && c.planFor(gvk, mapping).shardFor(ns) < 0 {
		return unknown()
	}
	return err
}

// syncedFor waits until shard only of res's plan (every shard if only < 0) has synced, for
// a read. A resource whose scope changed is planned again first (errReplanned: the read
// starts again), and so is one whose informer fails to sync because of the change (a
// namespace's informer of a resource now cluster-scoped parks NotFound), and an access that
// could not move to the informers of its plan (the move is tried again; its error if it
// fails again).
func (c *Cache) syncedFor(ctx context.Context, a *access, res *resource, only int) error {
	if res.stale.Load() || a.broken() {
		return c.replanned(a.key.gvk)
	}
	err := a.waitShardSynced(ctx, res.plan, only, true)
	if err != nil && !errors.Is(err, errReplanned) {
		if _, shards, verr := a.view(); verr == nil && c.checkScope(res, shards) {
			return c.replanned(a.key.gvk)
		}
	}
	return err
}

// listShares returns whether a List shares the object of each item it returns
// (UnsafeDisableDeepCopy) rather than decoding a copy: as the List option says, else as the
// configuration of the informer that holds the item says. A List over several informers (a
// cache of several namespaces) follows each one's configuration, as controller-runtime's
// cache over several namespaces, which lists each namespace's informer in turn, does.
func listShares(p *plan, shards, scope []shard, opt *bool) func(item) bool {
	if opt != nil {
		return func(item) bool { return *opt }
	}
	same := true
	for _, s := range scope {
		same = same && s.config().noCopy == scope[0].config().noCopy
	}
	if same {
		noCopy := len(scope) > 0 && scope[0].config().noCopy
		return func(item) bool { return noCopy }
	}
	return func(it item) bool {
		ns, _ := splitKey(it.Key())
		i := p.shardFor(ns)
		return i >= 0 && i < len(shards) && shards[i].config().noCopy
	}
}

// fillList decodes items into list's Items, each straight into its element, or shares the
// object of those noCopy says.
func (a *access) fillList(list client.ObjectList, items []item, noCopy func(item) bool) error {
	switch l := list.(type) {
	case *unstructured.UnstructuredList:
		l.Items = make([]unstructured.Unstructured, len(items))
		for i, it := range items {
			if err := a.read(it, &l.Items[i], noCopy(it)); err != nil {
				return err
			}
		}
		return nil
	case *metav1.PartialObjectMetadataList:
		l.Items = make([]metav1.PartialObjectMetadata, len(items))
		for i, it := range items {
			if err := a.read(it, &l.Items[i], noCopy(it)); err != nil {
				return err
			}
		}
		return nil
	}
	ptr, err := apimeta.GetItemsPtr(list)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(ptr).Elem()
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("crcache: items of %T are not a slice", list)
	}
	slice := reflect.MakeSlice(v.Type(), len(items), len(items))
	elem := v.Type().Elem()
	for i, it := range items {
		var target reflect.Value
		switch elem.Kind() {
		case reflect.Struct:
			target = slice.Index(i).Addr()
		case reflect.Pointer:
			target = reflect.New(elem.Elem())
			slice.Index(i).Set(target)
		default:
			return fmt.Errorf("crcache: items of %T are %s, not objects", list, elem)
		}
		obj, ok := target.Interface().(runtime.Object)
		if !ok {
			return fmt.Errorf("crcache: items of %T are not runtime.Objects", list)
		}
		if err := a.read(it, obj, noCopy(it)); err != nil {
			return err
		}
	}
	v.Set(slice)
	return nil
}

// conditions turns a field selector into query conditions on the access's informers: conds
// must all hold, and one group of anyOf (query.Query.AnyOf) when it is not empty.
//
// On a JSONPath (a ParseFields path, or an IndexJSONPath index), an empty value stands for
// an empty field too, as in the API server's field selectors: Kubernetes' JSON leaves empty
// strings out, so that "spec.nodeName=" selects the Pods whose nodeName is empty (absent
// from their JSON) and "spec.nodeName!=" those whose nodeName is set. An IndexField
// function's values are taken as they are, as in controller-runtime.
func (a *access) conditions(sel fields.Selector) (conds []query.Condition, anyOf [][]query.Condition, err error) {
	// or adds a choice between alternatives to anyOf: each group of anyOf times each
	// alternative.
	or := func(alts ...query.Condition) error {
		if len(anyOf) == 0 {
			anyOf = [][]query.Condition{nil}
		}
		if len(anyOf)*len(alts) > maxEmptyValueGroups {
			return fmt.Errorf("%w %q: too many requirements with an empty value (at most %d alternatives in all)", ErrInvalidFieldSelector, sel.String(), maxEmptyValueGroups)
		}
		var next [][]query.Condition
		for _, g := range anyOf {
			for _, alt := range alts {
				next = append(next, append(slices.Clone(g), alt))
			}
		}
		anyOf = next
		return nil
	}
	for {
		switch s := sel.(type) {
		case client.MatchingFieldsSelector:
			sel = s.Selector
			continue
		case *client.MatchingFieldsSelector:
			sel = s.Selector
			continue
		}
		break
	}
	if sel == nil || sel.Empty() {
		return nil, nil, nil
	}
	var reqs []FieldRequirement
	fs, paths := sel.(*FieldSelector)
	if paths {
		reqs = fs.reqs
	} else {
		if len(sel.Requirements()) == 0 {
			return nil, nil, errMatchesNothing // not empty, yet no requirement: fields.Nothing()
		}
		for _, r := range sel.Requirements() {
			fr := FieldRequirement{Field: r.Field, Values: []string{r.Value}}
			switch r.Operator {
			case selection.Equals, selection.DoubleEquals:
				fr.Op = FieldEquals
			case selection.NotEquals:
				fr.Op = FieldNotEquals
			default:
				return nil, nil, fmt.Errorf("%w %q: operator %q (use ParseFields)", ErrInvalidFieldSelector, sel.String(), r.Operator)
			}
			reqs = append(reqs, fr)
		}
	}
	conds = make([]query.Condition, 0, len(reqs))
	for _, r := range reqs {
		subject, isPath, err := a.fieldSubject(r.Field, paths)
		if err != nil {
			return nil, nil, err
		}
		cond := func(op query.Op, values ...string) query.Condition {
			c := subject
			c.Op, c.Values = op, values
			return c
		}
		empty := isPath && slices.Contains(r.Values, "")
		switch r.Op {
		case FieldEquals:
			if empty {
				err = or(cond(query.Equal, ""), cond(query.NotExists))
				break
			}
			conds = append(conds, cond(query.Equal, r.Values[0]))
		case FieldNotEquals:
			if empty {
				conds = append(conds, cond(query.Exists))
			}
			conds = append(conds, cond(query.NotEqual, r.Values[0]))
		case FieldIn:
			if empty {
				err = or(cond(query.In, r.Values...), cond(query.NotExists))
				break
			}
			conds = append(conds, cond(query.In, r.Values...))
		case FieldNotIn:
			if empty {
				conds = append(conds, cond(query.Exists))
			}
			for _, v := range r.Values {
				conds = append(conds, cond(query.NotEqual, v))
			}
		case FieldExists:
			conds = append(conds, cond(query.Exists))
		case FieldDoesNotExist:
			conds = append(conds, cond(query.NotExists))
		case FieldGreaterThan:
			conds = append(conds, cond(query.GreaterThan, r.Values[0]))
		case FieldGreaterEqual:
			conds = append(conds, cond(query.GreaterOrEqual, r.Values[0]))
		case FieldLessThan:
			conds = append(conds, cond(query.LessThan, r.Values[0]))
		case FieldLessEqual:
			conds = append(conds, cond(query.LessOrEqual, r.Values[0]))
		default:
			return nil, nil, fmt.Errorf("%w: unknown operator %q", ErrInvalidFieldSelector, r.Op)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return conds, anyOf, nil
}

// maxEmptyValueGroups bounds the alternatives that requirements with an empty value on
// JSONPaths make (each doubles them): a query is answered as one query per alternative.
const maxEmptyValueGroups = 16

// errMatchesNothing marks a selector that selects nothing.
var errMatchesNothing = errors.New("crcache: the field selector matches nothing")

// continueNotSupported is the Continue of a List without Limit, and passing it back is
// errContinueNotSupported, as with controller-runtime's cache: a caller that pages without
// a Limit learns that there is no next page to ask for. With a Limit, Continue is a real
// token (empty on the last page).
const continueNotSupported = "continue-not-supported"

var errContinueNotSupported = errors.New("continue list option is not supported by the cache")

// fieldIndexName is the kindex index name of an IndexField or IndexJSONPath name.
func fieldIndexName(field string) string { return "field:" + field }

// maxSelectorIndexes bounds the JSONPath indexes that field selectors register on a
// resource (its typed, unstructured and metadata reads together): a program that builds selectors from user input would otherwise add an index
// (memory per object) for every path it is given. Paths beyond it are evaluated on each
// candidate instead (query.Where): correct, at the cost of a scan.
const maxSelectorIndexes = 16

// selectorIndexPrefix names the JSONPath indexes field selectors register.
const selectorIndexPrefix = "path:"

// fieldSubject returns what a condition on a field of a selector reads: the IndexField or
// IndexJSONPath index of that name on the informer; else, for a *FieldSelector (paths), the
// field read as a JSONPath, indexed through this access on first use while fewer than
// maxSelectorIndexes are, evaluated on candidates after that. A plain selector's field must
// be an index, as in controller-runtime: a misspelt name is an error, not a query that
// matches nothing.
//
// isPath reports whether the subject is a JSONPath (a path of the selector, or an
// IndexJSONPath index) rather than an IndexField or AddIndexers function.
func (a *access) fieldSubject(field string, paths bool) (subject query.Condition, isPath bool, err error) {
	shards, err := a.current()
	if err != nil {
		return query.Condition{}, false, err
	}
	name := fieldIndexName(field)
	if len(shards) > 0 {
		// The index registered through this read first (it may have a name of its own on
		// the kindex informers, see indexReg), else one of that name registered through
		// another read of the resource whose informer this read shares.
		have := shards[0].indexNames()
		if kname, ok := a.indexName(name); ok && slices.Contains(have, kname) {
			return query.Condition{Index: kname}, a.c.isPathIndex(a.key.gvk, kname), nil
		}
		if slices.Contains(have, name) {
			return query.Condition{Index: name}, a.c.isPathIndex(a.key.gvk, name), nil
		}
	}
	if !paths {
		return query.Condition{}, false, fmt.Errorf("%w: index with name %s does not exist on %s: register it with IndexField or IndexJSONPath, or select on a JSONPath with ParseFields",
			ErrInvalidFieldSelector, name, a.key.gvk)
	}
	expr := field
	switch {
	case strings.HasPrefix(expr, "{"):
	case strings.HasPrefix(expr, "."):
		expr = "{" + expr + "}"
	default:
		expr = "{." + expr + "}"
	}
	p, err := jsonpath.Compile(expr)
	if err != nil {
		return query.Condition{}, false, fmt.Errorf("%w: field %q is not an index of %s nor a JSONPath: %w", ErrInvalidFieldSelector, field, a.key.gvk, err)
	}
	if a.storage() == backendMetadata && !strings.HasPrefix(p.String(), "{.metadata") {
		return query.Condition{}, false, fmt.Errorf("%w: field %q of %s is not indexed, and a metadata-only informer holds no such field (IndexField names are per informer: register it on this one)",
			ErrInvalidFieldSelector, field, a.key.gvk)
	}
	name = selectorIndexPrefix + p.String()
	err = a.addIndexAs(&indexReg{name: name, path: p}, true)
	switch {
	case errors.Is(err, errSelectorLimit):
		return query.Condition{Path: p.String()}, true, nil
	case err != nil:
		return query.Condition{}, false, err
	}
	return query.Condition{Index: name}, true, nil
}

// isPathIndex reports whether the index of kindex name kname on gvk's resource is a
// JSONPath index (IndexJSONPath), as registered through any read of the resource.
func (c *Cache) isPathIndex(gvk schema.GroupVersionKind, kname string) bool {
	return c.anyIndex(gvk, nil, func(idx *indexReg) bool { return idx.kindexName() == kname && idx.path != nil })
}

// indexName returns the kindex name of the index named name registered through a.
func (a *access) indexName(name string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, idx := range a.indexes {
		if idx.name == name {
			return idx.kindexName(), true
		}
	}
	return "", false
}

// selectorIndexes counts the indexes field selectors registered through a.
func (a *access) selectorIndexes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, idx := range a.indexes {
		if strings.HasPrefix(idx.name, selectorIndexPrefix) {
			n++
		}
	}
	return n
}

// compareKeys orders cache keys ("namespace/name" or "name") by namespace, then name.
func compareKeys(x, y string) int {
	xn, xr := splitKey(x)
	yn, yr := splitKey(y)
	if c := strings.Compare(xn, yn); c != 0 {
		return c
	}
	return strings.Compare(xr, yr)
}

func splitKey(k string) (string, string) {
	if i := strings.IndexByte(k, '/'); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "", k
}

// Continue tokens are package query's (query.EncodeContinue): they name the last key
// returned, so that a page starts after it in whatever the cache holds when it is asked for,
// and they are bound to the list's query (namespace, selectors) and to their source
// (resource.tokenSource): the cache instance, the resource, its plan and the informers
// that hold it, so that a token of another cache, another resource or list, or of informers
// since stopped (RemoveInformer of the last informer of the resource, a new plan for a new
// scope) is refused (ErrContinueExpired) instead of starting somewhere.
func encodeContinue(q query.Query, source, key string) string {
	return query.EncodeContinue(q, source, key)
}

func decodeContinue(q query.Query, source, token string) (string, error) {
	q.Continue = token
	key, err := query.DecodeContinue(q, source)
	if err != nil {
		return "", &continueError{
			status: apierrors.NewResourceExpired("the continue token was not issued by this cache for this list (it is of another cache, resource or selection, of informers since removed or planned again, or was modified): list again without it"),
			cause:  err,
		}
	}
	return key, nil
}

// ErrContinueExpired is matched (errors.Is) by the error of a List whose Continue token was
// not issued by this cache for this list: a token of another cache, of another resource or
// of a list with other options (namespace, selectors; Limit may change), of the resource's
// informers before they stopped (RemoveInformer of the last of them, a plan for a new
// scope), or one modified. As the API server's error for a token too old to continue, the
// error is a 410 with reason Expired (apierrors.IsResourceExpired): list again without the
// token. It matches query.ErrInvalidContinue (and query.ErrInvalidQuery) too.
var ErrContinueExpired = errors.New("crcache: continue token expired or not issued for this list")

// continueError is a refused continue token: the Expired status first, so that apierrors'
// checks find it, then ErrContinueExpired and query's error.
type continueError struct {
	status *apierrors.StatusError
	cause  error
}

func (e *continueError) Error() string { return e.status.Error() + ": " + e.cause.Error() }

func (e *continueError) Unwrap() []error { return []error{e.status, ErrContinueExpired, e.cause} }
