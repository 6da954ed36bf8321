package refs

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// resID numbers the resources the graph knows, so that keys are small.
type resID int32

// noRes is the resource of a reference that names a kind not resolved yet.
const noRes resID = -1

// resRules is what the graph reads from the objects of one resource: the rules evaluated
// on them, and whether their labels are kept. It follows from the rules and the resource's
// name alone, so that a handler computes it once (rulesOf) and holds it, not the resource's
// record, which goes when the resource does (release).
type resRules struct {
	gr    schema.GroupResource
	rules []*crule // immutable: read without the lock
	// selTarget: some selector rule selects this resource's objects; their labels are kept.
	selTarget bool
}

// resInfo is the record of one resource: its rules and what discovery says of it. A
// resource has a record while it is served, a rule names it as a target, or the graph holds
// an entry of its objects; the record of one that is none of these is released, and made
// anew (with another id, maybe a released one's) if it comes back.
type resInfo struct {
	*resRules
	id resID
	// pinned: a rule's target (To); the rule holds its id (toID), so it is never released.
	pinned bool

	// Under graph.mu:
	kind       string
	namespaced bool
	known      bool // kind and scope come from discovery
	// aliases are the keys of graph.aliases discovery last gave this resource (its kind,
	// singular and short names); entries counts the graph's entries of its objects. A
	// resource no longer served keeps its record and aliases while it has entries (a query
	// may still name it by another name), and loses them with its last entry.
	aliases []string
	entries int
}

// key identifies an object.
type key struct {
	res      resID
	ns, name string
}

// entry is one object: present (seen added and not deleted) or only referenced. An entry
// that is neither is dropped.
type entry struct {
	key     key
	present bool
	uid     types.UID
	labels  map[string]string // selector targets only
	out     []outEdge         // computed from the object's own fields at each event
	sels    []*selInst        // the object's selectors, one per selector rule
	in      refSet            // the edges to this object
	missing bool              // in graph.missing
	cut     bool              // a rule's evaluation failed on the object (Stats.Truncated)
}

// outEdge is an edge from an entry's own fields: to a target entry, or pending when the
// target's kind or scope is not known yet (or void while it names nothing: voidOf).
type outEdge struct {
	rule *crule
	to   *entry
	uid  types.UID
	pend *pending
	// vns is the namespace the value named ("" if none), kept so that the edge can be
	// resolved again when its target's scope changes (see reresolve).
	vns string
	// opt: the reference is optional (its rule's OptionalField); a pending edge's raw
	// reference leaves it out (pendingOf).
	opt bool
	// vopt: the values that named vns are all optional: opt before dedupeOut folded in
	// values that named other namespaces, which the edge's shadows keep (see reresolve).
	vopt bool
}

// pending is an unresolved reference and the catalog lookup that would resolve it.
type pending struct {
	raw rawTarget
	key string
	// void: the reference names nothing while its target's resource is namespaced (voidOf).
	void bool
}

// selInst is one selector of an object and the objects it selects.
type selInst struct {
	spec    selSpec
	owner   *entry
	target  resID
	ns      string // the owner's namespace; "" selects in every namespace
	matched map[*entry]struct{}
}

// nsLabels indexes the present objects of a selected resource in one namespace by label.
type nsLabels struct {
	all map[*entry]struct{}
	kv  map[string]map[*entry]struct{} // "key=value"
}

// graph is the reference graph: objects, their edges both ways, selectors, and what is
// missing. It is fed events (apply, remove) and answers queries; every method takes mu.
type graph struct {
	mu sync.RWMutex

	rules []*crule
	// res holds the records by id; a released record leaves a nil slot, its id in free
	// for the next record interned, so that CRD churn does not grow it.
	res    []*resInfo
	free   []resID
	byGR   map[schema.GroupResource]*resInfo
	byKind map[schema.GroupKind]*resInfo
	// aliases maps the other names of served resources (kind, singular, short names), in
	// lower case, dot group, to the resource, for the errors of queries that use them; and
	// those of resources no longer served while the graph holds entries of their objects.
	aliases map[string]schema.GroupResource

	entries map[key]*entry
	// shadows holds, per entry, the edges its fields name that dedupeOut folded into an
	// equal edge of e.out (same rule, target and UID) although their values named another
	// namespace: a cluster-scoped target named with two namespaces. They are no edges of
	// the graph, only what re-resolving needs should the target's resource become
	// namespaced (reresolve). Rare: no entry for most objects.
	shadows map[*entry][]outEdge
	objs    map[resID]map[*entry]struct{} // present entries per resource
	missing map[*entry]struct{}           // referenced, and absent or of another UID
	pending map[string]map[*entry]int     // catalog lookup -> sources with pending edges

	selectors map[resID]map[string]map[*selInst]struct{} // target resource, namespace
	labelIdx  map[resID]map[string]*nsLabels

	edges, selEdges, nSelectors, nPending int
	truncated                             int // entries whose reading was cut
	events                                int64
}

