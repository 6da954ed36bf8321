package indexfuncs

import (
	"errors"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// ErrUnsupportedObject is matched (errors.Is) by the error of every index function of this
// package, built-in or JSONPath, and of Values, for an object it cannot read: of a type
// without metadata, or a nil pointer. The message names the object's type.
var ErrUnsupportedObject = errors.New("unsupported object type")

// ErrNilPath is the error of Values with a nil path, and of every call of the function
// FromPath returns for one.
var ErrNilPath = errors.New("indexfuncs: nil JSONPath")

// RawJSON is implemented by objects kept as their JSON bytes (kindex's compact storage):
// JSONPath index functions evaluate on the bytes without decoding the object.
type RawJSON interface {
	// RawJSON returns the object's JSON bytes.
	RawJSON() []byte
}

// JSONPath compiles expr (kubectl's dialect, with or without braces) and returns an index
// function over it. A compile error is a *jsonpath.SyntaxError with the byte offset.
func JSONPath(expr string) (cache.IndexFunc, error) {
	p, err := jsonpath.Compile(expr)
	if err != nil {
		return nil, err
	}
	return FromPath(p), nil
}

// FromPath returns an index function that evaluates p on an object:
//
//   - every value of a multi-valued path is indexed (duplicates once);
//   - strings, numbers and booleans are indexed by their canonical text, as kubectl prints
//     them ("3", "1.5", "true");
//   - a missing field, and null, yield no values: the object is simply not in the index;
//   - a map or list is indexed under query.NonScalar: the field is present (Exists), with no
//     value to compare;
//   - a template such as "{.metadata.namespace}/{.metadata.name}" yields its text as one
//     value (nothing when the text is empty).
//
// Objects may be *unstructured.Unstructured, map[string]any, anything with RawJSON() (read
// in place, without decoding), *metav1.PartialObjectMetadata or anything else exposing
// metav1.Object (its metadata is readable under .metadata), or a cache.DeletedFinalStateUnknown
// holding one of those. For a nil p, every call of the function fails with ErrNilPath.
func FromPath(p *jsonpath.Path) cache.IndexFunc {
	if p == nil {
		return func(any) ([]string, error) { return nil, ErrNilPath }
	}
	if p.IsTemplate() {
		return func(obj any) ([]string, error) {
			in, err := input(obj)
			if err != nil {
				return nil, err
			}
			s, err := p.ExecuteString(in)
			if err != nil || s == "" {
				return nil, err
			}
			return []string{s}, nil
		}
	}
	return func(obj any) ([]string, error) {
		in, err := input(obj)
		if err != nil {
			return nil, err
		}
		// Each, not Eval: the values are looked at once, not kept, so that maps and lists are
		// not charged for printing (which Eval charges for the values it returns) and nothing
		// is copied but the text of strings read from raw JSON. Into a pooled collector: a
		// path on a decoded object allocates only the returned slice (and the text of a
		// number).
		c := collectors.Get().(*collector)
		c.raw = isRaw(in)
		err = p.Each(in, c.fn)
		var out []string
		if len(c.out) > 0 || c.nonScalar {
			n := len(c.out)
			if c.nonScalar {
				n++
			}
			out = make([]string, len(c.out), n)
			copy(out, c.out)
			if c.nonScalar {
				// Present, with nothing to compare: Exists holds, as for the same path as a
				// query filter, which runs this same function.
				out = append(out, query.NonScalar)
			}
		}
		c.reset()
		collectors.Put(c)
		return out, err
	}
}

// collector gathers the keys of one evaluation of a path (see FromPath).
type collector struct {
	out       []string
	raw       bool // the strings are views of raw JSON: copy them
	nonScalar bool // a map or list was found
	fn        func(jsonpath.Value) bool
}

var collectors = sync.Pool{New: func() any {
	c := &collector{out: make([]string, 0, 8)}
	c.fn = c.add // once: a method value allocates
	return c
}}

func (c *collector) add(v jsonpath.Value) bool {
	switch {
	case v.Kind() == jsonpath.KindString && c.raw:
		c.out = append(c.out, strings.Clone(v.String()))
	case v.IsScalar():
		c.out = append(c.out, v.String())
	case v.Kind() == jsonpath.KindMap || v.Kind() == jsonpath.KindList:
		c.nonScalar = true
	}
	return true
}

func (c *collector) reset() {
	clear(c.out) // drop references into the object
	if cap(c.out) > 64 {
		c.out = make([]string, 0, 8)
	}
	c.out, c.nonScalar = c.out[:0], false
}

// isRaw tells whether the values of a path on in are views of raw JSON.
func isRaw(in any) bool {
	switch in.(type) {
	case jsonpath.Source, jsonpath.JSON:
		return true
	}
	return false
}

// Values evaluates p on an object of any type FromPath accepts and returns its values. They
// do not refer to the bytes of a RawJSON object.
func Values(p *jsonpath.Path, obj any) ([]jsonpath.Value, error) {
	if p == nil {
		return nil, ErrNilPath
	}
	in, err := input(obj)
	if err != nil {
		return nil, err
	}
	return p.Eval(in)
}

// input returns what p evaluates for an object of any type FromPath accepts: the map of an
// unstructured object, the bytes of a RawJSON object as a jsonpath.JSON, or the metadata of
// anything else as a map.
func input(obj any) (any, error) {
	switch o := unwrap(obj).(type) {
	case *unstructured.Unstructured:
		return o.Object, nil
	case map[string]any:
		return o, nil
	case jsonpath.Source:
		return o, nil // read with its spans, no conversion (compact objects)
	case RawJSON:
		return jsonpath.JSON(o.RawJSON()), nil
	default:
		return metadataMap(o)
	}
}

// unwrap returns the last known state of a deleted object, and nil for a nil pointer (a
// nil *unstructured.Unstructured has no metadata to read: an error, never a panic).
func unwrap(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return obj
}
