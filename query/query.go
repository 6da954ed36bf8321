package query

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// Op is a comparison.
type Op int

// The comparisons a Condition can make. An object's values are the text an index holds
// (strings as they are, numbers as kubectl prints them: see indexfuncs.FromPath); Equal,
// In, NotEqual and Prefix compare that text as bytes, without Unicode normalization or case
// folding (a precomposed "é" and "e" followed by a combining accent are different values)
// and without reading numbers ("1" and "1.0" are different values: compare numbers with
// LessOrEqual and GreaterOrEqual).
const (
	// Equal: some value equals Values[0].
	Equal Op = iota + 1
	// In: some value is one of Values.
	In
	// NotEqual: no value equals Values[0] (an object without values matches).
	NotEqual
	// Exists: the object has at least one value. A field whose value is a map or a list is
	// present (it is indexed under NonScalar), whether the condition is indexed or a JSONPath
	// filter; a missing field and null are not.
	Exists
	// NotExists: the object has no value (Exists's opposite, object for object).
	NotExists
	// LessThan, LessOrEqual, GreaterThan, GreaterOrEqual: some value is a number that
	// compares so with the number Values[0], which must be a finite number (see
	// ParseNumber). Values that ParseNumber refuses (text, "NaN", "1e999", and "1e-400",
	// too small for a float64) never match.
	LessThan
	LessOrEqual
	GreaterThan
	GreaterOrEqual
	// Prefix: some value starts with Values[0] (compared as bytes).
	Prefix
)

var opNames = map[Op]string{
	Equal: "=", In: "in", NotEqual: "!=", Exists: "exists", NotExists: "!exists",
	LessThan: "<", LessOrEqual: "<=", GreaterThan: ">", GreaterOrEqual: ">=", Prefix: "^=",
}

// String returns the operator as conditions print it ("=", "in", "<=", ...), or "Op(n)" for
// a value that is none of the constants above.
func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Valid reports whether o is one of the constants above. The zero Op is not valid.
func (o Op) Valid() bool {
	_, ok := opNames[o]
	return ok
}

// Positive reports whether the condition can only match objects that have a value, so that
// an index lookup yields every candidate. NotEqual and NotExists are not positive: they are
// checked against candidates found otherwise.
func (o Op) Positive() bool { return o != NotEqual && o != NotExists }

// Condition compares the values of an index, or of a JSONPath expression evaluated on each
// candidate object, with Values. Build conditions with the functions below.
type Condition struct {
	// Index names a registered index. Exactly one of Index and Path is set.
	Index string
	// Path is a JSONPath expression evaluated on each candidate: it filters what the indexed
	// conditions found, or every object in scope when the query is a Scan.
	Path string
	// Op is the comparison.
	Op Op
	// Values are what Op compares with: none for Exists and NotExists, one or more for In,
	// one otherwise.
	Values []string
}

// String prints the condition the way users write it: "size>2", "color in (red,blue)",
// "owner" (Exists), "!owner" (NotExists). A condition whose Op is not valid prints as
// "subject <invalid Op(n)> values", so that it is never mistaken for a valid one.
func (c Condition) String() string {
	subject := c.Index
	if c.Path != "" {
		subject = c.Path
	}
	if !c.Op.Valid() {
		s := subject + " <invalid " + c.Op.String() + ">"
		if len(c.Values) > 0 {
			s += " " + strings.Join(c.Values, ",")
		}
		return s
	}
	switch c.Op {
	case Exists:
		return subject
	case NotExists:
		return "!" + subject
	case In:
		return subject + " in (" + strings.Join(c.Values, ",") + ")"
	}
	return subject + c.Op.String() + strings.Join(c.Values, ",")
}

// Eq matches objects that have value in the named index.
func Eq(index, value string) Condition {
	return Condition{Index: index, Op: Equal, Values: []string{value}}
}

// OneOf matches objects that have one of values in the named index.
func OneOf(index string, values ...string) Condition {
	return Condition{Index: index, Op: In, Values: values}
}

// NotEq matches objects that do not have value in the named index.
func NotEq(index, value string) Condition {
	return Condition{Index: index, Op: NotEqual, Values: []string{value}}
}

// Has matches objects that have any value in the named index.
func Has(index string) Condition { return Condition{Index: index, Op: Exists} }

// HasNot matches objects that have no value in the named index.
func HasNot(index string) Condition { return Condition{Index: index, Op: NotExists} }

