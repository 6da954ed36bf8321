// Package typedjson decodes JSON straight into typed Go values (a *corev1.Pod, any struct,
// map, slice or interface) with the semantics of Kubernetes' own JSON decoder,
// sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts, about three times faster. kindex
// uses it where a cached object's bytes become a typed object: Item.DecodeInto in the
// compact mode, and crcache's typed reads.
//
// # Semantics
//
// Those of encoding/json.Unmarshal, with sigs.k8s.io/json's two changes:
//
//   - object keys match struct fields case-sensitively: a field's json tag name (or its Go
//     name), nothing else; keys that match no field are skipped;
//   - a number decoded into an interface is an int64 when it is an integer that fits
//     (no fraction, no exponent), a float64 otherwise; into a json.Number it is kept as
//     text.
//
// The rest is encoding/json's: fields by tag (",string" applied to bool, number and string
// fields, "-" left out, options such as omitempty ignored), embedded structs promoted by
// Go's rules (untagged, by value or by pointer, allocated when one of their fields is
// set), objects into map[string]any, arrays into []any (not nil when empty), null leaving
// values alone except pointers, maps, slices and interfaces (set to nil), []byte from
// base64, maps with string, integer or encoding.TextUnmarshaler keys, fixed arrays filled
// and the rest zeroed or skipped, strings unescaped with invalid UTF-8 and lone
// surrogates as U+FFFD, duplicate keys decoded again into the same field (into the same
// struct, map and slice elements, as encoding/json does), json.Unmarshaler methods given
// the value's bytes (null included, for values that are not pointers) and
// encoding.TextUnmarshaler methods given strings, an interface that holds a non-nil
// pointer decoded through it, nesting deeper than 10,000 an error.
//
// The equivalence is tested value for value with reflect.DeepEqual against
// sigs.k8s.io/json: hand-written edge cases into a struct with every kind of field and
// into a dozen other targets (edge_test.go), targets that already hold values, realistic
// Pods, randomly filled objects of fifteen kinds (Pod, Service, ConfigMap, Secret, Node,
// Deployment, StatefulSet, DaemonSet, Job, CronJob, Ingress, RoleBinding,
// CustomResourceDefinition, PartialObjectMetadata, PodList) into their type, into
// PartialObjectMetadata and into map[string]any, damaged objects, and FuzzUnmarshal.
//
// Deliberate differences, in errors only: which inputs fail is the same, but decoding stops
// at the first error (sigs.k8s.io/json goes on after a type mismatch and reports it at the
// end), so what a failed call leaves in the target differs, and so may the message and
// offset; a syntax error is this package's *SyntaxError (with an Offset; sigs.k8s.io/json's
// SyntaxErrorOffset does not know it), and when an input has both a syntax error and a
// type mismatch, sigs.k8s.io/json, which checks the whole input first, reports the syntax
// error, this package whichever comes first. Type mismatches are *json.UnmarshalTypeError
// with Struct and Field (the path of JSON names from the outermost struct) as with
// encoding/json, and errors of UnmarshalJSON and UnmarshalText methods are returned as
// they are. A target whose interfaces hold pointers that lead back to each other (which
// encoding/json follows forever) is an error. It never panics on any input; only a
// method of the target's types can.
//
// # Four special types
//
// metav1.Time, metav1.MicroTime, intstr.IntOrString and resource.Quantity are in most
// objects (a Pod has about twenty), and their UnmarshalJSON is costly: the first three
// decode their input a second time with encoding/json (half a microsecond and three
// allocations a call), Quantity copies it. Their common case is decoded here to the
// method's result directly (time.Parse(time.RFC3339, s).Local(); Type and StrVal, or Type
// and an int32 IntVal; resource.ParseQuantity of the string); anything else (null, strings
// with escapes, other values, values that fail to parse) goes to the method itself, so
// values and errors are the methods'. TestSpecialTypes compares them on a table of values,
// and the other tests and the fuzz target on whole objects.
//
// # Why a hand-written decoder
//
// Every object a typed client reads is decoded this way, and with encoding/json's
// machinery it costs more than the decode to map[string]any that kindex's compact mode
// does with internal/jsondecode: encoding/json validates the whole input in a first pass,
// then decodes it byte by byte through its scanner's state machine, finds struct fields
// by hashing each key, and calls UnmarshalJSON methods that decode again. The semantics
// to keep are sigs.k8s.io/json's, down to invalid UTF-8, duplicate keys and methods, which
// this package's tests check value for value; another decoder would have to be made to
// match them and checked the same way.
//
// Measured on the same realistic Pods (internal/testsupport/podgen), as the compact mode
// stores them (managedFields cut, 4.5 KB of JSON), into a new corev1.Pod (into
// map[string]any for the unstructured decode), on a 2-core Xeon shared with other work,
// Go 1.26, 2026-11-24 02:05 UTC (load average 1.5-1.8): the process's CPU time per Pod,
// garbage collection included, medians of three runs of
//
//	go test -run='^$' -bench='DecodePod$/stored' -benchmem -count=3 ./internal/typedjson/
//
// and "best", the best batch of 50 among 300 rounds (what the decoder costs when other
// work does not interfere), medians of three runs of
//
//	go test -run='^$' -bench=DecodePodBest -benchtime=300x ./internal/typedjson/
//
// The wall time per Pod (ns/op) of these runs is left out: other work stretched it,
// differently from one sub-benchmark to the next.
//
//	                               CPU      best      B/op   allocs/op
//	encoding/json               104 µs     70 µs    16,032     231
//	sigs.k8s.io/json             98 µs     67 µs    16,284     244
//	unstructured (jsondecode)    38 µs     21 µs    20,557     178   (Item.Object's)
//	typedjson, Unmarshal         22 µs   11.6 µs    10,633      52
//	typedjson, UnmarshalShared   18 µs    9.6 µs     8,584      50   (Item.DecodeInto's)
//	client-go unstructured       94 µs     55 µs    27,827     582   (UnstructuredJSONScheme)
//
// UnmarshalShared, which Item.DecodeInto uses on the bytes the compact mode holds, takes
// 0.45-0.46 of the unstructured decode's time at best (three runs) and 0.47 of its CPU
// time; Unmarshal, which copies the strings, 0.54-0.55 and 0.58; either takes a fifth of
// sigs.k8s.io/json's time, with half the allocated bytes and a fifth of the allocations,
// and 0.18-0.21 of the decode to *unstructured.Unstructured that client-go's dynamic client
// does. On other Pods the ratio to the unstructured decode differs: bench/README.md's
// reads benchmark, on Pods an API server made (3 KB, more arrays and maps per byte) in a
// process that holds two 5,000-Pod caches, measures 0.57-0.58 at best and 0.60-0.74
// overall (Item.DecodeInto against Item.Object, alternating); the decoders alone on 40 of
// those Pods (BenchmarkDecodePodBest/apiserver, testdata/apiserver-pods.jsonl) measure
// 0.57 at best where podgen's measure 0.51 in the same run (2026-11-27, load about 2),
// and 0.52-0.54 (podgen's 0.46-0.47) since slices are given room by the last length of
// their type and scalars words of a shared chunk, against 0.55-0.56 (0.49-0.50) for the
// version before, three runs each, alternating (2026-11-28, 00:17 UTC, load about 1.5).
// With managedFields kept
// (7.7 KB), which typedjson decodes as the bytes they are (metav1.FieldsV1 keeps its raw
// JSON) and the unstructured decode as 131 maps, the typed decode gains: 47 µs of CPU
// against 81 µs (sigs.k8s.io/json 163 µs) in a run at load 16, before the changes of
// 2026-11-24.
//
// What remains is mostly the allocations any decoder into these types makes (a
// ResourceList is a map of at least 600 bytes, a Pod 50 objects; in a process with a large
// heap, allocation is 40% of the decode) and the scan itself: a pass that only validates
// the same bytes takes 4.5 µs.
//
// # How
//
// One pass over the bytes, validating as it decodes (values that are skipped, for keys that
// match no field, are validated too), recursive descent into the target through unsafe
// pointers. Each Go type has a plan, compiled on first use and kept for good in a
// sync.Map keyed by reflect.Type: the decode function of its kind, and for a struct its
// fields by encoding/json's rules, with their offsets and an open-addressing table of
// their names. Keys are matched without a string or a hash in the common case: objects
// written by encoding/json (the API server's) list their members in field order, so the
// key is first compared in place with the names of the field after the previous key's and
// of the seven after it (fields left out by omitempty are passed over this way), its first
// eight bytes as one word. Strings are scanned eight bytes at a time to the first byte
// that needs a look (a quote, an escape, a control or non-ASCII byte). With Unmarshal,
// strings are copied once, into chunks of 1 KB shared by the short strings of a call (one
// allocation for about twenty strings); with UnmarshalShared, those without escapes are
// views of the input. Timestamps in the form the API server writes them
// ("2006-01-02T15:04:05Z") are converted without time.Parse, and a decoder in the pool
// remembers the last 32 quantities it parsed. An array decoded into a nil slice is decoded into a
// new slice with room for as many elements as the last array of its type had (arrays of a
// type tend to have one length in objects of a kind: two containers, one port), grown as
// append does when the array is longer: usually one allocation and no copy, where
// appending costs log2(n)+1. Pointers to small scalars (*bool, *int32, *int64) are words
// of a 128-byte chunk shared by one call rather than allocations of their own. Maps of the common types
// (map[string]string, map[string]any, corev1.ResourceList, map[string][]byte) are decoded
// without reflection.
//
// # Costs
//
// Per call: a decoder from a sync.Pool, the target's values (the allocations
// encoding/json makes, fewer for strings and slices), nothing else. The first call with a
// type compiles its plan (microseconds to a millisecond for a large type such as
// CustomResourceDefinition); plans are never dropped, one per type ever decoded. A pooled
// decoder keeps an unescaping buffer of at most 64 KB, and its last 32 quantities (their strings
// and values; those held as an *inf.Dec are never kept, so that no two results share
// one). A string that outlives the rest of its result keeps its 1 KB chunk alive (with
// UnmarshalShared, the whole input), as a substring keeps its string, and a scalar its
// 128-byte chunk. A slice may have more room than elements (at most 4 KB more) when its
// array is shorter than the last one of its type.
package typedjson
