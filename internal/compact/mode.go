package compact

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

// ModeName is the storage mode's name in informer keys, metrics and logs.
const ModeName = "compact"

// Mode is the compact storage mode of kindex's informer core: it lists and watches JSON
// through its own decoder, stores *Object, and hands handlers and queries
// *unstructured.Unstructured decoded from the bytes on each call (Object).
type Mode struct {
	dec        *Decoder
	client     rest.Interface
	streamList bool
	compress   bool
	dict       dictLimits // zero: defaultDictLimits (tests set smaller ones)
}

var _ storage.Mode = (*Mode)(nil)

// New returns the compact mode for cfg (front ends pass their redirect-safe config).
func New(cfg *rest.Config, opts Options) (*Mode, error) {
	dec, err := NewDecoder(opts)
	if err != nil {
		return nil, err
	}
	client, err := NewClient(cfg, dec)
	if err != nil {
		return nil, err
	}
	return &Mode{dec: dec, client: client, streamList: opts.StreamList, compress: opts.Compress}, nil
}

// CheckPath returns a *ProjectionError (ErrNotProjected) if p reads a field the mode's
// projection drops; the informer core refuses such an index (see Decoder.CheckPath).
func (m *Mode) CheckPath(p *jsonpath.Path) error { return m.dec.CheckPath(p) }

// Name returns ModeName.
func (m *Mode) Name() string { return ModeName }

// ListerWatcher returns a compact ListerWatcher for t: a streaming lister with
// Options.StreamList, else watch-list capable.
func (m *Mode) ListerWatcher(t storage.Target) cache.ListerWatcherWithContext {
	lw := NewListerWatcher(m.client, t)
	if m.streamList {
		return lw.StreamingLists(m.dec)
	}
	return lw
}

// ExampleObject is *Object: the Reflector accepts watch events of that type only (ERROR
// events are handled before the type check).
func (m *Mode) ExampleObject() runtime.Object { return &Object{} }

// ObjectDecodes reports that Object decodes on every call (storage.Decoding).
func (m *Mode) ObjectDecodes() bool { return true }

// Object decodes a stored *Object into a new *unstructured.Unstructured (see
// Object.Unstructured for the cost: every call decodes; nothing is cached). An
// *unstructured.Unstructured (the result of a transform that did not re-encode) is
// returned as it is.
func (m *Mode) Object(item any) (any, error) {
	switch o := item.(type) {
	case *Object:
		return o.Unstructured()
	case *unstructured.Unstructured:
		return o, nil
	case cache.DeletedFinalStateUnknown:
		if o.Obj == nil {
			return o, nil // a tombstone without its last state: still a delete
		}
		obj, err := m.Object(o.Obj)
		if err != nil {
			return nil, err
		}
		o.Obj = obj
		return o, nil
	}
	return nil, fmt.Errorf("compact: %w: stored item %T", ErrUnsupported, item)
}

// Transform returns the FIFO's transform:
//
//   - managedFields: the decoder already cut them unless Options.KeepManagedFields; an
//     object that still has them when the mode does not keep them (one built elsewhere) is
//     cut here, on the bytes (no decoding).
//   - user (nil for none) sees what the front end's users see, an
//     *unstructured.Unstructured decoded from the bytes, and its result is re-encoded and
//     decoded again with the mode's options. That costs a full decode and encode per object
//     and event, more than the dynamic mode spends: prefer Projection to drop fields. Each
//     object goes through user once even though client-go applies transforms twice to
//     watch-list objects (user must be idempotent anyway).
//   - compression (Options.Compress): each call makes a compressor of its own, so each
//     informer (the informer core calls Transform once per informer) gets a dictionary of
//     its own objects. It runs last, on what the store will hold; compressed objects pass
//     through, so the transform stays idempotent.
//
// Values other than *Object (tombstones) pass through to user unchanged.
func (m *Mode) Transform(user cache.TransformFunc) cache.TransformFunc {
	var strip cache.TransformFunc
	if !m.dec.keep {
		strip = func(obj any) (any, error) {
			if o, ok := obj.(*Object); ok && o.HasManagedFields() {
				if n := o.withoutManagedFields(); n != nil {
					return n, nil
				}
			}
			return obj, nil
		}
	}
	var apply cache.TransformFunc
	if user != nil {
		apply = func(obj any) (any, error) {
			o, ok := obj.(*Object)
			if !ok {
				return user(obj)
			}
			if o.flags&flagTransformed != 0 {
				return o, nil
			}
			u, err := o.Unstructured()
			if err != nil {
				return nil, err
			}
			out, err := user(u)
			if err != nil {
				return nil, err
			}
			n, err := m.encode(out)
			if err != nil {
				return nil, err
			}
			n.flags |= flagTransformed
			return n, nil
		}
	}
	var compress cache.TransformFunc
	if m.compress {
		c := &compressor{limits: m.dict}
		compress = func(obj any) (any, error) {
			if o, ok := obj.(*Object); ok {
				return c.compress(o), nil
			}
			return obj, nil
		}
	}
	return storage.ComposeTransforms(strip, apply, compress)
}

// encode turns a user transform's result back into a compact object.
func (m *Mode) encode(obj any) (*Object, error) {
	switch o := obj.(type) {
	case *Object:
		return o.DeepCopy(), nil
	case *unstructured.Unstructured:
		return fromUnstructured(o, m.dec)
	}
	return nil, fmt.Errorf("compact: %w: transform returned %T, want *unstructured.Unstructured", ErrUnsupported, obj)
}
