package compact

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/kindex/kindex/jsonpath"
)

// Options configures what a Decoder (and so a Mode) keeps of each object.
type Options struct {
	// KeepManagedFields keeps metadata.managedFields, which are otherwise cut from the bytes
	// as they are decoded: about 40-45% of a typical object (storage.Config's, for a Mode).
	KeepManagedFields bool
	// Projection, if not nil, keeps only the fields these JSONPath expressions (kubectl's
	// dialect, the syntax of kindex indexes) read, plus apiVersion, kind and the whole
	// metadata (less managedFields). Only key paths are projected (jsonpath.Path.Fields);
	// lists are kept whole below them. An expression that reads the whole object (a
	// recursive descent such as "{..name}") turns projection off; an empty non-nil slice
	// keeps apiVersion, kind and metadata only. Indexes, queries and handlers then see only
	// these fields: list every expression the program evaluates.
	Projection []string
	// ProjectPaths are more projection expressions, compiled already (the factory's
	// indexes, for CompactOptions.ProjectIndexes). They turn projection on like Projection.
	ProjectPaths []*jsonpath.Path
	// StreamList makes every LIST of a Mode one consistent, unpaginated request whose body
	// is decoded as it arrives (DecodeListFrom), and makes the Mode's ListerWatcher decline
	// watch-list, so that the initial sync is that LIST followed by a WATCH from its
	// resourceVersion. See ListerWatcher for why. It does not change what a Decoder does.
	StreamList bool
	// Compress keeps each object's JSON zstd-compressed with a dictionary of its informer,
	// made of the first objects the informer stores (compress.go): a realistic Pod's 4.3 KB
	// of JSON (managedFields cut) become about 300 bytes. The key getters (namespace, name,
	// resourceVersion, uid) and StoreKey stay free; reading the JSON (RawJSON, Unstructured,
	// the other metadata getters, and so indexes, queries and decoding) decompresses it,
	// about 10 µs for a Pod, and the initial sync compresses each object once (doc.go has
	// the measurements). Compression happens in the Mode's transform, so it applies to a
	// Mode's informers, not to what a Decoder returns.
	Compress bool
}

// Decoder turns Kubernetes JSON (LIST bodies, watch frames, single objects) into compact
// objects. It is safe for concurrent use.
type Decoder struct {
	keep bool
	proj *projection // nil: no projection
}

// NewDecoder returns a decoder; it fails if a projection expression does not compile (the
// error wraps the *jsonpath.SyntaxError).
func NewDecoder(opts Options) (*Decoder, error) {
	d := &Decoder{keep: opts.KeepManagedFields}
	if opts.Projection != nil || opts.ProjectPaths != nil {
		p, err := newProjection(opts.Projection, opts.ProjectPaths)
		if err != nil {
			return nil, err
		}
		d.proj = p
	}
	return d, nil
}

// DecodeObject validates data (one JSON object, surrounding space allowed) and returns it
// as a compact object, in its own allocation (data is not retained).
func (d *Decoder) DecodeObject(data []byte) (*Object, error) {
	s := getScratch()
	defer putScratch(s)
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		if err := validDocument(data); err != nil {
			return nil, err
		}
		return nil, malformed("expected a JSON object")
	}
	end, err := d.decodeAt(data, i, 0, s, "")
	if err != nil {
		return nil, err
	}
	if j := skipSpace(data, end.end); j != len(data) {
		return nil, syntaxErr(j, "invalid character "+quoteChar(data[j])+" after top-level value")
	}
	return end.obj, nil
}

// decoded is one object decoded by decodeAt, with the index after it.
type decoded struct {
	obj *Object
	end int
}

// decodeAt decodes the object starting at b[i] ('{', with depth containers around it).
func (d *Decoder) decodeAt(b []byte, i, depth int, s *scratch, inject string) (decoded, error) {
	end, err := scanObject(b, i, depth, s)
	if err != nil {
		return decoded{end: end}, err
	}
	return d.build(b, i, end, depth, s, inject)
}

// build makes the object scanObject described.
func (d *Decoder) build(b []byte, start, end, depth int, s *scratch, inject string) (decoded, error) {
	keys, nsEnd, keyEnd, rvEnd := s.keys(b)
	raw, meta, err := s.emit(b, start, end, depth, d.keep, d.proj, inject, len(keys))
	if err != nil {
		return decoded{end: end}, err
	}
	if len(raw)+len(keys) > math.MaxUint32 {
		return decoded{end: end}, malformed("object of %d bytes is too large", len(raw))
	}
	// The key text goes right after the JSON, in the capacity emit left for it.
	raw = append(raw, keys...)[:len(raw)]
	o := &Object{raw: raw, nsEnd: nsEnd, keyEnd: keyEnd, rvEnd: rvEnd, metaStart: uint32(meta.start), metaEnd: uint32(meta.end)}
	if d.keep && s.info.lastMetaMF {
		o.flags |= flagManagedFields
	}
	return decoded{obj: o, end: end}, nil
}

// isStatus reports whether the object scanObject described is a metav1.Status.
func (s *scratch) isStatus(b []byte) bool {
	return s.memberText(b, s.info.kind) == "Status" && s.memberText(b, s.info.apiVersion) == "v1"
}

// injection returns the members client-go adds to the items of a typed list: the list's
// kind without its "List" suffix and the list's apiVersion.
func injection(listKind, listAPIVersion string) string {
	k, _ := json.Marshal(strings.TrimSuffix(listKind, "List"))
	v, _ := json.Marshal(listAPIVersion)
	return fmt.Sprintf(`"kind":%s,"apiVersion":%s`, k, v)
}
