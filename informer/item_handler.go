package informer

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/client-go/tools/cache"
)

// ErrHandlerType is returned when an ItemHandlerFuncs[U] is added to an informer of
// another object type than U.
var ErrHandlerType = errors.New("kindex: handler's object type is not the informer's")

// ItemHandlerFuncs is an event handler that receives Items (as GetItem and QueryItems return
// them) instead of decoded objects. Add it as any handler (AddEventHandler,
// WithEventHandler, a WatchAll handler factory); kindex sees its type and hands it the stored
// form. In the compact mode an ordinary handler costs a whole decode per object per event
// (the initial list's adds and a snapshot's included; bench/README.md, "Warm restart");
// an ItemHandlerFuncs costs what its functions read: Name, Labels and Eval read the bytes,
// Object and DecodeInto decode when called. In the other modes an Item wraps the cached
// object and the two kinds of handler cost the same.
//
// Deliveries follow AddEventHandler's rules (its own goroutine, adds for the cached objects
// first, Registration.HasSynced). finalStateUnknown marks a deletion the informer inferred
// (client-go's cache.DeletedFinalStateUnknown): the item is the last state kindex held. A
// nil function ignores its events. T must be the informer's object type (the front end's
// Object); another type is refused with ErrHandlerType, or, from a WatchAll handler
// factory, logged and not added.
type ItemHandlerFuncs[T Object] struct {
	AddFunc    func(item Item[T], isInInitialList bool)
	UpdateFunc func(oldItem, newItem Item[T])
	DeleteFunc func(item Item[T], finalStateUnknown bool)
	// Decodes says that the functions decode (nearly) every item they get, with Object or
	// DecodeInto, as an adapter that hands typed objects on does: the informer then paces
	// the garbage of its start for this handler as it does for a handler of decoded objects
	// (see "Start garbage" in the package documentation). Without it, a handler of Items is
	// taken to decode little and is not paced.
	Decodes bool
}

// OnAdd implements cache.ResourceEventHandler for kindex's deliveries; other values are
// ignored.
func (f ItemHandlerFuncs[T]) OnAdd(obj any, isInInitialList bool) {
	if it, ok := obj.(Item[T]); ok && f.AddFunc != nil {
		f.AddFunc(it, isInInitialList)
	}
}

// OnUpdate implements cache.ResourceEventHandler, as OnAdd.
func (f ItemHandlerFuncs[T]) OnUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(Item[T])
	cur, ok2 := newObj.(Item[T])
	if ok1 && ok2 && f.UpdateFunc != nil {
		f.UpdateFunc(old, cur)
	}
}

// OnDelete implements cache.ResourceEventHandler, as OnAdd.
func (f ItemHandlerFuncs[T]) OnDelete(obj any) {
	if f.DeleteFunc == nil {
		return
	}
	switch o := obj.(type) {
	case Item[T]:
		f.DeleteFunc(o, false)
	case cache.DeletedFinalStateUnknown:
		it, ok := o.Obj.(Item[T])
		if !ok {
			it = Item[T]{obj: noState{key: o.Key}} // no last state: Object and DecodeInto fail
		}
		f.DeleteFunc(it, true)
	}
}

// itemHandler is what ItemHandlerFuncs are to the informer.
type itemHandler interface {
	itemType() reflect.Type
	itemsOf(c *core) func(any) (any, error)
	decodes() bool
}

func (ItemHandlerFuncs[T]) itemType() reflect.Type { return reflect.TypeFor[T]() }
func (f ItemHandlerFuncs[T]) decodes() bool        { return f.Decodes }

func (ItemHandlerFuncs[T]) itemsOf(c *core) func(any) (any, error) {
	return func(obj any) (any, error) { return itemOf[T](c, obj), nil }
}

// checkHandler refuses a nil handler and an ItemHandlerFuncs of another type than the
// factory's; what names the call for the error.
func (c *core) checkHandler(h cache.ResourceEventHandler, what string) error {
	if h == nil || isNil(h) {
		return fmt.Errorf("%w: %s(nil)", ErrNilCallback, what)
	}
	if ih, ok := h.(itemHandler); ok && ih.itemType() != c.objType {
		return fmt.Errorf("%w: %s: ItemHandlerFuncs of %v on informers of %v", ErrHandlerType, what, ih.itemType(), c.objType)
	}
	return nil
}

// convertFor is how a handler's deliveries are made from stored items (entry.addHandler):
// Items for an ItemHandlerFuncs, the front end's objects otherwise.
func (c *core) convertFor(h cache.ResourceEventHandler) func(any) (any, error) {
	if ih, ok := h.(itemHandler); ok {
		return ih.itemsOf(c)
	}
	return c.mode.Object
}

// paceFor returns what a listener of h calls before it converts an initial add: the start
// pacer's tick when the factory paces starts and h receives decoded objects or says it
// decodes its items (ItemHandlerFuncs.Decodes), nil otherwise.
func (c *core) paceFor(h cache.ResourceEventHandler) func() {
	if ih, ok := h.(itemHandler); ok && !ih.decodes() || c.pace == nil {
		return nil
	}
	return func() { c.paceStart(true) }
}

// paceStart counts one object of a start (pacer.go); wait as pacer.tick's.
func (c *core) paceStart(wait bool) {
	if c.pace != nil && c.pace.tick(wait) {
		c.metrics.startCollected()
	}
}
