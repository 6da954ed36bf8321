package refs

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
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
// target's kind or scope is not known yet.
type outEdge struct {
	rule *crule
	to   *entry
	uid  types.UID
	pend *pending
	// vns is the namespace the value named ("" if none), kept so that the edge can be
	// resolved again when its target's scope changes (see reresolve).
	vns string
}

// pending is an unresolved reference and the catalog lookup that would resolve it.
type pending struct {
	raw rawTarget
	key string
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
// such a resource before it is served, and after. mu is held.
func (g *graph) named(gr schema.GroupResource) bool {
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
			if r, ok := g.resolve(o.pend.raw, e.key.ns); ok {
				out = append(out, r)
			}
		}
		g.replaceOut(e, append(out, g.shadows[e]...))
	}
}

// resolve turns a raw reference into an edge: to an entry, or pending. false: the
// reference is invalid (a namespaced target named by a cluster-scoped object with no
// namespace).
func (g *graph) resolve(t rawTarget, srcNS string) (outEdge, bool) {
	var info *resInfo
	if t.res == noRes {
		info = g.byKind[schema.GroupKind{Group: t.group, Kind: t.kind}]
		if info == nil {
			return outEdge{rule: t.rule, pend: &pending{raw: t, key: kindKey(t.group, t.kind)}}, true
		}
	} else {
		info = g.res[t.res]
	}
	ns := ""
	switch {
	case info.known && !info.namespaced:
	case !info.known && t.rule.Namespace == NamespaceAuto:
		// The value may name a namespace, but the target's scope decides whether it counts:
		// resolved now, a cluster-scoped target would be looked for in that namespace, and
		// stay missing after discovery described it.
		return outEdge{rule: t.rule, pend: &pending{raw: t, key: resKey(info.id)}}, true
	case t.ns != "":
		ns = t.ns
	case t.rule.Namespace == NamespaceCluster:
	default: // NamespaceSame, or NamespaceAuto on a resource known to be namespaced
		if srcNS == "" {
			return outEdge{}, false
		}
		ns = srcNS
	}
	to := g.getOrCreate(key{info.id, ns, t.name})
	vns := t.ns
	if vns != "" && vns == to.key.ns {
		vns = to.key.ns // the key's copy: no string of its own
	}
	return outEdge{rule: t.rule, to: to, uid: t.uid, vns: vns}, true
}

// rawOf returns the reference an edge to an object of info was resolved from; kind is the
// kind info had when it was resolved (the reference named that kind if its rule names kinds).
func rawOf(o outEdge, info *resInfo, kind string) rawTarget {
	t := rawTarget{rule: o.rule, res: o.rule.toID, ns: o.vns, name: o.to.key.name, uid: o.uid}
	if t.res == noRes {
		t.group, t.kind = info.gr.Group, kind
	}
	return t
}

// reresolve resolves again the field edges to objects of info (with onlyByKind, those of
// rules that name kinds), as if their sources had just been read: info's scope or kind
// changed (a CRD deleted and created again cluster-scoped, or with another kind), or its
// kind is now served by another resource, so that an edge resolved before points where the
// server would no longer look. kind is the kind info had when the edges were resolved. It
// costs the edges to info's objects, once per such change.
func (g *graph) reresolve(info *resInfo, kind string, onlyByKind bool) {
	var srcs []*entry
	seen := map[*entry]bool{}
	visit := func(e *entry) {
		e.in.each(func(r ref) bool {
			if r.rule.kind != kindSelector && !seen[r.from] {
				seen[r.from] = true
				srcs = append(srcs, r.from)
			}
			return true
		})
	}
	for e := range g.objs[info.id] {
		visit(e)
	}
	for e := range g.missing {
		if e.key.res == info.id && !e.present {
			visit(e)
		}
	}
	for _, src := range srcs {
		shadows := g.shadows[src]
		out := make([]outEdge, 0, len(src.out)+len(shadows))
		for _, list := range [][]outEdge{src.out, shadows} {
			for _, o := range list {
				if o.pend != nil || o.to.key.res != info.id || (onlyByKind && o.rule.toID != noRes) {
					out = append(out, o)
					continue
				}
				if r, ok := g.resolve(rawOf(o, info, kind), src.key.ns); ok {
					out = append(out, r)
				}
			}
		}
		g.replaceOut(src, out)
	}
}

