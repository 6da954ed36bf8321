// Package jsonpath implements kubectl's dialect of JSONPath for kindex:
// index functions and queries are written as expressions such as
// {.spec.nodeName}, {.spec.containers[*].image},
// {.status.conditions[?(@.type=="Ready")].status} or
// {.metadata.labels['app.kubernetes.io/name']}, and evaluated on every
// object the cache receives.
//
// An expression is compiled once into an immutable Path, safe for
// concurrent use, and evaluated on decoded objects (map[string]any, []any
// and scalars, as unstructured.Unstructured holds them) without
// reflection, or on raw JSON documents (the type JSON) in place, without
// decoding them. Both give identical results, through the same methods. Evaluation is bounded, so that expressions and objects from
// untrusted users cannot stall a process.
//
// # Why not client-go's util/jsonpath
//
// k8s.io/client-go/util/jsonpath defines the meaning kubectl users know,
// and kindex follows it (see the comparison test against it), but it
// cannot serve an index: it walks objects with reflection (1 to 3 µs per
// evaluation on a Pod, where kindex takes tens of nanoseconds); it mutates
// its parse tree while executing, so one parsed template cannot be shared
// between goroutines ({range} races); and it is unbounded ({..x..x..x} on
// an object nested 1000 deep runs for minutes). Other Go JSONPath
// libraries implement RFC 9535 or Goessner's dialect, not kubectl's
// (templates, {range}, kubectl's quoting and printing rules), and none
// bounds its work. Hence this package.
//
// # Expressions
//
// An expression is a template: literal text with actions in braces, as
// in kubectl -o jsonpath:
//
//	{.metadata.namespace}/{.metadata.name}
//	{range .spec.containers[*]}{.name}={.image}{"\n"}{end}
//
// As a convenience for index expressions, an expression that contains no
// '{' and starts with '.', '[', '$' or '@' is a bare path: .spec.nodeName
// means {.spec.nodeName}. (kubectl itself would print such text as is.)
//
// The grammar, informally (white space is allowed around the items of
// actions, brackets and filters, but not between path segments):
//
//	template  = { text | "{" action "}" }
//	action    = exprs | "range" exprs | "end"    ({range} ... {end} nest)
//	exprs     = expr { "," expr }                 (values of all, in order)
//	expr      = literal | path
//	literal   = "'" chars "'" | `"` chars `"` | number | "true" | "false"
//	path      = [ "$" | "@" ] { segment }         (at least one of them)
//	segment   = "." name | ".*" | ".." [ name | "*" ] | "[" selectors "]" | "[?(" filter ")]"
//	selectors = selector { "," selector }         (a union if more than one)
//	selector  = "*" | quoted key | index | [start] ":" [end] [ ":" [step] ]
//	filter    = operand [ op operand ]            (op: == != < <= > >=)
//	operand   = literal | path                    (paths relative to the element)
//
// A name runs up to white space or one of . , [ ] $ @ { } (inside a
// filter also ( ) = ! < >); a backslash makes the next character part of
// it, so a\.b is the key "a.b". A name after .. cannot start with a quote,
// + or - (quote it: ..['-1']). Quoted strings use Go's escapes (a
// malformed \x, \u, \U or octal escape is an error), and a backslash
// before any other character stands for that character. Numbers
// are decimal, with an optional sign and fraction; integers that fit
// int64 are integers, others floats. Indexes may be negative (from the
// end); slices are [start:end:step] with a positive step.
//
// $ and @ both denote the current value: the object at the top level, the
// element being tested inside a filter, and the current item inside
// {range}. This is kubectl's behavior ($ is not the document root).
//
// # Results
//
// Eval returns Values: small structs that keep the JSON type (Kind) of
// each result. Value.String is the text kubectl prints for it, and the
// canonical form of index keys: strings unquoted, integers in decimal,
// floats as fmt prints them (1.5, 1e+06), true, false, null, and maps and
// lists as compact JSON with sorted keys. Value.IsScalar tells whether a
// value is usable as an index key.
//
// A template (text outside braces, several actions or a {range}) yields
// one string: its text output. Execute writes the same output to a
// writer; for a single action, the output is its values separated by
// spaces, as kubectl prints them. ExecuteJSON writes what kubectl -o
// jsonpath-as-json prints instead: a JSON array of the values of each
// text, action and {range} body pass, indented by four spaces
// (TestExecuteJSONMatchesClientGo compares it with client-go's
// EnableJSONOutput on every case of TestMatchesClientGo whose order is
// fixed).
//
// A missing field, an index out of range or a path that does not apply
// to a value (a field of a string, an index into a map) is not an error:
// it yields no values. Evaluation fails only when a budget is exhausted
// (ErrBudgetExceeded), a decoded object holds a Go type outside the
// JSON model (ErrUnsupportedType), or a map or list to print holds a
// number JSON cannot (NaN or an infinity, from a decoded object or a raw
// number beyond float64's range such as 1e400: ErrUnsupportedType too).
//
// Order of results: arrays in order; map members in key order (kubectl
// uses Go's random map order); recursive descent in pre-order; a union
// applies each of its branches to every value that reaches it, so
// .items[*]['a','b'] yields every a, then every b, as in kubectl.
//
// For the index layer, Each (a callback per value) and AppendEval (into a
// reused slice) evaluate without allocating: always for SingleValued
// expressions (fields and indexes only), and for the paths indexes
// usually are (wildcards over arrays, slices, filters comparing a field
// with a literal). Fields reports the object keys an expression reads, so
// that a projection can drop everything else (managedFields, for example)
// without changing any result.
//
// # Limits
//
// Compile rejects expressions longer than Options.MaxLength (4096 bytes
// by default) and filters and ranges nested deeper than
// Options.MaxNesting (16), with a *SyntaxError wrapping ErrTooComplex.
// The length limit applies to the canonical form (Path.String) too, which
// can be longer than the expression ({..*} prints as {..[*]}, a\.b as
// ['a\.b']): so Compile(p.String()) always succeeds with the options that
// compiled p, and gives the same String.
//
// Each evaluation has a budget of Options.MaxSteps steps (65536) and
// Options.MaxResults results (16384), and follows data at most
// MaxDataDepth (10000) levels deep; when one is exhausted, evaluation
// stops with a *BudgetError wrapping ErrBudgetExceeded. All work is
// charged to the budget before it is done, or, for scanning raw JSON, as
// it is done, in proportion to its cost (see DefaultMaxSteps): sorting the
// keys of a map, scanning every level of a document, converting long
// numbers, comparing and printing. With the defaults, any expression on
// any object, decoded or raw, ends within about 10 ms of CPU or fails with
// the budget error. That is the evaluation's own work: one that allocates
// megabytes (printing a large value, probing a 10,000-key map of raw JSON)
// also pays the garbage collector's assists, which in a process whose heap
// is large and full of pointers (unstructured objects, not the compact
// mode's bytes), or one that has just grown its heap, can double it or more.
// So printing allocates little more than its output: it grows the output by
// doubling, never past what the budget pays for, and ExecuteString returns
// a large output without copying it (2.1-4x the output allocated, 1.5-2.5x
// when the budget cuts the print, where append's growth allocated 4.7-6.8x:
// TestLargeOutputsAllocateLittleMoreThanThemselves). BenchmarkHostile,
// whose process holds every hostile object, measured at most 8.2 ms for each
// of its 132 cases in two runs of three and 10.2 ms for one case (6.2-6.6 ms
// in the other runs) in the third (2026-11-30, 04:55 UTC, load average 1.1-1.8,
// go test -run '^$' -bench Hostile -benchtime 10x -benchmem ./jsonpath/);
// before those changes, the three cases that print megabytes took 15-16 ms
// there. With raw JSON also evaluated as an IndexedJSON, and the results of
// Eval printed and decoded (EvalPrint), its 293 cases measured at most 3.6 ms
// each in the best of three runs (2026-11-30, 13:45 UTC, load average 2.5,
// go test -run '^$' -bench Hostile -benchtime 20x -count 3 ./jsonpath/); the
// worst single run, 19 ms (1.6 and 2.5 ms in the other two), was a {range}
// over 15,000 raw numbers, whose evaluation allocates 6 MB (the elements it
// keeps, 80 bytes each, grown by append), paying for the garbage collector's
// marking of the benchmark's heap: that growth is now charged as a {range}'s
// collecting is (growBytesPerStep). With ExecuteJSON timed too, its 382
// cases measured at most 5.4 ms, that {range} at most 0.9 ms, in three runs
// (2026-12-01, 00:45 UTC, load average 1.1-1.6, go test -run '^$' -bench
// Hostile -benchtime 5x -count 3 ./jsonpath/). A Pod index expression takes fewer than 20 steps on
// the decoded Pod and 500 to 750 on its 12 KB of JSON (TestPodIndexSteps
// logs them); on raw JSON a field lookup costs about a step per 32 bytes
// of the object it looks into (the cost of scanning text made of
// brackets, the worst case). The default budget is for one object: a path
// through every item of a List, such as {.items[*].metadata.name}, costs
// 3 to 4 steps an item decoded and about 31 for an item of 175 bytes of
// raw JSON (TestListItemSteps), so it stops near 16,000 items decoded (the
// results limit) and 2,000 raw. Give such evaluations a budget in proportion to the items
// (kubectl-kquery's -o jsonpath gets the default budget per object).
//
// Printing a map or list (Value.String, AppendText, Execute) and
// Value.Interface take time in proportion to the size of the value, so
// Eval and AppendEval charge each map or list they return what printing
// it costs (Each does not: its callback decides what to do with each
// value, and pays for printing it): the steps Execute would charge for a decoded value (counted
// without printing), and for a raw one a step per 4 bytes of its text and
// per item (member, element, map or list) in it, and the sorting of its
// keys (printing a raw map of 25,000 keys in random order took 15 ms
// after an Eval that held the budget, decoding a raw list of 110,000
// numbers 12 ms: TestRawResultsChargeTheirKeysAndItems). The results of an evaluation that holds its budget then print in time
// the budget bounds too, however many they are and however much they
// overlap: {..*} on lists nested 9,990 deep, or {@,@,@,...} on a large
// object, fail with the budget error instead of handing out results
// whose printing takes seconds (TestResultsPrintWithinTheBudget). On
// Kubernetes objects it costs little: {..*} on a 12 KB Pod is charged
// 18,541 steps for printing its 341 results, {@} 4,431
// (TestResultsOfObjectsHoldTheBudget); a map or list of more than about
// 250 KB decoded, or 170 KB of raw JSON like the Pod's, is beyond the
// default budget. That printing takes time in proportion to the value, raw
// or decoded, however deep it nests: a value of raw JSON is scanned once
// first, recording where the maps and lists nested in it end, and reading
// the members of each level steps over them (reading them by scanning
// alone, as printing once did, scanned the rest of the value at every
// level). Value.String of {.a} of a document nested n levels deep
// (BenchmarkDeepPrint, medians of 5 runs on 2 shared cores, load 4 to 8;
// "before" is commit 98933f6):
//
//	go test -run '^$' -bench DeepPrint -benchmem -count 5 ./jsonpath/
//
//	                  raw, before   raw, now   decoded
//	maps, n = 1000       5.8 ms      0.14 ms    0.11 ms
//	maps, n = 8000       378 ms       1.3 ms     1.0 ms
//	lists, n = 1000      1.6 ms      0.07 ms    0.02 ms
//	lists, n = 8000      108 ms       1.1 ms    0.25 ms
//
// With the default budget, printing the raw maps nested 1000 deep now
// takes 8,629 steps (it failed with the budget error after 2 KB of the 6
// KB of output); nested 8000 deep, it fails after 38 KB of the 48 KB
// (about 8 steps a level, 5 for the decoded maps), and the lists, 2 bytes
// a level, print in 43,004 steps.
//
// Recursive descent, and wildcards and filters applied level after level,
// also take work and steps in proportion to the size of the document, raw
// or decoded: once the scans of an evaluation on raw JSON have read three
// times the document, it is scanned once more, recording where its maps and
// lists end, and the scans that follow step over them (scanning alone read
// every level again for each level above it: {..y} on maps nested 4000
// deep took 3 million steps, and failed with the default budget from
// about 1000 levels). Raw JSON still costs a few times the steps of the
// decoded document, as reading and keeping members from text is charged:
// with the default budget, {..y} on maps nested 1000 deep takes 8,196
// steps raw and 3,004 decoded, and 4000 deep 32,759 and 12,004 (nested
// 9,990 deep, the raw maps fail with the budget error where the decoded
// ones take 29,974 steps). Eval, which copies the maps and lists it
// returns from raw JSON, copies and charges once a map or list and the
// ones found in it after it ({..*} on maps nested 3000 deep: 36,715
// steps for the walk and the copy, where it charged a copy of each,
// 245,546; printing the results is charged apart, above). Each of {..y} and
// {..*} on the maps nested n deep, without a budget (BenchmarkDeepDescent,
// medians of 5 runs on 2 shared cores, load 3 to 4 for "before", commit
// a050743, and under 2 for "now"):
//
//	go test -run '^$' -bench DeepDescent -benchmem -count 5 ./jsonpath/
//
//	                   raw, before   raw, now   decoded
//	{..y}, n = 1000        6.5 ms      0.35 ms    0.09 ms
//	{..y}, n = 4000        112 ms       2.1 ms    0.41 ms
//	{..*}, n = 1000        6.5 ms      0.55 ms    0.15 ms
//	{..*}, n = 4000         94 ms       3.6 ms    0.66 ms
//
// # Differences from client-go
//
// kindex gives the same results as client-go's util/jsonpath with
// AllowMissingKeys(true) (kubectl's setting) wherever client-go succeeds,
// with these deliberate exceptions, each covered by the comparison test:
//
//   - A quoted key with dots is the key when the object has it:
//     ['app.kubernetes.io/name'] reads the label of that name, where
//     client-go splits it at the dots and reads nothing. When the object
//     lacks the key, its parts are read as client-go reads them, so that
//     the union ['metadata.name','status.capacity'] of the kubectl docs
//     gives kubectl's output. An escaped dot (['a\.b'], or .a\.b) is part
//     of the key only.
//   - A quoted key and its parts are keys only: client-go reads the text of
//     ['...'] as a path, so that ['*'] is a wildcard, ['a.*'] is .a.*,
//     ['a@'], ['a$'] and ['a '] are .a ($, @ and spaces are skipped), and
//     a key with an empty part, ['a..b'] or ['..b'], is a recursive descent
//     (.a..b, ..b). kindex reads ['*'] as the key "*", ['a.*'] as the key
//     "a.*" or else its parts "a" and "*", and a key with an empty part
//     (['a..b'], ['..b'], ['.a'], ['a.']) as that key only.
//   - Map members are visited in key order, not in random order.
//   - Where client-go fails on the shape of the data, kindex selects
//     nothing: an index or slice out of range (slice bounds are clamped,
//     like Go's or Python's), indexing or filtering a map, a string or
//     null. [*] selects the values of a map, like .* does.
//   - Comparisons never fail: numbers compare by value, int and float
//     alike (client-go fails comparing 1 and 1.5); values of different
//     types are not equal (== is false, != is true, and ordering is
//     false); booleans, nulls, maps and lists support only == and !=
//     (nulls equal nulls; maps and lists equal nothing); a filter operand
//     that yields no value or several values matches nothing (client-go
//     fails on several).
//   - In an existence filter [?(@.a[0])], an index out of range means
//     "does not exist"; client-go counts the failing operand as existing.
//   - A slice or [*] that selects nothing from one array does not stop the
//     evaluation: .items[*].tags[*] yields the tags of every item, where
//     client-go stops at the first item with no tags.
//   - Wildcards and recursive descent do not enter strings (client-go
//     yields their bytes as numbers), and descent yields objects and arrays
//     only (client-go also yields non-empty strings).
//   - null prints as null where it is the current node: an item of a
//     {range}, or a null document (client-go prints <no value>).
//   - A backslash escapes the next character in names: a\\b is the key
//     "a\b" (client-go drops every backslash), and so is ['a\\b']. A
//     quoted key takes Go's escapes as any quoted string does:
//     ['caf\u00e9'] is the key "café" and ['a\tb'] holds a tab, where
//     client-go drops the backslashes (the keys "cafu00e9" and "atb").
//   - client-go panics applying an index, a slice or [*] to no value: in
//     the body of a {range} that has no items ({range .a[*]}{[0]}{end}
//     with .a empty or missing), or to a null document, and on a {range}
//     over a null document; kindex selects nothing, or ranges over the
//     null.
//   - json.Number values are converted to int64 or float64, and print as
//     such ("1.50" prints 1.5); so are Go integers of other types, and an
//     unsigned integer beyond int64's range becomes a float64
//     (uint64(18446744073709551615) prints 1.8446744073709552e+19, where
//     client-go prints the integer). Decoders never produce these types.
//
// Syntax differs at the edges: kindex also accepts bare paths, unions of
// paths in one action ({.a,.b}), double-quoted keys, ..* and white space
// inside brackets; it rejects at compile time what client-go accepts but
// fails on or ignores: the empty expression (client-go prints nothing), {}
// and {.} (write {@}), {range} without {end}, {end} without {range},
// identifiers, unknown operators, a non-positive
// step, stray $ or @ inside a path, empty brackets and union items ([]
// and [0,], which client-go reads as [0]), an empty filter ([?()], which
// client-go lets everything through), {range} without an expression
// (client-go ranges once over the current value), a number with a
// trailing dot (1.) or without a digit before its dot (-.5: write -0.5),
// sequences such as {.a .b}, and a name after .. that starts with a
// quote, + or - (client-go reads {..-1} as a descent followed by the
// literal -1, printed once per node it visits).
//
// # Raw JSON
//
// Eval, AppendEval, Each, Execute, ExecuteString and ExecuteJSON take either a decoded
// object or a JSON document: jsonpath.JSON(data) is evaluated in place,
// scanning only the objects and arrays on the expression's paths and
// parsing (with gjson) only the values it selects, and produces the same
// Values as the decoded document, numbers included: integers that fit
// int64 are read exactly from their text, not through float64. Only the
// named type selects this (a plain []byte is an unsupported type), so an
// object can never be mistaken for a document. Single-valued paths
// evaluate on a document without allocating, once it is converted to an
// interface value (which allocates its slice header). Input must be valid
// JSON, in UTF-8 (invalid input gives unspecified results but never a
// panic: a string holding bytes that are not UTF-8 reads as those bytes,
// where encoding/json replaces each with U+FFFD). When an
// object has duplicate keys the last one wins, as in encoding/json and
// Kubernetes' decoders (API servers do not send duplicates, but other
// sources may): a field lookup stops at the first occurrence of its key
// only after a quick search of the rest of the object for another.
package jsonpath
