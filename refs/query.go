package refs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/discovery"
)

// coverFunc tells whether the objects of a resource are cached completely in a namespace
// ("" for a cluster-scoped resource); if not, why.
type coverFunc func(gr schema.GroupResource, ns string) (ok bool, reason string)

// pendingState is an edge whose state needs the coverage of its target: filled in after the
// graph's lock is released, so that no informer is asked under it.
type pendingState struct {
	i               int
	to              *entry
	gr              schema.GroupResource
	ns              string
	wantUID, hasUID types.UID
	present         bool
}

// collector gathers edges under the graph's read lock and settles their states after.
type collector struct {
	g      *graph
	edges  []Edge
	states []pendingState
}

func (g *graph) ref(e *entry) ObjectRef {
	info := g.res[e.key.res]
	return ObjectRef{Group: info.gr.Group, Resource: info.gr.Resource, Kind: info.kind, Namespace: e.key.ns, Name: e.key.name}
}

// addEdge records the edge from -[rule]-> to; uid is what the edge requires of to, opt
// whether it is optional.
func (c *collector) addEdge(from *entry, rule *crule, to *entry, uid types.UID, opt bool, depth int) {
	e := Edge{Rule: rule.Name, From: c.g.ref(from), To: c.g.ref(to), Selector: rule.kind == kindSelector, Optional: opt, Depth: depth}
	if to.present && (uid == "" || uid == to.uid) {
		e.State = Present
		c.edges = append(c.edges, e)
		return
	}
	if info := c.g.res[to.key.res]; to.key.ns == "" && info.known && info.namespaced {
		// An owner reference from a cluster-scoped object to a namespaced kind (resolve),
		// or a rule that says its targets are cluster-scoped, of a namespaced resource.
		e.State, e.Reason = Missing, unreachableReason
		if from.key.ns != "" {
			e.Reason = fmt.Sprintf(clusterRuleReason, resourceName(info.gr))
		}
		c.edges = append(c.edges, e)
		return
	}
	c.states = append(c.states, pendingState{i: len(c.edges), to: to, gr: c.g.res[to.key.res].gr, ns: to.key.ns,
		wantUID: uid, hasUID: to.uid, present: to.present})
	c.edges = append(c.edges, e)
}

// unreachableReason explains a reference that requires a UID from a cluster-scoped object
// to a namespaced kind: no object can be its target.
const unreachableReason = "a cluster-scoped object cannot name a namespaced one without its namespace"

// clusterRuleReason explains a reference of a namespaced object by a rule whose targets
// are cluster-scoped (NamespaceCluster) to a namespaced resource (%s): the rule is wrong.
const clusterRuleReason = "the rule says its targets are cluster-scoped (Namespace: Cluster), and %s are namespaced"

// addPending records an edge whose target's kind or scope is not known.
func (c *collector) addPending(from *entry, o outEdge, depth int) {
	t := o.pend.raw
	// Where the target would be if its resource is namespaced.
	to := ObjectRef{Namespace: t.ns, Name: t.name}
	if to.Namespace == "" && t.rule.Namespace != NamespaceCluster {
		to.Namespace = from.key.ns
	}
	var reason string
	if t.res == noRes {
		to.Group, to.Kind = t.group, t.kind
		reason = fmt.Sprintf("no served resource known to have kind %s", schema.GroupKind{Group: t.group, Kind: t.kind})
	} else {
		info := c.g.res[t.res]
		to.Group, to.Resource = info.gr.Group, info.gr.Resource
		reason = fmt.Sprintf("the scope of %s is not known (not served?)", resourceName(info.gr))
	}
	c.edges = append(c.edges, Edge{Rule: o.rule.Name, From: c.g.ref(from), To: to, Optional: o.opt, Depth: depth, State: Unknown, Reason: reason})
}

