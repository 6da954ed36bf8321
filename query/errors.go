package query

import (
	"errors"
	"fmt"
)

// Sentinel categories; the typed errors below match them with errors.Is.
var (
	// ErrScanRequired: the query has no positive indexed condition and Scan is not set.
	ErrScanRequired = errors.New("query needs an index or an explicit scan")
	// ErrInvalidQuery: a condition is malformed (no index or path, wrong number of values, a
	// non-numeric bound, a bad continue token).
	ErrInvalidQuery = errors.New("invalid query")
)

// InvalidError says which condition is wrong and why.
type InvalidError struct {
	Condition string
	Reason    string
	Err       error
}

func (e *InvalidError) Error() string {
	if e.Condition == "" {
		return "invalid query: " + e.Reason
	}
	return fmt.Sprintf("invalid query condition %q: %s", e.Condition, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidQuery) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalidQuery }

// Unwrap returns the underlying error, such as a JSONPath syntax error.
func (e *InvalidError) Unwrap() error { return e.Err }
