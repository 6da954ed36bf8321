package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// builtinWhereIndexes are the built-in metadata indexes --where and --group-by may name
// without an --index: each is registered on the informers that use it.
var builtinWhereIndexes = []string{
	indexfuncs.IndexNamespace, indexfuncs.IndexName, indexfuncs.IndexUID, indexfuncs.IndexLabel,
	indexfuncs.IndexLabelKey, indexfuncs.IndexAnnotationKey, indexfuncs.IndexOwnerUID,
	indexfuncs.IndexControllerUID, indexfuncs.IndexFinalizer,
}

// clock is the time AGE counts to; tests fix it.
var clock = time.Now

// nameIndex is the index kquery registers to find objects asked for by name; users cannot
// name it (index names in --where are letters, digits, '_' and '-').
const nameIndex = "(name)"

// groupByIndex is the index of a --group-by JSONPath, named so that it cannot clash with an
// index of the same path (--sort-by's).
const groupByIndex = "(group-by)"

// indexDef is one --index NAME=JSONPATH.
type indexDef struct {
	Name string
	Expr string
}

// parseIndex parses NAME=JSONPATH and compiles the JSONPath.
func parseIndex(arg string) (indexDef, error) {
	name, expr, ok := strings.Cut(arg, "=")
	if !ok || name == "" || expr == "" {
		return indexDef{}, &argError{Flag: "--index", Arg: arg, Offset: len(name), Msg: "want NAME=JSONPATH, for example size={.spec.size}"}
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return indexDef{}, &argError{Flag: "--index", Arg: arg, Offset: i, Msg: "an index name is letters, digits, '_' and '-'"}
		}
	}
	if _, err := compileArg("--index", arg, len(name)+1, expr); err != nil {
		return indexDef{}, err
	}
	return indexDef{Name: name, Expr: expr}, nil
}

// compileArg compiles expr, which starts at byte offset of arg, and reports a syntax error
// with its position in arg.
func compileArg(flag, arg string, offset int, expr string) (*jsonpath.Path, error) {
	p, err := jsonpath.Compile(expr)
	if err != nil {
		var se *jsonpath.SyntaxError
		if errors.As(err, &se) {
			return nil, &argError{Flag: flag, Arg: arg, Offset: offset + se.Offset, Msg: "bad JSONPath: " + se.Msg}
		}
		return nil, fmt.Errorf("%s %q: %w", flag, clip(arg), err)
	}
	return p, nil
}

// run state of one command.
type execution struct {
	o          *options
	stdout     io.Writer
	stderr     io.Writer
	cfg        *rest.Config
	namespace  string // -n, or the context's namespace
	factory    *dynamicinformer.Factory
	columns    *columnFinder
	conditions []query.Condition // from --where
	multi      bool              // several resource types: kind/name
	// single: the command line names one object (singleItemImplied), which a generic
	// format prints as itself rather than in a List.
	single bool
	// nsMissing is the server's NotFound for the namespace of the scope, once looked up
	// (namespaceMissing).
	nsMissing map[string]error
}

// vlog prints a -v line.
func (x *execution) vlog(level int, format string, args ...any) {
	if x.o.verbosity >= level {
		fmt.Fprintf(x.stderr, "kquery: "+format+"\n", args...)
	}
}

// state is one target being queried.
type state struct {
	t     *target
	inf   *dynamicinformer.Informer
	scope serverScope
	err   error // why it cannot be answered
	// got holds the objects of the names asked for, read by GET where the user may get
	// them but not list them (byGet), and gotErrs the errors of the names not read; the
	// informer is parked then and not queried.
	got     []*unstructured.Unstructured
	gotErrs []error
	byGet   bool
}