// settle fills in the states that need coverage, asking cover once per resource and
// namespace. A target found absent whose resource is cached completely is looked for again
// after cover answers: the sync that made it so may have handed the graph the target after
// the edges were collected, and a target the graph holds is not missing.
func (c *collector) settle(cover coverFunc) []Edge {
	type scope struct {
		gr schema.GroupResource
		ns string
	}
	type answer struct {
		ok     bool
		reason string
	}
	memo := map[scope]answer{}
	var absent []pendingState // Missing as collected, their resources covered
	for _, p := range c.states {
		e := &c.edges[p.i]
		if p.present { // there, with another UID
			e.State, e.Reason = Missing, fmt.Sprintf("the object has UID %s, the reference requires %s", p.hasUID, p.wantUID)
			continue
		}
		s := scope{p.gr, p.ns}
		a, ok := memo[s]
		if !ok {
			if cover == nil {
				a.ok = true
			} else {
				a.ok, a.reason = cover(p.gr, p.ns)
			}
			memo[s] = a
		}
		if a.ok {
			e.State, e.Reason = Missing, "not found"
			absent = append(absent, p)
		} else {
			e.State, e.Reason = Unknown, a.reason
		}
	}
	if len(absent) > 0 {
		c.g.mu.RLock()
		defer c.g.mu.RUnlock()
		for _, p := range absent {
			if !p.to.present {
				continue
			}
			e := &c.edges[p.i]
			if p.wantUID == "" || p.wantUID == p.to.uid {
				e.State, e.Reason = Present, ""
			} else {
				e.Reason = fmt.Sprintf("the object has UID %s, the reference requires %s", p.to.uid, p.wantUID)
			}
		}
	}
	return c.edges
}

