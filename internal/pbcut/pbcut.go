package pbcut

import (
	"bytes"
	"encoding/binary"
)

// Magic is the prefix of Kubernetes' protobuf encoding, before the runtime.Unknown envelope.
var Magic = []byte{'k', '8', 's', 0}

// Protobuf wire types this package walks; groups (3 and 4) are not used by Kubernetes.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// Field numbers of the messages on the way to ObjectMeta.managedFields.
const (
	unknownTypeMeta        = 1 // runtime.Unknown.typeMeta
	unknownRaw             = 2 // runtime.Unknown.raw
	unknownContentEncoding = 3
	unknownContentType     = 4
	typeMetaAPIVersion     = 1 // runtime.TypeMeta.apiVersion
	typeMetaKind           = 2 // runtime.TypeMeta.kind
	objectMetadata         = 1 // PartialObjectMetadata.metadata
	listItems              = 2 // PartialObjectMetadataList.items
	managedFields          = 17
)

// shape says which fields of a message to drop and which to descend into.
type shape struct {
	drop int // field number removed wherever it occurs; 0 for none
	into int // field number of an embedded message walked with child; 0 for none
	kid  *shape
}

var (
	objectMeta = &shape{drop: managedFields}
	object     = &shape{into: objectMetadata, kid: objectMeta}
	list       = &shape{into: listItems, kid: object}
)

// field is one encoded field: its number, wire type, the span of the whole field and, for
// length-delimited ones, of its payload.
type field struct {
	num, wire          int
	start, body, end   int // key at start, payload from body (wireBytes), next field at end
	keyLen, payloadLen int
}

// next reads the field at b[i:]; ok is false where the bytes are not a well-formed field.
func next(b []byte, i int) (f field, ok bool) {
	key, n := binary.Uvarint(b[i:])
	if n <= 0 || key>>3 == 0 || key>>3 > 1<<29-1 {
		return f, false
	}
	f.start, f.num, f.wire, f.keyLen = i, int(key>>3), int(key&7), n
	i += n
	switch f.wire {
	case wireVarint:
		if _, n = binary.Uvarint(b[i:]); n <= 0 {
			return f, false
		}
		i += n
	case wireFixed64:
		if len(b)-i < 8 {
			return f, false
		}
		i += 8
	case wireFixed32:
		if len(b)-i < 4 {
			return f, false
		}
		i += 4
	case wireBytes:
		l, n := binary.Uvarint(b[i:])
		if n <= 0 || l > uint64(len(b)-i-n) {
			return f, false
		}
		i += n
		f.body, f.payloadLen = i, int(l)
		i += int(l)
	default:
		return f, false
	}
	f.end = i
	return f, true
}

// uvarintLen is the length of v's varint encoding.
func uvarintLen(v int) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// size returns the length of message b once s's fields are cut, and whether anything is;
// ok is false where b is malformed on the way (the walk then leaves the input alone).
func (s *shape) size(b []byte) (n int, cut, ok bool) {
	for i := 0; i < len(b); {
		f, ok := next(b, i)
		if !ok {
			return 0, false, false
		}
		i = f.end
		switch {
		case f.num == s.drop:
			if f.wire != wireBytes {
				return 0, false, false
			}
			cut = true
		case f.num == s.into && s.kid != nil:
			if f.wire != wireBytes {
				return 0, false, false
			}
			kn, kcut, ok := s.kid.size(b[f.body:f.end])
			if !ok {
				return 0, false, false
			}
			cut = cut || kcut
			n += f.keyLen + uvarintLen(kn) + kn
		default:
			n += f.end - f.start
		}
	}
	return n, cut, true
}

// write appends message b without s's cut fields to dst; b was checked by size.
func (s *shape) write(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		f, _ := next(b, i)
		i = f.end
		switch {
		case f.num == s.drop:
		case f.num == s.into && s.kid != nil:
			kid := b[f.body:f.end]
			kn, _, _ := s.kid.size(kid)
			dst = append(dst, b[f.start:f.start+f.keyLen]...)
			dst = binary.AppendUvarint(dst, uint64(kn))
			dst = s.kid.write(dst, kid)
		default:
			dst = append(dst, b[f.start:f.end]...)
		}
	}
	return dst
}

// Cut returns data, a protobuf-encoded meta.k8s.io/v1 PartialObjectMetadata or
// PartialObjectMetadataList in its runtime.Unknown envelope, without the managedFields of
// its objects, in a new slice, and true; or data itself and false when there was nothing to
// cut or data is not such a message (another kind, JSON, malformed: see the package doc).
func Cut(data []byte) ([]byte, bool) {
	s, raw, n, ok := plan(data)
	if !ok {
		return data, false
	}
	return cutInto(make([]byte, 0, len(data)-(raw.payloadLen-n)), data, s, raw, n), true
}

// CutInPlace is Cut writing the result over data (which it returns shortened) instead of
// into a new slice: for a buffer the caller owns and reads no more.
func CutInPlace(data []byte) ([]byte, bool) {
	s, raw, n, ok := plan(data)
	if !ok {
		return data, false
	}
	// Every byte is written at or before the offset it is read from: fields are only
	// removed and lengths only shrink, and each length is computed before its message is
	// written. copy and append move overlapping bytes correctly.
	return cutInto(data[:0], data, s, raw, n), true
}

