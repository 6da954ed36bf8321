package query

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kindex/kindex/jsonpath"
)

// Number is a finite number, as ParseNumber reads it: exact for integers that fit in an
// int64, a float64 otherwise.
type Number struct {
	isInt bool
	i     int64
	f     float64
}

// ParseNumber reads the bound of a numeric comparison, or a value compared with one: a
// decimal integer, or a floating-point number in Go's syntax (2.5, 1e3, -0.5; hexadecimal
// and underscores as strconv.ParseFloat accepts them). The number must be finite: "Inf",
// "NaN" and numbers beyond float64's range ("1e999") are errors, and so are nonzero numbers
// too small for it ("1e-400", which would round to 0 and make ">= 1e-400" match 0), so that
// no bound is accepted that compares in surprising ways.
func ParseNumber(s string) (Number, error) {
	if n, ok := NumberOf(s); ok {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0):
		return Number{}, fmt.Errorf("%s is out of range: numeric comparisons take finite numbers", quote(s))
	case err != nil:
		return Number{}, fmt.Errorf("%s is not a number", quote(s))
	case math.IsInf(f, 0) || math.IsNaN(f):
		return Number{}, fmt.Errorf("%s is not a finite number: numeric comparisons take finite numbers", quote(s))
	case f == 0 && nonzeroMantissa(s):
		return Number{}, fmt.Errorf("%s is too small: it rounds to 0 as a float64, and numeric comparisons take numbers as written", quote(s))
	}
	return Number{}, fmt.Errorf("%s is not a number", quote(s))
}

// nonzeroMantissa reports whether the number s (in strconv.ParseFloat's syntax) has a
// nonzero digit before its exponent: "1e-400" does, "0.0e-400" does not.
func nonzeroMantissa(s string) bool {
	digits, exp := "123456789", "eE"
	if t := strings.TrimLeft(s, "+-"); len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		s, digits, exp = t[2:], "123456789abcdefABCDEF", "pP"
	}
	if i := strings.IndexAny(s, exp); i >= 0 {
		s = s[:i]
	}
	return strings.ContainsAny(s, digits)
}

// Compare returns -1, 0 or +1 as a is less than, equal to or greater than b, exactly: an
// integer and a float64 compare by their values, not by the integer rounded to a float64
// (which would make 2^54+1 equal to 2^54+0.0 and to 2^54, and the order inconsistent).
func (a Number) Compare(b Number) int {
	switch {
	case a.isInt && b.isInt:
		return cmp.Compare(a.i, b.i)
	case a.isInt:
		return compareIntFloat(a.i, b.f)
	case b.isInt:
		return -compareIntFloat(b.i, a.f)
	}
	switch {
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	}
	return 0
}

// compareIntFloat compares i with the finite f exactly.
func compareIntFloat(i int64, f float64) int {
	const two63 = 1 << 63
	switch {
	case f >= two63:
		return -1
	case f < -two63:
		return 1
	}
	t := math.Trunc(f) // within int64's range: exact
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c
	}
	switch {
	case f > t:
		return -1
	case f < t:
		return 1
	}
	return 0
}

// Float64 returns the number as a float64.
func (a Number) Float64() float64 { return a.f }

// Validate checks the condition on its own: exactly one of Index and Path is set, Op is
// valid, it has the number of values Op takes (none for Exists and NotExists, at least one
// for In, one otherwise), a numeric comparison's bound is a finite number (ParseNumber), and
// Path compiles. Errors are *InvalidError (ErrInvalidQuery); for a JSONPath that does not
// compile it wraps the *jsonpath.SyntaxError, which gives the offset in Path. Whether the
// index exists is for the cache that runs the query to say.
func (c Condition) Validate() error {
	invalid := func(reason string, err error) error {
		return &InvalidError{Condition: c.String(), Reason: reason, Err: err}
	}
	if (c.Index == "") == (c.Path == "") {
		return invalid("a condition needs exactly one of an index name and a JSONPath", nil)
	}
	if !c.Op.Valid() {
		return invalid(fmt.Sprintf("operator %s is not one of the query.Op constants", c.Op), nil)
	}
	switch c.Op {
	case Exists, NotExists:
		if len(c.Values) != 0 {
			return invalid(c.Op.String()+" takes no value", nil)
		}
	case In:
		if len(c.Values) == 0 {
			return invalid("in needs at least one value", nil)
		}
	default:
		if len(c.Values) != 1 {
			return invalid(fmt.Sprintf("%s takes one value, got %d", c.Op, len(c.Values)), nil)
		}
	}
	switch c.Op {
	case LessThan, LessOrEqual, GreaterThan, GreaterOrEqual:
		if _, err := ParseNumber(c.Values[0]); err != nil {
			return invalid("bad bound", err)
		}
	case Equal, In, NotEqual, Prefix:
		// NonScalar marks map- and list-valued fields in an index; it is no value to
		// compare with (Exists and NotExists are the conditions on such fields).
		if slices.Contains(c.Values, NonScalar) {
			return invalid("query.NonScalar is not a value to compare with: use Exists or NotExists", nil)
		}
	}
	if c.Path != "" {
		if _, err := jsonpath.Compile(c.Path); err != nil {
			return invalid("bad JSONPath", err)
		}
	}
	return nil
}

// Validate checks what can be checked without the cache: every condition (see
// Condition.Validate), a non-negative Limit, and SortBy set when Descending is. It does not
// check that the indexes exist, that a query without a positive indexed condition sets
// Scan, or the continue token (see DecodeContinue): the cache that runs the query does.
func (q Query) Validate() error {
	if q.Limit < 0 {
		return &InvalidError{Reason: fmt.Sprintf("Limit must not be negative, got %d", q.Limit)}
	}
	if q.Descending && q.SortBy == "" {
		return &InvalidError{Reason: "Descending needs SortBy"}
	}
	for _, c := range q.Conditions {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	for i, g := range q.AnyOf {
		if len(g) == 0 {
			return &InvalidError{Reason: fmt.Sprintf("AnyOf group %d needs at least one condition", i)}
		}
		for _, c := range g {
			if err := c.Validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

// NumberOf is ParseNumber without the error, for the values of every object a comparison
// visits: it takes what ParseNumber takes, as the same number, and nothing else ("1e-400"
// is no more a value than a bound); it does not allocate, and most values that are not
// numbers are refused by their first byte.
func NumberOf(s string) (Number, bool) {
	if s == "" {
		return Number{}, false
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9', c == '-', c == '+', c == '.':
	default:
		return Number{}, false // not a number's first byte (Inf and NaN included)
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Number{isInt: true, i: i, f: float64(i)}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f == 0 && nonzeroMantissa(s) {
		return Number{}, false
	}
	return Number{f: f}, true
}
