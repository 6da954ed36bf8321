package refs

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// TestRefSetMatchesAModel adds and removes refs at random, in numbers that cross smallRefs
// both ways (a Secret used by a few objects, then by many, then by few again), and checks
// every answer of the set against a map.
func TestRefSetMatchesAModel(t *testing.T) {
	entries := make([]*entry, smallRefs+8)
	for i := range entries {
		entries[i] = &entry{}
	}
	rules := []*crule{{id: 1}}
	pick := func(r *rand.Rand) ref {
		x := ref{from: entries[r.IntN(len(entries))], rule: rules[r.IntN(len(rules))], opt: r.IntN(2) == 0}
		if r.IntN(8) == 0 {
			x.uid = types.UID("u")
		}
		return x
	}
	r := rand.New(rand.NewPCG(5, 8))
	var s refSet
	model := map[ref]struct{}{}
	crossedUp, crossedDown := false, false
	for step := range 20000 {
		// Phases of mostly adds and mostly removes, so the size sweeps across smallRefs.
		adding := (step/500)%2 == 0
		x := pick(r)
		if r.IntN(4) == 0 {
			adding = !adding
		}
		if !adding && len(model) > 0 && r.IntN(5) != 0 {
			k := r.IntN(len(model)) // mostly refs that are there
			for m := range model {
				if k--; k < 0 {
					x = m
					break
				}
			}
		}
		if adding {
			_, had := model[x]
			require.Equal(t, !had, s.add(x), "add at step %d", step)
			model[x] = struct{}{}
		} else {
			_, had := model[x]
			require.Equal(t, had, s.remove(x), "remove at step %d", step)
			delete(model, x)
		}
		require.Equal(t, len(model), s.len(), "len at step %d", step)
		if s.big != nil {
			crossedUp = true
		} else if crossedUp {
			crossedDown = true // emptied: a map no more
		}
		if step%50 == 0 {
			seen := map[ref]struct{}{}
			s.each(func(x ref) bool {
				_, dup := seen[x]
				require.False(t, dup, "each visits %v twice", x)
				seen[x] = struct{}{}
				return true
			})
			require.Equal(t, model, seen, "each at step %d", step)
			if len(model) > 1 {
				n := 0
				s.each(func(ref) bool { n++; return false })
				require.Equal(t, 1, n, "each stops when fn returns false")
			}
		}
	}
	require.True(t, crossedUp, "the set grew past smallRefs")
	require.True(t, crossedDown, "and was emptied, back to a slice")
}
