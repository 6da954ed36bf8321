// Package jsondecode decodes JSON into the map[string]any / []any values that
// apimachinery's util/json.Unmarshal (and so unstructured.UnstructuredJSONScheme)
// produces, about 2.5 times faster, with 60% fewer allocations and 15-19% less heap
// kept per decoded object. It is meant for kindex's unstructured mode, to decode list
// items and watch events.
//
// # Semantics
//
// The result is the one util/json.Unmarshal gives (sigs.k8s.io/json with
// PreserveInts, the encoding/json decoder underneath), value for value:
//
//   - objects are map[string]any, arrays []any (never nil, also when empty), null
//     is nil, true and false are bool;
//   - a number with neither fraction nor exponent that fits an int64 is an int64
//     ("-0" is int64 0); any other number is the float64 strconv.ParseFloat gives
//     ("1.0", "1e3", "-0.0" as -0, 9223372036854775808 and longer integers, "1e-400"
//     as 0); a number beyond float64's range ("1e400") is an error;
//   - strings are unescaped as encoding/json does: all JSON escapes, \u surrogate
//     pairs joined, a lone or mismatched surrogate escape becomes U+FFFD, and each
//     byte of invalid UTF-8 becomes U+FFFD; "\'" and raw control characters are
//     errors;
//   - duplicate keys: the last one wins;
//   - malformed input is an error: trailing data after the value (whitespace aside),
//     a byte-order mark, comments, trailing commas, leading zeros, NaN, and nesting
//     deeper than MaxDepth (10,000 objects and arrays, util/json's bound), which is
//     an error and never a stack overflow;
//   - Object accepts an object, or "null" for a nil map, and reports any other value
//     as an error, as util/json.Unmarshal into a map does.
//
// It never panics. The equivalence is tested on a table of edge cases and realistic
// objects and by FuzzObject, which compares every input with util/json.
//
// Deliberate differences, in errors only: a syntax error is a *SyntaxError of this
// package (with an Offset), not util/json's internal type (sigs.k8s.io/json's
// SyntaxErrorOffset does not recognise it); messages and offsets may differ; when an
// input has both a syntax error and an out-of-range number, util/json reports the
// syntax error (it checks the whole input first) and this package whichever comes
// first. An out-of-range number is a *json.UnmarshalTypeError, as in util/json. Which
// inputs fail and which succeed, and with what values, is the same.
//
// # Sharing
//
// The maps and slices of a result are new and belong to the caller, who may modify
// them (delete managedFields, say). Strings, and the interface values that hold
// them, are interned and shared between results: a cache of 20,000 Pods holds one
// "containerPort", not 20,000. Strings are immutable, so this is invisible. No string
// refers to the input, which may be reused as soon as a call returns.
//
// # Why a hand-written decoder
//
// Decoding into map[string]any dominates the time and memory of client-go's
// dynamic informer. No maintained library produces apimachinery's exact values
// faster and smaller. Measured against util/json on the same realistic Pods (see
// below), each made to give util/json's values (UseNumber, then util/json's number
// conversion, unless said otherwise):
//
//   - github.com/goccy/go-json v0.12.0: 1.35x faster, more bytes allocated (61 KB
//     per Pod), the same heap kept per object (49.8 KB).
//   - github.com/bytedance/sonic v1.15.5, UseInt64 and CopyString: 1.9x faster, but
//     it allocates 63 KB per Pod and keeps 53.1 KB per object (more than util/json),
//     and it passes invalid UTF-8 through unchanged. With ValidateString as well it
//     matched util/json in a 60-second fuzz run, at 1.5x util/json's speed. It also
//     relies on a JIT and on runtime internals, with build tags that fall back to
//     encoding/json on Go versions it does not know yet.
//   - github.com/json-iterator/go v1.1.12: 1.2x faster, 1,384 allocations per Pod,
//     49.8 KB kept; it accepts a trailing NUL byte and keeps invalid UTF-8.
//
// None keeps less memory than util/json, and the fastest is slower than this package
// (2.5-2.8x util/json).
//
// # How
//
// One recursive-descent pass over the bytes. Members and elements are collected on
// a scratch stack, so each map and slice is made at its final size when its closing
// bracket is read (no slice growth, no map rehash). Strings without escapes are
// found eight bytes at a time. Short strings are interned: a fixed table of about
// 470 keys and values common in Kubernetes objects, and up to 2,048 more that a
// Decoder learns from its input (keys up to 128 bytes, string values up to 32), after
// which its table is emptied and learning starts again, so the table stays bounded
// whatever the input. Before hashing, a small table guesses which interned string
// comes next from where it is (the enclosing member and the previous key): objects
// of one kind repeat their keys in the same order, and about 89% of a Pod's keys are
// found without hashing. The hash is hash/maphash with a per-Decoder seed.
//
// # Memory, and what was measured but not kept
//
// A decoded Pod is mostly maps, and their size is set by Go, not by the decoder: in
// Go 1.26 every map with 1 to 8 members takes 336 bytes, one with 9 to 14 takes 664,
// and an empty map 48. The test Pod (7.7 KB of JSON, 3.2 KB of it managedFields) has
// 88 small maps, 7 larger ones and 131 empty ones (managedFields' "f:x":{}),
// about 41 KB that any decoder into map[string]any must allocate, of the 42.6 KB
// this package keeps per Pod (util/json: 49.9 KB). Interning, exact-size slices and
// shared interface values remove the rest. So further memory savings need another
// representation (kindex's compact mode keeps objects as bytes) or dropping
// managedFields before decoding rather than after.
//
// Tried and dropped:
//
//   - One string allocation per object (all its non-interned strings as views of one
//     buffer): 50 bytes less per Pod, because interning already shares most strings,
//     at the price of unsafe code and of pinning the bytes of deleted fields (kindex
//     deletes managedFields after decoding) for as long as any string lives.
//   - Sizing maps exactly: free with the scratch stack, but it changes no map's final
//     size (maps grow by groups of 8 slots); it only avoids rehashing.
//   - A two-pass decoder (validate into a tape, then build): as fast, but its scratch
//     is 16 bytes per JSON value, 1.3 times the size of a list body decoded whole.
//   - A Go map as the intern table: 20% slower parsing than the open-addressing table.
//
// # Limits and costs
//
// A Decoder is not safe for concurrent use; Object and Value are, drawing Decoders
// from a sync.Pool. A Decoder kept warm holds about 200 KB (intern and prediction
// tables, learnt strings, scratch); with many informers, share Decoders between
// them (the pool does) rather than keep one per informer. The scratch stack holds one
// entry per member of every open object and array, so a list body decoded whole
// holds one per item until the list closes; scratch beyond 65,536 entries is not kept
// between calls.
//
// # Measurements
//
// go test -run='^$' -bench=DecodePod -benchtime=3000x ./internal/jsondecode/ and
// -bench=Retained -benchtime=1x, 2-core shared AMD EPYC, Go 1.26, median of six runs,
// distinct realistic Pods (podgen_test.go: 7.7 KB of JSON, managedFields from two
// managers, two containers with env, ports, probes and resources, kubelet status).
//
//	                     util/json    Decoder       ratio    Object (pool)
//	time per Pod         102 µs       37 µs         2.75x    43.6 µs (2.35x)
//	throughput           76 MB/s      208 MB/s      2.75x    177 MB/s
//	allocations          993          404           -59%     404
//	bytes allocated      53.6 KB      42.7 KB       -20%     42.7 KB
//	kept per object      49.9 KB      42.6 KB       -15%     42.6 KB
//	  managedFields deleted
//	  after decoding     25.3 KB      20.6 KB       -19%     20.6 KB
//
// Decoding 20,000 such Pods and keeping them all took 4.2-5.7 s with util/json and
// 2.2-2.8 s with this package in the same runs (collection of the growing heap
// included). The third-party figures above come from a throwaway module with the
// same Pods and benchmarks; adding such a dependency is not worth it. Since 2026-11-27 a
// string's scan jumps to the first byte of a word that needs a look instead of testing
// the word's bytes one by one: 5-27% less time per Pod for Object in four alternating
// runs of the binaries before and after (-bench='DecodePod/jsondecode$' -benchtime=5000x).
package jsondecode
