package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kindex/kindex/query"
)

// Paging several resource types. --limit N prints up to N objects of each resource; the
// continue token of such a page records where each resource stands: a position to go on
// from (that resource's own token, which its informer checks), finished, or not started (a
// resource that failed before it printed anything). The next page goes on with every
// resource that has more, and prints nothing of a finished one, so that following the tokens
// prints every object of every resource once.
//
// The token is bound, with package query's integrity tag, to the resource types in their
// order, the names, the scope of each (namespace, -l, --field-selector), the --where
// conditions and --sort-by: a token of another command line is refused as a whole rather
// than read as positions of other resources. One resource pages with its own token, as
// before.

// pageState is where one resource of a multi-type listing stands.
type pageState struct {
	Done bool   // every object was printed
	Cont string // the resource's own token; "" with !Done: from the start
}

// errForeignContinue is a --continue token that this command line did not issue.
var errForeignContinue = errors.New("--continue: the continue token was not issued for this command line: it belongs to other resource types, another namespace or selector, other --where conditions or --sort-by, or was modified; repeat the command line of the page that printed it")

// pagesSource identifies the listing of states for the token's tag.
func (x *execution) pagesSource(states []*state) string {
	var b strings.Builder
	b.WriteString("kquery pages\n")
	for _, s := range states {
		names := slices.Clone(s.t.Names)
		slices.Sort(names)
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%q\n", qualified(s.t.Res), s.scope.Namespace, s.scope.LabelSelector, s.scope.FieldSelector, names)
	}
	return b.String()
}

// pagesQuery is the part of the command line the token is bound to besides the resources:
// the conditions and the sort order.
func (x *execution) pagesQuery() query.Query {
	q := query.Query{Conditions: x.conditions}
	if x.o.sortBy != "" {
		q.SortBy = sortIndex(x.o.sortBy)
	}
	return q
}

// encodePages returns the token of a multi-type page.
func (x *execution) encodePages(states []*state, pos []pageState) string {
	parts := make([]string, len(pos))
	for i, p := range pos {
		switch {
		case p.Done:
			parts[i] = "="
		case p.Cont != "":
			parts[i] = ">" + p.Cont
		}
	}
	// A leading byte, so that the key is never empty.
	return query.EncodeContinue(x.pagesQuery(), x.pagesSource(states), "p"+strings.Join(parts, "\n"))
}

// decodePages reads the token of a multi-type page: where each resource stands.
func (x *execution) decodePages(states []*state, token string) ([]pageState, error) {
	q := x.pagesQuery()
	q.Continue = token
	key, err := query.DecodeContinue(q, x.pagesSource(states))
	if err != nil {
		return nil, errForeignContinue
	}
	parts := strings.Split(strings.TrimPrefix(key, "p"), "\n")
	if !strings.HasPrefix(key, "p") || len(parts) != len(states) {
		return nil, errForeignContinue
	}
	pos := make([]pageState, len(parts))
	for i, p := range parts {
		switch {
		case p == "=":
			pos[i].Done = true
		case strings.HasPrefix(p, ">") && len(p) > 1:
			pos[i].Cont = p[1:]
		case p != "":
			return nil, errForeignContinue
		}
	}
	return pos, nil
}
