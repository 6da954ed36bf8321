package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kindex/kindex/jsonpath"
)

// outputFormat is a parsed -o.
type outputFormat struct {
	Kind    string // "" (table), wide, json, yaml, name, jsonpath, custom-columns, go-template
	Path    *jsonpath.Path
	AsJSON  bool // jsonpath-as-json: each group of values as an indented JSON array
	Columns []customColumn
	Printer printers.ResourcePrinter // json, yaml, name, go-template
	// Template is the text of a jsonpath, custom-columns or go-template format (read from
	// its file for the -file forms).
	Template string
}

// customColumn is one HEADER:JSONPATH of -o custom-columns.
type customColumn struct {
	Header string
	Path   *jsonpath.Path
}

// allowedFormats is kubectl's list, in its words.
const allowedFormats = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"

// parseOutput parses -o as kubectl does, and refuses what it refuses in its words (plain
// errors, as kubectl's printer flags return them). Table output (none, wide), json, yaml,
// name and go-template use cli-runtime's printers; jsonpath and custom-columns use kindex's
// JSONPath compiler (kubectl's dialect; its differences from client-go are in package
// jsonpath).
func parseOutput(o string) (outputFormat, error) {
	format, arg, hasArg := strings.Cut(o, "=")
	readFile := func(what string) (string, error) {
		b, err := os.ReadFile(arg)
		if err != nil {
			return "", fmt.Errorf("error reading %s %s, %v", what, clip(arg), err)
		}
		return string(b), nil
	}
	switch format {
	case "", "wide", "json", "yaml", "name":
		if hasArg { // -o json=x: no such format
			break
		}
		switch format {
		case "json":
			return outputFormat{Kind: "json", Printer: &printers.JSONPrinter{}}, nil
		case "yaml":
			return outputFormat{Kind: "yaml", Printer: &printers.YAMLPrinter{}}, nil
		case "name":
			return outputFormat{Kind: "name", Printer: &printers.NamePrinter{}}, nil
		}
		return outputFormat{Kind: format}, nil
	case "jsonpath", "jsonpath-file", "jsonpath-as-json":
		if !hasArg || arg == "" {
			return outputFormat{}, errors.New("template format specified but no template given")
		}
		if format == "jsonpath-file" {
			var err error
			if arg, err = readFile("--template"); err != nil {
				return outputFormat{}, err
			}
		}
		// A template, as kubectl reads it: one without actions is text that prints as it is
		// (kubectl relaxes a bare path, ".metadata.name", only in custom-columns and
		// --sort-by), where kindex's compiler would read a path; a literal says the same.
		tmpl := arg
		if !strings.Contains(arg, "{") {
			tmpl = "{" + strconv.Quote(arg) + "}"
		}
		p, err := jsonpath.Compile(tmpl)
		if err != nil {
			var se *jsonpath.SyntaxError
			if errors.As(err, &se) {
				return outputFormat{}, &argError{Flag: "-o " + format + "=", Arg: arg, Offset: se.Offset, Msg: "bad JSONPath: " + se.Msg}
			}
			return outputFormat{}, fmt.Errorf("error parsing jsonpath %s, %v", clip(arg), err)
		}
		return outputFormat{Kind: "jsonpath", Path: p, AsJSON: format == "jsonpath-as-json", Template: arg}, nil
	case "custom-columns", "custom-columns-file":
		if !hasArg || arg == "" {
			return outputFormat{}, errors.New("custom-columns format specified but no custom columns given")
		}
		var cols []customColumn
		var err error
		text := arg
		if format == "custom-columns" {
			cols, err = parseCustomColumns("-o "+format+"=", arg)
		} else if text, err = readFile("template"); err == nil {
			cols, err = parseCustomColumnsFile(text)
		}
		if err != nil {
			return outputFormat{}, err
		}
		return outputFormat{Kind: "custom-columns", Columns: cols, Template: text}, nil
	case "go-template", "go-template-file", "template", "templatefile":
		if !hasArg || arg == "" {
			return outputFormat{}, errors.New("template format specified but no template given")
		}
		if strings.HasSuffix(format, "file") {
			var err error
			if arg, err = readFile("--template"); err != nil {
				return outputFormat{}, err
			}
		}
		p, err := printers.NewGoTemplatePrinter([]byte(arg))
		if err != nil {
			return outputFormat{}, fmt.Errorf("error parsing template %s, %v", clip(arg), err)
		}
		p.AllowMissingKeys(true)
		return outputFormat{Kind: "go-template", Printer: p, Template: arg}, nil
	}
	return outputFormat{}, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", clip(o), allowedFormats)
}