func compareRef(a, b ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func compareEdge(a, b Edge) int {
	return cmp.Or(cmp.Compare(a.Depth, b.Depth), compareRef(a.From, b.From), cmp.Compare(a.Rule, b.Rule), compareRef(a.To, b.To))
}

// lookup finds the entry of obj (nil if the graph knows nothing of it). obj names its
// resource, or only its kind.
func (g *graph) lookup(obj ObjectRef) *entry {
	var info *resInfo
	if obj.Resource != "" {
		info = g.byGR[obj.GroupResource()]
	} else if obj.Kind != "" {
		info = g.byKind[schema.GroupKind{Group: obj.Group, Kind: obj.Kind}]
	}
	if info == nil {
		return nil
	}
	ns := obj.Namespace
	if info.known && !info.namespaced {
		ns = ""
	}
	return g.entries[key{info.id, ns, obj.Name}]
}

// walk collects the edges reachable from obj in one direction, breadth first, to depth
// levels (depth < 1: no limit). Each object is expanded once, so cycles end. An edge that
// requires another UID than its target's (an owner reference to an earlier object of that
// name) is collected, Missing, but not followed: the object that has the name now is not
// the one referred to, and what it uses (or what uses the source) is not reached through it.
func (g *graph) walk(obj ObjectRef, depth int, reverse bool) *collector {
	g.mu.RLock()
	defer g.mu.RUnlock()
	c := &collector{g: g}
	start := g.lookup(obj)
	if start == nil {
		return c
	}
	seen := map[*entry]bool{start: true}
	frontier := []*entry{start}
	for d := 1; len(frontier) > 0 && (depth < 1 || d <= depth); d++ {
		var next []*entry
		visit := func(e *entry) {
			if e != nil && e.present && !seen[e] {
				seen[e] = true
				next = append(next, e)
			}
		}
		for _, e := range frontier {
			if reverse {
				e.in.each(func(r ref) bool {
					c.addEdge(r.from, r.rule, e, r.uid, r.opt, d)
					if reaches(e, r.uid) {
						visit(r.from)
					}
					return true
				})
				continue
			}
			for _, o := range e.out {
				if o.pend != nil {
					if !o.pend.void {
						c.addPending(e, o, d)
					}
					continue
				}
				c.addEdge(e, o.rule, o.to, o.uid, o.opt, d)
				if reaches(o.to, o.uid) {
					visit(o.to)
				}
			}
			for _, si := range e.sels {
				for t := range si.matched {
					c.addEdge(e, si.spec.rule, t, "", false, d)
					visit(t)
				}
			}
		}
		frontier = next
	}
	return c
}

// reaches reports whether an edge that requires uid of to ("" for none) names the object to
// holds now, or to holds none (a deleted object's referrers are what still names it).
func reaches(to *entry, uid types.UID) bool { return uid == "" || !to.present || uid == to.uid }

// knows returns the resource obj names, or an error for which errors.Is(err,
// ErrUnknownResource) holds when the graph knows no such resource (or kind).
func (g *graph) knows(obj ObjectRef) (schema.GroupResource, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if obj.Resource == "" {
		gk := schema.GroupKind{Group: obj.Group, Kind: obj.Kind}
		if info := g.byKind[gk]; info != nil {
			return info.gr, nil
		}
		if obj.Kind == "" {
			return schema.GroupResource{}, fmt.Errorf("%w: %s names neither a resource nor a kind", ErrUnknownResource, obj)
		}
		return schema.GroupResource{}, fmt.Errorf("%w: no served resource has kind %s%s", ErrUnknownResource, gk, g.kindElsewhere(gk))
	}
	gr := obj.GroupResource()
	if g.byGR[gr] != nil || g.named(gr) {
		return gr, nil
	}
	if alt, ok := g.aliasLocked(gr); ok && alt != gr {
		return gr, fmt.Errorf("%w: %q is not a resource's name; queries name resources by their plural: %s",
			ErrUnknownResource, resourceName(gr), resourceName(alt))
	}
	if lower := lowerGR(gr); g.byGR[lower] != nil {
		return gr, fmt.Errorf("%w: %q is not a resource's name; resource names are lower case: %s",
			ErrUnknownResource, resourceName(gr), resourceName(lower))
	}
	if res, group, ok := strings.Cut(gr.Resource, "."); ok && gr.Group == "" {
		if alt := (schema.GroupResource{Group: group, Resource: res}); g.byGR[alt] != nil || g.named(alt) {
			return gr, fmt.Errorf("%w: resource %q names its group: queries keep the group apart, Group %q, Resource %q",
				ErrUnknownResource, gr.Resource, group, res)
		}
	}
	return gr, fmt.Errorf("%w: %s is not served (as discovery last said) and no rule names it%s",
		ErrUnknownResource, resourceName(gr), g.resourceElsewhere(gr))
}

// resourceElsewhere says in which other groups a resource of gr's plural is served ("" if
// none): a query that leaves out the group ("issuers") names the core group's; g.mu is held.
func (g *graph) resourceElsewhere(gr schema.GroupResource) string {
	var groups []string
	for other, info := range g.byGR {
		if other.Resource == gr.Resource && other.Group != gr.Group && info.known {
			groups = append(groups, other.Group)
		}
	}
	return servedIn(gr.Resource, groups)
}

// kindElsewhere says in which other groups a resource of kind gk.Kind is served ("" if
// none); g.mu is held.
func (g *graph) kindElsewhere(gk schema.GroupKind) string {
	var groups []string
	for other, info := range g.byKind {
		if other.Kind == gk.Kind && other.Group != gk.Group && info.known {
			groups = append(groups, other.Group)
		}
	}
	return servedIn("kind "+gk.Kind, groups)
}

// servedIn is "; <what> is served in group <groups>", or "" for no groups.
func servedIn(what string, groups []string) string {
	if len(groups) == 0 {
		return ""
	}
	slices.Sort(groups)
	for i, gr := range groups {
		if gr == "" {
			groups[i] = `"" (core)`
		}
	}
	return "; " + what + " is served in group " + strings.Join(groups, ", ")
}

// placed returns an error for which errors.Is(err, ErrNamespaceRequired) holds when obj, of
// the namespaced resource gr, names no namespace: it names no object then (a name is unique
// only within its namespace), and an empty answer would read as "uses nothing".
func (g *graph) placed(gr schema.GroupResource, obj ObjectRef) error {
	if obj.Namespace != "" {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if info := g.byGR[gr]; info != nil && info.known && info.namespaced {
		return fmt.Errorf("%w: %s is namespaced; %s names no namespace", ErrNamespaceRequired, resourceName(gr), obj)
	}
	return nil
}

// References returns what obj uses: its edges, and with depth > 1 the edges of what it
// uses, level by level to depth levels (depth < 1: no limit; every object is expanded
// once, so cycles end). Edges come in order of Depth, then From, Rule and To. An object of a
// resource the graph knows that does not exist uses nothing. An edge that requires another
// UID than its target has (an owner reference to an earlier object of the name) is
// returned, Missing, and not followed, here or in Referrers.
//
// Errors: ErrUnknownResource (errors.Is) when obj names a resource or kind the graph does
// not know (a typo, a kind or short name where the plural belongs), with no edges;
// ErrNamespaceRequired when obj's resource is namespaced and obj names no namespace; an
// *IncompleteError beside the edges when obj's resource is not cached completely where obj
// would be (not watched, not synced, forbidden): then obj may use more, or exist.
func (g *Graph) References(obj ObjectRef, depth int) ([]Edge, error) {
	if !g.valid() {
		return nil, ErrUninitialized
	}
	gr, err := g.g.knows(obj)
	if err == nil {
		err = g.g.placed(gr, obj)
	}
	if err != nil {
		return nil, err
	}
	// Covered before the graph is read, and after: an object handed to the graph by a
	// sync that completes meanwhile may be missing from what was read.
	covered := func() bool {
		if g.cover == nil {
			return true
		}
		ok, _ := g.cover(gr, g.g.namespaceOf(gr, obj.Namespace))
		return ok
	}
	before := covered()
	edges := sortEdges(g.g.walk(obj, depth, false).settle(g.cover))
	if !before || !covered() {
		return edges, &IncompleteError{Resources: []schema.GroupResource{gr}}
	}
	return edges, nil
}

// namespaceOf is where objects of gr named in ns are: ns, or "" if gr is cluster-scoped.
func (g *graph) namespaceOf(gr schema.GroupResource, ns string) string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if info := g.byGR[gr]; info != nil && info.known && !info.namespaced {
		return ""
	}
	return ns
}

// Referrers returns what uses obj: the edges to it, and with depth > 1 the edges to those,
// in References' order. obj need not exist: the referrers of a deleted Secret are the
// objects that still name it, their edges Missing.
//
// References that wait for obj's kind (no served resource has it yet) or for its resource's
// scope (not described by discovery) are included, Unknown, at depth 1: what names a
// Widget before the Widget CRD is installed.
//
// Errors: ErrUnknownResource and ErrNamespaceRequired as for References (unless references
// wait for obj); an *IncompleteError beside the edges, as for Unreferenced, while a resource whose objects
// may use obj is not cached completely.
func (g *Graph) Referrers(obj ObjectRef, depth int) ([]Edge, error) {
	if !g.valid() {
		return nil, ErrUninitialized
	}
	gr, err := g.g.knows(obj)
	if err != nil && obj.Resource == "" {
		// A kind no served resource has now may have been a resource's that is gone: what
		// still names its objects by that resource is a referrer too.
		if former, ok := g.g.formerResource(obj); ok {
			obj.Resource, gr, err = former.Resource, former, nil
		}
	}
	if err != nil {
		// A kind no served resource has may still be named: the references waiting for it.
		if waiting := g.g.waiting(obj); len(waiting) > 0 {
			return sortEdges(waiting), nil
		}
		return nil, err
	}
	if err := g.g.placed(gr, obj); err != nil {
		return nil, err
	}
	related := g.g.related(gr, true)
	before := g.incompleteErr(related)
	c := g.g.walk(obj, depth, true)
	c.edges = append(c.edges, g.g.waiting(obj)...)
	edges := sortEdges(c.settle(g.cover))
	return edges, joinIncomplete(before, g.incompleteErr(related))
}

// waiting returns the references to obj that wait for its kind or its resource's scope
// (Unknown, depth 1): a reference to a kind no served resource has yet, or to a resource
// discovery has not described, names obj all the same.
func (g *graph) waiting(obj ObjectRef) []Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	// References wait by kind (owner references, kind rules) or by resource (rules naming a
	// resource): obj's kind, and the resource and kind of obj's resource while not served.
	var lookups []string
	if obj.Kind != "" {
		lookups = append(lookups, kindKey(obj.Group, obj.Kind))
	}
	if info := g.byGR[obj.GroupResource()]; obj.Resource != "" && info != nil && !info.known {
		lookups = append(lookups, resKey(info.id))
		if info.kind != "" && info.kind != obj.Kind {
			lookups = append(lookups, kindKey(info.gr.Group, info.kind))
		}
	}
	c := &collector{g: g}
	for _, lookup := range lookups {
		g.waitingOn(c, lookup, obj)
	}
	return c.edges
}

