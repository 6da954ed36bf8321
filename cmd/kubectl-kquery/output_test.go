package main

import (
	"strings"
	"testing"
	"time"

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
		{"custom-columns=NAME:.metadata.name,NS:{.metadata.namespace}", "custom-columns", ""},
		{"go-template={{.metadata.name}}", "go-template", ""},
		{"jsonpath=", "", "no template given"},
		{"jsonpath={.a[}", "", "bad JSONPath"},
		{"custom-columns=NAME", "", "expected <header>:<json-path-expr>"},
		{"go-template={{.a", "", "error parsing template"},
		{"xml", "", `unable to match a printer suitable for the output format "xml"`},
		{"wide=x", "", "unable to match a printer"},
	} {
		f, err := parseOutput(tc.o)
		if tc.err != "" {
			require.Error(t, err, tc.o)
			assert.Contains(t, err.Error(), tc.err, tc.o)
			continue
		}
		require.NoError(t, err, tc.o)
		assert.Equal(t, tc.kind, f.Kind, tc.o)
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
	cells, err := c.cells(obj, now)
	require.NoError(t, err)
	assert.Equal(t, []any{"x", int64(3), int64(2), nil, int64(3), 2.7, true, nil,
		"text", "3", `["a","b"]`, `{"k":"v"}`, nil, "3d", "<invalid>", nil, nil, "a"}, cells)

	def, err := crdColumns("ys.test", "v1", nil) // no columns: the apiserver's AGE
	require.NoError(t, err)
	cells, err = def.cells(obj, now)
	require.NoError(t, err)
	assert.Equal(t, []any{"x", "24h"}, cells)
	assert.Equal(t, "Age", def.columns[1].Name)
}
