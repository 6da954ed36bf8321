package informer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/query"
)

// TestAuditQueriesDuringIndexChurn runs sorted, paged queries, counts and counts by index
// while indexes are removed and registered again and objects change: every answer is either
// ErrIndexNotFound or a page in the query's order without repeats.
func TestAuditQueriesDuringIndexChurn(t *testing.T) {
	a := newAuditEnv(t, 9, []string{"a", "b"}, 80, false)
	ctx := context.Background()
	inf := a.infs["plain"]
	dinf := a.infs["decoding"]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := inf
				if r.IntN(2) == 0 {
					i = dinf
				}
				q := query.Query{Scan: true, SortBy: []string{"f", "s", "fin"}[r.IntN(3)], Descending: r.IntN(2) == 0, Limit: 1 + r.IntN(5)}
				if r.IntN(2) == 0 {
					q.Conditions = []query.Condition{query.Has([]string{"f", "s", "m"}[r.IntN(3)])}
				}
				for range 50 {
					res, err := i.Query(ctx, q)
					if errors.Is(err, ErrIndexNotFound) {
						break
					}
					if err != nil {
						t.Errorf("%v", err)
						return
					}
					if len(res.Items) > q.Limit {
						t.Errorf("page of %d, limit %d", len(res.Items), q.Limit)
					}
					if res.Continue == "" {
						break
					}
					q.Continue = res.Continue
				}
				if _, err := i.Count(ctx, q); err != nil && !errors.Is(err, ErrIndexNotFound) {
					t.Errorf("count: %v", err)
				}
				if _, err := i.CountBy(ctx, q, "s"); err != nil && !errors.Is(err, ErrIndexNotFound) {
					t.Errorf("countby: %v", err)
				}
			}
		}()
	}
	for range 30 {
		for _, i := range []*Informer[obj]{inf, dinf} {
			_ = i.RemoveIndex("s")
			_ = i.RemoveIndex("f")
		}
		a.change()
		for _, i := range []*Informer[obj]{inf, dinf} {
			require.NoError(t, i.AddIndex("s", auditPaths["s"]))
			require.NoError(t, i.AddIndexFunc("f", auditFuncValues))
		}
		a.change()
	}
	close(stop)
	wg.Wait()
	a.prefixed = false
	for k, o := range a.objs {
		if o.fraw != nil {
			o.vals["f"] = a.fValues(o.fraw)
		}
		a.objs[k] = o
	}
	for range 40 {
		a.check(a.query())
	}
}

// TestAuditHugeLimit checks queries whose Limit is near the largest int (the plan compares
// Limit+1 with the match count).
func TestAuditHugeLimit(t *testing.T) {
	a := newAuditEnv(t, 5, []string{"a", "b"}, 80, false)
	for _, lim := range []int{math.MaxInt, math.MaxInt - 1, math.MaxInt32, 1 << 62} {
		for range 30 {
			q := a.query()
			q.Limit = lim
			a.check(q)
		}
	}
}