// waitingOn adds to c the references pending on lookup that name obj; g.mu is held.
func (g *graph) waitingOn(c *collector, lookup string, obj ObjectRef) {
	for src := range g.pending[lookup] {
		for _, o := range src.out {
			if o.pend == nil || o.pend.void || o.pend.key != lookup || o.pend.raw.name != obj.Name {
				continue
			}
			ns := o.pend.raw.ns
			if ns == "" && o.rule.Namespace != NamespaceCluster {
				ns = src.key.ns
			}
			if obj.Namespace == "" || ns == obj.Namespace {
				c.addPending(src, o, 1)
			}
		}
	}
}

// formerResource returns the resource, no longer served, that had obj's kind, if one did and
// no served resource has it now.
func (g *graph) formerResource(obj ObjectRef) (schema.GroupResource, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if obj.Kind == "" || g.byKind[schema.GroupKind{Group: obj.Group, Kind: obj.Kind}] != nil {
		return schema.GroupResource{}, false
	}
	var out schema.GroupResource
	found := false
	for gr, info := range g.byGR {
		if !info.known && gr.Group == obj.Group && info.kind == obj.Kind && (!found || gr.Resource < out.Resource) {
			out, found = gr, true
		}
	}
	return out, found
}

func sortEdges(edges []Edge) []Edge {
	slices.SortStableFunc(edges, compareEdge)
	return edges
}