func (g *graph) getOrCreate(k key) *entry {
	e := g.entries[k]
	if e == nil {
		e = &entry{key: k}
		g.entries[k] = e
		g.res[k.res].entries++
	}
	return e
}

func sameOut(a, b outEdge) bool {
	if a.rule != b.rule {
		return false
	}
	if a.pend != nil || b.pend != nil {
		return a.pend != nil && b.pend != nil && *a.pend == *b.pend
	}
	return a.to == b.to && a.uid == b.uid
}

// replaceOut makes out, deduplicated, e's field edges, and keeps the edges folded into
// others that named another namespace (shadows). out may be modified.
func (g *graph) replaceOut(e *entry, out []outEdge) {
	out, shadows := dedupeOut(out)
	if len(shadows) > 0 {
		g.shadows[e] = shadows
	} else if len(g.shadows) > 0 {
		delete(g.shadows, e)
	}
	g.setOut(e, out)
}

// dedupeOut drops edges that resolved to the same target twice. It returns, apart, those
// of the dropped edges whose values named a namespace that no kept edge to their target
// named (one per namespace): as edges they are the same, but resolved again after their
// target's resource becomes namespaced, they would not be.
func dedupeOut(out []outEdge) (kept, shadows []outEdge) {
	if len(out) < 2 {
		return out, nil
	}
	// shadowed adds o to shadows unless its namespace is already kept for its edge.
	shadowed := func(o outEdge, first outEdge) {
		if o.pend != nil || o.vns == first.vns {
			return
		}
		for _, s := range shadows {
			if sameOut(s, o) && s.vns == o.vns {
				return
			}
		}
		shadows = append(shadows, o)
	}
	res := out[:0]
	if len(out) > 16 {
		seen := make(map[outID]int, len(out))
		for _, o := range out {
			id := idOf(o)
			if i, ok := seen[id]; ok {
				shadowed(o, res[i])
				continue
			}
			seen[id] = len(res)
			res = append(res, o)
		}
		return res, shadows
	}
next:
	for _, o := range out {
		for _, r := range res {
			if sameOut(o, r) {
				shadowed(o, r)
				continue next
			}
		}
		res = append(res, o)
	}
	return res, shadows
}

func hasID(set map[outID]struct{}, id outID) bool {
	_, ok := set[id]
	return ok
}

// apply records the object of rs's resource described by rd (an add or an update). It makes
// the resource's record if it has none: the resource came back, or its handler's event came
// after discovery's removal had released the record. An add told that late, of an object of
// a resource that left the watched set, is followed by its deletion (the watch-all set
// delivers a tombstone for each object a leaving member held), which releases the record
// again.
func (g *graph) apply(rs *resRules, rd reading) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.events++
	info := g.intern(rs.gr)
	e := g.getOrCreate(key{info.id, rd.ns, rd.name})
	wasPresent, oldUID := e.present, e.uid
	e.present, e.uid = true, rd.uid
	if !wasPresent {
		set := g.objs[info.id]
		if set == nil {
			set = map[*entry]struct{}{}
			g.objs[info.id] = set
		}
		set[e] = struct{}{}
	}
	if info.selTarget && (!wasPresent || !labelsEqual(e.labels, rd.labels)) {
		g.relabel(e, wasPresent, rd.labels)
	}
	out := make([]outEdge, 0, len(rd.raws))
	for _, t := range rd.raws {
		if o, ok := g.resolve(t, rd.ns); ok {
			out = append(out, o)
		}
	}
	g.replaceOut(e, out)
	g.setSels(e, rd.sels)
	g.setCut(e, rd.err != nil)
	if !wasPresent || oldUID != e.uid {
		g.recheck(e)
	}
}