// execute runs a parsed command line.
func execute(ctx context.Context, o *options, args []string, stdout, stderr io.Writer) error {
	reqs, err := splitArgs(args)
	if err != nil {
		return err
	}
	if err := checkSelectors(o, args, reqs); err != nil {
		return err
	}
	x := &execution{o: o, stdout: stdout, stderr: stderr, conditions: o.conds, single: singleItemImplied(args)}
	// As kubectl: --sort-by orders the first listing of --watch; what comes after is printed
	// as it happens.
	switch {
	case o.sortBy != "" && o.watchOnly:
		fmt.Fprintln(stderr, "warning: --watch-only requested, --sort-by will be ignored")
	case o.sortBy != "" && o.watch:
		fmt.Fprintln(stderr, "warning: --watch requested, --sort-by will be ignored for watch events received")
	}
	if x.cfg, err = restConfig(o); err != nil {
		return err
	}
	// The server's warnings (a deprecated API) on stderr, each once, as kubectl prints them.
	x.cfg.WarningHandler = rest.NewWarningWriter(stderr, rest.WarningWriterOptions{Deduplicate: true})
	if x.namespace, _, err = o.config.ToRawKubeConfigLoader().Namespace(); err != nil {
		return err
	}
	logger := newLogger(stderr, o.verbosity)

	// One discovery client resolves the arguments and serves the factory. Started (with
	// --watch), it follows CRDs: a watched CRD that is deleted parks its informer and one that
	// comes back resumes it. A one-shot query does not need that.
	disc, err := discovery.New(x.cfg, discovery.Options{Logger: logger})
	if err != nil {
		return err
	}
	if o.watch {
		dctx, cancel := context.WithCancel(ctx)
		defer func() { cancel(); disc.Wait() }()
		if err := disc.Start(dctx); err != nil {
			return err
		}
	} else {
		defer disc.Wait()
	}
	res, err := newResolver(ctx, disc)
	if err != nil {
		return err
	}
	targets, err := res.resolve(ctx, reqs)
	if err != nil {
		return err
	}
	for _, w := range res.warnings {
		x.cfg.WarningHandler.HandleWarningHeader(299, "", w)
	}
	for _, t := range targets {
		x.vlog(1, "%s resolved to %s (kind %s, %s)", t.Input, qualified(t.Res), t.Res.GVK.Kind, scopeWord(t.Res.Namespaced))
	}
	if err := x.check(targets); err != nil {
		return err
	}
	x.multi = len(targets) > 1 || o.table.ShowKind // --watch; a one-shot answer decides by what it found

	// The compact mode: the cache holds each object's JSON (managedFields cut, as kubectl's
	// output hides them, unless asked for) and a page decodes only the objects it prints, so
	// that a query over a large cluster holds a fifth of the unstructured mode's memory and
	// syncs faster.
	if x.factory, err = dynamicinformer.NewCompactFactory(x.cfg,
		dynamicinformer.Options{Discovery: disc, Logger: logger, KeepManagedFields: o.keepManagedFields},
		dynamicinformer.CompactOptions{}); err != nil {
		return err
	}
	if err := x.factory.Start(ctx); err != nil {
		return err
	}
	defer x.factory.Shutdown()
	if x.columns, err = newColumnFinder(x.cfg, func(f string, a ...any) { x.vlog(1, f, a...) }); err != nil {
		return err
	}

	states := make([]*state, len(targets))
	for i := range targets {
		states[i] = x.start(&targets[i])
		if states[i].inf != nil {
			defer states[i].inf.Release()
		}
	}
	if err := x.waitAll(ctx, states); err != nil {
		return err
	}
	switch {
	case o.count || o.groupBy != "":
		return x.printCounts(ctx, states)
	case o.watch:
		return x.watch(ctx, states[0])
	}
	return x.list(ctx, states)
}

func scopeWord(namespaced bool) string {
	if namespaced {
		return "namespaced"
	}
	return "cluster-scoped"
}

// check refuses combinations kubectl refuses, before anything starts.
func (x *execution) check(targets []target) error {
	o := x.o
	names := 0
	for _, t := range targets {
		names += len(t.Names)
	}
	switch {
	case names > 0 && o.allNamespaces && slices.ContainsFunc(targets, func(t target) bool { return t.Res.Namespaced && len(t.Names) > 0 }):
		return errors.New("a resource cannot be retrieved by name across all namespaces")
	case o.watch && len(targets) > 1:
		return usagef("--watch takes one resource type, got %d: %s", len(targets), joinInputs(targets))
	}
	return nil
}

// checkSelectors refuses names with a label or field selector, as kubectl does and in its
// words (from cli-runtime's builder, which kubectl prints as a plain error): a selector
// chooses objects, names choose objects, and kubectl will not guess how to combine them.
// Names given as TYPE/NAME, or after several types (which kubectl turns into TYPE/NAME),
// have a message of their own.
func checkSelectors(o *options, args []string, reqs []request) error {
	if strings.TrimSpace(o.selector) == "" && strings.TrimSpace(o.fieldSelector) == "" {
		return nil
	}
	slashed := strings.Contains(args[0], "/")
	named := slashed || len(args) > 1
	switch {
	case !named:
		return nil
	case slashed || len(reqs) > 1:
		return errors.New("selectors and the all flag cannot be used when passing resource/name arguments")
	default:
		return errors.New("name cannot be provided when a selector is specified")
	}
}

