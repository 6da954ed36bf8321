package informer

import (
	"errors"
	"slices"
)

// ErrNotRegistered is returned by RemoveEventHandler for a registration made through
// another reference, and by HandOffEventHandler also for one removed already.
var ErrNotRegistered = errors.New("kindex: the registration was not made through this reference, or was removed")

// HandOffEventHandler removes a handler added through this reference, as RemoveEventHandler
// does, except that the notifications queued for it are still delivered: it is for moving
// a handler to another informer without losing an event. It returns the objects the
// informer caches at that moment, by cache key ("namespace/name", or "name"), which is what
// the handler has been handed, adds less deletes, once those notifications are delivered;
// and a channel closed once they have been and the handler's last call has returned. It
// does not wait for that itself; a handler that hands itself off must not wait for the
// channel in its own call. The handler gets nothing else from this informer. A
// registration not made through this reference (or removed already) is ErrNotRegistered,
// and ErrReleased once the reference is released.
func (i *Informer[T]) HandOffEventHandler(r *Registration) (map[string]Item[T], <-chan struct{}, error) {
	if !i.valid() {
		return nil, nil, ErrUninitialized
	}
	h := i.h
	if err := h.e.reentered(); err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	k := slices.Index(h.regs, r)
	if k >= 0 {
		h.regs = slices.Delete(h.regs, k, k+1)
	}
	h.mu.Unlock()
	if k < 0 {
		if h.released.Load() {
			return nil, nil, ErrReleased
		}
		return nil, nil, ErrNotRegistered
	}
	seen := h.e.retire([]*Registration{r})
	out := make(map[string]Item[T], len(seen))
	for key, obj := range seen {
		out[key] = itemOf[T](h.c, obj)
	}
	return out, r.l.done(), nil
}
