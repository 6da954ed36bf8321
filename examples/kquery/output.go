package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/indexfuncs"
)

// render formats one result in the --output format. Objects come from the cache: they are
// shared and only read here.
func render(w io.Writer, format string, res discovery.Resource, items []*unstructured.Unstructured, indexes []index, cont string, now time.Time) error {
	switch format {
	case "json":
		return writeJSON(w, items, cont)
	case "name":
		return writeNames(w, res, items)
	default:
		return writeTable(w, res, items, indexes, now)
	}
}

// writeTable prints NAMESPACE (for namespaced resources), NAME, one column per index with
// the object's values in it (comma-separated; <none> without any) and AGE.
func writeTable(w io.Writer, res discovery.Resource, items []*unstructured.Unstructured, indexes []index, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	var header []string
	if res.Namespaced {
		header = append(header, "NAMESPACE")
	}
	header = append(header, "NAME")
	for _, ix := range indexes {
		header = append(header, strings.ToUpper(ix.Name))
	}
	header = append(header, "AGE")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, o := range items {
		var row []string
		if res.Namespaced {
			row = append(row, o.GetNamespace())
		}
		row = append(row, o.GetName())
		for _, ix := range indexes {
			// The same function the index runs, so the column shows what the index holds.
			vals, _ := indexfuncs.FromPath(ix.Path)(o)
			if len(vals) == 0 {
				row = append(row, "<none>")
			} else {
				row = append(row, strings.Join(vals, ","))
			}
		}
		row = append(row, age(now, o.GetCreationTimestamp().Time))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// age is kubectl's AGE column: 5s, 3m20s, 7h, 12d.
func age(now, created time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}

// writeJSON prints a List, as kubectl get -o json does.
func writeJSON(w io.Writer, items []*unstructured.Unstructured, cont string) error {
	list := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}
	if cont != "" {
		list["metadata"] = map[string]any{"continue": cont}
	}
	objs := make([]any, len(items))
	for i, o := range items {
		objs[i] = o.Object
	}
	list["items"] = objs
	b, err := json.MarshalIndent(list, "", "    ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeNames prints kind.group/name per object, as kubectl get -o name does.
func writeNames(w io.Writer, res discovery.Resource, items []*unstructured.Unstructured) error {
	prefix := strings.ToLower(res.GVK.Kind)
	if res.GVK.Group != "" {
		prefix += "." + res.GVK.Group
	}
	for _, o := range items {
		if _, err := fmt.Fprintf(w, "%s/%s\n", prefix, o.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// formatExprError shows the argument the user typed with a caret under the byte where the
// JSONPath went wrong:
//
//	kquery: bad JSONPath in --index: expected '}'
//	  --index size={.spec.size
//	                          ^
func formatExprError(e *exprError) string {
	line := e.Flag + " " + e.Arg
	col := len(e.Flag) + 1 + e.Offset + e.Err.Offset
	col = min(col, len(line))
	// Control characters would move the caret: show them as spaces. Columns count runes.
	clean := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, line)
	caret := strings.Repeat(" ", utf8.RuneCountInString(line[:col])) + "^"
	return fmt.Sprintf("kquery: bad JSONPath in %s: %s (byte %d of the expression)\n  %s\n  %s\n", e.Flag, e.Err.Msg, e.Err.Offset, clean, caret)
}