// Dangling returns the references whose target is not cached: Missing ones (dangling:
// the target's resource is cached completely where the target would be and does not hold
// it, or holds an object of that name with another UID than the reference requires) and
// Unknown ones (the cache cannot tell: the target's resource is not watched, not synced or
// not served). Selector edges never dangle, and optional references (Edge.Optional: a
// ConfigMap volume marked optional, say; see Rule.OptionalField) are left out, their
// objects working without their targets; References and Referrers show them, Missing. An
// object that names a target both optionally and not, by one rule, has one edge, not
// optional, which dangles. Sorted by From, Rule and To; Depth is 1.
func (g *Graph) Dangling() []Edge {
	if !g.valid() {
		return nil
	}
	c := func() *collector {
		g.g.mu.RLock()
		defer g.g.mu.RUnlock()
		c := &collector{g: g.g}
		for e := range g.g.missing {
			e.in.each(func(r ref) bool {
				if r.opt || r.rule.kind == kindSelector || (e.present && (r.uid == "" || r.uid == e.uid)) {
					return true
				}
				c.addEdge(r.from, r.rule, e, r.uid, false, 1)
				return true
			})
		}
		for lookup, srcs := range g.g.pending {
			for src := range srcs {
				for _, o := range src.out {
					if o.pend != nil && !o.pend.void && o.pend.key == lookup && !o.opt {
						c.addPending(src, o, 1)
					}
				}
			}
		}
		return c
	}()
	edges := slices.DeleteFunc(c.settle(g.cover), func(e Edge) bool { return e.State == Present })
	return sortEdges(edges)
}

// Unreferenced returns the cached objects of a resource that nothing uses: no edge of any
// rule (selector edges included) points at them, an edge that requires another UID (an
// owner reference to an earlier object of the same name) aside; ConfigMaps no Pod, workload or custom
// resource names, say. Sorted by namespace and name. While some watched resource is not
// cached completely, or a served resource whose rules name this one is not watched (left
// out by the filter, forbidden), the answer comes with an *IncompleteError (ErrIncomplete)
// naming them: an object of theirs may use one reported; so does gr itself when it is not
// watched. A resource the graph does not know is an error (ErrUnknownResource), as for
// References.
func (g *Graph) Unreferenced(gr schema.GroupResource) ([]ObjectRef, error) {
	if !g.valid() {
		return nil, ErrUninitialized
	}
	if _, err := g.g.knows(ObjectRef{Group: gr.Group, Resource: gr.Resource}); err != nil {
		return nil, err
	}
	related := append(g.g.related(gr, true), gr)
	before := g.incompleteErr(related)
	out := g.g.objects(gr, func(e *entry) bool {
		// An edge that requires another UID (an owner reference to an earlier object of the
		// same name) is Missing, not a use of this object.
		used := false
		e.in.each(func(r ref) bool {
			used = r.uid == "" || r.uid == e.uid
			return !used
		})
		return !used
	})
	return out, joinIncomplete(before, g.incompleteErr(related))
}

// EmptySelectors returns the cached objects of a resource whose selectors select nothing:
// Services that select no Pod, PodDisruptionBudgets that cover none. Objects without a
// selector (a Service without one) are not listed. Sorted by namespace and name; an
// *IncompleteError as for Unreferenced, naming also the selected resources (Pods) when they
// are not cached completely, and gr itself when it is not watched; ErrUnknownResource as for
// Unreferenced.
func (g *Graph) EmptySelectors(gr schema.GroupResource) ([]ObjectRef, error) {
	if !g.valid() {
		return nil, ErrUninitialized
	}
	if _, err := g.g.knows(ObjectRef{Group: gr.Group, Resource: gr.Resource}); err != nil {
		return nil, err
	}
	related := append(g.g.related(gr, false), gr)
	before := g.incompleteErr(related)
	out := g.g.objects(gr, func(e *entry) bool {
		if len(e.sels) == 0 {
			return false
		}
		for _, si := range e.sels {
			if len(si.matched) > 0 {
				return false
			}
		}
		return true
	})
	return out, joinIncomplete(before, g.incompleteErr(related))
}