func joinInputs(ts []target) string {
	var s []string
	for _, t := range ts {
		s = append(s, qualified(t.Res))
	}
	return strings.Join(s, ", ")
}

// restConfig loads the client config with kubectl's rules and flags, and says which file is
// missing when none is found (client-go would silently fall back to localhost:8080).
func restConfig(o *options) (*rest.Config, error) {
	loader := o.config.ToRawKubeConfigLoader()
	if p := *o.config.KubeConfig; p != "" {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return nil, &kubeconfigError{fmt.Sprintf("the kubeconfig file %q given with --kubeconfig does not exist", p)}
		}
	} else if (o.config.APIServer == nil || *o.config.APIServer == "") && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		files := loader.ConfigAccess().GetLoadingPrecedence()
		found := slices.ContainsFunc(files, func(f string) bool { _, err := os.Stat(f); return err == nil })
		if !found {
			switch env := os.Getenv("KUBECONFIG"); {
			case env != "":
				return nil, &kubeconfigError{fmt.Sprintf("no kubeconfig: $KUBECONFIG names %s, and none of them exists", quoteList(files))}
			default:
				return nil, &kubeconfigError{fmt.Sprintf("no kubeconfig: %s does not exist (set $KUBECONFIG or --kubeconfig, or --server)", quoteList(files))}
			}
		}
	}
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 300 // as kubectl; client-go's 5 would throttle "all"
	}
	return cfg, nil
}

func quoteList(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = fmt.Sprintf("%q", f)
	}
	return strings.Join(q, ", ")
}

// newLogger sends kindex's logs to w: errors always; informer transitions (kindex's V(0))
// from -v 1 on and sync progress (V(1)) from -v 2 on; the requests client-go logs at V(6)
// and up from -v 6 on, as kubectl prints them. client-go's own klog lines (not the requests
// of kindex's clients) follow -v from 6 on.
func newLogger(w io.Writer, v int) logr.Logger {
	if v >= 6 {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", fmt.Sprint(v))
	}
	sink := funcr.New(func(prefix, args string) {
		if prefix != "" {
			prefix += ": "
		}
		fmt.Fprintf(w, "kquery: %s%s\n", prefix, args)
	}, funcr.Options{Verbosity: v}).GetSink()
	return logr.New(shiftSink{sink})
}

// shiftSink makes kindex's levels 0 to 4 one quieter (a command reports what matters itself,
// so its informational lines start at -v 1) and leaves client-go's request levels (6 and
// up) as kubectl shows them.
type shiftSink struct{ logr.LogSink }

func shiftLevel(l int) int {
	if l < 5 {
		return l + 1
	}
	return l
}

func (s shiftSink) Enabled(level int) bool { return s.LogSink.Enabled(shiftLevel(level)) }
func (s shiftSink) Info(level int, msg string, kv ...any) {
	s.LogSink.Info(shiftLevel(level), msg, kv...)
}
func (s shiftSink) WithValues(kv ...any) logr.LogSink { return shiftSink{s.LogSink.WithValues(kv...)} }
func (s shiftSink) WithName(name string) logr.LogSink { return shiftSink{s.LogSink.WithName(name)} }

// withName adds metadata.name=name to a field selector, the name escaped: a name with a
// comma, an equals sign or a backslash is one that does not exist (NotFound, as kubectl's
// GET answers), not a selector the server refuses.
func withName(fieldSel, name string) string {
	return strings.Trim("metadata.name="+fields.EscapeValue(name)+","+fieldSel, ",")
}

