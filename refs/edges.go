package refs

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Edges: references resolved to entries (or pending until their target's kind is known),
// each entry's outgoing edges and the referrers they add to their targets, and the missing
// targets that make references dangling.

// resolve turns a raw reference into an edge: to an entry, or pending; or void while it
// names nothing (a namespaced target named by a cluster-scoped object with no namespace
// and no UID).
func (g *graph) resolve(t rawTarget, srcNS string) outEdge {
	var info *resInfo
	if t.res == noRes {
		info = g.byKind[schema.GroupKind{Group: t.group, Kind: t.kind}]
		if info == nil {
			return pendingOf(t, kindKey(t.group, t.kind))
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
		return pendingOf(t, resKey(info.id))
	case t.ns != "":
		ns = t.ns
	case t.rule.Namespace == NamespaceCluster:
	default: // NamespaceSame, or NamespaceAuto on a resource known to be namespaced
		if srcNS == "" && t.uid == "" {
			// It names nothing while the target's resource is namespaced; kept, it names
			// the object should the resource come back cluster-scoped.
			if t.res == noRes {
				return voidOf(t, kindKey(t.group, t.kind))
			}
			return voidOf(t, resKey(info.id))
		}
		// A cluster-scoped object naming a namespaced one without its namespace names
		// nothing; but a reference that requires a UID (an owner reference) names one
		// object, which it cannot reach: it dangles, to an entry of no namespace that no
		// object fills (the garbage collector reports it, OwnerRefInvalidNamespace).
		ns = srcNS
	}
	to := g.getOrCreate(key{info.id, ns, t.name})
	vns := t.ns
	if vns != "" && vns == to.key.ns {
		vns = to.key.ns // the key's copy: no string of its own
	}
	return outEdge{rule: t.rule, to: to, uid: t.uid, vns: vns, opt: t.opt, vopt: t.opt}
}

// pendingOf is the pending edge of t, waiting for lookup. Its raw reference leaves out
// whether t is optional, which the edge says (pendingRaw gives it back), so that the same
// reference, optional or not, is one pending reference.
func pendingOf(t rawTarget, lookup string) outEdge {
	o := outEdge{rule: t.rule, opt: t.opt, vopt: t.opt}
	t.opt = false
	o.pend = &pending{raw: t, key: lookup}
	return o
}

// voidOf is the void edge of t: a reference that names nothing while its target's resource
// is namespaced (a cluster-scoped object naming a namespaced kind with no namespace). No
// answer shows it, and nothing counts it as unresolved; it waits for lookup as a pending
// edge does, so that it resolves when the resource is described anew (a CRD deleted and
// created again cluster-scoped), as it would had the object been read then.
func voidOf(t rawTarget, lookup string) outEdge {
	o := pendingOf(t, lookup)
	o.pend.void = true
	return o
}

// pendingRaw is the raw reference pending edge o waits to resolve, optional as o is.
func pendingRaw(o outEdge) rawTarget {
	t := o.pend.raw
	t.opt = o.opt
	return t
}

// rawOf returns the reference an edge to an object of info was resolved from; kind is the
// kind info had when it was resolved (the reference named that kind if its rule names kinds).
func rawOf(o outEdge, info *resInfo, kind string) rawTarget {
	t := rawTarget{rule: o.rule, res: o.rule.toID, ns: o.vns, name: o.to.key.name, uid: o.uid, opt: o.vopt}
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
				out = append(out, g.resolve(rawOf(o, info, kind), src.key.ns))
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

// sameOut reports whether a and b are one edge (rule, target and UID, or one pending
// reference), optional or not.
func sameOut(a, b outEdge) bool {
	if a.rule != b.rule {
		return false
	}
	if a.pend != nil || b.pend != nil {
		return a.pend != nil && b.pend != nil && *a.pend == *b.pend
	}
	return a.to == b.to && a.uid == b.uid
}

// equalOut reports whether a and b are one edge, alike optional or not.
func equalOut(a, b outEdge) bool { return a.opt == b.opt && sameOut(a, b) }

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

// dedupeOut drops edges that resolved to the same target twice; the edge kept is optional
// only if every one dropped for it is. It returns, apart, those
// of the dropped edges whose values named a namespace that no kept edge to their target
// named (one per namespace): as edges they are the same, but resolved again after their
// target's resource becomes namespaced, they would not be.
func dedupeOut(out []outEdge) (kept, shadows []outEdge) {
	if len(out) < 2 {
		return out, nil
	}
	// shadowed adds o to shadows unless its namespace is already kept for its edge (then
	// first's own values are optional only if o is too).
	shadowed := func(o outEdge, first *outEdge) {
		if o.pend != nil || o.vns == first.vns {
			first.vopt = first.vopt && o.vopt
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
			id.opt = false
			if i, ok := seen[id]; ok {
				shadowed(o, &res[i])
				res[i].opt = res[i].opt && o.opt
				continue
			}
			seen[id] = len(res)
			res = append(res, o)
		}
		return res, shadows
	}
next:
	for _, o := range out {
		for i, r := range res {
			if sameOut(o, r) {
				shadowed(o, &res[i])
				res[i].opt = r.opt && o.opt
				continue next
			}
		}
		res = append(res, o)
	}
	return res, shadows
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
		out = append(out, g.resolve(t, rd.ns))
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
			if !equalOut(old[i], out[i]) {
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

// outID identifies an edge: its rule and target, or its rule and raw reference if pending,
// and whether it is optional.
type outID struct {
	rule *crule
	to   *entry
	uid  types.UID
	pend pending
	opt  bool
}

func idOf(o outEdge) outID {
	if o.pend != nil {
		return outID{rule: o.rule, pend: *o.pend, opt: o.opt}
	}
	return outID{rule: o.rule, to: o.to, uid: o.uid, opt: o.opt}
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
		if equalOut(o, x) {
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
		if !o.pend.void {
			g.nPending++
		}
		return
	}
	g.edges++
	g.addRef(o.to, ref{from: e, rule: o.rule, uid: o.uid, opt: o.opt})
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
		if !o.pend.void {
			g.nPending--
		}
		return
	}
	g.edges--
	g.dropRef(o.to, ref{from: e, rule: o.rule, uid: o.uid, opt: o.opt})
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
