package query_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

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
