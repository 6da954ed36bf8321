package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

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
		team := map[string]string{"team": []string{"x", "y"}[rng.IntN(2)]}
		require.NoError(t, s.Add(obj(ns, fmt.Sprintf("o%04d", rng.IntN(5000)), size, node, team)))
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
				for _, limit := range []int{0, 10, 333} {
					for _, team := range []bool{false, true} {
						name := fmt.Sprintf("%s/ns=%q/sort=%q/desc=%v/limit=%d/team=%v", cname, ns, o.sortBy, o.desc, limit, team)
						t.Run(name, func(t *testing.T) {
							q := query.Query{Namespace: ns, Conditions: cond.c, SortBy: o.sortBy, Descending: o.desc, Limit: limit}
							opts := QueryOptions{}
							if team {
								// A label selector is checked after the walk: the match set is
								// collected whole, and paged from it.
								q.Labels = labels.SelectorFromSet(labels.Set{"team": "x"})
								opts.Labels = func(o any) map[string]string { return o.(*unstructured.Unstructured).GetLabels() }
							}
							var want []string
							for _, k := range s.ListKeys() {
								if ns != "" && NamespaceOf(k) != ns {
									continue
								}
								ob, _, _ := s.GetByKey(k)
								if modelMatches(ob, cond.c) && (!team || ob.(*unstructured.Unstructured).GetLabels()["team"] == "x") {
									want = append(want, k)
								}
							}
							want = modelOrder(s, want, o.sortBy, o.desc)
							var got []string
							for page := 0; ; page++ {
								require.Less(t, page, 2000)
								items, next, plan, err := s.Query(ctx, q, opts)
								require.NoError(t, err)
								if limit > 0 {
									require.LessOrEqual(t, len(items), limit)
								}
								if page == 0 && ns == "" && limit == 10 && !team {
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

// A key list keeps its records in (namespace, name) order through every shape (inline, sorted
// slice, B-tree) while records come and go, and so does a value split by namespace.
func TestKeyListsStayOrdered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var kl keyList
	e := &valueEntry{}
	model := map[string]*record{}
	recs := map[string]*record{}
	for step := range 4000 {
		ns := []string{"a", "a-b", "bb", "z"}[rng.IntN(4)]
		key := fmt.Sprintf("%s/o%d", ns, rng.IntN(120))
		rec := recs[key]
		if rec == nil {
			rec = newRecord(key, nil)
			recs[key] = rec
		}
		if _, in := model[key]; in && rng.IntN(2) == 0 {
			require.True(t, kl.remove(rec))
			require.True(t, e.remove(rec, ns))
			delete(model, key)
		} else {
			assert.Equal(t, !in, kl.add(rec))
			assert.Equal(t, !in, e.insert(rec, ns))
			model[key] = rec
		}
		if step%97 != 0 {
			continue
		}
		want := make([]string, 0, len(model))
		for k := range model {
			want = append(want, k)
		}
		slices.SortFunc(want, compareKeys)
		var got, gotE []string
		kl.each(func(r *record) bool { got = append(got, r.key); return true })
		e.each("", true, func(r *record) { gotE = append(gotE, r.key) })
		if len(want) == 0 {
			want = nil
		}
		require.Equal(t, want, got, "key list at step %d", step)
		require.Equal(t, want, gotE, "value entry at step %d", step)
		require.Equal(t, len(model), kl.n)
		var inA []string
		e.each("a-b", false, func(r *record) { inA = append(inA, r.key) })
		var wantA []string
		for _, k := range want {
			if NamespaceOf(k) == "a-b" {
				wantA = append(wantA, k)
			}
		}
		require.Equal(t, wantA, inA)
		require.Equal(t, len(wantA), e.count("a-b", false))
	}
}
