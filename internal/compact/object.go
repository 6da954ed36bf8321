package compact

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/kindex/kindex/jsonpath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is one Kubernetes object kept as its JSON bytes (validated, managedFields cut
// unless kept, projected if asked) plus the text of the four metadata fields the cache
// reads on every operation: namespace, name, resourceVersion and uid. Everything else is
// read from the bytes when asked.
//
// An Object is read-only by contract: the cache shares it between readers, and copies
// share its bytes. Getters are safe for concurrent use.
//
// Costs per call: GetNamespace, GetName, GetResourceVersion, GetUID, StoreKey and RawJSON
// are free (no allocation: views of the object's one allocation). The other getters scan
// the bytes up to metadata and decode one field (well under a microsecond for a Pod's
// labels, with an allocation for the result). Unstructured decodes the whole object into
// maps every time it is called, about as costly as client-go's own decoding (roughly
// 100-200 µs for a 4 KB Pod); its result is not retained.
//
// A compressed object (Options.Compress, compress.go) keeps the key text uncompressed:
// GetNamespace, GetName, GetResourceVersion, GetUID and StoreKey stay free. Every other
// read decompresses the JSON first (RawJSON, JSON, MarshalJSON, Unstructured, the other
// getters): for a 4.3 KB Pod about 6-10 µs and one allocation of its size (doc.go has the
// measurement), except that reads of an object among the last few its dictionary
// compressed or decompressed reuse that JSON (so the index functions run on an object one
// after the other decompress it once).
//
// Setters never panic. Each decodes the object, applies the same setter of
// *unstructured.Unstructured and re-encodes it into new bytes (so copies sharing the old
// bytes are unaffected): correct but costly, and like any write it must not happen on an
// object another goroutine can see, in particular on one from the cache. A setter on an
// object whose bytes cannot be decoded (impossible for objects from this package's
// decoders) does nothing.
type Object struct {
	// raw is the JSON (compressed if z is set). Its capacity extends over the key text, in
	// the same allocation: namespace, "/" (only after a namespace), name, resourceVersion,
	// uid. The getters and StoreKey return views of that text, so an object costs one
	// allocation for its bytes and one for this header, and no string of its own.
	raw []byte
	// nsEnd, keyEnd and rvEnd end the namespace, the "namespace/name" key and the
	// resourceVersion in the key text; the uid runs from rvEnd to its end.
	nsEnd, keyEnd, rvEnd uint32
	// metaStart:metaEnd is the metadata object in raw (empty if there is none), so that
	// lazy getters scan only metadata.
	metaStart, metaEnd uint32
	flags              uint8
	// spanPad and nspans place the object's spans (Options.Spans) at the end of the
	// allocation, after the key text and spanPad bytes that align them: nspans pairs of
	// uint32 (jsonpath.Spans). They fit in the header's padding: no byte more per object
	// without spans.
	spanPad uint8
	nspans  uint16
	// ext holds the spans instead when the object's JSON is a view of memory it cannot
	// extend (a mapped snapshot record: SnapshotView); spanPad is then 0. The header stays
	// in its allocation size class (64 bytes) with it.
	ext *uint32
	// z is the dictionary raw was compressed with (Options.Compress), nil if raw is the
	// JSON itself. metaStart and metaEnd are then offsets in the decompressed JSON.
	z *dictionary
}

const (
	// flagManagedFields: metadata.managedFields are still in raw.
	flagManagedFields uint8 = 1 << iota
	// flagTransformed: the user's transform has been applied (see Mode.Transform).
	flagTransformed
)

var (
	_ runtime.Object                = (*Object)(nil)
	_ metav1.Object                 = (*Object)(nil)
	_ schema.ObjectKind             = (*Object)(nil)
	_ json.Marshaler                = (*Object)(nil)
	_ interface{ RawJSON() []byte } = (*Object)(nil)
	_ jsonpath.Source               = (*Object)(nil)
)

// RawJSON returns the object's JSON. The bytes are shared: do not modify them. kindex's
// JSONPath index functions evaluate on them directly (indexfuncs.RawJSON). A compressed
// object (Options.Compress) is decompressed, into new bytes unless it is among the last
// few its dictionary compressed or decompressed; should that fail (see ErrCorrupt: never
// for objects of this package), RawJSON returns nil, which no JSON reader accepts: JSON
// reports the error.
func (o *Object) RawJSON() []byte {
	b, _ := o.JSON()
	return b
}

// Spans returns the extents of the object's larger objects and arrays (Options.Spans), a
// view of its allocation (nil without): with RawJSON they make a jsonpath.IndexedJSON, on
// which a path of fields and indexes steps over them.
func (o *Object) Spans() jsonpath.Spans {
	if o == nil || o.nspans == 0 {
		return nil
	}
	if o.ext != nil {
		return unsafe.Slice(o.ext, 2*int(o.nspans))
	}
	full := o.raw[:cap(o.raw)]
	at := len(full) - 8*int(o.nspans)
	return unsafe.Slice((*uint32)(unsafe.Pointer(&full[at])), 2*int(o.nspans))
}

// JSONSource returns the object's JSON with its spans (jsonpath.Source): JSONPath reads the
// object as a jsonpath.IndexedJSON, or as its JSON when it has no spans (a compressed
// object is decompressed; one that does not decompress gives nil, which evaluates to
// nothing).
func (o *Object) JSONSource() jsonpath.IndexedJSON {
	if sp := o.Spans(); sp != nil {
		return jsonpath.IndexedJSON{Doc: o.json(), Spans: sp}
	}
	return jsonpath.IndexedJSON{Doc: o.RawJSON()}
}

// JSON returns the object's JSON as RawJSON does, with the error of a compressed object
// that does not decompress (wrapping ErrCorrupt).
func (o *Object) JSON() ([]byte, error) {
	if o == nil {
		return nil, nil
	}
	if o.z != nil {
		return o.z.inflate(o.raw)
	}
	return o.json(), nil
}

// SharedJSON returns the object's JSON when it is the object's own memory, which nothing
// modifies while anything refers to it (an uncompressed object: RawJSON), so that a
// decoder may give out views of it (typedjson.UnmarshalShared); nil for a compressed
// object, whose JSON is decompressed into buffers that are reused.
func (o *Object) SharedJSON() []byte {
	if o == nil || o.z != nil {
		return nil
	}
	return o.json()
}

// Compressed reports whether the object's JSON is kept compressed (Options.Compress).
func (o *Object) Compressed() bool { return o != nil && o.z != nil }

// json returns raw without the key text behind it (capped, so that appending to the result
// cannot overwrite the key text): the JSON of an uncompressed object.
func (o *Object) json() []byte { return o.raw[:len(o.raw):len(o.raw)] }

// keyText returns the key text after the JSON, a view of the immutable allocation.
func (o *Object) keyText() string {
	end := cap(o.raw)
	if o.ext == nil {
		end -= 8*int(o.nspans) + int(o.spanPad)
	}
	t := o.raw[len(o.raw):end]
	if len(t) == 0 {
		return ""
	}
	return unsafe.String(&t[0], len(t))
}

// StoreKey returns the object's cache key, "namespace/name" or "name" as
// cache.MetaNamespaceKeyFunc computes it, without allocating (kindex's store and queue use
// it instead of building the key).
func (o *Object) StoreKey() string {
	if o == nil {
		return ""
	}
	return o.keyText()[:o.keyEnd]
}

// MarshalJSON returns the object's JSON (shared bytes: do not modify them).
func (o *Object) MarshalJSON() ([]byte, error) {
	if o == nil || len(o.raw) == 0 && o.z == nil {
		return []byte("null"), nil
	}
	return o.JSON()
}

// Unstructured decodes the object into a new *unstructured.Unstructured, exactly as
// client-go's dynamic client decodes JSON (integers as int64). Every call decodes; the
// caller owns the result.
func (o *Object) Unstructured() (*unstructured.Unstructured, error) {
	if o == nil || len(o.raw) == 0 && o.z == nil {
		return &unstructured.Unstructured{Object: map[string]any{}}, nil
	}
	b, err := o.JSON()
	if err != nil {
		return nil, err
	}
	return decodeMap(b, o.describe)
}

func (o *Object) describe() string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// HasManagedFields reports whether the bytes still hold metadata.managedFields.
func (o *Object) HasManagedFields() bool { return o != nil && o.flags&flagManagedFields != 0 }

// DeepCopyObject returns a copy sharing the immutable bytes: a small allocation.
func (o *Object) DeepCopyObject() runtime.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopy()
}

