package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// options is a parsed command line.
type options struct {
	Resource      string
	Indexes       []index
	Conditions    []query.Condition
	Selector      string
	AllNamespaces bool
	Output        string // table, json or name
	Limit         int
	Watch         bool
	Debounce      time.Duration
	SyncTimeout   time.Duration
	Explain       bool
	Verbosity     int

	// Kubeconfig loading rules and overrides (--kubeconfig, --context, -n, ...), as kubectl.
	Rules     *clientcmd.ClientConfigLoadingRules
	Overrides *clientcmd.ConfigOverrides
}

// index is one --index NAME=JSONPATH.
type index struct {
	Name string
	Expr string
	Path *jsonpath.Path // compiled, to print the values in table output
}

// usageError is a command line that cannot be run as written.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exprError is a JSONPath that does not compile. Arg is the whole command-line argument and
// Offset where the expression starts in it, so that the caret can point into what the user
// typed.
type exprError struct {
	Flag   string // "--index" or "--where"
	Arg    string
	Offset int
	Err    *jsonpath.SyntaxError
}

func (e *exprError) Error() string {
	return fmt.Sprintf("bad JSONPath in %s %q: %s (at byte %d)", e.Flag, e.Arg, e.Err.Msg, e.Err.Offset)
}

func (e *exprError) Unwrap() error { return e.Err }

// compile compiles expr, which starts at byte offset of arg.
func compile(flag, arg string, offset int, expr string) (*jsonpath.Path, error) {
	p, err := jsonpath.Compile(expr)
	if err != nil {
		var se *jsonpath.SyntaxError
		if errors.As(err, &se) {
			return nil, &exprError{Flag: flag, Arg: arg, Offset: offset, Err: se}
		}
		return nil, fmt.Errorf("%s %q: %w", flag, arg, err)
	}
	return p, nil
}

const usageHead = `kquery lists the objects of any Kubernetes resource, CRDs included, that match conditions
on JSONPath indexes, from a local cache.

Usage:
  kquery RESOURCE [--index NAME=JSONPATH]... [--where CONDITION]... [-l SELECTOR]
         [-n NAMESPACE | -A] [-o table|json|name] [--limit N] [--watch]

RESOURCE is what you would type for kubectl: pods, deploy, deployments.apps, a CRD's plural,
kind or short name.

CONDITION is one of, where NAME is an --index name or a JSONPath starting with '{' or '.'
(a JSONPath is evaluated on every object in scope: an explicit scan):
  NAME=VALUE   NAME!=VALUE   NAME<N   NAME<=N   NAME>N   NAME>=N   NAME (has a value)   !NAME (has none)

Examples:
  kquery pods --index node={.spec.nodeName} --where node=worker-1
  kquery wdg --index size={.spec.size} --where 'size>3' --where '{.status.phase}=Running' -A
  kquery deploy -o name --where '.spec.replicas>=2' --watch

Flags:
`

// parseArgs parses the command line. It returns pflag.ErrHelp for --help (the usage is
// written to help), a *usageError or an *exprError for a command line that cannot run.
func parseArgs(args []string, help io.Writer) (*options, error) {
	o := &options{
		Rules:     clientcmd.NewDefaultClientConfigLoadingRules(),
		Overrides: &clientcmd.ConfigOverrides{},
	}
	var indexArgs, whereArgs []string
	fs := pflag.NewFlagSet("kquery", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by the caller
	fs.SortFlags = false
	// StringArray, not StringSlice: a JSONPath may contain commas.
	fs.StringArrayVar(&indexArgs, "index", nil, "register an index NAME=JSONPATH (repeatable); its values become a table column")
	fs.StringArrayVar(&whereArgs, "where", nil, "a condition (repeatable; all must hold)")
	fs.StringVarP(&o.Selector, "selector", "l", "", "label selector, sent to the server (as kubectl -l)")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "query every namespace")
	fs.StringVarP(&o.Output, "output", "o", "table", "output format: table, json or name")
	fs.IntVar(&o.Limit, "limit", 0, "print at most N objects (0: all)")
	fs.BoolVarP(&o.Watch, "watch", "w", false, "after printing, re-run the query on every change until Ctrl-C")
	fs.DurationVar(&o.Debounce, "debounce", 250*time.Millisecond, "with --watch: wait this long for more changes before re-running")
	fs.DurationVar(&o.SyncTimeout, "sync-timeout", time.Minute, "how long to wait for the initial list")
	fs.BoolVar(&o.Explain, "explain", false, "print how the query was answered (index or scan) on stderr")
	fs.IntVarP(&o.Verbosity, "v", "v", 0, "kindex log verbosity on stderr: 0 errors only, 1 informer transitions, 2 and up more detail")
	fs.StringVar(&o.Rules.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.Overrides.CurrentContext, clientcmd.FlagContext, "", "the kubeconfig context to use")
	// --cluster, --user and -n/--namespace, with kubectl's names and defaults.
	clientcmd.BindContextFlags(&o.Overrides.Context, fs, clientcmd.RecommendedContextOverrideFlags(""))
	fs.Usage = func() {
		fmt.Fprint(help, usageHead)
		fmt.Fprint(help, fs.FlagUsages())
	}

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fs.Usage()
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() != 1 {
		return nil, usagef("expected exactly one RESOURCE, got %d arguments %q", fs.NArg(), fs.Args())
	}
	o.Resource = fs.Arg(0)
	switch o.Output {
	case "table", "json", "name":
	default:
		return nil, usagef("--output %q: must be table, json or name", o.Output)
	}
	if o.Limit < 0 {
		return nil, usagef("--limit must not be negative, got %d", o.Limit)
	}
	if o.Debounce < 0 || o.SyncTimeout <= 0 {
		return nil, usagef("--debounce must not be negative and --sync-timeout must be positive")
	}

	names := map[string]bool{}
	for _, arg := range indexArgs {
		ix, err := parseIndex(arg)
		if err != nil {
			return nil, err
		}
		if names[ix.Name] {
			return nil, usagef("--index %q: the name %q is already used", arg, ix.Name)
		}
		names[ix.Name] = true
		o.Indexes = append(o.Indexes, ix)
	}
	for _, arg := range whereArgs {
		w, err := parseWhere(arg)
		if err != nil {
			return nil, err
		}
		c, err := w.condition(names)
		if err != nil {
			return nil, err
		}
		o.Conditions = append(o.Conditions, c)
	}
	return o, nil
}

