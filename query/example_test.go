package query_test

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// A query for Informer.Query: widgets of namespace "prod" whose indexed size is above 2 and
// whose color is not red, among those labelled tier=web, 50 at a time. The size index drives
// (the only positive indexed condition); the others are checked on its candidates.
func ExampleQuery() {
	q := query.Query{
		Namespace: "prod",
		Conditions: []query.Condition{
			query.Gt("size", "2"),
			query.NotEq("color", "red"),
			query.Where(`{.status.conditions[?(@.type=="Ready")].status}`, query.Equal, "True"),
		},
		Labels: labels.SelectorFromSet(labels.Set{"tier": "web"}),
		Limit:  50,
	}
	for _, c := range q.Conditions {
		fmt.Println(c, "positive:", c.Op.Positive())
	}
	// Output:
	// size>2 positive: true
	// color!=red positive: false
	// {.status.conditions[?(@.type=="Ready")].status}=True positive: true
}

// Validate reports a condition's error with the condition; a JSONPath error carries the
// *jsonpath.SyntaxError, with the offset of the problem in the expression.
func ExampleCondition_Validate() {
	for _, c := range []query.Condition{
		query.Gt("size", "1e999"),
		{Index: "size", Values: []string{"1"}}, // no Op
		query.Where("{.spec[}", query.Equal, "x"),
	} {
		err := c.Validate()
		var se *jsonpath.SyntaxError
		if errors.As(err, &se) {
			fmt.Printf("JSONPath %q is wrong at offset %d\n", se.Expr, se.Offset)
			continue
		}
		fmt.Println(err)
	}
	// Output:
	// invalid query condition "size>1e999": bad bound: "1e999" is out of range: numeric comparisons take finite numbers
	// invalid query condition "size <invalid Op(0)> 1": operator Op(0) is not one of the query.Op constants
	// JSONPath "{.spec[}" is wrong at offset 7
}