// remove records the deletion of an object of rs's resource. A deletion naming another UID
// than the object's (uid "" names none) is of an earlier object of that name, told late (a
// resource that left the watched set and came back): the object the graph has stays. A
// resource without a record holds no object: nothing to do, and no record is made.
func (g *graph) remove(rs *resRules, ns, name string, uid types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.events++
	info := g.byGR[rs.gr]
	if info == nil {
		return
	}
	e := g.entries[key{info.id, ns, name}]
	if e == nil || !e.present || (uid != "" && e.uid != "" && uid != e.uid) {
		return
	}
	g.replaceOut(e, nil)
	g.setSels(e, nil)
	g.setCut(e, false)
	if info.selTarget {
		g.unlabel(e)
	}
	if set := g.objs[info.id]; len(set) > 1 {
		delete(set, e)
	} else { // the last: no empty map per resource
		delete(g.objs, info.id)
	}
	e.present, e.uid = false, ""
	g.recheck(e)
}

// setCut records whether a rule's evaluation failed on e's object.
func (g *graph) setCut(e *entry, cut bool) {
	switch {
	case cut && !e.cut:
		g.truncated++
	case !cut && e.cut:
		g.truncated--
	}
	e.cut = cut
}

// setOut replaces e's field edges with out, touching only the edges that change: an
// update that changes no reference costs one comparison per edge.
func (g *graph) setOut(e *entry, out []outEdge) {
	old := e.out
	if len(old) == len(out) {
		same := true
		for i := range old {
			if !sameOut(old[i], out[i]) {
				same = false
				break
			}
		}
		if same {
			e.out = out // the same edges; the namespaces the values named may differ (vns)
			return
		}
	}
	// Add before dropping: a target that only changes the UID required of it keeps an
	// incoming edge throughout, so it is never dropped from the graph in between.
	inOld, inNew := edgeSet(old), edgeSet(out)
	for _, o := range out {
		if !has(inOld, old, o) {
			g.addOut(e, o)
		}
	}
	for _, o := range old {
		if !has(inNew, out, o) {
			g.dropOut(e, o)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	e.out = out
}

// outID identifies an edge: its rule and target, or its rule and raw reference if pending.
type outID struct {
	rule *crule
	to   *entry
	uid  types.UID
	pend pending
}

func idOf(o outEdge) outID {
	if o.pend != nil {
		return outID{rule: o.rule, pend: *o.pend}
	}
	return outID{rule: o.rule, to: o.to, uid: o.uid}
}

// edgeSet indexes a long edge list; short ones are searched directly.
func edgeSet(list []outEdge) map[outID]struct{} {
	if len(list) <= 16 {
		return nil
	}
	set := make(map[outID]struct{}, len(list))
	for _, o := range list {
		set[idOf(o)] = struct{}{}
	}
	return set
}

func has(set map[outID]struct{}, list []outEdge, x outEdge) bool {
	if set != nil {
		_, ok := set[idOf(x)]
		return ok
	}
	for _, o := range list {
		if sameOut(o, x) {
			return true
		}
	}
	return false
}

func (g *graph) addOut(e *entry, o outEdge) {
	if o.pend != nil {
		srcs := g.pending[o.pend.key]
		if srcs == nil {
			srcs = map[*entry]int{}
			g.pending[o.pend.key] = srcs
		}
		srcs[e]++
		g.nPending++
		return
	}
	g.edges++
	g.addRef(o.to, ref{from: e, rule: o.rule, uid: o.uid})
}

func (g *graph) dropOut(e *entry, o outEdge) {
	if o.pend != nil {
		if srcs := g.pending[o.pend.key]; srcs != nil {
			if srcs[e]--; srcs[e] <= 0 {
				delete(srcs, e)
				if len(srcs) == 0 {
					delete(g.pending, o.pend.key)
				}
			}
		}
		g.nPending--
		return
	}
	g.edges--
	g.dropRef(o.to, ref{from: e, rule: o.rule, uid: o.uid})
}

func (g *graph) addRef(to *entry, r ref) {
	if !to.in.add(r) {
		return
	}
	if !to.present || (r.uid != "" && r.uid != to.uid) {
		g.setMissing(to, true)
	}
}

func (g *graph) dropRef(to *entry, r ref) {
	if !to.in.remove(r) {
		return
	}
	if to.missing || !to.present {
		g.recheck(to)
	}
}

// recheck recomputes whether e is missing, and drops it if it is neither present nor
// referenced. It reads every incoming edge of a present entry: called when an entry
// appears or changes UID, or loses an edge while missing.
func (g *graph) recheck(e *entry) {
	if !e.present {
		if e.in.len() == 0 {
			g.setMissing(e, false)
			if len(e.out) == 0 && len(e.sels) == 0 && g.entries[e.key] == e {
				delete(g.entries, e.key)
				info := g.res[e.key.res]
				if info.entries--; info.entries == 0 && !info.known {
					g.release(info)
				}
			}
			return
		}
		g.setMissing(e, true)
		return
	}
	stale := false
	if e.missing || e.in.len() > 0 {
		e.in.each(func(r ref) bool {
			stale = r.uid != "" && r.uid != e.uid
			return !stale
		})
	}
	g.setMissing(e, stale)
}

func (g *graph) setMissing(e *entry, missing bool) {
	if e.missing == missing {
		return
	}
	e.missing = missing
	if missing {
		g.missing[e] = struct{}{}
	} else {
		delete(g.missing, e)
	}
}

func labelsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// relabel gives a present object of a selected resource its new labels: it moves the
// object in the label index and re-evaluates, against the new labels, every selector that
// selects the object's resource in its namespace (and in every namespace). That costs one
// match per such selector: O(selectors of the namespace), never a scan of the objects.
func (g *graph) relabel(e *entry, wasPresent bool, lbls map[string]string) {
	if wasPresent {
		g.unindex(e)
	}
	e.labels = lbls
	g.index(e)
	set := labels.Set(lbls)
	visit := func(sels map[*selInst]struct{}) {
		for si := range sels {
			_, had := si.matched[e]
			if now := si.matches(set); now != had {
				if now {
					g.link(si, e)
				} else {
					g.unlink(si, e)
				}
			}
		}
	}
	byNS := g.selectors[e.key.res]
	visit(byNS[e.key.ns])
	if e.key.ns != "" {
		visit(byNS[""])
	}
}

// unlabel removes a deleted object from the label index and from every selector's matches.
func (g *graph) unlabel(e *entry) {
	g.unindex(e)
	for _, r := range e.in.list() {
		if r.rule.kind != kindSelector {
			continue
		}
		for _, si := range r.from.sels {
			if si.spec.rule == r.rule {
				g.unlink(si, e)
			}
		}
	}
	e.labels = nil
}

func (g *graph) index(e *entry) {
	byNS := g.labelIdx[e.key.res]
	if byNS == nil {
		byNS = map[string]*nsLabels{}
		g.labelIdx[e.key.res] = byNS
	}
	nl := byNS[e.key.ns]
	if nl == nil {
		nl = &nsLabels{all: map[*entry]struct{}{}, kv: map[string]map[*entry]struct{}{}}
		byNS[e.key.ns] = nl
	}
	nl.all[e] = struct{}{}
	for k, v := range e.labels {
		kv := k + "=" + v
		set := nl.kv[kv]
		if set == nil {
			set = map[*entry]struct{}{}
			nl.kv[kv] = set
		}
		set[e] = struct{}{}
	}
}

func (g *graph) unindex(e *entry) {
	nl := g.labelIdx[e.key.res][e.key.ns]
	if nl == nil {
		return
	}
	delete(nl.all, e)
	for k, v := range e.labels {
		kv := k + "=" + v
		if set := nl.kv[kv]; set != nil {
			delete(set, e)
			if len(set) == 0 {
				delete(nl.kv, kv)
			}
		}
	}
	if len(nl.all) == 0 {
		byNS := g.labelIdx[e.key.res]
		if delete(byNS, e.key.ns); len(byNS) == 0 {
			delete(g.labelIdx, e.key.res)
		}
	}
}

func (si *selInst) matches(set labels.Set) bool {
	for _, s := range si.spec.sels {
		if s.Matches(set) {
			return true
		}
	}
	return false
}

func (g *graph) link(si *selInst, e *entry) {
	si.matched[e] = struct{}{}
	g.selEdges++
	e.in.add(ref{from: si.owner, rule: si.spec.rule})
}

func (g *graph) unlink(si *selInst, e *entry) {
	if _, ok := si.matched[e]; !ok {
		return
	}
	delete(si.matched, e)
	g.selEdges--
	e.in.remove(ref{from: si.owner, rule: si.spec.rule})
}

// setSels replaces e's selectors with specs; an unchanged selector keeps its matches.
func (g *graph) setSels(e *entry, specs []selSpec) {
	if len(e.sels) == 0 && len(specs) == 0 {
		return
	}
	keep := make([]*selInst, 0, len(specs))
	for _, si := range e.sels {
		found := false
		for _, sp := range specs {
			if sp.rule == si.spec.rule && sp.text == si.spec.text {
				found = true
				break
			}
		}
		if found {
			keep = append(keep, si)
		} else {
			g.dropSel(si)
		}
	}
next:
	for _, sp := range specs {
		for _, si := range keep {
			if si.spec.rule == sp.rule {
				continue next
			}
		}
		keep = append(keep, g.addSel(e, sp))
	}
	if len(keep) == 0 {
		keep = nil
	}
	e.sels = keep
}

func (g *graph) addSel(owner *entry, sp selSpec) *selInst {
	si := &selInst{spec: sp, owner: owner, target: sp.rule.toID, matched: map[*entry]struct{}{}}
	si.ns = g.selectorNS(owner, g.res[si.target])
	byNS := g.selectors[si.target]
	if byNS == nil {
		byNS = map[string]map[*selInst]struct{}{}
		g.selectors[si.target] = byNS
	}
	set := byNS[si.ns]
	if set == nil {
		set = map[*selInst]struct{}{}
		byNS[si.ns] = set
	}
	set[si] = struct{}{}
	g.nSelectors++
	for _, nl := range g.scopes(si) {
		for e := range g.candidates(si, nl) {
			if si.matches(labels.Set(e.labels)) {
				g.link(si, e)
			}
		}
	}
	return si
}

func (g *graph) dropSel(si *selInst) {
	for e := range si.matched {
		g.unlink(si, e)
	}
	if set := g.selectors[si.target][si.ns]; set != nil {
		delete(set, si)
		if len(set) == 0 {
			byNS := g.selectors[si.target]
			if delete(byNS, si.ns); len(byNS) == 0 {
				delete(g.selectors, si.target)
			}
		}
	}
	g.nSelectors--
}

// scopes returns the label indexes a selector looks in: its namespace's, or every
// namespace's for a cluster-scoped owner.
func (g *graph) scopes(si *selInst) []*nsLabels {
	byNS := g.labelIdx[si.target]
	if si.ns != "" {
		if nl := byNS[si.ns]; nl != nil {
			return []*nsLabels{nl}
		}
		return nil
	}
	out := make([]*nsLabels, 0, len(byNS))
	for _, nl := range byNS {
		out = append(out, nl)
	}
	return out
}

// candidates returns the objects of one namespace that may match si: for a single
// selector, the objects with the label of its most selective equality (or set)
// requirement; otherwise every object of the namespace.
func (g *graph) candidates(si *selInst, nl *nsLabels) map[*entry]struct{} {
	if len(si.spec.sels) != 1 {
		return nl.all
	}
	reqs, selectable := si.spec.sels[0].Requirements()
	if !selectable {
		return nl.all
	}
	best, bestSize := nl.all, len(nl.all)
	for _, r := range reqs {
		switch r.Operator() {
		case "=", "==", "in":
		default:
			continue
		}
		vals := r.Values().UnsortedList()
		if len(vals) == 1 {
			set := nl.kv[r.Key()+"="+vals[0]]
			if len(set) < bestSize {
				best, bestSize = set, len(set)
			}
			continue
		}
		size := 0
		for _, v := range vals {
			size += len(nl.kv[r.Key()+"="+v])
		}
		if size < bestSize {
			union := make(map[*entry]struct{}, size)
			for _, v := range vals {
				for e := range nl.kv[r.Key()+"="+v] {
					union[e] = struct{}{}
				}
			}
			best, bestSize = union, size
		}
	}
	return best
}
