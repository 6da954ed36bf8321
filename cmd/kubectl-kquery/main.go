package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kindex/kindex/query"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, completionArgs(os.Args[0], os.Args[1:]), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options is a parsed command line.
type options struct {
	config *genericclioptions.ConfigFlags

	output        string
	template      string
	format        outputFormat
	sortBy        string
	table         tableOptions
	allNamespaces bool
	selector      string
	fieldSelector string
	watch         bool
	watchOnly     bool
	watchEvents   bool
	limit         int
	cont          string
	ignoreMissing bool
	chunkSize     int64 // accepted, unused: the cache lists for itself
	// showManagedFields is kubectl's --show-managed-fields; keepManagedFields says whether
	// the cache keeps them: for it, or for an expression of the user's that reads them.
	showManagedFields bool
	keepManagedFields bool

	indexArgs []string
	whereArgs []string
	indexes   []indexDef
	wheres    []*whereExpr
	conds     []query.Condition
	count     bool
	groupBy   string
	explain   bool

	syncTimeout time.Duration
	verbosity   int
}

const longHelp = `kquery lists, counts and watches objects of any resource, custom resources included, from a
local cache, with conditions on any field. It reads its arguments as kubectl get does and
prints the columns kubectl prints.

TYPE is what you would type for kubectl: pods, po, deploy, deployments.apps, a CRD's plural,
kind or short name, several of them separated by commas (pods,svc), or a category (all,
cert-manager, any CRD category), which stands for every resource in it.

--where takes one condition; repeat it for AND:
  NAME=VALUE  NAME==VALUE  NAME!=VALUE        equal, not equal (no value counts as not equal)
  NAME<N  NAME<=N  NAME>N  NAME>=N            numeric comparisons
  NAME in (A,B)  NAME notin (A,B)             one of, none of (no value counts as none of)
  NAME  !NAME                                 has a value, has none
NAME is an --index name, a built-in index (namespace, name, uid, label, label-key,
annotation-key, owner-uid, controller-uid, finalizer), or a JSONPath in braces or starting
with '.' ({.spec.replicas}, .status.phase): indexes answer from the cache's index, a JSONPath
is evaluated on every object in scope. Quote values with spaces, commas or operators
('a b', "x=y"). Regular expressions (=~) are not supported.`

const examples = `  # Pods of the current namespace, with kubectl's columns
  kubectl kquery pods

  # Every object of the "all" category, and two named deployments
  kubectl kquery all
  kubectl kquery deploy web api

  # Custom resources, by any field, answered from an index
  kubectl kquery widgets -A --index size={.spec.size} --where 'size>3' --where '{.status.phase}=Running'

  # Objects owned by a UID, counted per namespace
  kubectl kquery configmaps,widgets -A --where owner-uid=0d6c... --group-by namespace

  # Pages of 50 in JSON; feed .metadata.continue back with --continue
  kubectl kquery pods -A --limit 50 -o json

  # Print the rows that change, until Ctrl-C
  kubectl kquery pods -w --show-labels`

// run is the whole command: it returns the exit code (0 on success and on Ctrl-C during
// --watch; 1 on any error, as kubectl; 130 when interrupted before the answer).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := &options{config: genericclioptions.NewConfigFlags(true)}
	var runErr error
	cmd := &cobra.Command{
		Use: "kquery TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] | TYPE/NAME... [flags]",
		// A kubectl plugin is run as "kubectl kquery": help, usage lines and the completion
		// command say so.
		Annotations:           map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kquery"},
		DisableFlagsInUseLine: true,
		Short:                 "List, count and watch any resource from a local cache, with conditions on any field",
		Long:                  longHelp,
		Example:               examples,
		SilenceErrors:         true,
		SilenceUsage:          true,
		Args:                  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(); err != nil {
				return err
			}
			runErr = execute(ctx, o, args, stdout, stderr)
			return nil
		},
	}
	refs := newRefsCommand(ctx, o, stdout, stderr, &runErr)
	cmd.AddCommand(refs)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetContext(ctx)
	o.addFlags(cmd)
	o.registerCompletions(cmd, refs)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })

	err := cmd.Execute()
	if err == nil {
		err = runErr
	}
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return 130
	}
	report(stderr, withServerStatus(ctx, o, err))
	return 1
}

