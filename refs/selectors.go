package refs

import (
	"k8s.io/apimachinery/pkg/labels"
)

// Selector edges: the labels the graph keeps of selector targets, the selectors objects
// hold (selInst), and the links between them, updated when either side changes.

// labelsEqual reports whether two label maps hold the same pairs.
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
			if now := si.selects(e, set); now != had {
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

// selects reports whether si selects e, whose labels are set: never its own object (a
// ClusterRole whose aggregation rule matches its own labels does not aggregate itself, as
// the aggregation controller skips it).
func (si *selInst) selects(e *entry, set labels.Set) bool {
	return e != si.owner && si.matches(set)
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
			if si.selects(e, labels.Set(e.labels)) {
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
