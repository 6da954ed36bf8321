package refs

import (
	"slices"
	"strings"
)

// AliasesIn returns the other names the graph keeps for resources of group: for tests of
// the refs_test package, which run against the API server.
func AliasesIn(g *Graph, group string) []string {
	g.g.mu.RLock()
	defer g.g.mu.RUnlock()
	var out []string
	for k := range g.g.aliases {
		if strings.HasSuffix(k, "."+group) {
			out = append(out, k)
		}
	}
	return out
}

// RecordsIn returns the resources of group the graph keeps a record of, sorted: for tests
// of the refs_test package.
func RecordsIn(g *Graph, group string) []string {
	g.g.mu.RLock()
	defer g.g.mu.RUnlock()
	var out []string
	for gr := range g.g.byGR {
		if gr.Group == group {
			out = append(out, gr.Resource)
		}
	}
	slices.Sort(out)
	return out
}

// sizes counts what the graph keeps per resource, and its entries: records (by resource,
// and the slots they occupy), kinds, other names, the maps of objects, labels and selectors
// per resource, and the lookups references wait on.
func (g *graph) sizes() map[string]int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	live := 0
	for _, info := range g.res {
		if info != nil {
			live++
		}
	}
	return map[string]int{
		"records": len(g.byGR), "slots": live, "kinds": len(g.byKind), "aliases": len(g.aliases),
		"objs": len(g.objs), "labelIdx": len(g.labelIdx), "selectors": len(g.selectors),
		"pending": len(g.pending), "entries": len(g.entries), "missing": len(g.missing),
	}
}
