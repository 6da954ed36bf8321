package query

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Sentinel categories; the typed errors below match them with errors.Is.
var (
	// ErrScanRequired: the query has no positive indexed condition and Scan is not set.
	ErrScanRequired = errors.New("query needs an index or an explicit scan")
	// ErrInvalidQuery: a condition is malformed (no index or path, an invalid operator, wrong
	// number of values, a bound that is not a finite number, a JSONPath that does not
	// compile), or the continue token is bad.
	ErrInvalidQuery = errors.New("invalid query")
	// ErrInvalidContinue: the continue token is not one a page of this query returned: it is
	// malformed, modified, or was issued for another query or another cache. It matches
	// ErrInvalidQuery too.
	ErrInvalidContinue = fmt.Errorf("%w: bad continue token", ErrInvalidQuery)
)

// InvalidError says which condition is wrong and why. Error quotes the condition cut to its
// first 256 bytes (marked "..."), so that a huge input does not make a huge message; the
// Condition field keeps it whole.
type InvalidError struct {
	// Condition is the condition as Condition.String prints it; "" when the problem is not
	// one condition's.
	Condition string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, such as the *jsonpath.SyntaxError of a JSONPath that does
	// not compile (errors.As finds it, with its offset in the expression).
	Err error
}

// Error is "invalid query condition <condition>: <reason>", or "invalid query: <reason>"
// without a condition, followed by Err's message if any.
func (e *InvalidError) Error() string {
	msg := "invalid query: " + e.Reason
	if e.Condition != "" {
		msg = "invalid query condition " + quote(e.Condition) + ": " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrInvalidQuery) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalidQuery }

// Unwrap returns the underlying error, such as a JSONPath syntax error.
func (e *InvalidError) Unwrap() error { return e.Err }

// maxQuoted is how many bytes of user input an error message quotes; longer input is cut (at
// a character boundary) and marked with "...".
const maxQuoted = 256

// quote quotes s for an error message as strconv.Quote does, cut to maxQuoted bytes of s.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
