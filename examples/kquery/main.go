// Command kquery lists the objects of any Kubernetes resource, custom resources included,
// that match conditions on JSONPath expressions, from a local cache built by kindex:
//
//	kquery RESOURCE [--index NAME=JSONPATH]... [--where CONDITION]... [-l SELECTOR]
//	       [-n NAMESPACE | -A] [-o table|json|name] [--limit N] [--watch]
//
// RESOURCE is resolved at run time from what the user typed (a plural, a kind, a short name,
// name.group), so kquery works on CRDs it has never seen. Each --index registers a JSONPath
// expression as an index; --where conditions on those names are answered from the index, and
// conditions on a JSONPath ("{.spec.replicas}>2", ".status.phase=Running") are evaluated on
// every object in scope. The kubeconfig is found as kubectl finds it (--kubeconfig,
// $KUBECONFIG, ~/.kube/config; --context, -n), and namespaced resources are queried in the
// context's namespace unless -A. --watch prints the result again whenever it changes.
//
// Errors (an unknown or ambiguous resource, a JSONPath that does not compile, a malformed
// --where) are reported on stderr with exit code 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command: it returns the exit code (0 on success, including Ctrl-C during
// --watch; 1 on any error; 130 when interrupted before the first result).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = execute(ctx, o, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return 130
	}
	report(stderr, err)
	return 1
}

// report prints err for a person: a caret under a bad JSONPath, candidates for an unknown
// or ambiguous resource, a pointer to --help for a malformed command line.
func report(w io.Writer, err error) {
	var (
		ee *exprError
		re *resolveError
		ue *usageError
	)
	switch {
	case errors.As(err, &ee):
		fmt.Fprint(w, formatExprError(ee))
	case errors.As(err, &re):
		fmt.Fprint(w, re.describe())
	case errors.As(err, &ue):
		fmt.Fprintf(w, "kquery: %v\nSee 'kquery --help'.\n", err)
	default:
		fmt.Fprintf(w, "kquery: %v\n", err)
	}
}
