package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/refs"
)

// refsOptions are the flags of `kquery refs`.
type refsOptions struct {
	depth    int
	uses     bool
	usedBy   bool
	dangling bool
	unused   string
	rules    []string // rule files (refs.ParseRules)
}

// newRefsCommand is `kubectl kquery refs`: the reference graph of package refs over the
// whole cluster (every resource a built-in or user rule follows), for one object (what it
// uses and what uses it, as trees), for dangling references, or for unused objects.
func newRefsCommand(ctx context.Context, o *options, stdout, stderr io.Writer, runErr *error) *cobra.Command {
	var ro refsOptions
	cmd := &cobra.Command{
		Use:   "refs TYPE/NAME | --dangling | --unused TYPE",
		Short: "What an object uses and what uses it, dangling references, unused objects",
		Long: `refs builds kindex's reference graph over the cluster (owner references, the fields of
built-in resources that name other objects, label selectors) and answers from it:

  kubectl kquery refs deploy/web -n shop     what web uses and what uses it, as trees
  kubectl kquery refs --dangling             references whose target does not exist
  kubectl kquery refs --unused configmaps    ConfigMaps nothing uses (services: select no Pod)

--rules FILE adds the rules of a rule file (YAML or JSON, the format of refs.ParseRules) to
the built-in ones, for the fields of custom resources that name other objects:

  - name: widgets:secret
    from: widgets.example.com
    path: "{.spec.secretRef.name}"
    to: secrets

A target counts as missing only when its resource is cached completely where it would be;
otherwise it is unknown, with the reason. References marked optional (a ConfigMap or Secret
volume, projection, env or envFrom source with "optional: true") are marked "(optional)" in
the trees and are not dangling: their objects work without their targets.`,
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			*runErr = runRefs(ctx, o, ro, args, stdout, stderr)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&ro.depth, "depth", 0, "Follow references this many steps (0: all the way).")
	f.BoolVar(&ro.uses, "uses", false, "Only what the object uses.")
	f.BoolVar(&ro.usedBy, "used-by", false, "Only what uses the object.")
	f.BoolVar(&ro.dangling, "dangling", false, "List references whose target does not exist (but those marked optional).")
	f.StringArrayVar(&ro.rules, "rules", nil, "A rule file (YAML or JSON) whose rules are followed besides the built-in ones (repeatable).")
	f.StringVar(&ro.unused, "unused", "", "List the objects of TYPE that nothing uses (for a selecting type such as services: those that select nothing, and those without a selector that nothing names).")
	return cmd
}

func runRefs(ctx context.Context, o *options, ro refsOptions, args []string, stdout, stderr io.Writer) error {
	modes := 0
	for _, on := range []bool{len(args) == 1, ro.dangling, ro.unused != ""} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return usagef("refs takes one of TYPE/NAME, --dangling or --unused TYPE")
	}
	if ro.uses && ro.usedBy { // each leaves out the other's tree: together, nothing
		return usagef("--uses and --used-by exclude each other; without either, refs shows both")
	}
	rules, err := readRuleFiles(ro.rules)
	if err != nil {
		return err
	}
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	namespace, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	logger := newLogger(stderr, o.verbosity)
	disc, err := discovery.New(cfg, discovery.Options{Logger: logger})
	if err != nil {
		return err
	}
	dctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); disc.Wait() }()
	if err := disc.Start(dctx); err != nil {
		return err
	}
	g, err := refs.New(cfg, refs.Options{Discovery: disc, Logger: logger, Rules: rules})
	if err != nil {
		return err
	}
	if err := g.Start(dctx); err != nil {
		return err
	}
	defer g.Shutdown()
	wctx, wcancel := context.WithTimeout(ctx, o.syncTimeout)
	err = g.WaitForSync(wctx)
	wcancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Answers about what did not sync come back as unknown: say so and answer.
		within := ""
		if errors.Is(err, context.DeadlineExceeded) {
			within = fmt.Sprintf(" within %v", o.syncTimeout)
		}
		fmt.Fprintf(stderr, "Warning: not every resource synced%s; answers about them are unknown: %v\n", within, err)
	}

	switch {
	case ro.dangling:
		n := 0
		for _, e := range g.Dangling() {
			fmt.Fprintln(stdout, e.String())
			n++
		}
		if n == 0 {
			fmt.Fprintln(stderr, "No dangling references.")
		}
		return nil
	case ro.unused != "":
		res, err := disc.Resolve(ctx, ro.unused)
		if err != nil {
			return err
		}
		inScope := func(obj refs.ObjectRef) bool {
			return o.allNamespaces || obj.Namespace == "" || obj.Namespace == namespace
		}
		objs, err := unusedObjects(g, rules, res.GVR.GroupResource(), inScope)
		if err != nil && !errors.Is(err, refs.ErrIncomplete) {
			return err
		}
		for _, obj := range objs {
			fmt.Fprintln(stdout, obj.String())
		}
		if len(objs) == 0 { // as kubectl says of an empty answer, naming the namespace looked in
			if res.Namespaced && !o.allNamespaces {
				fmt.Fprintf(stderr, "No unused %s found in %s namespace.\n", qualified(res), namespace)
			} else {
				fmt.Fprintf(stderr, "No unused %s found.\n", qualified(res))
			}
		}
		if errors.Is(err, refs.ErrIncomplete) {
			fmt.Fprintf(stderr, "Warning: the answer may be incomplete: %v\n", err)
		}
		return nil
	}
	typ, name, ok := strings.Cut(args[0], "/")
	if !ok || typ == "" || name == "" {
		return usagef("refs takes TYPE/NAME, got %q", clip(args[0]))
	}
	res, err := disc.Resolve(ctx, typ)
	if err != nil {
		return err
	}
	obj := refs.RefOf(res, namespace, name)
	// An object that does not exist is an error, as for kubectl get; what refers to it is
	// still printed (those are its dangling references), before the error.
	missing := objectMissing(ctx, cfg, res, obj)
	show := func(verb string, edges []refs.Edge, err error, reverse bool) error {
		if err != nil && !errors.Is(err, refs.ErrIncomplete) {
			return err
		}
		fmt.Fprintf(stdout, "%s %s:\n%s", obj, verb, refs.Tree(obj, edges, reverse))
		if err != nil {
			fmt.Fprintf(stderr, "Warning: the answer may be incomplete: %v\n", err)
		}
		return nil
	}
	if !ro.usedBy {
		edges, err := g.References(obj, ro.depth)
		if err := show("uses", edges, err, false); err != nil {
			return err
		}
	}
	if !ro.uses {
		edges, err := g.Referrers(obj, ro.depth)
		if err := show("is used by", edges, err, true); err != nil {
			return err
		}
	}
	return missing
}

