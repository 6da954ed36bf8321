package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/query"
)

// countBy counts the objects that match q: in all, per value of an index (when index is
// set) and without a value (Count of q and HasNot(index)), from the index's sizes where the
// query allows (Informer.Count, Informer.CountBy). An object with several values counts once
// under each.
func countBy(ctx context.Context, inf *dynamicinformer.Informer, q query.Query, index string) (total int, groups map[string]int, none int, err error) {
	if total, err = inf.Count(ctx, q); err != nil || index == "" {
		return total, nil, 0, err
	}
	if groups, err = inf.CountBy(ctx, q, index); err != nil {
		return 0, nil, 0, err
	}
	q.Conditions = append(slices.Clone(q.Conditions), query.HasNot(index))
	q.Scan = needsScan(q.Conditions)
	none, err = inf.Count(ctx, q)
	return total, groups, none, err
}

// countRow is one line of --count or --group-by output.
type countRow struct {
	Resource string `json:"resource"`
	Value    string `json:"value,omitempty"`
	None     bool   `json:"none,omitempty"` // the objects without a value
	Count    int    `json:"count"`
}

// printCounts prints --count (one line per resource) or --group-by (one line per value,
// most frequent first, then the objects without a value as <none>).
func (x *execution) printCounts(ctx context.Context, states []*state) error {
	o := x.o
	var rows []countRow
	var errs []error
	for _, s := range states {
		if s.err != nil {
			errs = append(errs, s.err)
			continue
		}
		q := query.Query{Conditions: slices.Clone(x.conditions)}
		if len(s.t.Names) > 0 {
			q.Conditions = append(q.Conditions, query.OneOf(nameIndex, s.t.Names...))
		}
		q.Scan = needsScan(q.Conditions)
		total, groups, none, err := countBy(ctx, s.inf, q, o.groupBy)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res := qualified(s.t.Res)
		if o.groupBy == "" {
			rows = append(rows, countRow{Resource: res, Count: total})
			continue
		}
		start := len(rows)
		for v, n := range groups {
			rows = append(rows, countRow{Resource: res, Value: v, Count: n})
		}
		slices.SortFunc(rows[start:], func(a, b countRow) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
		})
		if none > 0 {
			rows = append(rows, countRow{Resource: res, None: true, Count: none})
		}
	}
	if err := x.writeCounts(x.stdout, rows, len(states) > 1); err != nil {
		return err
	}
	for i, err := range errs {
		if i == len(errs)-1 {
			return err
		}
		report(x.stderr, err)
	}
	return nil
}

func (x *execution) writeCounts(w io.Writer, rows []countRow, multi bool) error {
	switch x.o.format.Kind {
	case "json", "yaml":
		if rows == nil {
			rows = []countRow{}
		}
		b, err := json.MarshalIndent(map[string]any{"items": rows}, "", "    ")
		if err != nil {
			return err
		}
		if x.o.format.Kind == "yaml" {
			if b, err = yaml.JSONToYAML(b); err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "":
	default:
		return usagef("--count and --group-by print a table, or -o json|yaml")
	}
	var header []string
	if multi {
		header = append(header, "RESOURCE")
	}
	if x.o.groupBy != "" {
		header = append(header, groupHeader(x.o.groupBy))
	}
	header = append(header, "COUNT")
	var lines [][]string
	if !x.o.table.NoHeaders {
		lines = append(lines, header)
	}
	for _, r := range rows {
		var l []string
		if multi {
			l = append(l, r.Resource)
		}
		if x.o.groupBy != "" {
			v := r.Value
			if r.None {
				v = "<none>"
			}
			l = append(l, v)
		}
		lines = append(lines, append(l, fmt.Sprint(r.Count)))
	}
	tw := printers.GetNewTabWriter(w)
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	return tw.Flush()
}

var lastField = regexp.MustCompile(`([A-Za-z0-9_-]+)[^A-Za-z0-9_-]*$`)

// groupHeader is the column name of --group-by: the index name, or the last field a
// JSONPath reads ({.spec.nodeName} is NODENAME).
func groupHeader(g string) string {
	if !isPathArg(g) {
		return strings.ToUpper(g)
	}
	if m := lastField.FindStringSubmatch(g); m != nil {
		return strings.ToUpper(m[1])
	}
	return "VALUE"
}
