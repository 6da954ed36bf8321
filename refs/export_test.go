package refs

import "strings"

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
