package informer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/internal/typedjson"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// Item is one cached object as the store holds it, handed out without decoding (GetItem,
// ListItems, QueryItems): in the compact mode its JSON bytes, in the other modes the
// decoded object. Metadata accessors, Raw and Eval read the stored form; Object and
// DecodeInto decode on demand. An Item is a view of the cache: valid for as long as the
// caller keeps it (a later change replaces the stored object, it does not modify it), and
// read-only.
//
// Costs, per call, on a 7.5 KB Pod in compact mode (bench/README.md, "Reads"): Name,
// Namespace, UID and ResourceVersion read the object's key and a few bytes; Labels and
// Annotations decode those maps only; Eval walks the bytes (gjson), as indexes do; Object
// decodes the whole object; DecodeInto decodes straight into the caller's type. In the
// unstructured and metadata modes every accessor reads the decoded object and Raw is nil.
type Item[T Object] struct {
	// obj is the stored item, or a noState. (No key: an Item is two words and a pointer, so
	// that a page of them costs little more than client-go's ByIndex result; Key computes
	// it.)
	obj any
	c   *core // for its storage mode
}

// noState is the obj of an Item of a deletion the informer inferred without a last state:
// only its key is known.
type noState struct{ key string }

// state is the stored item, nil for the zero Item and a deletion without a last state.
func (it Item[T]) state() any {
	if _, ok := it.obj.(noState); ok {
		return nil
	}
	return it.obj
}

// errNoState is the error of decoding an Item that holds no object: the zero Item, or a
// deletion the informer inferred without a last state.
var errNoState = errors.New("no object state")

// itemOf wraps a stored object as an Item.
func itemOf[T Object](c *core, obj any) Item[T] { return Item[T]{obj: obj, c: c} }

// rawJSON is what the compact mode stores.
type rawJSON interface{ RawJSON() []byte }

// sharedJSON is a compact-mode object whose JSON is never modified (compact.Object's
// SharedJSON: nil when it is compressed).
type sharedJSON interface{ SharedJSON() []byte }

// Key is the object's cache key: "namespace/name", or "name" if cluster-scoped. It is made
// on each call (a string concatenation for a namespaced object); Namespace and Name are not.
func (it Item[T]) Key() string {
	switch o := it.obj.(type) {
	case nil:
		return ""
	case noState:
		return o.key
	}
	key, _ := store.KeyFunc(it.obj)
	return key
}

func (it Item[T]) meta() metav1.Object {
	m, err := meta.Accessor(it.state())
	if err != nil {
		return &metav1.ObjectMeta{}
	}
	return m
}

// Namespace is the object's namespace ("" if cluster-scoped).
func (it Item[T]) Namespace() string { return it.meta().GetNamespace() }

// Name is the object's name.
func (it Item[T]) Name() string { return it.meta().GetName() }

// UID is the object's UID.
func (it Item[T]) UID() types.UID { return it.meta().GetUID() }

// ResourceVersion is the object's resourceVersion.
func (it Item[T]) ResourceVersion() string { return it.meta().GetResourceVersion() }

// Labels are the object's labels (a new map in compact mode; the cached map otherwise:
// read-only).
func (it Item[T]) Labels() map[string]string { return it.meta().GetLabels() }

// Annotations are the object's annotations, as Labels.
func (it Item[T]) Annotations() map[string]string { return it.meta().GetAnnotations() }

// Raw is the stored JSON of the object in compact mode (managedFields cut unless
// Options.KeepManagedFields, projected if the mode projects), nil in the other modes. It
// is the cache's memory: do not modify it.
func (it Item[T]) Raw() []byte {
	if r, ok := it.state().(rawJSON); ok {
		return r.RawJSON()
	}
	return nil
}

// Eval evaluates a compiled JSONPath on the stored form, as an index would: on the bytes in
// compact mode, on the decoded object otherwise. The values do not refer to the cache. A
// path that reads fields the storage mode does not keep (outside metadata in the
// metadata-only mode, outside a compact projection) finds nothing there, where AddIndex
// and Query refuse it: Factory.CheckPath tells such paths apart once, without a cost per
// Eval.
func (it Item[T]) Eval(p *jsonpath.Path) ([]jsonpath.Value, error) {
	if p == nil {
		return nil, fmt.Errorf("kindex: Eval of a nil path")
	}
	return indexfuncs.Values(p, it.state())
}

// Object decodes the item into the front end's type (in compact mode a new object each
// call; otherwise the cached object itself, shared and read-only). An object that cannot be
// decoded is a *DecodeError.
func (it Item[T]) Object() (T, error) {
	state := it.state()
	if it.c == nil || state == nil {
		var zero T
		return zero, &DecodeError{Key: it.Key(), Err: errNoState}
	}
	obj, err := objectAs[T](it.c.mode, state)
	if err != nil {
		return obj, &DecodeError{Key: it.Key(), Err: err}
	}
	return obj, nil
}