func newGraph(rules []*crule) *graph {
	g := &graph{
		rules: rules, byGR: map[schema.GroupResource]*resInfo{}, byKind: map[schema.GroupKind]*resInfo{},
		aliases: map[string]schema.GroupResource{},
		entries: map[key]*entry{}, shadows: map[*entry][]outEdge{}, objs: map[resID]map[*entry]struct{}{}, missing: map[*entry]struct{}{},
		pending: map[string]map[*entry]int{}, selectors: map[resID]map[string]map[*selInst]struct{}{},
		labelIdx: map[resID]map[string]*nsLabels{},
	}
	for _, r := range rules {
		if r.To.Resource != "" {
			info := g.intern(r.To)
			info.pinned = true
			r.toID = info.id
		} else {
			r.toID = noRes
		}
	}
	return g
}

// intern returns the resource's record, creating it (with its rules) if it has none. mu is
// held or the graph is not shared yet.
func (g *graph) intern(gr schema.GroupResource) *resInfo {
	if info, ok := g.byGR[gr]; ok {
		return info
	}
	info := &resInfo{resRules: g.rulesOf(gr)}
	if n := len(g.free); n > 0 {
		info.id, g.free = g.free[n-1], g.free[:n-1]
		g.res[info.id] = info
	} else {
		info.id = resID(len(g.res))
		g.res = append(g.res, info)
	}
	g.byGR[gr] = info
	return info
}

// rulesOf returns what the graph reads from gr's objects, for a handler. It takes no lock
// (the rules are immutable) and makes no record: the first object applied does.
func (g *graph) rulesOf(gr schema.GroupResource) *resRules {
	rs := &resRules{gr: gr}
	for _, r := range g.rules {
		if r.From == gr || r.From == AnyResource {
			rs.rules = append(rs.rules, r)
		}
		if r.kind == kindSelector && r.To == gr {
			rs.selTarget = true
		}
	}
	return rs
}

// named reports whether a rule names gr (as its source or its target): a query may name
// such a resource before it is served, and after. "*" (AnyResource) names no resource. mu
// is held.
func (g *graph) named(gr schema.GroupResource) bool {
	if gr == AnyResource {
		return false
	}
	for _, r := range g.rules {
		if r.From == gr || r.To == gr {
			return true
		}
	}
	return false
}

// learn records what discovery says of a resource (its kind and scope, and the other names
// it has: singular, short names) and resolves the references that waited for it.
func (g *graph) learn(gr schema.GroupResource, kind string, namespaced bool, names ...string) *resInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	info := g.intern(gr)
	var aliases []string
	for _, n := range append(names, kind) {
		if n = strings.ToLower(n); n != "" && n != gr.Resource {
			k := resourceName(schema.GroupResource{Group: gr.Group, Resource: n})
			g.aliases[k] = gr
			if !slices.Contains(aliases, k) {
				aliases = append(aliases, k)
			}
		}
	}
	for _, k := range info.aliases {
		if !slices.Contains(aliases, k) { // a name it no longer has
			g.releaseAlias(k, info)
		}
	}
	info.aliases = aliases
	if info.known && info.kind == kind && info.namespaced == namespaced {
		return info
	}
	oldKind := info.kind
	if oldKind != kind {
		g.unmapKind(info)
	}
	info.known, info.kind, info.namespaced = true, kind, namespaced
	if kind != "" {
		gk := schema.GroupKind{Group: gr.Group, Kind: kind}
		if cur, ok := g.byKind[gk]; !ok || !cur.known || cur == info {
			g.byKind[gk] = info
		}
	}
	// Edges resolved before (with another scope, or by a kind info no longer has) move to
	// where the server would look now; so do references to the kind resolved to a resource
	// no longer served that had it. Then the references that waited for info resolve.
	g.reresolve(info, oldKind, false)
	if g.byKind[schema.GroupKind{Group: gr.Group, Kind: kind}] == info {
		for _, other := range g.res { // reresolve may release a record: its slot turns nil
			if other != nil && other != info && !other.known && other.kind == kind && other.gr.Group == gr.Group {
				g.reresolve(other, kind, true)
			}
		}
	}
	if kind != "" {
		g.retry(kindKey(gr.Group, kind))
	}
	g.retry(resKey(info.id))
	g.rescope(info)
	return info
}

// unmapKind removes info's kind from the kinds resolved to resources, if it holds it, and
// gives the kind to another served resource that has it, if any (a CRD renamed: the new
// plural was served before the old one went); it reports whether it did.
func (g *graph) unmapKind(info *resInfo) (remapped bool) {
	gk := schema.GroupKind{Group: info.gr.Group, Kind: info.kind}
	if info.kind == "" || g.byKind[gk] != info {
		return false
	}
	delete(g.byKind, gk)
	for _, other := range g.res {
		if other != nil && other != info && other.known && other.gr.Group == info.gr.Group && other.kind == info.kind {
			g.byKind[gk] = other
			return true
		}
	}
	return false
}