func (o *options) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVarP(&o.output, "output", "o", "", "Output format: one of ("+allowedFormats+").")
	f.StringVar(&o.template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file, -o=jsonpath, -o=jsonpath-file or -o=jsonpath-as-json (without '='); with no -o, a go-template.")
	f.StringVar(&o.sortBy, "sort-by", "", "Sort each resource's objects by this JSONPath, e.g. '{.metadata.creationTimestamp}': numbers by value, then text; objects without a value last. Combines with --limit.")
	f.BoolVar(&o.table.NoHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers.")
	f.BoolVar(&o.table.ShowLabels, "show-labels", false, "When printing, show all labels as the last column.")
	f.StringSliceVarP(&o.table.LabelColumns, "label-columns", "L", nil, "Labels to show as columns, one per -L or comma-separated: -L app -L tier or -L app,tier.")
	f.BoolVar(&o.table.ShowKind, "show-kind", false, "List the resource type for each object (kind/name).")
	f.BoolVar(&o.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format. (JSONPath, templates, custom columns, --sort-by, --index, --where and --group-by that name managedFields see them without it.)")
	pf := cmd.PersistentFlags() // the refs subcommand reads these too
	pf.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the objects of every namespace, with a NAMESPACE column.")
	f.StringVarP(&o.selector, "selector", "l", "", "Label selector, sent to the server: only matching objects are cached (e.g. -l key1=value1,key2=value2).")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Field selector, sent to the server (e.g. --field-selector status.phase=Running).")
	f.BoolVarP(&o.watch, "watch", "w", false, "After listing, print the rows that change (and deletions) until Ctrl-C. AGE alone does not count as a change.")
	f.BoolVar(&o.watchOnly, "watch-only", false, "Print only the changes, not the initial list.")
	f.BoolVar(&o.watchEvents, "output-watch-events", false, "With --watch, prefix rows with the event: ADDED, MODIFIED, DELETED.")
	f.IntVar(&o.limit, "limit", 0, "Print at most N objects of each resource; the rest is a page away: the continue token goes to stderr, or to .metadata.continue with -o json|yaml.")
	f.StringVar(&o.cont, "continue", "", "Continue a listing where a --limit page ended, with its token; repeat the other flags unchanged.")
	f.BoolVar(&o.ignoreMissing, "ignore-not-found", false, "If the requested object does not exist the command will return exit code 0.")
	f.Int64Var(&o.chunkSize, "chunk-size", 500, "Accepted so that kubectl get's command lines work unchanged; the cache lists in pages of its own, so it changes nothing (page the output with --limit).")
	// StringArray, not StringSlice: a JSONPath or a value may contain commas.
	f.StringArrayVar(&o.indexArgs, "index", nil, "Register an index NAME=JSONPATH (repeatable), e.g. --index node={.spec.nodeName}; --where and --group-by use it by NAME.")
	f.StringArrayVar(&o.whereArgs, "where", nil, "A condition (repeatable; all must hold): see the grammar above.")
	f.BoolVar(&o.count, "count", false, "Print how many objects match, per resource, instead of the objects.")
	f.StringVar(&o.groupBy, "group-by", "", "Print how many objects match per value of NAME (an --index name, a built-in index or a JSONPath), instead of the objects.")
	f.BoolVar(&o.explain, "explain", false, "Print how each query was answered (which index, how many candidates) on stderr.")
	pf.DurationVar(&o.syncTimeout, "sync-timeout", time.Minute, "How long to wait for the initial list of each resource.")
	pf.IntVarP(&o.verbosity, "v", "v", 0, "Log level on stderr: 1 shows how each TYPE resolved, where each resource's columns come from, how each query was answered and informer transitions (parked, retrying, resumed); 2 adds sync progress; 6 and up client-go's requests.")
	o.config.AddFlags(pf)
}

// readsManagedFields tells whether one of the user's expressions names managedFields: the
// cache drops them, as kubectl's JSON and YAML output hides them, unless something asks for
// them. (kubectl's other formats see them; so does kquery's, for what names them. An
// expression that reaches them only through .. or * does not keep them.)
func readsManagedFields(exprs []string) bool {
	for _, e := range exprs {
		if strings.Contains(e, "managedFields") {
			return true
		}
	}
	return false
}

// complete validates the flags and compiles what can be compiled before connecting.
func (o *options) complete() error {
	var err error
	if o.template != "" {
		// kubectl's --template: the argument of a template format given without one (it
		// wins over one given with '='); alone, a go-template. Other formats ignore it.
		format, _, _ := strings.Cut(o.output, "=")
		switch format {
		case "":
			o.output = "go-template=" + o.template
		case "go-template", "go-template-file", "template", "templatefile", "jsonpath", "jsonpath-file", "jsonpath-as-json":
			o.output = format + "=" + o.template
		}
	}
	if o.format, err = parseOutput(o.output); err != nil {
		return err
	}
	// kubectl's checks, with its words (plain errors, no usage hint): the whole -o value is
	// quoted.
	if o.table.ShowLabels && o.output != "" && o.output != "wide" {
		return fmt.Errorf("--show-labels option cannot be used with %s printer", clip(o.output))
	}
	if len(o.table.LabelColumns) > 0 && strings.HasPrefix(o.output, "custom-columns") {
		return fmt.Errorf("--label-columns option cannot be used with %s printer", clip(o.output))
	}
	if o.watchEvents && !o.watch && !o.watchOnly {
		return errors.New("--output-watch-events option can only be used with --watch or --watch-only")
	}
	if (o.format.Kind == "json" || o.format.Kind == "yaml") && !o.showManagedFields {
		// As kubectl's json and yaml output: without managedFields, which the objects have
		// when an expression keeps them in the cache or when they were read by GET.
		o.format.Printer = &printers.OmitManagedFieldsPrinter{Delegate: o.format.Printer}
	}
	o.keepManagedFields = o.showManagedFields && (o.format.Kind == "json" || o.format.Kind == "yaml") ||
		readsManagedFields(append([]string{o.format.Template, o.sortBy, o.groupBy}, append(o.indexArgs, o.whereArgs...)...))
	if o.table.Wide = o.format.Kind == "wide"; o.format.Kind == "wide" {
		o.format.Kind = ""
	}
	if o.limit < 0 {
		return usagef("--limit must not be negative, got %d", o.limit)
	}
	if o.syncTimeout <= 0 {
		return usagef("--sync-timeout must be positive")
	}
	if o.sortBy != "" {
		if _, err := compileSortBy(o.sortBy); err != nil {
			return err
		}
	}
	if o.watch || o.watchOnly {
		o.watch = true
		switch {
		case o.limit > 0 || o.cont != "":
			return usagef("--watch cannot be combined with --limit or --continue")
		case o.count || o.groupBy != "":
			return usagef("--watch cannot be combined with --count or --group-by")
		}
	}
	if o.count && o.groupBy != "" {
		return usagef("--count and --group-by are alternatives: --group-by prints counts too")
	}
	names := map[string]bool{}
	for _, a := range o.indexArgs {
		ix, err := parseIndex(a)
		if err != nil {
			return err
		}
		if names[ix.Name] {
			return &argError{Flag: "--index", Arg: a, Msg: fmt.Sprintf("the name %q is already used by another --index", clip(ix.Name))}
		}
		if slices.Contains(builtinWhereIndexes, ix.Name) {
			return &argError{Flag: "--index", Arg: a, Msg: fmt.Sprintf("the name %q is a built-in index (%s): choose another", ix.Name, strings.Join(builtinWhereIndexes, ", "))}
		}
		names[ix.Name] = true
		o.indexes = append(o.indexes, ix)
	}
	known := map[string]bool{}
	for n := range names {
		known[n] = true
	}
	for _, b := range builtinWhereIndexes {
		if !names[b] {
			known[b] = true
		}
	}
	for _, a := range o.whereArgs {
		w, err := parseWhere(a)
		if err != nil {
			return err
		}
		conds, err := w.conditions(known)
		if err != nil {
			return err
		}
		o.wheres = append(o.wheres, w)
		o.conds = append(o.conds, conds...)
	}
	if o.groupBy != "" && !known[o.groupBy] {
		if !isPathArg(o.groupBy) {
			return &argError{Flag: "--group-by", Arg: o.groupBy, Msg: fmt.Sprintf("%q is not an index", clip(o.groupBy)),
				Hint: "define it with --index NAME=JSONPATH, use a built-in index (" + strings.Join(builtinWhereIndexes, ", ") + "), or give a JSONPath such as {.spec.nodeName}"}
		}
		if _, err := compileArg("--group-by", o.groupBy, 0, o.groupBy); err != nil {
			return err
		}
	}
	return nil
}