// Lt matches objects with a numeric value in the named index less than n.
func Lt(index, n string) Condition {
	return Condition{Index: index, Op: LessThan, Values: []string{n}}
}

// Le matches objects with a numeric value less than or equal to n.
func Le(index, n string) Condition {
	return Condition{Index: index, Op: LessOrEqual, Values: []string{n}}
}

// Gt matches objects with a numeric value in the named index greater than n.
func Gt(index, n string) Condition {
	return Condition{Index: index, Op: GreaterThan, Values: []string{n}}
}

// Ge matches objects with a numeric value greater than or equal to n.
func Ge(index, n string) Condition {
	return Condition{Index: index, Op: GreaterOrEqual, Values: []string{n}}
}

// Where is a condition on a JSONPath expression that has no index: it is evaluated on every
// candidate. For example Where("{.spec.size}", GreaterThan, "2").
func Where(path string, op Op, values ...string) Condition {
	return Condition{Path: path, Op: op, Values: values}
}

// Query selects cached objects. All conditions must hold (AND).
type Query struct {
	// Namespace limits the query to one namespace; "" means every namespace.
	Namespace string
	// Conditions must all hold.
	Conditions []Condition
	// Labels, when not nil, must match the object's labels.
	Labels labels.Selector
	// AnyOf, when not empty, must also hold: at least one of its groups, each a list of
	// conditions that must all hold (an OR of ANDs). The query is answered as the union of
	// the queries Conditions+group, each planned on its own: every group needs a positive
	// indexed condition (in it or in Conditions) unless Scan is set.
	AnyOf [][]Condition
	// Limit caps the number of results; 0 means no limit, and a negative Limit is invalid.
	// When a result is cut, Continue is set on the result and passed in the next query to get
	// the next page. Limit may change from page to page; every other field must stay the
	// same.
	Limit    int
	Continue string
	// Scan allows a query without any positive indexed condition (Equal, In, Exists, Prefix
	// or a numeric comparison on an index) to visit every object in scope. Without it such a query
	// is refused with ErrScanRequired, so that an expensive query is always a decision.
	Scan bool
	// SortBy names an index whose values order the results instead of (namespace, name):
	// each object by its smallest value (its largest with Descending). Numbers (values
	// ParseNumber takes) come first, numerically; numbers equal in value but written
	// differently ("1", "1.0", "1e0"; "0", "-0") by their text, so that objects of one value
	// stay together. Then objects whose value is a map or a list (NonScalar), then the
	// other values as bytes, "" first. Objects without a value come last; ties in
	// (namespace, name) order. A page is selected without sorting the whole match set, and
	// continue tokens keep the position in this order.
	SortBy string
	// Descending reverses the order of values (objects without a value still come last;
	// ties stay in (namespace, name) order). It needs SortBy: without it the query is
	// invalid.
	Descending bool
}

// Result is one page of a query's results, in (namespace, name) order, or in the order of
// Query.SortBy.
type Result[T any] struct {
	// Items are the page's matches, at most Query.Limit of them.
	Items []T
	// Continue is non-empty when more results follow; pass it as Query.Continue.
	Continue string
	// Plan says how the query was answered, for debugging and for tests.
	Plan Plan
}

// Plan describes how a query was executed.
type Plan struct {
	// Driver is the condition whose index produced the candidates, or "scan" when every
	// object in scope was visited.
	Driver string
	// Candidates is the number of objects the driver produced; Matched how many passed every
	// condition and follow the continue token's position (every match on a first page),
	// before Limit: the results of this page and of the pages after it. A page read in
	// order (Driver "order(...)") stops once it knows whether another page follows: Matched
	// is then the page's size, plus one when there is more.
	Candidates, Matched int
}

// HasPrefix matches objects with a value in the named index that starts with prefix.
func HasPrefix(index, prefix string) Condition {
	return Condition{Index: index, Op: Prefix, Values: []string{prefix}}
}

// NonScalar is the value under which an index holds an object whose indexed field is a map
// or a list ({.spec.selfSigned} on `selfSigned: {}`): such an object exists for Exists and
// NotExists, and has no value that Equal, In, Prefix or a comparison could match. CountBy
// leaves it out. It is not a value to compare with: a condition that names it (Equal, In,
// NotEqual, Prefix) is invalid. In a SortBy order such an object sorts by this text: after
// numbers, before every other string. A string field whose value is this very text (it
// begins with a NUL byte, which no Kubernetes name, label or annotation can hold) is taken
// for a map or a list.
const NonScalar = "\x00non-scalar"