// start creates the informer of one target and registers the indexes its query needs.
func (x *execution) start(t *target) *state {
	o := x.o
	s := &state{t: t}
	var opts []informer.Option
	if t.Res.Namespaced && !o.allNamespaces {
		opts = append(opts, informer.WithNamespace(x.namespace))
		s.scope.Namespace = x.namespace
	}
	if o.selector != "" {
		opts = append(opts, informer.WithLabelSelector(o.selector))
		s.scope.LabelSelector = o.selector
	}
	s.scope.Named = len(t.Names) > 0
	fieldSel := o.fieldSelector
	if len(t.Names) == 1 { // one object: ask the server for just that one
		fieldSel = withName(fieldSel, t.Names[0])
	}
	if fieldSel != "" {
		opts = append(opts, informer.WithFieldSelector(fieldSel))
		s.scope.FieldSelector = fieldSel
	}
	if err := parseSelectors(s.scope); err != nil {
		s.err = listError(err, s)
		return s
	}
	inf, err := x.factory.ForResource(t.Res, opts...)
	if err != nil {
		s.err = err
		return s
	}
	s.inf = inf
	for _, ix := range o.indexes {
		if err := inf.AddIndex(ix.Name, ix.Expr); err != nil {
			s.err = err
			return s
		}
	}
	used := map[string]bool{}
	for _, c := range x.conditions {
		used[c.Index] = true
	}
	if o.groupBy != "" {
		used[o.groupBy] = true
	}
	for _, b := range builtinWhereIndexes {
		if used[b] && !slices.ContainsFunc(o.indexes, func(ix indexDef) bool { return ix.Name == b }) {
			if err := inf.AddBuiltinIndex(b); err != nil {
				s.err = err
				return s
			}
		}
	}
	if isPathArg(o.groupBy) {
		if err := addGroupByIndex(inf, o.groupBy); err != nil {
			s.err = err
			return s
		}
	}
	if o.sortBy != "" {
		if err := inf.AddIndex(sortIndex(o.sortBy), sortIndex(o.sortBy)); err != nil {
			s.err = err
			return s
		}
	}
	if len(t.Names) > 0 || o.watch {
		if err := inf.AddIndex(nameIndex, "{.metadata.name}"); err != nil {
			s.err = err
			return s
		}
	}
	return s
}