// unusedObjects returns the objects of gr in scope that nothing uses, sorted: those no
// reference names, but for a resource some rule gives selectors (services, PDBs, network
// policies, or a rule file's), whose objects are in use while they select something, those
// whose selectors select nothing and those without a selector that no reference names.
// rules are the graph's (nil: the built-in rules). The error is Unreferenced's (an
// *IncompleteError beside the answer).
func unusedObjects(g *refs.Graph, rules []refs.Rule, gr schema.GroupResource, inScope func(refs.ObjectRef) bool) ([]refs.ObjectRef, error) {
	unreferenced, err := g.Unreferenced(gr)
	if err != nil && !errors.Is(err, refs.ErrIncomplete) {
		return nil, err
	}
	if rules == nil {
		rules = refs.BuiltinRules()
	}
	selecting := slices.ContainsFunc(rules, func(r refs.Rule) bool {
		return r.From == gr && r.Selector != refs.SelectorNone
	})
	var out []refs.ObjectRef
	for _, obj := range unreferenced {
		if !inScope(obj) {
			continue
		}
		if selecting {
			edges, _ := g.References(obj, 1)
			if slices.ContainsFunc(edges, func(e refs.Edge) bool { return e.Selector }) {
				continue // it selects something
			}
		}
		out = append(out, obj)
	}
	if selecting {
		empty, serr := g.EmptySelectors(gr)
		if serr != nil && !errors.Is(serr, refs.ErrIncomplete) {
			return nil, serr
		}
		for _, obj := range empty {
			if inScope(obj) {
				out = append(out, obj)
			}
		}
		// One list, in order: an object that nothing names and that selects nothing is one.
		slices.SortFunc(out, func(a, b refs.ObjectRef) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		out = slices.Compact(out)
	}
	return out, err
}

// objectMissing returns the server's NotFound error if obj does not exist, nil otherwise
// (other errors too: the graph's answer stands).
func objectMissing(ctx context.Context, cfg *rest.Config, res discovery.Resource, obj refs.ObjectRef) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	_, err = dyn.Resource(res.GVR).Namespace(obj.Namespace).Get(ctx, obj.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// readRuleFiles returns the built-in rules and those of files (nil without files: the
// graph's default, the built-in rules). A file that cannot be read or parsed, or whose rule
// names one of another's, is an error naming it.
func readRuleFiles(files []string) ([]refs.Rule, error) {
	if len(files) == 0 {
		return nil, nil
	}
	rules := refs.BuiltinRules()
	seen := map[string]string{}
	for _, r := range rules {
		seen[r.Name] = "the built-in rules"
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
		more, err := refs.ParseRules(data)
		if err != nil {
			return nil, fmt.Errorf("--rules %s: %w", f, err)
		}
		for _, r := range more {
			if in, ok := seen[r.Name]; ok {
				return nil, fmt.Errorf("--rules %s: rule %q is already in %s; rule names are unique", f, r.Name, in)
			}
			seen[r.Name] = f
		}
		rules = append(rules, more...)
	}
	return rules, nil
}