// DeepCopy returns a copy sharing the immutable bytes.
func (o *Object) DeepCopy() *Object {
	if o == nil {
		return nil
	}
	c := *o
	return &c
}

// GetObjectKind returns the object itself, which reads apiVersion and kind from its bytes.
func (o *Object) GetObjectKind() schema.ObjectKind { return o }

// GroupVersionKind reads apiVersion and kind from the bytes.
func (o *Object) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(o.topString("apiVersion"), o.topString("kind"))
}

// SetGroupVersionKind rewrites apiVersion and kind (see the setter costs on Object).
func (o *Object) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	o.update(func(u *unstructured.Unstructured) { u.SetGroupVersionKind(gvk) })
}

// The fields kept as text.

func (o *Object) GetNamespace() string {
	if o == nil {
		return ""
	}
	return o.keyText()[:o.nsEnd]
}

func (o *Object) GetName() string {
	if o == nil {
		return ""
	}
	start := o.nsEnd
	if start > 0 {
		start++ // the "/" after the namespace
	}
	return o.keyText()[start:o.keyEnd]
}

func (o *Object) GetResourceVersion() string {
	if o == nil {
		return ""
	}
	return o.keyText()[o.keyEnd:o.rvEnd]
}

func (o *Object) GetUID() types.UID {
	if o == nil {
		return ""
	}
	return types.UID(o.keyText()[o.rvEnd:])
}

