// Package query describes queries over kindex's cached objects: conditions on registered
// indexes (equal, in, not-equal, exists, not-exists, numeric less and greater), JSONPath
// conditions evaluated on candidates, a label selector and a namespace, with results in
// (namespace, name) order, a limit and a continue token.
//
// A query is answered from the index with the fewest entries among its positive conditions;
// the other conditions are checked on those candidates only. A query without a positive
// indexed condition visits every object in scope, so it must say Scan: true. JSONPath
// conditions (Where) cost one evaluation of the path per candidate.
package query