// related returns the served resources an answer about gr depends on besides the watched
// ones: the sources of the rules that may name gr (users), or the targets of gr's selector
// rules. A source filtered out of the watch makes every object of gr look unused.
func (g *graph) related(gr schema.GroupResource, users bool) []schema.GroupResource {
	g.mu.RLock()
	defer g.mu.RUnlock()
	kind := ""
	if info := g.byGR[gr]; info != nil {
		kind = info.kind
	}
	var out []schema.GroupResource
	for _, r := range g.rules {
		var other schema.GroupResource
		switch {
		case users && r.From == AnyResource && r.mayName(gr, kind):
			out = g.anySources(gr, out)
			continue
		case users && r.From != AnyResource && r.mayName(gr, kind):
			other = r.From
		case !users && r.From == gr && r.kind == kindSelector:
			other = r.To
		default:
			continue
		}
		if info := g.byGR[other]; info != nil && info.known && !slices.Contains(out, other) {
			out = append(out, other)
		}
	}
	return out
}

// anySources adds to out the served resources whose objects a rule of every resource (owner
// references) reads when it may name gr: all of them but those DefaultFilter leaves out
// (events and Endpoints, which hold no owner references in practice: counting them would
// make every answer incomplete under the default filter), and, for a namespaced gr, the
// cluster-scoped ones (an owner reference from a cluster-scoped object to a namespaced one
// is invalid). incompleteErr keeps those not cached completely.
func (g *graph) anySources(gr schema.GroupResource, out []schema.GroupResource) []schema.GroupResource {
	target := g.byGR[gr]
	def := DefaultFilter()
	for _, info := range g.res {
		switch {
		case info == nil, !info.known, slices.Contains(out, info.gr):
		case target != nil && target.known && target.namespaced && !info.namespaced:
		case !def.Matches(discovery.Resource{GVR: info.gr.WithVersion("")}):
		default:
			out = append(out, info.gr)
		}
	}
	return out
}

// objects returns the present objects of gr that keep selects, sorted.
func (g *graph) objects(gr schema.GroupResource, keep func(*entry) bool) []ObjectRef {
	g.mu.RLock()
	defer g.mu.RUnlock()
	info := g.byGR[gr]
	if info == nil {
		return nil
	}
	var out []ObjectRef
	for e := range g.objs[info.id] {
		if keep(e) {
			out = append(out, g.ref(e))
		}
	}
	slices.SortFunc(out, compareRef)
	return out
}

// incompleteErr names the watched resources that are not cached completely, and those of
// related (served, and named by the rules the answer depends on) that are not cached at all.
func (g *Graph) incompleteErr(related []schema.GroupResource) error {
	var res []schema.GroupResource
	if g.incomplete != nil {
		res = g.incomplete()
	}
	for _, gr := range related {
		if g.cover == nil || slices.Contains(res, gr) {
			continue
		}
		if ok, _ := g.cover(gr, ""); !ok {
			res = append(res, gr)
		}
	}
	if len(res) == 0 {
		return nil
	}
	slices.SortFunc(res, compareGR)
	return &IncompleteError{Resources: res}
}

// joinIncomplete joins the *IncompleteErrors (or nils) of the coverage checks made before
// and after a query read the graph: an answer is complete only if what it depends on was
// cached completely before it was read (a sync that completes meanwhile may have handed the
// graph, after the read, objects the answer missed), and still is.
func joinIncomplete(before, after error) error {
	var res []schema.GroupResource
	for _, err := range []error{before, after} {
		if inc, ok := err.(*IncompleteError); ok {
			for _, gr := range inc.Resources {
				if !slices.Contains(res, gr) {
					res = append(res, gr)
				}
			}
		}
	}
	if len(res) == 0 {
		return nil
	}
	slices.SortFunc(res, compareGR)
	return &IncompleteError{Resources: res}
}

// Stats counts what the graph holds; nothing for a zero or nil Graph.
func (g *Graph) Stats() Stats {
	if !g.valid() {
		return Stats{}
	}
	g.g.mu.RLock()
	defer g.g.mu.RUnlock()
	n := 0
	for _, set := range g.g.objs {
		n += len(set)
	}
	return Stats{Objects: n, Edges: g.g.edges, SelectorEdges: g.g.selEdges, Selectors: g.g.nSelectors,
		Missing: len(g.g.missing), Unresolved: g.g.nPending, Events: g.g.events, Truncated: g.g.truncated}
}
