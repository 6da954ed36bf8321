package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// testWriter is a bytes.Buffer safe for the concurrent writes of a running command.
type testWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *testWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

var (
	widgets = discovery.Resource{
		GVR:        schema.GroupVersionResource{Group: "demo.kindex.io", Version: "v1", Resource: "widgets"},
		GVK:        schema.GroupVersionKind{Group: "demo.kindex.io", Version: "v1", Kind: "Widget"},
		Namespaced: true,
	}
	namespaces = discovery.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
	}
	now = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
)

func widget(ns, name string, size any, images ...any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.kindex.io/v1", "kind": "Widget",
		"spec": map[string]any{"size": size, "images": images},
	}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetCreationTimestamp(metav1.NewTime(now.Add(-90 * time.Minute)))
	return u
}

func mustIndex(t *testing.T, arg string) index {
	t.Helper()
	ix, err := parseIndex(arg)
	require.NoError(t, err)
	return ix
}

func TestWriteTable(t *testing.T) {
	items := []*unstructured.Unstructured{
		widget("a", "w1", int64(3), "nginx", "envoy"),
		widget("b", "long-name-2", nil),
	}
	indexes := []index{mustIndex(t, "size={.spec.size}"), mustIndex(t, "image={.spec.images[*]}")}
	var out bytes.Buffer
	require.NoError(t, render(&out, "table", widgets, items, indexes, "", now))
	want := strings.Join([]string{
		"NAMESPACE   NAME          SIZE     IMAGE         AGE",
		"a           w1            3        nginx,envoy   90m",
		"b           long-name-2   <none>   <none>        90m",
		"",
	}, "\n")
	assert.Equal(t, want, out.String())

	out.Reset()
	ns := &unstructured.Unstructured{Object: map[string]any{}}
	ns.SetName("kube-system")
	require.NoError(t, render(&out, "table", namespaces, []*unstructured.Unstructured{ns}, nil, "", now))
	assert.Equal(t, "NAME          AGE\nkube-system   <unknown>\n", out.String(), "no NAMESPACE column for a cluster-scoped resource")
}

func TestWriteNamesAndJSON(t *testing.T) {
	items := []*unstructured.Unstructured{widget("a", "w1", int64(3)), widget("a", "w2", int64(4))}
	var out bytes.Buffer
	require.NoError(t, render(&out, "name", widgets, items, nil, "", now))
	assert.Equal(t, "widget.demo.kindex.io/w1\nwidget.demo.kindex.io/w2\n", out.String())
	out.Reset()
	ns := &unstructured.Unstructured{Object: map[string]any{}}
	ns.SetName("default")
	require.NoError(t, render(&out, "name", namespaces, []*unstructured.Unstructured{ns}, nil, "", now))
	assert.Equal(t, "namespace/default\n", out.String(), "core group: no suffix")

	out.Reset()
	require.NoError(t, render(&out, "json", widgets, items, nil, "tok", now))
	var list struct {
		Kind     string
		Metadata struct{ Continue string }
		Items    []map[string]any
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &list))
	assert.Equal(t, "List", list.Kind)
	assert.Equal(t, "tok", list.Metadata.Continue)
	require.Len(t, list.Items, 2)
	assert.Equal(t, "w2", list.Items[1]["metadata"].(map[string]any)["name"])
}

func TestFormatExprError(t *testing.T) {
	tests := []struct {
		args  []string
		line  string // the argument as shown
		under byte   // the byte the caret points at; 0 for the end of the line
	}{
		{[]string{"pods", "--index", "node={.spec.nodeName"}, "--index node={.spec.nodeName", 0},
		{[]string{"pods", "--index", "n={.a[1:x]}"}, "--index n={.a[1:x]}", 'x'},
		{[]string{"pods", "--where", "{.a[?(@.b ~ 1)]}=x"}, "--where {.a[?(@.b ~ 1)]}=x", '~'},
		{[]string{"pods", "--index", "a={.a}", "--where", "{.a b}!=a"}, "--where {.a b}!=a", 'b'},
		{[]string{"pods", "--where", "!{.a.b"}, "--where !{.a.b", 0},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, err := parseArgs(tt.args, &testWriter{})
			var ee *exprError
			require.ErrorAs(t, err, &ee)
			lines := strings.Split(formatExprError(ee), "\n")
			require.Len(t, lines, 4, formatExprError(ee))
			assert.Contains(t, lines[0], "bad JSONPath in "+ee.Flag)
			assert.Equal(t, "  "+tt.line, lines[1])
			// The caret is under the byte where the JSONPath compiler stopped.
			col := strings.Index(lines[2], "^")
			assert.Equal(t, len("  "+ee.Flag+" ")+ee.Offset+ee.Err.Offset, col)
			if tt.under == 0 {
				assert.Equal(t, len(lines[1]), col, "past the end: the expression is incomplete")
			} else {
				assert.Equal(t, string(tt.under), lines[1][col:col+1])
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	all := []discovery.Resource{
		widgets,
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Singular: "pod", ShortNames: []string{"po"},
			GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}},
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Singular: "deployment",
			ShortNames: []string{"deploy"}, GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
	}
	assert.Equal(t, []string{"widgets.demo.kindex.io"}, suggest("wigdets", all, 3))
	assert.Equal(t, []string{"pods"}, suggest("pdos", all, 3))
	assert.Equal(t, []string{"deployments.apps"}, suggest("deplo.apps", all, 3))
	assert.Empty(t, suggest("zzzzzz", all, 3))
	assert.Equal(t, 2, editDistance("wigdets", "widgets"))
}