// parseSelectors refuses the selectors the server would refuse, with the server's words: kubectl
// sends them as typed, kindex's informer parses them first.
func parseSelectors(scope serverScope) error {
	if _, err := labels.Parse(scope.LabelSelector); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if _, err := fields.ParseSelector(scope.FieldSelector); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// listError words an error of the LIST of s's objects as kubectl words its LIST's BadRequest
// and NotFound: the resource and the selectors asked for. Objects asked for by name are
// ones kubectl GETs, and their errors stay as they are. The informer's error is not
// modified (cli-runtime rewrites a status error's message in place).
func listError(err error, s *state) error {
	if len(s.t.Names) > 0 {
		return err
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		c := *se
		err = &c
	}
	opts := metav1.ListOptions{LabelSelector: s.scope.LabelSelector, FieldSelector: s.scope.FieldSelector}
	return resource.EnhanceListError(err, opts, s.t.Res.GVR.String())
}

// nameErrors are the errors of the names asked for of one target, reported one by one.
type nameErrors []error

func (e nameErrors) Error() string { return errors.Join(e...).Error() }

// stateErrs returns the errors that s's error stands for, one per name where it is for
// names (nameErrors).
func stateErrs(s *state) []error {
	var ne nameErrors
	if errors.As(s.err, &ne) {
		return ne
	}
	return []error{s.err}
}

// byGet GETs each name asked for of s's target, as kubectl does, when the LIST kquery needs
// was forbidden: where every GET is refused too, the answer is kubectl's, an error per name
// ("cannot get"). Where the user may get them, and the command is one kubectl answers
// with GETs alone (names, nothing that needs a cache: no --where, --sort-by, --count,
// --group-by, -w or paging), the objects read are the answer, in the order asked, with
// kubectl's error for each name not read. Otherwise the LIST's refusal stays.
func (x *execution) byGet(ctx context.Context, s *state) {
	if s.t.Res.Namespaced && s.scope.Namespace == "" {
		return
	}
	dyn, err := dynamic.NewForConfig(x.cfg)
	if err != nil {
		return
	}
	var ri dynamic.ResourceInterface = dyn.Resource(s.t.Res.GVR)
	if s.t.Res.Namespaced {
		ri = dyn.Resource(s.t.Res.GVR).Namespace(s.scope.Namespace)
	}
	o := x.o
	plain := len(x.conditions) == 0 && o.sortBy == "" && !o.count && o.groupBy == "" && !o.watch && !o.watchOnly && o.limit == 0 && o.cont == ""
	var got []*unstructured.Unstructured
	var errs nameErrors
	allowed := false
	for _, n := range s.t.Names {
		if msgs := rest.IsValidPathSegmentName(n); len(msgs) > 0 {
			errs = append(errs, &invalidNameError{Name: n, Msgs: msgs})
			continue
		}
		obj, err := ri.Get(ctx, n, metav1.GetOptions{})
		switch {
		case err == nil:
			allowed = true
			got = append(got, obj)
		case apierrors.IsForbidden(err):
			errs = append(errs, err)
		case apierrors.IsNotFound(err):
			allowed = true
			switch nsErr := x.namespaceMissing(ctx, s); {
			case o.ignoreMissing:
			case nsErr != nil:
				errs = append(errs, nsErr)
			default:
				errs = append(errs, notFoundError(s.t, n, nil))
			}
		default:
			allowed = true
			errs = append(errs, err)
		}
	}
	switch {
	case !allowed:
		s.err = errs
	case plain:
		x.vlog(1, "%s: may not be listed: the names asked for are read by GET", qualified(s.t.Res))
		s.err, s.byGet, s.got, s.gotErrs = nil, true, got, errs
	}
}

// waitAll waits until every informer has synced, or parked: a forbidden resource, or one
// whose CRD is gone, is an answer, reported at once in kubectl's words.
func (x *execution) waitAll(ctx context.Context, states []*state) error {
	wctx, cancel := context.WithTimeout(ctx, x.o.syncTimeout)
	defer cancel()
	for _, s := range states {
		if s.err != nil {
			continue
		}
		err := s.inf.WaitForSyncOrPark(wctx)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var se *informer.SyncError
		if errors.As(err, &se) && errors.Is(err, informer.ErrParked) && len(se.Failures) > 0 {
			f := se.Failures[0]
			x.vlog(1, "%s: informer parked (%s)", qualified(s.t.Res), f.Reason)
			if f.Reason == informer.ReasonWatchForbidden && s.inf.HasSynced() && !x.o.watch {
				continue // listed; a one-shot answer does not need the watch
			}
			if f.Err != nil {
				s.err = listError(f.Err, s)
				if apierrors.IsForbidden(f.Err) && len(s.t.Names) > 0 {
					x.byGet(ctx, s)
				}
				continue
			}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			st := s.inf.Status()
			msg := fmt.Sprintf("%s did not sync within %v (--sync-timeout)", qualified(s.t.Res), x.o.syncTimeout)
			if st.LastError != nil {
				msg += ": " + st.LastError.Error()
			}
			s.err = errors.New(msg)
			continue
		}
		s.err = err
	}
	return nil
}

// pageOf runs the query of one target and returns its objects in (namespace, name) order,
// or, for names, in the order asked, with a NotFound error per missing name.
func (x *execution) pageOf(ctx context.Context, s *state, from string) (items []*unstructured.Unstructured, cont string, errs []error, err error) {
	o := x.o
	q := query.Query{Conditions: slices.Clone(x.conditions), Limit: o.limit, Continue: from}
	if len(s.t.Names) > 0 {
		q.Conditions = append(q.Conditions, query.OneOf(nameIndex, s.t.Names...))
	}
	q.Scan = needsScan(q.Conditions)
	if o.sortBy != "" {
		q.SortBy = sortIndex(o.sortBy)
	}
	r, err := s.inf.Query(ctx, q)
	if errors.Is(err, query.ErrInvalidContinue) {
		return nil, "", nil, errForeignContinue
	}
	if err != nil {
		return nil, "", nil, err
	}
	if o.sortBy != "" {
		if err := checkSortField(ctx, s.inf, q, r.Plan.Matched, o.sortBy); err != nil {
			return nil, "", nil, err
		}
	}
	if o.explain {
		fmt.Fprintf(x.stderr, "kquery: %s: candidates from %q: %d candidates, %d matched\n", qualified(s.t.Res), r.Plan.Driver, r.Plan.Candidates, r.Plan.Matched)
	}
	x.vlog(1, "%s: query answered from %q: %d candidates, %d matched", qualified(s.t.Res), r.Plan.Driver, r.Plan.Candidates, r.Plan.Matched)
	items = r.Items
	if len(s.t.Names) > 0 { // in the order asked for, unless sorted
		byName := map[string]*unstructured.Unstructured{}
		for _, it := range items {
			byName[it.GetName()] = it
		}
		items = items[:0:0]
		if o.sortBy != "" {
			items = r.Items
		}
		for _, n := range s.t.Names {
			if it, ok := byName[n]; ok && o.sortBy == "" {
				items = append(items, it)
			}
		}
		errs = x.missingNames(ctx, s, func(n string) bool { _, ok := byName[n]; return ok })
	}
	return items, r.Continue, errs, nil
}

// missingNames returns kubectl's error for each name asked for of s's target that found
// (nil: none) does not report and the cache does not hold: an invalid name, which
// kubectl's client refuses to GET, or NotFound (unless --ignore-not-found).
func (x *execution) missingNames(ctx context.Context, s *state, found func(string) bool) (errs []error) {
	for _, n := range s.t.Names {
		if found != nil && found(n) {
			continue
		}
		if msgs := rest.IsValidPathSegmentName(n); len(msgs) > 0 {
			errs = append(errs, &invalidNameError{Name: n, Msgs: msgs})
			continue
		}
		if x.o.ignoreMissing {
			continue
		}
		if _, gerr := s.inf.Get(s.scope.Namespace, n); apierrors.IsNotFound(gerr) {
			if err := x.namespaceMissing(ctx, s); err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, notFoundError(s.t, n, x.closeNames(s, n)))
		}
	}
	return errs
}