// rescope moves the selectors that select info's objects to where info's scope, now known
// or changed, says they select: a selector made before discovery described the resource
// selected in its owner's namespace only, and kept doing so, its text unchanged, after the
// resource was found cluster-scoped.
func (g *graph) rescope(info *resInfo) {
	var stale []*selInst
	for ns, set := range g.selectors[info.id] {
		for si := range set {
			if ns != g.selectorNS(si.owner, info) {
				stale = append(stale, si)
			}
		}
	}
	for _, si := range stale {
		owner := si.owner
		g.dropSel(si)
		moved := g.addSel(owner, si.spec)
		for i, x := range owner.sels {
			if x == si {
				owner.sels[i] = moved
			}
		}
	}
}

// selectorNS is the namespace a selector of owner selects target's objects in: the owner's,
// or every namespace ("") for a cluster-scoped target.
func (g *graph) selectorNS(owner *entry, target *resInfo) string {
	if target.known && !target.namespaced {
		return ""
	}
	return owner.key.ns
}

// forget records that discovery no longer serves a resource: references made from now on
// do not resolve to it (Unknown, kind or scope not known); edges already resolved stay, their
// targets Unknown while the resource is not watched, so that Referrers still finds what
// names its objects. learn moves them when the resource is served again with another scope
// or kind, or when another resource serves its kind. A resource of which the graph holds no
// entry is released at once; one that has entries, with its last (recheck).
func (g *graph) forget(gr schema.GroupResource) {
	g.mu.Lock()
	defer g.mu.Unlock()
	info := g.byGR[gr]
	if info == nil || !info.known {
		return
	}
	remapped := g.unmapKind(info)
	info.known = false
	if remapped { // references by its kind follow the kind
		g.reresolve(info, info.kind, true)
	}
	if info.entries == 0 {
		g.release(info)
	}
}

// release lets go of info, a resource no longer served of which the graph holds no entry:
// its other names, and unless a rule names it as a target, its record and what the graph
// keeps per resource (the map of its objects), its id freed for the next record interned.
// Nothing refers to the record by then: no entry is of it, edges point at entries, and
// handlers hold their resource's rules, not its record (apply interns the record again for
// an object of a resource that comes back). mu is held.
func (g *graph) release(info *resInfo) {
	for _, k := range info.aliases {
		g.releaseAlias(k, info)
	}
	info.aliases = nil
	if info.pinned || info.known || info.entries > 0 || g.byGR[info.gr] != info {
		return
	}
	if len(g.pending[resKey(info.id)]) > 0 { // references wait for its scope (none do: only a rule's target's)
		return
	}
	if gk := (schema.GroupKind{Group: info.gr.Group, Kind: info.kind}); g.byKind[gk] == info {
		delete(g.byKind, gk) // forget unmapped it already
	}
	delete(g.byGR, info.gr)
	delete(g.objs, info.id)
	delete(g.labelIdx, info.id)
	delete(g.selectors, info.id)
	g.res[info.id] = nil
	g.free = append(g.free, info.id)
}

// releaseAlias removes the alias k of info, if it names info: to another resource that has
// it and is served or has entries, if any (the kind of a CRD renamed), else altogether. It
// costs a look at every resource, on discovery changes only. mu is held.
func (g *graph) releaseAlias(k string, info *resInfo) {
	if g.aliases[k] != info.gr {
		return
	}
	delete(g.aliases, k)
	for _, other := range g.res {
		if other != nil && other != info && (other.known || other.entries > 0) && slices.Contains(other.aliases, k) {
			g.aliases[k] = other.gr
			return
		}
	}
}

// aliasOf returns the served resource whose kind, singular or short name gr's resource is
// (compared in lower case), if any.
func (g *graph) aliasOf(gr schema.GroupResource) (schema.GroupResource, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.aliasLocked(gr)
}

// aliasLocked is aliasOf with g.mu held.
func (g *graph) aliasLocked(gr schema.GroupResource) (schema.GroupResource, bool) {
	alt, ok := g.aliases[resourceName(lowerGR(gr))]
	return alt, ok
}

func lowerGR(gr schema.GroupResource) schema.GroupResource {
	return schema.GroupResource{Group: strings.ToLower(gr.Group), Resource: strings.ToLower(gr.Resource)}
}

func kindKey(group, kind string) string { return "k:" + group + "/" + kind }
func resKey(id resID) string            { return "r:" + strconv.Itoa(int(id)) }

// retry resolves again the pending edges waiting for lookup.
func (g *graph) retry(lookup string) {
	srcs := g.pending[lookup]
	if len(srcs) == 0 {
		return
	}
	list := make([]*entry, 0, len(srcs))
	for e := range srcs {
		list = append(list, e)
	}
	for _, e := range list {
		out := make([]outEdge, 0, len(e.out))
		for _, o := range e.out {
			if o.pend == nil {
				out = append(out, o)
				continue
			}
			out = append(out, g.resolve(pendingRaw(o), e.key.ns))
		}
		g.replaceOut(e, append(out, g.shadows[e]...))
	}
}
