package querymodel

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kindex/kindex/query"
)

// WhereForm is q with every indexed condition asked as the JSONPath condition of the
// index's expression, and Scan set; false if q has no indexed condition. Both forms have
// one meaning (package query's doc), so a cache must answer them alike.
func (m *Model) WhereForm(q query.Query) (query.Query, bool) {
	changed := false
	conv := func(cs []query.Condition) []query.Condition {
		out := slices.Clone(cs)
		for i, c := range out {
			if p, ok := m.Indexes[c.Index]; ok {
				out[i].Path, out[i].Index, changed = p.String(), "", true
			}
		}
		return out
	}
	w := q
	w.Conditions, w.AnyOf, w.Scan = conv(q.Conditions), nil, true
	for _, grp := range q.AnyOf {
		w.AnyOf = append(w.AnyOf, conv(grp))
	}
	return w, changed
}

// Describe prints q for a failure message.
func Describe(q query.Query) string {
	s := fmt.Sprintf("%q", q.Conditions)
	if len(q.AnyOf) > 0 {
		s += fmt.Sprintf(" any%q", q.AnyOf)
	}
	if q.Labels != nil {
		s += " labels(" + q.Labels.String() + ")"
	}
	if q.Namespace != "" {
		s += " ns=" + q.Namespace
	}
	if q.SortBy != "" {
		s += " sort=" + q.SortBy
		if q.Descending {
			s += " desc"
		}
	}
	return s + fmt.Sprintf(" limit=%d scan=%v", q.Limit, q.Scan)
}

// CheckOutcome says how err disagrees with the outcome the model wants ("" if it does not).
func CheckOutcome(want Outcome, err error) string {
	switch {
	case want == OK && err != nil:
		return fmt.Sprintf("error %v, want none", err)
	case want == Invalid && !errors.Is(err, query.ErrInvalidQuery):
		return fmt.Sprintf("error %v, want ErrInvalidQuery", err)
	case want == ScanRequired && !errors.Is(err, query.ErrScanRequired):
		return fmt.Sprintf("error %v, want ErrScanRequired", err)
	}
	return ""
}
