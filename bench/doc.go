// Package bench holds kindex's Go benchmarks against client-go on the same objects: JSONPath
// evaluation (jsonpath_bench_test.go) and index lookups and index maintenance
// (query_bench_test.go). The comparison harness, which measures whole informers against a
// real apiserver, is bench/harness with its command bench/cmd/compare. Results, with the
// commands that produced them, are in bench/README.md.
package bench