// parseIndex parses NAME=JSONPATH and compiles the JSONPath.
func parseIndex(arg string) (index, error) {
	name, expr, ok := strings.Cut(arg, "=")
	if !ok || name == "" || expr == "" {
		return index{}, usagef("--index %q: want NAME=JSONPATH, for example size={.spec.size}", arg)
	}
	if strings.ContainsAny(name, "{}.!=<> \t") {
		return index{}, usagef("--index %q: the name %q must not contain '{', '}', '.', '!', '=', '<', '>' or spaces", arg, name)
	}
	p, err := compile("--index", arg, len(name)+1, expr)
	if err != nil {
		return index{}, err
	}
	return index{Name: name, Expr: expr, Path: p}, nil
}

// where is one parsed --where: Subject is an index name or a JSONPath.
type where struct {
	Arg     string
	Subject string
	Op      query.Op
	Value   string
}

// operators, longest first so that "<=" is not read as "<".
var operators = []struct {
	text string
	op   query.Op
}{
	{"!=", query.NotEqual}, {"<=", query.LessOrEqual}, {">=", query.GreaterOrEqual},
	{"==", query.Equal}, {"=", query.Equal}, {"<", query.LessThan}, {">", query.GreaterThan},
}

// parseWhere parses one --where: NAME=VALUE, NAME!=VALUE, NAME<N, NAME<=N, NAME>N, NAME>=N,
// NAME or !NAME. Operators inside a JSONPath's braces, brackets, parentheses or quotes
// (a filter such as {.items[?(@.a=="b")]}) are part of the path.
func parseWhere(arg string) (where, error) {
	w := where{Arg: arg}
	s := strings.TrimSpace(arg)
	negated := strings.HasPrefix(s, "!") && !strings.HasPrefix(s, "!=")
	if negated {
		s = s[1:]
	}
	at := operatorAt(s)
	if at < 0 {
		w.Subject, w.Op = s, query.Exists
		if negated {
			w.Op = query.NotExists
		}
	} else {
		if negated {
			return w, usagef("--where %q: !NAME takes no operator or value", arg)
		}
		for _, o := range operators {
			if strings.HasPrefix(s[at:], o.text) {
				w.Subject, w.Op, w.Value = s[:at], o.op, s[at+len(o.text):]
				break
			}
		}
		if w.Op == 0 { // a lone '!' inside a name
			return w, usagef("--where %q: unexpected '!' at byte %d; use NAME!=VALUE or !NAME", arg, at)
		}
	}
	w.Subject = strings.TrimSpace(w.Subject)
	if w.Subject == "" {
		return w, usagef("--where %q: missing NAME; want NAME=VALUE, NAME!=VALUE, NAME<N, NAME>N, NAME or !NAME", arg)
	}
	switch w.Op {
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		w.Value = strings.TrimSpace(w.Value)
		if _, err := strconv.ParseFloat(w.Value, 64); err != nil {
			return w, usagef("--where %q: %s needs a number, got %q", arg, w.Op, w.Value)
		}
	}
	return w, nil
}

// operatorAt returns the byte offset of the first operator character outside brackets and
// quotes, or -1.
func operatorAt(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case depth == 0 && strings.IndexByte("=!<>", c) >= 0:
			return i
		}
	}
	return -1
}

// condition turns w into a query condition: on the index of that name, or on a JSONPath
// (which must start with '{' or '.'), which is compiled here so that a bad one is reported
// before anything connects.
func (w where) condition(indexes map[string]bool) (query.Condition, error) {
	var values []string
	if w.Op != query.Exists && w.Op != query.NotExists {
		values = []string{w.Value}
	}
	if indexes[w.Subject] {
		return query.Condition{Index: w.Subject, Op: w.Op, Values: values}, nil
	}
	if strings.HasPrefix(w.Subject, "{") || strings.HasPrefix(w.Subject, ".") {
		offset := strings.Index(w.Arg, w.Subject)
		if _, err := compile("--where", w.Arg, offset, w.Subject); err != nil {
			return query.Condition{}, err
		}
		return query.Where(w.Subject, w.Op, values...), nil
	}
	known := slices.Sorted(maps.Keys(indexes))
	have := "there are none"
	if len(known) > 0 {
		have = "have: " + strings.Join(known, ", ")
	}
	return query.Condition{}, usagef("--where %q: %q is not an --index name (%s), and a JSONPath must start with '{' or '.'", w.Arg, w.Subject, have)
}

// needsScan reports whether a query with conds may have to visit every object in scope: it
// has no positive condition on an index (Equal, In, Exists or a comparison) to find the
// candidates with. kindex refuses such a query unless Query.Scan says it is intended.
func needsScan(conds []query.Condition) bool {
	for _, c := range conds {
		if c.Index != "" && c.Op.Positive() {
			return false
		}
	}
	return true
}