// relaxedTemplate accepts what kubectl accepts for a single path: ".a.b", "a.b", "{a.b}"
// and "{.a.b}" all mean {.a.b}; other templates with braces are left as they are.
func relaxedTemplate(s string) string {
	if bracedWithoutDot(s) {
		return "{." + s[1:]
	}
	t := strings.TrimSpace(s)
	if strings.Contains(t, "{") {
		return s
	}
	if !strings.HasPrefix(t, ".") {
		t = "." + t
	}
	return "{" + t + "}"
}

// bracedWithoutDot says whether s is a path in braces that starts with a field name,
// "{metadata.name}", which kubectl's relaxed form (RelaxedJSONPathExpression) reads as
// {.metadata.name}: one pair of braces, a letter, digit or '_' after the first.
func bracedWithoutDot(s string) bool {
	if len(s) < 3 || s[0] != '{' || s[len(s)-1] != '}' || strings.ContainsAny(s[1:len(s)-1], "{}") {
		return false
	}
	c := s[1]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// relaxedOffset maps a byte offset in relaxedTemplate(s) back to s.
func relaxedOffset(s string, off int) int {
	t := relaxedTemplate(s)
	if bracedWithoutDot(s) {
		if off > 1 {
			off-- // the dot added after the brace
		}
	} else if t != s {
		trimmed := strings.TrimLeft(s, " \t\n\r\v\f")
		off += len(s) - len(trimmed) - 1 // the leading space, the brace added
		if !strings.HasPrefix(trimmed, ".") {
			off-- // the dot added
		}
	}
	return min(max(off, 0), len(s))
}

// parseCustomColumns parses the spec of -o custom-columns (flag is how the message names
// the option); a JSONPath that does not compile is shown with a caret in the spec. As in
// kubectl, a header may be empty, and so may a path (its cells are <none>).
func parseCustomColumns(flag, spec string) ([]customColumn, error) {
	var cols []customColumn
	at := 0 // of part in spec
	for _, part := range strings.Split(spec, ",") {
		header, expr, ok := strings.Cut(part, ":")
		if !ok { // as kubectl, the header ends at the first colon: the path may hold more ([0:2])
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", clip(part))
		}
		if expr == "" {
			cols = append(cols, customColumn{Header: header})
			at += len(part) + 1
			continue
		}
		p, err := jsonpath.Compile(relaxedTemplate(expr))
		if err != nil {
			var se *jsonpath.SyntaxError
			if errors.As(err, &se) {
				return nil, &argError{Flag: flag, Arg: spec, Offset: at + len(header) + 1 + relaxedOffset(expr, se.Offset), Msg: "bad JSONPath: " + se.Msg}
			}
			return nil, fmt.Errorf("custom-columns %s: %w", clip(part), err)
		}
		cols = append(cols, customColumn{Header: header, Path: p})
		at += len(part) + 1
	}
	return cols, nil
}

// parseCustomColumnsFile reads kubectl's custom-columns file: its first line holds the
// headers, its second the JSONPaths, separated by white space; kubectl's messages.
func parseCustomColumnsFile(text string) ([]customColumn, error) {
	const expected = "Expected format is one line of space separated headers, one line of space separated column specs."
	sc := bufio.NewScanner(strings.NewReader(text))
	if !sc.Scan() {
		return nil, errors.New("invalid template, missing header line. " + expected)
	}
	headers := strings.Fields(sc.Text())
	if !sc.Scan() {
		return nil, errors.New("invalid template, missing spec line. " + expected)
	}
	specs := strings.Fields(sc.Text())
	if len(headers) != len(specs) {
		return nil, fmt.Errorf("number of headers (%d) and field specifications (%d) don't match", len(headers), len(specs))
	}
	var cols []customColumn
	for i, h := range headers {
		p, err := jsonpath.Compile(relaxedTemplate(specs[i]))
		if err != nil {
			return nil, fmt.Errorf("custom-columns file, column %s: %w", clip(h), err)
		}
		cols = append(cols, customColumn{Header: h, Path: p})
	}
	return cols, nil
}

// printable returns a shallow copy of a cached object with apiVersion and kind set (objects
// from a LIST may lack them), safe to hand to printers; the cached object is not modified.
func printable(o *unstructured.Unstructured, t *target) *unstructured.Unstructured {
	m := make(map[string]any, len(o.Object)+2)
	for k, v := range o.Object {
		m[k] = v
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		u.SetAPIVersion(t.Res.GVK.GroupVersion().String())
		u.SetKind(t.Res.GVK.Kind)
	}
	return u
}

// listObject is what kubectl prints for several objects: a v1 List; the continue token of a
// page goes in its metadata, where --continue reads it back.
func listObject(items []*unstructured.Unstructured, cont string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""},
	}}
	if cont != "" {
		l.Object["metadata"] = map[string]any{"resourceVersion": "", "continue": cont}
	}
	for _, it := range items {
		l.Items = append(l.Items, *it)
	}
	return l
}

