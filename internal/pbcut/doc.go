// Package pbcut removes managedFields from the protobuf encoding of PartialObjectMetadata
// and PartialObjectMetadataList before client-go decodes it, so that the metadata-only mode
// never builds the managed-fields entries it would throw away.
//
// The metadata client receives objects as protobuf: a runtime.Unknown envelope (after the
// four-byte "k8s\x00" prefix) whose raw bytes are a PartialObjectMetadata, or a
// PartialObjectMetadataList whose items are. managedFields (ObjectMeta's field 17) are
// about two thirds of a typical object's metadata: decoding them allocates every entry's
// strings, time and fieldsV1 bytes, only for the transform to drop them, and that garbage
// is what makes the metadata-only mode's memory peak during an initial sync well above what
// it keeps. Cut copies the message without those fields, rewriting the lengths of the
// messages that enclosed them; everything else is copied byte for byte, so the decoder sees
// what the server sent minus the cut fields. CutInPlace does the same over a buffer its
// caller owns (a watch stream's frame), WatchEvent finds the object in such a frame, and
// Message the PartialObjectMetadata inside its envelope, so that the metadata client
// (internal/storage) decodes without copying the bytes first.
//
// Cut only removes: it never merges or reorders fields, and a message with a repeated
// envelope field, a TypeMeta of another kind or a content encoding is left alone.
//
// Anything else (another kind, JSON, a malformed or truncated message, group wire types) is
// returned unchanged for the decoder to handle or reject as it would have. Cut never fails
// and never changes its input (CutInPlace changes only its own); on what the API server sends (its objects' encodings) the
// result decodes to the same object, managedFields aside (TestCutDamaged and FuzzCut check
// it on every truncation and on damaged and fuzzed bytes). A damaged message may decode
// differently after the cut: the protobuf decoder accepts a string in a map entry that runs
// past the entry's end, which the cut can move.
//
// Hand-written because no library does this: protobuf libraries decode whole messages into
// types, which is the cost to avoid; the walk needs the wire format's four rules (varint
// keys, varint, fixed 32 and 64, length-delimited) and nothing else.
package pbcut
