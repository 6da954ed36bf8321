package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// request is one resource type the command line asks for, with the names asked for (none:
// every object in scope).
type request struct {
	Input string // what the user typed for the type ("po", "all" for an expanded category)
	Names []string
}

// usageError is a command line that cannot run as written; the message ends with a pointer
// to --help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// splitArgs reads kubectl's argument forms: "TYPE[,TYPE...] [NAME...]" or "TYPE/NAME...".
// Types keep the order they were typed in; a type typed twice is asked for once.
func splitArgs(args []string) ([]request, error) {
	if len(args) == 0 {
		return nil, usagef("you must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources")
	}
	slashed := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashed++
		}
	}
	if slashed > 0 {
		// kubectl's refusals (cli-runtime's builder), in its words: plain errors, without
		// the usage hint kubectl prints only for usage errors.
		if slashed != len(args) {
			return nil, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl kquery resource/<resource_name>' instead of 'kubectl kquery resource resource/<resource_name>')")
		}
		var out []request
		for _, a := range args {
			if strings.Count(a, "/") > 1 {
				return nil, errors.New("arguments in resource/name form may not have more than one slash")
			}
			typ, name, _ := strings.Cut(a, "/")
			if typ == "" || name == "" || strings.Contains(typ, ",") {
				return nil, errors.New("arguments in resource/name form must have a single resource and name")
			}
			i := slices.IndexFunc(out, func(r request) bool { return r.Input == typ })
			if i < 0 {
				out = append(out, request{Input: typ})
				i = len(out) - 1
			}
			if !slices.Contains(out[i].Names, name) {
				out[i].Names = append(out[i].Names, name)
			}
		}
		return out, nil
	}
	var out []request
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			return nil, usagef("empty resource type in %q", clip(args[0]))
		}
		if !slices.ContainsFunc(out, func(r request) bool { return r.Input == typ }) {
			out = append(out, request{Input: typ})
		}
	}
	var names []string
	for _, n := range args[1:] {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for i := range out {
		out[i].Names = names
	}
	return out, nil
}

// singleItemImplied is kubectl's rule (cli-runtime's builder) for printing an object as
// itself rather than in a List: the command line names one object, as one TYPE/NAME or as
// one TYPE and one NAME. A name typed twice, or one object named by two spellings of its
// type (cm/a configmap/a, cm,configmap a), is a List, though kquery prints the object once.
func singleItemImplied(args []string) bool {
	switch len(args) {
	case 1:
		return strings.Contains(args[0], "/")
	case 2:
		if strings.Contains(args[0], "/") || strings.Contains(args[1], "/") {
			return false
		}
		types := strings.Split(args[0], ",")
		slices.Sort(types)
		return len(slices.Compact(types)) == 1
	}
	return false
}

// target is one resolved resource to query.
type target struct {
	Input string
	Res   discovery.Resource
	Names []string
}

// qualified is the unambiguous name of a resource: "pods", "deployments.apps".
func qualified(r discovery.Resource) string {
	if r.GVR.Group == "" {
		return r.GVR.Resource
	}
	return r.GVR.Resource + "." + r.GVR.Group
}

// resolver turns what the user typed into resources. Categories are expanded first, as
// kubectl does ("all", "cert-manager", any CRD's category); everything else is resolved by
// kindex's discovery.
type resolver struct {
	disc *discovery.Client
	all  []discovery.Resource // every listable resource, for categories and suggestions
	// warnings are kubectl's warnings about what was typed, to print before the answer.
	warnings []string
}

func newResolver(ctx context.Context, disc *discovery.Client) (*resolver, error) {
	all, err := disc.Resources(ctx, discovery.Filter{})
	var pe *discovery.PartialDiscoveryError
	if err != nil && !errors.As(err, &pe) { // a broken aggregated API leaves the rest usable
		return nil, err
	}
	return &resolver{disc: disc, all: all}, nil
}

// isCategory says whether some listable resource has the category name.
func (r *resolver) isCategory(name string) bool {
	for _, res := range r.all {
		if slices.Contains(res.Categories, name) {
			return true
		}
	}
	return false
}

// resolve resolves every request. A type that resolves to a resource already asked for is
// merged into it (its names added).
func (r *resolver) resolve(ctx context.Context, reqs []request) ([]target, error) {
	var out []target
	add := func(input string, res discovery.Resource, names []string) {
		i := slices.IndexFunc(out, func(t target) bool { return t.Res.GVR.GroupResource() == res.GVR.GroupResource() })
		if i < 0 {
			out = append(out, target{Input: input, Res: res, Names: slices.Clone(names)})
			return
		}
		for _, n := range names {
			if !slices.Contains(out[i].Names, n) {
				out[i].Names = append(out[i].Names, n)
			}
		}
	}
	for _, req := range reqs {
		if r.isCategory(req.Input) {
			members, err := r.disc.ResolveCategory(ctx, req.Input)
			var pe *discovery.PartialDiscoveryError
			if err != nil && !errors.As(err, &pe) {
				return nil, err
			}
			if len(req.Names) > 0 && len(reqs) == 1 && distinctResources(members) > 1 {
				// kubectl expands the category into its types, and refuses names with several
				// of them; a category of one resource is that resource, names included.
				return nil, errors.New("you must specify only one resource")
			}
			for _, m := range members {
				add(req.Input, m, req.Names)
			}
			continue
		}
		res, err := r.disc.Resolve(ctx, req.Input)
		if err != nil {
			return nil, r.explain(req.Input, err)
		}
		r.warnShortName(req.Input, res)
		add(req.Input, res, req.Names)
	}
	return out, nil
}

// distinctResources is the number of resources in rs, each counted once.
func distinctResources(rs []discovery.Resource) int {
	seen := map[schema.GroupResource]bool{}
	for _, r := range rs {
		seen[r.GVR.GroupResource()] = true
	}
	return len(seen)
}