// printObjects prints objects in a non-table format. single is kubectl's rule: one object
// asked for by name prints as itself, anything else as a List.
func printObjects(w io.Writer, f outputFormat, items []*unstructured.Unstructured, cont string, single bool) error {
	var obj runtime.Object
	if single && len(items) == 1 {
		obj = items[0]
	} else {
		obj = listObject(items, cont)
	}
	switch f.Kind {
	case "jsonpath":
		var data any
		if u, ok := obj.(*unstructured.Unstructured); ok {
			data = u.Object
		} else {
			data = obj.(*unstructured.UnstructuredList).UnstructuredContent()
		}
		return printJSONPath(w, f, data, len(items))
	case "custom-columns":
		return printCustomColumns(w, f.Columns, items, false)
	case "name":
		for _, it := range items { // no List for names
			if err := f.Printer.PrintObj(it, w); err != nil {
				return err
			}
		}
		return nil
	default:
		return f.Printer.PrintObj(obj, w)
	}
}

// printJSONPath prints -o jsonpath (or jsonpath-as-json) evaluated on data, which holds n
// objects; nothing is written when the evaluation fails.
func printJSONPath(w io.Writer, f outputFormat, data any, n int) error {
	p, err := listPath(f.Path, n)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if f.AsJSON {
		err = p.ExecuteJSON(&b, data)
	} else {
		err = p.Execute(&b, data)
	}
	if err != nil {
		return fmt.Errorf("error executing jsonpath: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// listPath returns p with an evaluation budget for printing n objects: the default budget
// (what one object's evaluation may cost) for each of them, so that a List prints whatever
// its size, as kubectl's does, while one expression still cannot run for longer than its
// objects justify. A compiled path's String compiles again (package jsonpath's promise).
func listPath(p *jsonpath.Path, n int) (*jsonpath.Path, error) {
	if n <= 1 {
		return p, nil
	}
	return jsonpath.CompileWithOptions(p.String(), jsonpath.Options{
		MaxSteps:   jsonpath.DefaultMaxSteps * n,
		MaxResults: jsonpath.DefaultMaxResults * n,
	})
}

// printCustomColumns prints one line per object: each column's values comma-separated, or
// <none>, escaped for the terminal as kubectl escapes them; headers as given.
func printCustomColumns(w io.Writer, cols []customColumn, items []*unstructured.Unstructured, noHeaders bool) error {
	tw := printers.GetNewTabWriter(w)
	if !noHeaders {
		writeCustomColumnsHeader(tw, cols)
	}
	for _, it := range items {
		if err := writeCustomColumnsRow(tw, cols, it.Object); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// writeCustomColumnsHeader writes the header line of -o custom-columns to a tab writer.
func writeCustomColumnsHeader(tw io.Writer, cols []customColumn) {
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.Header
	}
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
}

// writeCustomColumnsRow writes the line of -o custom-columns for obj to a tab writer; on
// an error nothing is written.
func writeCustomColumnsRow(tw io.Writer, cols []customColumn, obj map[string]any) error {
	cells := make([]string, len(cols))
	for i, c := range cols {
		if c.Path == nil { // an empty path
			cells[i] = "<none>"
			continue
		}
		vals, err := c.Path.Eval(obj)
		if err != nil {
			return err
		}
		var texts []string
		for _, v := range vals {
			text := v.String()
			if v.Kind() == jsonpath.KindNull {
				text = "<nil>" // kubectl prints each value with fmt, a null as nil
			}
			texts = append(texts, printers.EscapeTerminal(text)) // as kubectl: no escape sequence reaches the terminal
		}
		cells[i] = strings.Join(texts, ",")
		if len(texts) == 0 {
			cells[i] = "<none>"
		}
	}
	_, err := fmt.Fprintln(tw, strings.Join(cells, "\t"))
	return err
}

// tableOptions are the table flags.
type tableOptions struct {
	Wide, NoHeaders, ShowLabels, ShowKind bool
	LabelColumns                          []string
}

// printTable prints t with cli-runtime's table printer, as kubectl prints a server's Table:
// NAMESPACE first with -A, kind/name with several types, -L and --show-labels columns.
func printTable(w io.Writer, t *metav1.Table, tgt *target, o tableOptions, allNamespaces, withKind bool) error {
	p := printers.NewTablePrinter(printers.PrintOptions{
		NoHeaders:     o.NoHeaders,
		WithNamespace: allNamespaces && tgt.Res.Namespaced,
		WithKind:      withKind,
		Kind:          tgt.Res.GVK.GroupKind(),
		Wide:          o.Wide,
		ShowLabels:    o.ShowLabels,
		ColumnLabels:  o.LabelColumns,
	})
	return p.PrintObj(cutCells(t), w)
}

// cutCells returns t with every string cell that holds a line break as the table printer
// prints it: the text before the break, then "...". cli-runtime's printer measures a column
// on its cells as given, so a cell it cuts would widen the column by what it does not print;
// kubectl sizes columns on what is printed. t itself is left as it is.
func cutCells(t *metav1.Table) *metav1.Table {
	var c *metav1.Table
	for i, r := range t.Rows {
		cloned := false
		for j, cell := range r.Cells {
			s, ok := cell.(string)
			if !ok {
				continue
			}
			k := strings.IndexAny(s, "\f\n\r") // where the printer cuts
			if k < 0 {
				continue
			}
			if c == nil {
				cp := *t
				cp.Rows = slices.Clone(t.Rows)
				c = &cp
			}
			if !cloned {
				c.Rows[i].Cells, cloned = slices.Clone(r.Cells), true
			}
			c.Rows[i].Cells[j] = s[:k] + "..."
		}
	}
	if c == nil {
		return t
	}
	return c
}

// rowText renders one decorated row as printTable would, for --watch to compare rows.
func rowText(t *metav1.Table, tgt *target, o tableOptions, allNamespaces bool) string {
	var b bytes.Buffer
	o.NoHeaders = true
	copyT := &metav1.Table{ColumnDefinitions: slices.Clone(t.ColumnDefinitions), Rows: make([]metav1.TableRow, len(t.Rows))}
	for i, r := range t.Rows {
		copyT.Rows[i] = metav1.TableRow{Cells: slices.Clone(r.Cells), Object: r.Object}
	}
	_ = printTable(&b, copyT, tgt, o, allNamespaces, false)
	return b.String()
}