// DecodeInto decodes the object into v, a pointer to a typed struct (&corev1.Pod{}) or to
// anything encoding/json decodes into, as Kubernetes' JSON serializer decodes
// (sigs.k8s.io/json: object keys match field names case-sensitively, numbers decoded into
// an interface are int64 when they are integers). In compact mode it decodes the stored
// bytes straight into v, without an intermediate map, with kindex's typed decoder
// (internal/typedjson): 12-23 µs for a Pod of the reads benchmark, 0.57-0.65 of Object's
// decode in its best rounds and 0.22-0.26 of client-go's decode of the same bytes to
// unstructured (0.60-0.82 and 0.25-0.33 with garbage collection as it falls;
// bench/README.md, Reads; 0.45 of Object's for the decoders alone on larger Pods, in
// typedjson's doc). Its strings are views of the cached bytes (copies when the cache
// compresses them): a v that is kept keeps the object's bytes alive after the cache has
// dropped them. An unstructured or metadata-only object is encoded to JSON and decoded
// from it as in compact mode, so that every mode gives the same result (about as costly as
// runtime.DefaultUnstructuredConverter, which decodes otherwise: it refuses fixed arrays,
// ignores ",string" and truncates numbers into integer fields).
// Fields v lacks are ignored; v is the caller's, free to modify.
func (it Item[T]) DecodeInto(v any) error {
	if v == nil {
		return &DecodeError{Key: it.Key(), Err: fmt.Errorf("nil target")}
	}
	state := it.state()
	if state == nil {
		return &DecodeError{Key: it.Key(), Err: errNoState}
	}
	var err error
	switch o := state.(type) {
	case rawJSON:
		if s, ok := o.(sharedJSON); ok && s.SharedJSON() != nil {
			// The cache's bytes are never modified: strings of v can be views of them.
			err = typedjson.UnmarshalShared(s.SharedJSON(), v)
			break
		}
		err = typedjson.Unmarshal(o.RawJSON(), v)
	case *unstructured.Unstructured:
		// Through JSON rather than runtime.DefaultUnstructuredConverter, which decodes
		// otherwise (fixed arrays refused, ",string" ignored, out-of-range and fractional
		// numbers truncated into integer fields) and costs as much. The bytes are not kept
		// by anyone else: v's strings can be views of them.
		var b []byte
		if b, err = json.Marshal(o.Object); err == nil {
			err = typedjson.UnmarshalShared(b, v)
		}
	default:
		// A metadata-only object: its JSON, decoded as the other modes decode theirs.
		var b []byte
		if b, err = json.Marshal(o); err == nil {
			err = typedjson.Unmarshal(b, v)
		}
	}
	if err != nil {
		return &DecodeError{Key: it.Key(), Err: err}
	}
	return nil
}

// GetItem is Get without decoding: the cached object namespace/name as an Item, or an error
// for which apierrors.IsNotFound is true.
func (i *Informer[T]) GetItem(namespace, name string) (Item[T], error) {
	if !i.valid() {
		return Item[T]{}, ErrUninitialized
	}
	key, ok := cacheKey(namespace, name)
	if err := i.h.enter(); err != nil {
		return Item[T]{}, err
	}
	if !ok {
		return Item[T]{}, notFound(i.h.e.key.GVR, name)
	}
	obj, exists, err := i.h.e.store.GetByKey(key)
	if err := i.h.gone(); err != nil {
		return Item[T]{}, err // see unlessGone
	}
	if err != nil {
		return Item[T]{}, err
	}
	if !exists {
		return Item[T]{}, notFound(i.h.e.key.GVR, name)
	}
	return itemOf[T](i.h.c, obj), nil
}

// ListItems is List without decoding: every cached object in namespace ns ("" for all),
// in no particular order. Filter with QueryItems.
func (i *Informer[T]) ListItems(ns string) ([]Item[T], error) {
	if !i.valid() {
		return nil, ErrUninitialized
	}
	if err := i.h.enter(); err != nil {
		return nil, err
	}
	c := i.h.c
	out := store.ListAs(i.h.e.store, ns, ns == "", func(_ string, obj any) Item[T] { return itemOf[T](c, obj) })
	return unlessGone(i.h, out, nil)
}

// QueryItems is Query without decoding: the same page, plan and continue token, with each
// result an Item.
func (i *Informer[T]) QueryItems(ctx context.Context, q query.Query) (query.Result[Item[T]], error) {
	if ctx == nil {
		return query.Result[Item[T]]{}, ErrNilContext
	}
	if !i.valid() {
		return query.Result[Item[T]]{}, ErrUninitialized
	}
	var res query.Result[Item[T]]
	if err := i.h.enter(); err != nil {
		return res, err
	}
	c := i.h.c
	items, next, plan, err := store.QueryAs(ctx, i.h.e.store, q, i.h.e.queryOpts, func(_ string, obj any) Item[T] {
		return itemOf[T](c, obj)
	})
	if err := i.h.gone(); err != nil {
		return res, err // see unlessGone
	}
	if err != nil {
		return res, err
	}
	res.Items, res.Continue, res.Plan = items, next, plan
	return res, nil
}