// warnShortName warns, as kubectl does, when input is a short name that resources other than
// res have too (core events and events.k8s.io's both have "ev"): res, the resource of highest
// priority, answers, and each other one is named. A plural or singular name is never
// ambiguous so, nor is a short name qualified with its group.
func (r *resolver) warnShortName(input string, res discovery.Resource) {
	if !slices.Contains(res.ShortNames, input) ||
		slices.ContainsFunc(r.all, func(o discovery.Resource) bool { return o.GVR.Resource == input || o.Singular == input }) {
		return
	}
	warned := map[schema.GroupResource]bool{res.GVR.GroupResource(): true}
	for _, o := range r.all {
		if gr := o.GVR.GroupResource(); !warned[gr] && slices.Contains(o.ShortNames, input) {
			warned[gr] = true
			r.warnings = append(r.warnings, fmt.Sprintf("short name %q could also match lower priority resource %s", input, gr))
		}
	}
}

// unknownResourceError is a type the server does not have, with close names to suggest.
type unknownResourceError struct {
	Input   string
	Suggest []discovery.Resource
	Err     error
}

func (e *unknownResourceError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", clip(e.Input))
}
func (e *unknownResourceError) Unwrap() error { return e.Err }

// ambiguousError is a type that names several resources.
type ambiguousError struct {
	Input      string
	Candidates []discovery.Resource
	Err        error
}

func (e *ambiguousError) Error() string {
	return fmt.Sprintf("%q names %d resources; qualify it with the group", clip(e.Input), len(e.Candidates))
}
func (e *ambiguousError) Unwrap() error { return e.Err }

func (r *resolver) explain(input string, err error) error {
	var amb *discovery.AmbiguousError
	switch {
	case errors.As(err, &amb):
		return &ambiguousError{Input: input, Candidates: amb.Candidates, Err: err}
	case meta.IsNoMatchError(err):
		return &unknownResourceError{Input: input, Suggest: suggest(input, r.all, 3), Err: err}
	}
	return err
}

// suggest returns up to max resources whose names are closest to input, best first. Each
// resource scores its best name (plural, singular, short names, kind, lower-cased): an exact
// match, then a prefix of the typed word or the typed word a prefix of the name, then the
// edit distance (a swap of two neighbours counts one). Built-in resources win ties.
func suggest(input string, all []discovery.Resource, max int) []discovery.Resource {
	word := strings.ToLower(input)
	var group string
	if i := strings.IndexByte(word, '.'); i >= 0 {
		word, group = word[:i], word[i+1:]
	}
	if word == "" {
		return nil
	}
	type cand struct {
		res   discovery.Resource
		score int
	}
	var cands []cand
	for _, res := range all {
		penalty := 0 // a group typed that does not look like the resource's
		if group != "" && !strings.HasPrefix(res.GVR.Group, group) && editDistance(group, res.GVR.Group) > 2 {
			penalty = 10
		}
		best := -1
		names := append([]string{res.GVR.Resource, res.Singular, strings.ToLower(res.GVK.Kind)}, res.ShortNames...)
		for _, n := range names {
			if n == "" {
				continue
			}
			d := nameScore(word, n)
			if d >= 0 && (best < 0 || d < best) {
				best = d
			}
		}
		if best >= 0 {
			cands = append(cands, cand{res, best + penalty})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			return a.score - b.score
		}
		if ba, bb := isBuiltinGroup(a.res.GVR.Group), isBuiltinGroup(b.res.GVR.Group); ba != bb {
			if ba {
				return -1
			}
			return 1
		}
		return strings.Compare(qualified(a.res), qualified(b.res))
	})
	var out []discovery.Resource
	for _, c := range cands {
		if len(out) == max {
			break
		}
		if !slices.ContainsFunc(out, func(r discovery.Resource) bool { return r.GVR.GroupResource() == c.res.GVR.GroupResource() }) {
			out = append(out, c.res)
		}
	}
	return out
}

// nameScore ranks how close a typed word is to a name, lower is closer, -1 too far to
// suggest: 0 equal; then one a prefix of the other (at least 2 bytes), by how much longer;
// then within one or two edits (one for words of 3 bytes or less), by the number of edits.
func nameScore(word, name string) int {
	if word == name {
		return 0
	}
	switch {
	case len(word) >= 2 && strings.HasPrefix(name, word), len(name) >= 2 && strings.HasPrefix(word, name):
		return 100 + max(len(word)-len(name), len(name)-len(word)) // the edits: what one adds
	}
	limit := 2
	if len(word) <= 3 {
		limit = 1
	}
	// The distance is at least the difference in length: a long word is not measured (the
	// table editDistance fills grows with the product of the lengths).
	if len(word)-len(name) > limit || len(name)-len(word) > limit {
		return -1
	}
	d := editDistance(word, name)
	if d > limit {
		return -1
	}
	return 200 + d
}

// editDistance is the optimal string alignment distance between a and b, in bytes: insert,
// delete, substitute and swap two neighbours each count one ("wigdets" is one from
// "widgets").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// isBuiltinGroup says whether a group belongs to Kubernetes itself (where a CRD cannot be
// installed without an API review): the core group, groups without a dot, *.k8s.io and
// *.kubernetes.io.
func isBuiltinGroup(group string) bool {
	return group == "" || !strings.Contains(group, ".") ||
		strings.HasSuffix(group, ".k8s.io") || strings.HasSuffix(group, ".kubernetes.io")
}

// kindName is "kind.group" in lower case, as kubectl prefixes names: "pod", "deployment.apps".
func kindName(gk schema.GroupKind) string {
	return strings.ToLower(gk.String())
}
