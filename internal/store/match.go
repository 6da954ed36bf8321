package store

import (
	"errors"
	"slices"
	"strings"

	"github.com/kindex/kindex/query"
)

// number is query's Number: one parser and one order for bounds and values.
type number = query.Number

// parseNumber reads a value as a finite number (query.ParseNumber); other values never
// match a numeric comparison.
func parseNumber(s string) (number, bool) { return query.NumberOf(s) }

// matcher is a validated condition, ready to test an object's values.
type matcher struct {
	cond  query.Condition
	key   string          // the store index of an indexed condition (QueryOptions.Resolve)
	bound number          // numeric comparisons
	set   map[string]bool // In
}

// newMatcher validates c into m (a new matcher if m is nil).
func newMatcher(c query.Condition, m *matcher) (*matcher, error) {
	// The condition's shape is query's to check (Condition.Validate); its JSONPath is
	// compiled by QueryOptions.PathFunc with the cache's limits, so a stand-in path is
	// validated here instead of compiling it twice.
	shape := c
	if shape.Path != "" {
		shape.Path = "{.x}"
	}
	if err := shape.Validate(); err != nil {
		var inv *query.InvalidError
		if errors.As(err, &inv) {
			cp := *inv
			cp.Condition = c.String()
			return nil, &cp
		}
		return nil, err
	}
	if m == nil {
		m = &matcher{}
	}
	*m = matcher{cond: c}
	switch c.Op {
	case query.In:
		m.set = make(map[string]bool, len(c.Values))
		for _, v := range c.Values {
			m.set[v] = true
		}
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		m.bound, _ = parseNumber(c.Values[0]) // validated
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
	case query.Prefix:
		return v != query.NonScalar && strings.HasPrefix(v, m.cond.Values[0])
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		n, ok := parseNumber(v)
		if !ok {
			return false
		}
		c := n.Compare(m.bound)
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

// negative says whether the condition holds for an object by the values it lacks, so that
// it needs all of them: NotEqual and NotExists. An object whose values could not all be
// computed (an index function or a JSONPath evaluation that failed on it) never matches
// one; the positive conditions match on the values that were computed.
func (m *matcher) negative() bool {
	return m.cond.Op == query.NotEqual || m.cond.Op == query.NotExists
}

// matchRecord reports whether rec, as indexed by ix, satisfies the condition.
func (m *matcher) matchRecord(ix *index, rec *record) bool {
	if m.negative() && ix.hasFailed(rec) {
		return false
	}
	return m.match(rec.valuesOf(ix.slot))
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
