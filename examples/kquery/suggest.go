package main

import (
	"slices"
	"strings"

	"github.com/kindex/kindex/discovery"
)

// suggest returns up to max resources whose names are close to what the user typed: the
// first dotted part of input is a prefix of, or within two edits of, a plural, singular,
// short name or kind. It is a hint for "unknown resource" errors, nothing more.
func suggest(input string, all []discovery.Resource, max int) []string {
	word := strings.ToLower(input)
	if i := strings.IndexAny(word, "./"); i >= 0 {
		word = word[:i]
	}
	if word == "" {
		return nil
	}
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, r := range all {
		best := -1
		names := append([]string{r.GVR.Resource, r.Singular, strings.ToLower(r.GVK.Kind)}, r.ShortNames...)
		for _, n := range names {
			if n == "" {
				continue
			}
			d := editDistance(word, n)
			if len(word) >= 3 && strings.HasPrefix(n, word) {
				d = min(d, 1)
			}
			if d <= 2 && (best < 0 || d < best) {
				best = d
			}
		}
		if best >= 0 {
			cands = append(cands, cand{qualified(r), best})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cands {
		if !slices.Contains(out, c.name) && len(out) < max {
			out = append(out, c.name)
		}
	}
	return out
}

// qualified is the unambiguous name of a resource: "pods", "deployments.apps".
func qualified(r discovery.Resource) string {
	if r.GVR.Group == "" {
		return r.GVR.Resource
	}
	return r.GVR.Resource + "." + r.GVR.Group
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
