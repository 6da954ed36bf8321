package store

import (
	"math"
	"slices"
	"strconv"

	"github.com/kindex/kindex/query"
)

// number is a parsed numeric value: exact for integers that fit int64, float64 otherwise.
type number struct {
	isInt bool
	i     int64
	f     float64
}

func parseNumber(s string) (number, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{isInt: true, i: i, f: float64(i)}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return number{}, false
	}
	return number{f: f}, true
}

// cmp compares a and b: -1, 0 or +1.
func (a number) cmp(b number) int {
	if a.isInt && b.isInt {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	switch {
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	}
	return 0
}

// matcher is a validated condition, ready to test an object's values.
type matcher struct {
	cond  query.Condition
	key   string          // the store index of an indexed condition (QueryOptions.Resolve)
	bound number          // numeric comparisons
	set   map[string]bool // In
}

func newMatcher(c query.Condition) (*matcher, error) {
	m := &matcher{cond: c}
	if (c.Index == "") == (c.Path == "") {
		return nil, &query.InvalidError{Condition: c.String(), Reason: "a condition needs exactly one of an index name and a JSONPath"}
	}
	want := 1
	switch c.Op {
	case query.Exists, query.NotExists:
		want = 0
	case query.In:
		want = -1
		if len(c.Values) == 0 {
			return nil, &query.InvalidError{Condition: c.String(), Reason: "in needs at least one value"}
		}
		m.set = make(map[string]bool, len(c.Values))
		for _, v := range c.Values {
			m.set[v] = true
		}
	case query.Equal, query.NotEqual:
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		if len(c.Values) == 1 {
			n, ok := parseNumber(c.Values[0])
			if !ok {
				return nil, &query.InvalidError{Condition: c.String(), Reason: strconv.Quote(c.Values[0]) + " is not a number"}
			}
			m.bound = n
		}
	default:
		return nil, &query.InvalidError{Condition: c.String(), Reason: "unknown operator " + c.Op.String()}
	}
	if want >= 0 && len(c.Values) != want {
		return nil, &query.InvalidError{Condition: c.String(), Reason: c.Op.String() + " takes " + strconv.Itoa(want) + " value(s)"}
	}
	return m, nil
}

// matchValue reports whether one value satisfies a positive condition.
func (m *matcher) matchValue(v string) bool {
	switch m.cond.Op {
	case query.Equal:
		return v == m.cond.Values[0]
	case query.In:
		return m.set[v]
	case query.Exists:
		return true
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		n, ok := parseNumber(v)
		if !ok {
			return false
		}
		c := n.cmp(m.bound)
		switch m.cond.Op {
		case query.LessThan:
			return c < 0
		case query.LessOrEqual:
			return c <= 0
		case query.GreaterThan:
			return c > 0
		}
		return c >= 0
	}
	return false
}

// match reports whether an object with these values satisfies the condition.
func (m *matcher) match(values []string) bool {
	switch m.cond.Op {
	case query.NotEqual:
		return !slices.Contains(values, m.cond.Values[0])
	case query.NotExists:
		return len(values) == 0
	}
	for _, v := range values {
		if m.matchValue(v) {
			return true
		}
	}
	return false
}
