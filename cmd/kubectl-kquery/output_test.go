package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kindex/kindex/jsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestParseOutput(t *testing.T) {
	for _, tc := range []struct {
		o, kind, err string
	}{
		{"", "", ""}, {"wide", "wide", ""}, {"json", "json", ""}, {"yaml", "yaml", ""}, {"name", "name", ""},
		{"jsonpath={.items[*].metadata.name}", "jsonpath", ""},
		{"jsonpath=.metadata.name", "jsonpath", ""},
		{"jsonpath-as-json={.metadata.name}", "jsonpath", ""},
		{"jsonpath-as-json=", "", "no template given"},
		{"jsonpath-as-json={.a[}", "", "bad JSONPath"},
		{"custom-columns=NAME:.metadata.name,NS:{.metadata.namespace}", "custom-columns", ""},
		{"go-template={{.metadata.name}}", "go-template", ""},
		{"jsonpath=", "", "no template given"},
		{"jsonpath={.a[}", "", "bad JSONPath"},
		{"custom-columns=NAME", "", "expected <header>:<json-path-expr>"},
		{"go-template={{.a", "", "error parsing template"},
		{"xml", "", `unable to match a printer suitable for the output format "xml"`},
		{"wide=x", "", "unable to match a printer"},
		{"yaml=x", "", "unable to match a printer"}, {"json=", "", "unable to match a printer"},
		{"custom-columns=:.metadata.name,EMPTY:", "custom-columns", ""},
	} {
		f, err := parseOutput(tc.o)
		if tc.err != "" {
			require.Error(t, err, tc.o)
			assert.Contains(t, err.Error(), tc.err, tc.o)
			continue
		}
		require.NoError(t, err, tc.o)
		assert.Equal(t, tc.kind, f.Kind, tc.o)
		assert.Equal(t, strings.HasPrefix(tc.o, "jsonpath-as-json="), f.AsJSON, tc.o)
	}
}

func TestRelaxedTemplate(t *testing.T) {
	assert.Equal(t, "{.a.b}", relaxedTemplate(".a.b"))
	assert.Equal(t, "{.a.b}", relaxedTemplate("a.b"))
	assert.Equal(t, "{.a.b}", relaxedTemplate("{.a.b}"))
	assert.Equal(t, "x={.a}", relaxedTemplate("x={.a}"))
}

func TestParseCustomColumnsFile(t *testing.T) {
	cols, err := parseCustomColumnsFile("NAME   SIZE\n.metadata.name   {.spec.size}\n")
	require.NoError(t, err)
	require.Len(t, cols, 2)
	assert.Equal(t, "SIZE", cols[1].Header)
	_, err = parseCustomColumnsFile("NAME SIZE\n.metadata.name\n")
	assert.Error(t, err)
}

// CRD columns format their first value as the apiserver does.
func TestCRDCells(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	obj := map[string]any{
		"metadata": map[string]any{"name": "x", "creationTimestamp": "2026-01-09T00:00:00Z"},
		"spec": map[string]any{"i": int64(3), "f": 2.7, "b": true, "s": "text", "l": []any{"a", "b"},
			"m": map[string]any{"k": "v"}, "d": "2026-01-07T00:00:00Z", "bad": "yesterday", "n": nil},
	}
	col := func(typ, path string) apiextv1.CustomResourceColumnDefinition {
		return apiextv1.CustomResourceColumnDefinition{Name: strings.ToUpper(path), Type: typ, JSONPath: path}
	}
	c, err := crdColumns("xs.test", "v1", []apiextv1.CustomResourceColumnDefinition{
		col("integer", ".spec.i"), col("integer", ".spec.f"), col("integer", ".spec.s"),
		col("number", ".spec.i"), col("number", ".spec.f"),
		col("boolean", ".spec.b"), col("boolean", ".spec.s"),
		col("string", ".spec.s"), col("string", ".spec.i"), col("string", ".spec.l"), col("string", ".spec.m"), col("string", ".spec.n"),
		col("date", ".spec.d"), col("date", ".spec.bad"), col("date", ".spec.i"),
		col("string", ".spec.missing"), col("string", ".spec.l[*]"),
	})
	require.NoError(t, err)
	c0from := c.from
	cells, err := c.cells(obj, now)
	require.NoError(t, err)
	assert.Equal(t, []any{"x", int64(3), int64(2), nil, int64(3), 2.7, true, nil,
		"text", "3", `["a","b"]`, `{"k":"v"}`, "<no value>", "3d", "<invalid>", nil, nil, "a"}, cells) // a null string: the apiserver's <no value> (TestAuditS52CRDColumns)

	// number cells are what kubectl reads back from the server's float64: whole numbers as
	// integers, rounded where the float64 rounds.
	c, err = crdColumns("zs.test", "v1", []apiextv1.CustomResourceColumnDefinition{
		col("number", ".spec.big"), col("number", ".spec.whole"), col("number", ".spec.huge"), col("number", ".spec.f"),
	})
	require.NoError(t, err)
	cells, err = c.cells(map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{
		"big": int64(1<<53 + 1), "whole": float64(1e11), "huge": 1e21, "f": -1.5e-7}}, now)
	require.NoError(t, err)
	assert.Equal(t, []any{"x", int64(1 << 53), int64(1e11), 1e21, -1.5e-7}, cells)

	def, err := crdColumns("ys.test", "v1", nil) // no columns: the apiserver's AGE
	require.NoError(t, err)
	cells, err = def.cells(obj, now)
	require.NoError(t, err)
	assert.Equal(t, []any{"x", "24h"}, cells)
	assert.Equal(t, "Age", def.columns[1].Name)
	// -v 1 says where the columns come from: not from columns the CRD does not have.
	assert.Equal(t, "NAME and AGE: CRD ys.test (version v1) has no additionalPrinterColumns", def.from)
	assert.Equal(t, "the additionalPrinterColumns of CRD xs.test (version v1)", c0from)
}

// -o jsonpath prints a List of any size, as kubectl does: the evaluation budget grows with
// the objects printed (the default budget bounds one object's evaluation, and stopped
// {.items[*].metadata.name} at 16,384 names and a {range} over the items near 13,000).
func TestJSONPathOutputOfALargeList(t *testing.T) {
	const n = 40000
	items := make([]*unstructured.Unstructured, n)
	for i := range items {
		items[i] = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i), "namespace": "ns"},
		}}
	}
	for _, tmpl := range []string{
		`{.items[*].metadata.name}`,
		`{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}`,
	} {
		f, err := parseOutput("jsonpath=" + tmpl)
		require.NoError(t, err)
		var out strings.Builder
		require.NoError(t, printObjects(&out, f, items, "", false), tmpl)
		got := strings.Fields(out.String())
		require.Len(t, got, n, tmpl)
		assert.True(t, strings.HasSuffix(got[n-1], fmt.Sprintf("cm-%05d", n-1)), got[n-1])
	}
	// One object's evaluation keeps the default budget.
	f, err := parseOutput("jsonpath=" + strings.Repeat("{range @,@}", 16) + strings.Repeat("{end}", 16))
	require.NoError(t, err)
	err = printObjects(&strings.Builder{}, f, items[:1], "", true)
	require.ErrorIs(t, err, jsonpath.ErrBudgetExceeded)
}