// The fields read from the bytes on each call.

func (o *Object) GetGenerateName() string { return o.metaString("generateName") }
func (o *Object) GetSelfLink() string     { return o.metaString("selfLink") }

func (o *Object) GetGeneration() int64 { return metaDecode[int64](o, "generation") }

func (o *Object) GetCreationTimestamp() metav1.Time {
	return metaDecode[metav1.Time](o, "creationTimestamp")
}

func (o *Object) GetDeletionTimestamp() *metav1.Time {
	return metaDecode[*metav1.Time](o, "deletionTimestamp")
}

func (o *Object) GetDeletionGracePeriodSeconds() *int64 {
	return metaDecode[*int64](o, "deletionGracePeriodSeconds")
}

// GetLabels returns a new map, nil if there are no labels or one is not a string (as
// unstructured objects do).
func (o *Object) GetLabels() map[string]string { return stringMap(o.metaField("labels")) }

// GetAnnotations returns a new map, nil if there are none or one is not a string.
func (o *Object) GetAnnotations() map[string]string {
	return stringMap(o.metaField("annotations"))
}

// GetFinalizers returns nil if one is not a string.
func (o *Object) GetFinalizers() []string { return metaDecode[[]string](o, "finalizers") }

// GetOwnerReferences returns nil if one does not decode.
func (o *Object) GetOwnerReferences() []metav1.OwnerReference {
	return metaDecode[[]metav1.OwnerReference](o, "ownerReferences")
}

// GetManagedFields returns nil when they were cut (the default).
func (o *Object) GetManagedFields() []metav1.ManagedFieldsEntry {
	if !o.HasManagedFields() {
		return nil
	}
	return metaDecode[[]metav1.ManagedFieldsEntry](o, "managedFields")
}

// Setters: see Object for what they do and cost.

func (o *Object) SetNamespace(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetNamespace(v) })
}
func (o *Object) SetName(v string) { o.update(func(u *unstructured.Unstructured) { u.SetName(v) }) }
func (o *Object) SetGenerateName(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetGenerateName(v) })
}
func (o *Object) SetUID(v types.UID) { o.update(func(u *unstructured.Unstructured) { u.SetUID(v) }) }
func (o *Object) SetResourceVersion(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetResourceVersion(v) })
}
func (o *Object) SetGeneration(v int64) {
	o.update(func(u *unstructured.Unstructured) { u.SetGeneration(v) })
}
func (o *Object) SetSelfLink(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetSelfLink(v) })
}
func (o *Object) SetCreationTimestamp(v metav1.Time) {
	o.update(func(u *unstructured.Unstructured) { u.SetCreationTimestamp(v) })
}
func (o *Object) SetDeletionTimestamp(v *metav1.Time) {
	o.update(func(u *unstructured.Unstructured) { u.SetDeletionTimestamp(v) })
}
func (o *Object) SetDeletionGracePeriodSeconds(v *int64) {
	o.update(func(u *unstructured.Unstructured) { u.SetDeletionGracePeriodSeconds(v) })
}
func (o *Object) SetLabels(v map[string]string) {
	o.update(func(u *unstructured.Unstructured) { u.SetLabels(v) })
}
func (o *Object) SetAnnotations(v map[string]string) {
	o.update(func(u *unstructured.Unstructured) { u.SetAnnotations(v) })
}
func (o *Object) SetFinalizers(v []string) {
	o.update(func(u *unstructured.Unstructured) { u.SetFinalizers(v) })
}
func (o *Object) SetOwnerReferences(v []metav1.OwnerReference) {
	o.update(func(u *unstructured.Unstructured) { u.SetOwnerReferences(v) })
}

