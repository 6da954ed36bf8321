// Package query describes queries over kindex's cached objects: conditions on registered
// indexes (equal, in, not-equal, exists, not-exists, prefix, numeric less and greater), OR
// groups of them (AnyOf), JSONPath conditions evaluated on candidates, a label selector and
// a namespace, with results in (namespace, name) order or sorted by an index's values, a
// limit and a continue token. The informer package's
// Informer.Query (and QueryItems, Count, CountBy, WatchAll.QueryItems) runs them on a
// cache, where indexes are registered with Informer.AddIndex (a JSONPath expression),
// AddIndexPath, AddBuiltinIndex or AddIndexFunc.
//
// # What each kind of condition costs
//
// A query is answered from one index, the driver: the positive indexed condition (Eq,
// OneOf, Has, Lt, Le, Gt, Ge, HasPrefix) with the fewest entries in scope. Every other condition is
// checked on the driver's candidates only. With n objects in scope, k candidates and m
// matches:
//
//   - Eq, OneOf driving: one map lookup per value, then k entries. Independent of n.
//   - Has, Lt, Le, Gt, Ge driving: one pass over the index's distinct values (each parsed as
//     a number for the comparisons), then k entries. Cheap for indexes with few distinct
//     values (sizes, phases), as costly as a scan for unique ones (names, UIDs).
//   - NotEq, HasNot: never drive (an object without values is in no index); a look at each
//     candidate's recorded values. A query whose indexed conditions are all negative needs
//     Scan.
//   - Any other indexed condition: a look at each candidate's recorded values.
//   - Namespace: index entries are kept per namespace (a value with at most 64 objects keeps
//     one list, filtered by namespace), so a namespaced query reads that namespace's entries
//     (k counts only them) and never the whole cache, and a namespaced scan only that
//     namespace's objects.
//   - Labels: one selector match per candidate, on the object's labels.
//   - Where (JSONPath): one evaluation of the path per candidate that passed the indexed
//     conditions; the path is compiled once per distinct expression. A query whose only
//     conditions are JSONPath ones visits every object in scope: it must set Scan.
//   - Scan: every object in scope (n) is a candidate.
//   - Order and paging: results are in (namespace, name) order, or by the values of the
//     index SortBy names. A page of L from m matches among the n objects a walk in order
//     ranges over (the scope in (namespace, name) order, every object of the index in value
//     order) is produced one of two ways, whichever costs less: read in order from the
//     store's ordered trees from the continue token's position, checking each object against
//     every indexed condition until L+1 match, about (L+1)·n/m visits, taken when
//     m² > (L+1)·n; or selected from the driver's m candidates with a bounded heap,
//     O(m log L). At n = 100,000 a page of 100 from 50,000 matches takes about 0.1 ms either
//     way it is sorted. The (namespace, name) order is always kept (about 13 bytes per
//     object); an index is ordered from the first query that sorts by it on (about 1 µs per
//     entry, once; then a few pointer moves per change). A query with JSONPath conditions,
//     labels or AnyOf visits every match. The continue token holds the position of the
//     last result returned: a page starts after it in the current content, so objects present (and
//     unchanged) throughout are returned exactly once across pages while the set changes,
//     objects added behind the cursor are not seen, and objects removed before their page
//     are not returned.
//   - AnyOf (OR of AND groups): the union of the queries Conditions+group, each planned as
//     above, every object once; a group without a positive indexed condition needs Scan.
//   - Prefix (HasPrefix): like a range, a walk over the index's distinct values.
//   - Count: a query with no condition, or one equality condition, is answered from sizes
//     the store keeps (O(1)); any other visits its matches once. CountBy with no condition
//     reads the index's value sizes: O(distinct values).
//
// A query without a positive indexed condition is refused with ErrScanRequired unless Scan
// is set, so that an expensive query is always a decision; Count and CountBy of a query
// with no condition at all (no Conditions, AnyOf or Labels: a namespace's size, an
// index's value sizes) cost no scan and need no Scan. Count and CountBy ignore Limit,
// Continue, SortBy and Descending. Plan in the result says which condition drove and how
// many candidates and matches there were.
//
// # Values that could not all be computed
//
// An index function that fails on an object (a JSONPath evaluation that runs out of its
// budget, an AddIndexFunc function that returns an error or panics) may have given some of
// the object's values or none; the same is true of a Where condition's path evaluated on it.
// Either way, indexed or as a filter, the object matches the positive conditions (Eq, OneOf,
// Has, Lt, Le, Gt, Ge, HasPrefix) on the values that were given, which are real, and never
// NotEq or HasNot, which need all of them. The failures of indexes are counted in the
// informer's IndexStats.
//
// # Validation
//
// Condition.Validate and Query.Validate check what needs no cache: one subject (an index or
// a JSONPath), a valid operator (the zero Op is not one), the number of values the operator
// takes, a numeric bound that is a finite number (ParseNumber: "1e999", "-Inf", "NaN" and
// "1e-400" are all refused, and values it refuses never match), and a JSONPath
// that compiles; Query.Validate also a Limit that is not negative and SortBy when
// Descending is set (Count and CountBy, which ignore both, check neither). Errors are
// *InvalidError (ErrInvalidQuery) naming the condition; a JSONPath
// error wraps the *jsonpath.SyntaxError, whose Offset says where the expression is wrong.
// User text in error messages is quoted cut to 256 bytes.
//
// # Continue tokens
//
// EncodeContinue and DecodeContinue make and read continue tokens for the caches that answer
// queries: a token names the key of the last object of a page and carries a check of its
// integrity and of the query (every field but Limit, Continue and Scan) and the cache it was
// issued for, so that a cache using them refuses a garbage, modified or foreign token with
// ErrInvalidContinue instead of silently returning some page. A token holds no state of the
// process that issued it: it stays valid in another process for the same query on an
// informer of the same resource, namespace, selectors and storage mode.
//
// The --where grammar of the kubectl plugin (NAME=VALUE, NAME in (a,b), NAME>N, !NAME, ...)
// is the command's own (cmd/kubectl-kquery/where.go); this package takes conditions as
// values.
package query