// plan reads data's envelope and sizes the cut raw message; ok is false when there is
// nothing to cut.
func plan(data []byte) (s *shape, raw field, n int, ok bool) {
	s, raw, ok = envelope(data)
	if !ok {
		return nil, raw, 0, false
	}
	body := data[len(Magic):]
	n, cut, ok := s.size(body[raw.body:raw.end])
	return s, raw, n, ok && cut
}

func cutInto(dst, data []byte, s *shape, raw field, n int) []byte {
	body := data[len(Magic):]
	dst = append(dst, data[:len(Magic)+raw.start+raw.keyLen]...)
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = s.write(dst, body[raw.body:raw.end])
	return append(dst, body[raw.end:]...)
}

// Kind is what Message found.
type Kind int

const (
	Other  Kind = iota // anything else
	Object             // a meta.k8s.io/v1 PartialObjectMetadata
	List               // a meta.k8s.io/v1 PartialObjectMetadataList
)

// Message reads the envelope of data: the kind it holds and, for Object and List, the
// bytes of the message itself (a view of data), for its Unmarshal method.
func Message(data []byte) (Kind, []byte) {
	s, raw, ok := envelope(data)
	switch {
	case !ok:
		return Other, nil
	case s == list:
		return List, data[len(Magic)+raw.body : len(Magic)+raw.end]
	}
	return Object, data[len(Magic)+raw.body : len(Magic)+raw.end]
}

// envelope reads the runtime.Unknown after the magic prefix (see unknown): the shape its
// kind calls for and its raw field. ok is false unless it is a kind this package cuts.
func envelope(data []byte) (s *shape, raw field, ok bool) {
	apiVersion, kind, raw, ok := unknown(data)
	switch {
	case !ok || string(apiVersion) != "meta.k8s.io/v1":
		return nil, raw, false
	case string(kind) == "PartialObjectMetadata":
		return object, raw, true
	case string(kind) == "PartialObjectMetadataList":
		return list, raw, true
	}
	return nil, raw, false
}

// unknown reads the runtime.Unknown after the magic prefix: its TypeMeta and raw field. ok
// is false unless it holds exactly one of each and no content encoding or type.
func unknown(data []byte) (apiVersion, kind []byte, raw field, ok bool) {
	if !bytes.HasPrefix(data, Magic) {
		return nil, nil, raw, false
	}
	body := data[len(Magic):]
	var tm field
	var seenTM, seenRaw bool
	for i := 0; i < len(body); {
		f, ok := next(body, i)
		if !ok {
			return nil, nil, raw, false
		}
		i = f.end
		switch f.num {
		case unknownTypeMeta:
			if seenTM || f.wire != wireBytes {
				return nil, nil, raw, false
			}
			tm, seenTM = f, true
		case unknownRaw:
			if seenRaw || f.wire != wireBytes {
				return nil, nil, raw, false
			}
			raw, seenRaw = f, true
		case unknownContentEncoding, unknownContentType:
			if f.wire != wireBytes || f.payloadLen != 0 {
				return nil, nil, raw, false
			}
		}
	}
	if !seenTM || !seenRaw {
		return nil, nil, raw, false
	}
	apiVersion, kind, ok = typeMeta(body[tm.body:tm.end])
	return apiVersion, kind, raw, ok
}

// typeMeta reads a runtime.TypeMeta message (the last value of a repeated field wins, as
// in a protobuf decoder).
func typeMeta(b []byte) (apiVersion, kind []byte, ok bool) {
	for i := 0; i < len(b); {
		f, ok := next(b, i)
		if !ok {
			return nil, nil, false
		}
		i = f.end
		switch f.num {
		case typeMetaAPIVersion, typeMetaKind:
			if f.wire != wireBytes {
				return nil, nil, false
			}
			if f.num == typeMetaAPIVersion {
				apiVersion = b[f.body:f.end]
			} else {
				kind = b[f.body:f.end]
			}
		}
	}
	return apiVersion, kind, true
}

// Field numbers of a watch event: metav1.WatchEvent's type and object, and the object's
// runtime.RawExtension raw bytes.
const (
	watchEventType   = 1
	watchEventObject = 2
	rawExtensionRaw  = 1
)

// WatchEvent reads one frame of a protobuf watch stream, a metav1.WatchEvent message (the
// stream has no envelope per frame): the event's type and the encoded object it carries (a
// view of ev, in its own envelope). ok is false where ev is not such a message or holds a
// field twice.
func WatchEvent(ev []byte) (typ, obj []byte, ok bool) {
	var seenType, seenObj bool
	for i := 0; i < len(ev); {
		f, ok := next(ev, i)
		if !ok {
			return nil, nil, false
		}
		i = f.end
		switch f.num {
		case watchEventType:
			if seenType || f.wire != wireBytes {
				return nil, nil, false
			}
			typ, seenType = ev[f.body:f.end], true
		case watchEventObject:
			if seenObj || f.wire != wireBytes {
				return nil, nil, false
			}
			seenObj = true
			ext := ev[f.body:f.end]
			for j := 0; j < len(ext); {
				g, ok := next(ext, j)
				if !ok || g.num == rawExtensionRaw && (obj != nil || g.wire != wireBytes) {
					return nil, nil, false
				}
				j = g.end
				if g.num == rawExtensionRaw {
					obj = ext[g.body:g.end]
				}
			}
		}
	}
	return typ, obj, seenType && obj != nil
}
