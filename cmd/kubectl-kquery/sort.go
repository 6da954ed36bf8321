package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// --sort-by is answered by the query: the JSONPath becomes an index (named by the path in
// kubectl's relaxed form, "{.spec.size}") and Query.SortBy orders each page by it, so that
// sorting and paging combine and a page costs what it costs unsorted. The order is kindex's:
// numbers numerically and before other values, other values as text (RFC 3339 timestamps
// chronologically), objects without a value last, ties by namespace and name. kubectl puts
// objects without a value first and compares quantities ("100Mi" < "2Gi") by value.

// sortIndex is the index name and expression of a --sort-by argument: ".a.b", "a.b",
// "{a.b}" and "{.a.b}" all mean {.a.b}.
func sortIndex(expr string) string { return relaxedTemplate(expr) }

// compileSortBy checks a --sort-by argument; a syntax error is shown with a caret in it.
func compileSortBy(expr string) (*jsonpath.Path, error) {
	p, err := jsonpath.Compile(sortIndex(expr))
	if err != nil {
		var se *jsonpath.SyntaxError
		if errors.As(err, &se) {
			return nil, &argError{Flag: "--sort-by", Arg: expr, Offset: relaxedOffset(expr, se.Offset), Msg: "bad JSONPath: " + se.Msg}
		}
		return nil, usagef("--sort-by %q: %v", clip(expr), err)
	}
	return p, nil
}

// checkSortField refuses, as kubectl does, a --sort-by path that no object in the answer has
// (it is most likely a typo) and one whose values are maps or lists, which have no order:
// the index holds them all under one marker, so that the page would come in no meaningful
// order. Every object in the answer is checked, not only the page's: they are sorted together.
func checkSortField(ctx context.Context, inf *dynamicinformer.Informer, q query.Query, matched int, expr string) error {
	if matched == 0 {
		return nil
	}
	q.Limit, q.Continue, q.SortBy = 0, "", ""
	q.Conditions = append(q.Conditions[:len(q.Conditions):len(q.Conditions)], query.Has(sortIndex(expr)))
	q.Scan = false
	n, err := inf.Count(ctx, q)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("couldn't find any field with path %q in the list of objects", clip(sortIndex(expr)))
	}
	p, err := jsonpath.Compile(sortIndex(expr))
	if err != nil {
		return err
	}
	r, err := inf.QueryItems(ctx, q) // not decoded: the path is evaluated on the cached JSON
	if err != nil {
		return err
	}
	for _, it := range r.Items {
		vals, err := it.Eval(p)
		if err != nil {
			return err
		}
		for _, v := range vals {
			if k := v.Kind(); k == jsonpath.KindMap || k == jsonpath.KindList {
				obj := it.Name()
				if it.Namespace() != "" {
					obj = it.Namespace() + "/" + obj
				}
				return fmt.Errorf("field %q is an unsortable type: %s (in %s); --sort-by takes a field of strings, numbers or booleans", clip(sortIndex(expr)), kindWord(k), obj)
			}
		}
	}
	return nil
}

// kindWord names a JSON type in a message.
func kindWord(k jsonpath.Kind) string {
	if k == jsonpath.KindMap {
		return "map"
	}
	return "list"
}
