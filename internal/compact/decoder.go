package compact

import (
	"encoding/binary"
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
	// Spans records, with each object, the extents of its objects and arrays of at least
	// 128 bytes (jsonpath.Spans; Object.JSONSource), so that JSONPath paths of fields and
	// indexes (index functions, Item.Eval) step over them instead of scanning: on the Pods
	// of the reads benchmark, Item.Eval({.spec.nodeName}) goes from 8.2 to about 0.8 µs per
	// result (bench/README.md). It costs one more scan and copy of each object as it is
	// decoded and 8 bytes per span (19 for a realistic Pod, 151 bytes: BenchmarkSpansPerPod);
	// informers with JSONPath indexes turn it on. From 128 bytes: from 256 (12 spans per
	// Pod), BenchmarkReads in ./bench measured 0.88-1.11 µs against 0.65-0.90 in alternating
	// runs, a Pod's volumes (about 230 bytes) being scanned; from 512, 1.46 µs against 1.33
	// for 256.
	Spans bool
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

// spanSize is the size from which an object's objects and arrays get a span.
const spanSize = 128

// Decoder turns Kubernetes JSON (LIST bodies, watch frames, single objects) into compact
// objects. It is safe for concurrent use.
type Decoder struct {
	keep  bool
	spans bool
	proj  *projection // nil: no projection
}

// NewDecoder returns a decoder; it fails if a projection expression does not compile (the
// error wraps the *jsonpath.SyntaxError).
func NewDecoder(opts Options) (*Decoder, error) {
	d := &Decoder{keep: opts.KeepManagedFields, spans: opts.Spans}
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
	obj    *Object
	end    int
	reused bool // obj is a known object (DecodeListFromReusing)
}

// decodeAt decodes the object starting at b[i] ('{', with depth containers around it that
// count toward maxDepth). A list item or a watch event's object is decoded with depth 0:
// judged by its own nesting, as the API server judges an object (its GET serves any object
// its decoder accepted) and as every later decode of the stored bytes does, not by the
// nesting of the list or event around it, which may take an object the server serves
// beyond encoding/json's bound (the package documentation, "Nesting").
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
	var raw []byte
	var meta span
	var err error
	var spans jsonpath.Spans
	if d.spans {
		// The spans are found in the output, in scratch space: then one allocation holds
		// the JSON, the key text and the spans.
		if s.out, meta, err = s.emit(b, start, end, depth, d.keep, d.proj, inject, 0, s.out[:0]); err != nil {
			return decoded{end: end}, err
		}
		s.spans = jsonpath.BuildSpans(s.spans[:0], s.out, spanSize)
		spans = s.spans
		if len(spans)/2 > math.MaxUint16 {
			spans = nil
		}
		raw = make([]byte, len(s.out), len(s.out)+len(keys)+3+4*len(spans))
		copy(raw, s.out)
	} else if raw, meta, err = s.emit(b, start, end, depth, d.keep, d.proj, inject, len(keys), nil); err != nil {
		return decoded{end: end}, err
	}
	if len(raw)+len(keys)+3+4*len(spans) > math.MaxUint32 {
		return decoded{end: end}, malformed("object of %d bytes is too large", len(raw))
	}
	// The key text goes right after the JSON, in the capacity left for it; the spans after
	// it, aligned.
	full, pad := appendSpans(append(raw, keys...), spans)
	raw = full[:len(raw):len(full)]
	o := &Object{raw: raw, nsEnd: nsEnd, keyEnd: keyEnd, rvEnd: rvEnd, metaStart: uint32(meta.start), metaEnd: uint32(meta.end),
		spanPad: uint8(pad), nspans: uint16(len(spans) / 2)}
	if d.keep && s.info.lastMetaMF {
		o.flags |= flagManagedFields
	}
	return decoded{obj: o, end: end}, nil
}

// appendSpans appends to full (an object's JSON and key text, in an allocation with room for
// 3+4*len(spans) more bytes) the padding that aligns the spans and the spans, as
// Object.Spans reads them; it returns the padding (0 without spans, which appends nothing).
func appendSpans(full []byte, spans jsonpath.Spans) ([]byte, int) {
	if len(spans) == 0 {
		return full, 0
	}
	pad := (4 - len(full)%4) % 4
	full = append(full, "\x00\x00\x00"[:pad]...)
	for _, v := range spans {
		full = binary.NativeEndian.AppendUint32(full, v)
	}
	return full, pad
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