// SetManagedFields sets the object's managedFields: nil cuts them from the bytes without
// decoding; other values go through the decode and re-encode of every setter.
func (o *Object) SetManagedFields(v []metav1.ManagedFieldsEntry) {
	if o == nil {
		return
	}
	if v == nil {
		if o.HasManagedFields() {
			if n := o.withoutManagedFields(); n != nil {
				*o = *n
			}
		}
		return
	}
	o.update(func(u *unstructured.Unstructured) { u.SetManagedFields(v) })
}

// update applies fn to the decoded object and replaces the bytes with its encoding.
func (o *Object) update(fn func(u *unstructured.Unstructured)) {
	if o == nil {
		return
	}
	u, err := o.Unstructured()
	if err != nil {
		return
	}
	fn(u)
	n, err := fromUnstructured(u, &Decoder{keep: true})
	if err != nil {
		return
	}
	n.flags |= o.flags & flagTransformed
	*o = *n
}

// withoutManagedFields returns a copy whose bytes have no metadata.managedFields, or nil if
// the bytes cannot be scanned.
func (o *Object) withoutManagedFields() *Object {
	b, err := o.JSON()
	if err != nil {
		return nil
	}
	n, err := (&Decoder{}).DecodeObject(b)
	if err != nil {
		return nil
	}
	n.flags |= o.flags & flagTransformed
	return n
}

// fromUnstructured encodes u and decodes it with d.
func fromUnstructured(u *unstructured.Unstructured, d *Decoder) (*Object, error) {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("compact: encode: %w", err)
	}
	return d.DecodeObject(raw)
}

// metaField returns the value of metadata.<key> (the last such key of the last metadata,
// as decoding would keep), or nil.
func (o *Object) metaField(key string) []byte {
	if o == nil || o.metaEnd <= o.metaStart {
		return nil
	}
	b, _ := o.JSON()
	if int(o.metaEnd) > len(b) {
		return nil
	}
	b = b[o.metaStart:o.metaEnd]
	if b[0] != '{' {
		return nil
	}
	var val []byte
	_, _ = eachMember(b, 0, 1, func(m member) (int, error) {
		end, err := skipValue(b, m.valStart, 2)
		if err == nil && m.is(b, key) {
			val = b[m.valStart:end]
		}
		return end, err
	})
	return val
}

// topString returns the text of a top-level string member, "" if absent or not a string.
func (o *Object) topString(key string) string {
	if o == nil {
		return ""
	}
	b, _ := o.JSON()
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ""
	}
	var val []byte
	_, _ = eachMember(b, i, 0, func(m member) (int, error) {
		end, err := skipValue(b, m.valStart, 1)
		if err == nil && m.is(b, key) {
			val = b[m.valStart:end]
		}
		return end, err
	})
	return textOf(val)
}

func (o *Object) metaString(key string) string { return textOf(o.metaField(key)) }

// textOf returns the text of a JSON string value, "" for any other value.
func textOf(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	end, esc, err := scanString(v, 0)
	if err != nil || end != len(v) {
		return ""
	}
	return stringValue(v, 0, end, esc)
}

// metaDecode decodes metadata.<key> with encoding/json; the zero value if the field is
// absent or does not fit.
func metaDecode[T any](o *Object, key string) T {
	var v T
	if raw := o.metaField(key); raw != nil {
		if err := json.Unmarshal(raw, &v); err != nil {
			var zero T
			return zero
		}
	}
	return v
}

// stringMap decodes an object of strings; nil if v is not an object or a value is not a
// string.
func stringMap(v []byte) map[string]string {
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	out := map[string]string{}
	_, err := eachMember(v, 0, 0, func(m member) (int, error) {
		if m.valStart >= len(v) || v[m.valStart] != '"' {
			return m.valStart, errNotString
		}
		end, esc, err := scanString(v, m.valStart)
		if err != nil {
			return end, err
		}
		out[m.keyString(v)] = stringValue(v, m.valStart, end, esc)
		return end, nil
	})
	if err != nil {
		return nil
	}
	return out
}

var errNotString = malformed("not a string")
