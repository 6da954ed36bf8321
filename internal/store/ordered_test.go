package store

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/query"
)

// Pages read in order from the trees and pages selected from the driver's matches both agree
// with the model, in every order, namespaced or not, and the planner takes the ordered walk
// for broad match sets and the driver's walk for narrow ones.
func TestOrderedWalkAgreesWithModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	s := New(Options{})
	require.NoError(t, s.AddIndex("size", field("size")))
	require.NoError(t, s.AddIndex("node", field("node")))
	for i := range 1200 {
		var size any
		switch rng.IntN(6) {
		case 0: // no value: sorts last
		case 1:
			size = []any{int64(rng.IntN(50)), int64(rng.IntN(50))}
		case 2:
			size = fmt.Sprint("s", rng.IntN(30))
		default:
			size = int64(rng.IntN(80) - 20)
		}
		node := "common"
		if i%97 == 0 {
			node = "rare"
		} else if i%3 == 0 {
			node = "third"
		}
		ns := []string{"a", "bb", "a-b", "c"}[i%4]
		require.NoError(t, s.Add(obj(ns, fmt.Sprintf("o%04d", rng.IntN(5000)), size, node, nil)))
	}
	conds := map[string]struct {
		c       []query.Condition
		ordered bool // the walk the planner should take for a page of 10 over all namespaces
	}{
		"all":    {[]query.Condition{query.Has("node")}, true},
		"common": {[]query.Condition{query.Eq("node", "common")}, true},
		"rare":   {[]query.Condition{query.Eq("node", "rare")}, false},
		"and":    {[]query.Condition{query.Has("size"), query.NotEq("node", "third")}, true},
	}
	for cname, cond := range conds {
		for _, ns := range []string{"", "a-b"} {
			for _, o := range []struct {
				sortBy string
				desc   bool
			}{{"", false}, {"size", false}, {"size", true}} {
				for _, limit := range []int{1, 10, 333} {
					name := fmt.Sprintf("%s/ns=%q/sort=%q/desc=%v/limit=%d", cname, ns, o.sortBy, o.desc, limit)
					t.Run(name, func(t *testing.T) {
						q := query.Query{Namespace: ns, Conditions: cond.c, SortBy: o.sortBy, Descending: o.desc, Limit: limit}
						var want []string
						for _, k := range s.ListKeys() {
							if ns != "" && NamespaceOf(k) != ns {
								continue
							}
							ob, _, _ := s.GetByKey(k)
							if modelMatches(ob, cond.c) {
								want = append(want, k)
							}
						}
						want = modelOrder(s, want, o.sortBy, o.desc)
						var got []string
						for page := 0; ; page++ {
							require.Less(t, page, 2000)
							items, next, plan, err := s.Query(ctx, q, QueryOptions{})
							require.NoError(t, err)
							require.LessOrEqual(t, len(items), limit)
							if page == 0 && ns == "" && limit == 10 {
								assert.Equal(t, cond.ordered, strings.HasPrefix(plan.Driver, "order("), plan.Driver)
							}
							got = append(got, keys(items)...)
							if next == "" {
								break
							}
							q.Continue = next
						}
						if want == nil {
							want = []string{}
						}
						if got == nil {
							got = []string{}
						}
						assert.Equal(t, want, got)
					})
				}
			}
		}
	}
}

// modelMatches checks the conditions used above on an object, without the store.
func modelMatches(ob any, conds []query.Condition) bool {
	for _, c := range conds {
		values, _ := field(c.Index)(ob)
		switch c.Op {
		case query.Exists:
			if len(values) == 0 {
				return false
			}
		case query.Equal:
			if !containsString(values, c.Values[0]) {
				return false
			}
		case query.NotEqual:
			if containsString(values, c.Values[0]) {
				return false
			}
		default:
			panic(c.Op)
		}
	}
	return true
}

func containsString(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