// namespaceMissing returns the server's NotFound for the namespace of s's scope when that
// namespace does not exist, else nil: kubectl answers a name not found in a namespace other
// than default with the namespace's NotFound (namespaces "x" not found) where it is the
// namespace that is missing, and so does kquery. One GET per namespace, on the first miss.
func (x *execution) namespaceMissing(ctx context.Context, s *state) error {
	ns := s.scope.Namespace
	if !s.t.Res.Namespaced || ns == "" || ns == metav1.NamespaceDefault {
		return nil
	}
	if err, ok := x.nsMissing[ns]; ok {
		return err
	}
	var missing error
	dyn, err := dynamic.NewForConfig(x.cfg)
	if err == nil {
		_, err = dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			missing = err
		}
	}
	if x.nsMissing == nil {
		x.nsMissing = map[string]error{}
	}
	x.nsMissing[ns] = missing
	return missing
}

// closeNames suggests up to three cached names close to a missing one, closest first: a
// prefix either way, or one edit.
func (x *execution) closeNames(s *state, name string) []string {
	if len(s.t.Names) == 1 { // the informer holds that name only
		return nil
	}
	all, err := s.inf.ListItems(s.scope.Namespace) // names only: nothing decoded
	if err != nil {
		return nil
	}
	type cand struct {
		name  string
		score int
	}
	var cands []cand
	for _, it := range all {
		if sc := nameScore(name, it.Name()); sc >= 0 && sc <= 201 {
			cands = append(cands, cand{it.Name(), sc})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(cmp.Compare(a.score, b.score), strings.Compare(a.name, b.name)) })
	var out []string
	for _, c := range cands {
		if len(out) < 3 && !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// list prints the answer of a one-shot command.
func (x *execution) list(ctx context.Context, states []*state) error {
	o := x.o
	now := clock()
	var errs []error
	out := x.stdout
	var all []*unstructured.Unstructured // non-table formats print one List
	var nextPage string                  // the continue token of this page
	var notes []string
	single := x.single && len(states) == 1 && len(states[0].t.Names) == 1
	multiPage := len(states) > 1 && (o.limit > 0 || o.cont != "")
	// Where each resource starts (see pages.go); one resource pages with its own token.
	from := make([]pageState, len(states))
	if o.cont != "" {
		if multiPage {
			var err error
			if from, err = x.decodePages(states, o.cont); err != nil {
				return err
			}
		} else if len(states) == 1 {
			from[0].Cont = o.cont
		}
	}
	next := slices.Clone(from) // where each resource stands after this page
	more := false              // a resource printed without error has more
	type page struct {
		s     *state
		items []*unstructured.Unstructured
		cont  string
	}
	var pages []page
	for i, s := range states {
		if s.err != nil {
			errs = append(errs, stateErrs(s)...)
			continue
		}
		if from[i].Done { // listed, nothing left: still one of the types answered
			pages = append(pages, page{s: s})
			continue
		}
		if s.byGet {
			errs = append(errs, s.gotErrs...)
			pages = append(pages, page{s: s, items: s.got})
			continue
		}
		items, cont, missing, err := x.pageOf(ctx, s, from[i].Cont)
		errs = append(errs, missing...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		next[i] = pageState{Done: cont == "", Cont: cont}
		more = more || cont != ""
		pages = append(pages, page{s, items, cont})
	}
	switch {
	case !more:
	case multiPage:
		nextPage = x.encodePages(states, next)
	default:
		nextPage = pages[0].cont
	}
	// Names are prefixed with their kind when the answer holds several resource types, as
	// kubectl decides it: every type listed counts, found empty or not, and a type asked for
	// by name counts when one of its names was found ("pods,svc web", with web a Service
	// only, prints no kind).
	types := 0
	for _, p := range pages {
		if len(p.s.t.Names) == 0 || len(p.items) > 0 {
			types++
		}
	}
	withKind := types > 1 || o.table.ShowKind
	printedTable := false
	for _, p := range pages {
		s, items, cont := p.s, p.items, p.cont
		if cont != "" && o.format.Kind != "json" && o.format.Kind != "yaml" { // printed after the objects
			if multiPage {
				notes = append(notes, fmt.Sprintf("kquery: %s: %d shown, more match\n", qualified(s.t.Res), len(items)))
			} else {
				notes = append(notes, fmt.Sprintf("kquery: %s: %d shown, more match; next page: --continue %s\n", qualified(s.t.Res), len(items), cont))
			}
		}
		if o.format.Kind != "" {
			for _, it := range items {
				all = append(all, printable(it, s.t))
			}
			continue
		}
		if len(items) == 0 {
			continue
		}
		src := x.columns.source(ctx, s.t, s.scope)
		tbl, err := src.table(ctx, items, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if printedTable && !o.table.NoHeaders {
			fmt.Fprintln(out)
		}
		if err := printTable(out, tbl, s.t, o.table, o.allNamespaces, withKind); err != nil {
			return err
		}
		printedTable = true
	}
	if o.format.Kind != "" && printsGeneric(o, len(all), single && len(errs) > 0) {
		if o.format.Kind == "custom-columns" {
			if err := printCustomColumns(out, o.format.Columns, all, o.table.NoHeaders); err != nil {
				return err
			}
		} else if err := printObjects(out, o.format, all, nextPage, single && len(errs) == 0); err != nil {
			return err
		}
	}
	if multiPage && nextPage != "" && o.format.Kind != "json" && o.format.Kind != "yaml" {
		notes = append(notes, fmt.Sprintf("kquery: next page of every resource: --continue %s\n", nextPage))
	}
	for _, n := range notes {
		fmt.Fprint(x.stderr, n)
	}
	found := 0
	for _, p := range pages {
		found += len(p.items)
	}
	// As kubectl's: from the table printer only, and when nothing matched (not when what
	// matched printed nothing, as a JSONPath that finds no value does).
	if o.format.Kind == "" && found == 0 && len(errs) == 0 && !o.ignoreMissing {
		x.noResources(states)
	}
	return reportAllButLast(x.stderr, errs)
}

// printsGeneric says whether a generic format (json, yaml, name, jsonpath, custom-columns,
// go-template) prints anything, as kubectl's generic printing decides: nothing when the one
// object asked for by name could not be read (the error alone), nothing when none was found
// with --ignore-not-found; else the objects found, as a List (or custom-columns' headers)
// even when there are none, which a go-template sees too. A List of no names prints nothing.
func printsGeneric(o *options, found int, singleFailed bool) bool {
	switch {
	case singleFailed, found == 0 && o.ignoreMissing:
		return false
	}
	return found > 0 || o.format.Kind != "name"
}

// noResources is kubectl's note for an empty answer, on stderr.
func (x *execution) noResources(states []*state) {
	namespaced := !x.o.allNamespaces
	for _, s := range states {
		namespaced = namespaced && s.t.Res.Namespaced
	}
	if namespaced {
		fmt.Fprintf(x.stderr, "No resources found in %s namespace.\n", x.namespace)
	} else {
		fmt.Fprintln(x.stderr, "No resources found")
	}
}

// isPathArg says whether a --group-by argument is a JSONPath rather than an index name.
func isPathArg(s string) bool { return strings.HasPrefix(s, "{") || strings.HasPrefix(s, ".") }
