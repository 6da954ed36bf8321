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
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
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
	Resource string
	Value    string
	Grouped  bool // a line of --group-by: its value is printed, the empty string included
	None     bool // the objects without a value
	Count    int
}

// MarshalJSON writes the row with a value on every --group-by line but the objects without
// one (an empty string is a value), none on those, and neither under --count.
func (r countRow) MarshalJSON() ([]byte, error) {
	out := struct {
		Resource string  `json:"resource"`
		Value    *string `json:"value,omitempty"`
		None     bool    `json:"none,omitempty"`
		Count    int     `json:"count"`
	}{Resource: r.Resource, None: r.None, Count: r.Count}
	if r.Grouped && !r.None {
		out.Value = &r.Value
	}
	return json.Marshal(out)
}

// printCounts prints --count (one line per resource) or --group-by (one line per value,
// most frequent first, then the objects without a value as <none>).
func (x *execution) printCounts(ctx context.Context, states []*state) error {
	o := x.o
	var rows []countRow
	var errs []error
	for _, s := range states {
		if s.err != nil {
			errs = append(errs, stateErrs(s)...)
			continue
		}
		q := query.Query{Conditions: slices.Clone(x.conditions)}
		if len(s.t.Names) > 0 {
			q.Conditions = append(q.Conditions, query.OneOf(nameIndex, s.t.Names...))
		}
		q.Scan = needsScan(q.Conditions)
		index := o.groupBy
		if isPathArg(index) {
			index = groupByIndex
		}
		total, groups, none, err := countBy(ctx, s.inf, q, index)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, x.missingNames(ctx, s, nil)...)
		res := qualified(s.t.Res)
		if o.groupBy == "" {
			rows = append(rows, countRow{Resource: res, Count: total})
			continue
		}
		start := len(rows)
		for v, n := range groups {
			rows = append(rows, countRow{Resource: res, Value: v, Grouped: true, Count: n})
		}
		slices.SortFunc(rows[start:], func(a, b countRow) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
		})
		if none > 0 {
			rows = append(rows, countRow{Resource: res, Grouped: true, None: true, Count: none})
		}
	}
	if len(rows) > 0 || len(errs) == 0 { // as kubectl, nothing but the errors when nothing was counted
		if err := x.writeCounts(x.stdout, rows, len(states) > 1); err != nil {
			return err
		}
	}
	return reportAllButLast(x.stderr, errs)
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

// addGroupByIndex indexes inf's objects by the values of the --group-by JSONPath expr, every
// value counting: strings, numbers and booleans by their text, as an --index holds them, and
// maps and lists by their JSON, as -o jsonpath prints them (an --index has no value for
// them to compare with, but a count does: pods by their whole label set). A missing field,
// null, and a template that prints nothing are no value (<none>). The path is evaluated on
// the cached JSON, without decoding the object.
func addGroupByIndex(inf *dynamicinformer.Informer, expr string) error {
	p, err := jsonpath.Compile(expr)
	if err != nil {
		return err
	}
	return inf.AddItemIndexFunc(groupByIndex, func(it informer.Item[dynamicinformer.Object]) ([]string, error) {
		vals, err := it.Eval(p)
		var out []string
		for _, v := range vals {
			switch {
			case v.Kind() == jsonpath.KindNull || v.Kind() == jsonpath.KindInvalid:
			case p.IsTemplate() && v.String() == "":
			default:
				out = append(out, v.String())
			}
		}
		return out, err
	})
}

var nameRun = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_-]*`)

// groupHeader is the column name of --group-by: the index name, or the last field name a
// JSONPath reads ({.spec.nodeName} is NODENAME, {.spec.containers[0]} CONTAINERS,
// {range .items[*]}{.name}{end} NAME).
func groupHeader(g string) string {
	if !isPathArg(g) {
		return strings.ToUpper(g)
	}
	runs := nameRun.FindAllString(g, -1)
	for i := len(runs) - 1; i >= 0; i-- {
		if r := runs[i]; r != "end" && r != "range" {
			return strings.ToUpper(r)
		}
	}
	return "VALUE"
}
