// Command kubectl-kquery is a kubectl plugin that lists, counts and watches objects of any
// Kubernetes resource, custom resources included, from a local cache built by kindex, with
// conditions on any field:
//
//	kubectl kquery TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] [flags]
//	kubectl kquery TYPE/NAME... [flags]
//	kubectl kquery refs TYPE/NAME | --dangling | --unused TYPE [flags]
//
// It reads the command line as kubectl get does (names, TYPE/NAME, comma-separated types,
// categories such as "all"; -o wide|yaml|json|name|jsonpath=|jsonpath-as-json=|custom-columns=|go-template=,
// --sort-by, --no-headers, --show-labels, -L, -A, -l, --field-selector, -w) and prints the
// columns kubectl prints. On top of that, --index NAME=JSONPATH registers a JSONPath
// expression as an index and --where filters on indexes and JSONPaths, answered from the
// cache; --count and --group-by count the matches; --limit and --continue page through
// them. The refs subcommand answers from kindex's reference graph (package refs): what an
// object uses and what uses it, references whose target does not exist, objects nothing
// uses. Install with
//
//	go install github.com/kindex/kindex/cmd/kubectl-kquery@latest
//
// and kubectl finds it on $PATH as "kubectl kquery"; linked as kubectl_complete-kquery next
// to it, it is what kubectl runs to complete kquery's arguments (types, names, namespaces).
// See README.md next to this file.
package main
