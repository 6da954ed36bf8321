package compact

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/internal/jsondecode"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

// UnstructuredModeName is the name of UnstructuredMode in informer keys, metrics and logs:
// the same as the dynamic client's mode, because it serves the same objects.
const UnstructuredModeName = "dynamic"

// UnstructuredMode is the unstructured storage mode on kindex's own wire path: lists and
// watches are split into objects by the compact decoder, managedFields are cut from the bytes
// before anything is decoded, and each object is then decoded once into an
// *unstructured.Unstructured by internal/jsondecode, which builds the same maps as
// apimachinery's decoder in well under half the time and with shared, interned strings. The
// store holds the decoded objects, so reads cost nothing, as with client-go's dynamic
// informer.
type UnstructuredMode struct {
	raw *Mode
}

var _ storage.Mode = (*UnstructuredMode)(nil)

// NewUnstructured returns the mode for cfg. Projection is not offered: it is a compact-mode
// option.
func NewUnstructured(cfg *rest.Config, keepManagedFields bool) (*UnstructuredMode, error) {
	m, err := New(cfg, Options{KeepManagedFields: keepManagedFields})
	if err != nil {
		return nil, err
	}
	return &UnstructuredMode{raw: m}, nil
}

// Name returns UnstructuredModeName.
func (m *UnstructuredMode) Name() string { return UnstructuredModeName }

// ListerWatcher is the compact ListerWatcher (watch-list capable).
func (m *UnstructuredMode) ListerWatcher(t storage.Target) cache.ListerWatcherWithContext {
	return m.raw.ListerWatcher(t)
}

// ExampleObject is *Object: the Reflector checks event types before the transform decodes.
func (m *UnstructuredMode) ExampleObject() runtime.Object { return &Object{} }

// CheckPath refuses an expression that reads metadata.managedFields when they are cut
// (storage.ErrManagedFieldsDropped), as the compact mode does.
func (m *UnstructuredMode) CheckPath(p *jsonpath.Path) error { return m.raw.CheckPath(p) }

// Object returns the stored object itself: it is already decoded.
func (m *UnstructuredMode) Object(item any) (any, error) { return item, nil }

// Transform decodes each *Object into an *unstructured.Unstructured (once: client-go applies
// transforms twice to watch-list objects, and the second pass sees the decoded object), after
// the raw mode's managedFields cut, then applies user.
func (m *UnstructuredMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	return storage.ComposeTransforms(m.raw.Transform(nil), decodeUnstructured, user)
}

func decodeUnstructured(obj any) (any, error) {
	o, ok := obj.(*Object)
	if !ok {
		return obj, nil // already decoded, or a tombstone
	}
	return o.Unstructured()
}

// decodeMap decodes an object's bytes with the fast decoder.
func decodeMap(raw []byte, describe func() string) (*unstructured.Unstructured, error) {
	m, err := jsondecode.Object(raw)
	if err != nil {
		return nil, fmt.Errorf("compact: decode %s: %w", describe(), err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return &unstructured.Unstructured{Object: m}, nil
}
