package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// durations in cells ("5m", "3d4h", "<unknown>" stays): the server and the test compute
// them a few milliseconds apart, so they are compared as a placeholder.
var durationRE = regexp.MustCompile(`\b(\d+[smhdy])+\b`)

// The columns kquery computes for built-in resources are the apiserver's, cell for cell:
// for each covered resource, the Table the server prints for the seeded objects and the one
// kquery computes from the same objects.
func TestBuiltinColumnsMatchServer(t *testing.T) {
	seedParity(t)
	cf, err := newColumnFinder(cp.AdminConfig(), func(string, ...any) {})
	require.NoError(t, err)
	dyn := cp.Dynamic(t)
	ctx := context.Background()
	gvs := map[string]string{"": "v1", "apps": "v1", "batch": "v1", "networking.k8s.io": "v1"}
	cluster := map[string]bool{"nodes": true, "namespaces": true, "persistentvolumes": true,
		"ingressclasses": true, "servicecidrs": true, "ipaddresses": true}
	var covered []schema.GroupResource
	for gr := range builtinTables {
		covered = append(covered, gr)
	}
	slices.SortFunc(covered, func(a, b schema.GroupResource) int { return strings.Compare(a.String(), b.String()) })
	for _, gr := range covered {
		t.Run(gr.String(), func(t *testing.T) {
			gvr := gr.WithVersion(gvs[gr.Group])
			ns := "kquery-parity"
			if cluster[gr.Resource] {
				ns = ""
			}
			list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			require.NotEmpty(t, list.Items, "nothing seeded for %s", gr)

			src := &serverColumns{raw: cf.raw}
			src.res.GVR, src.res.Namespaced = gvr, ns != ""
			server, err := src.get(ctx, src.basePath(ns), map[string][]string{"includeObject": {"Metadata"}})
			require.NoError(t, err)

			b := builtinTables[gr]
			require.Len(t, b.columns, len(server.ColumnDefinitions))
			for i, c := range server.ColumnDefinitions {
				assert.Equal(t, c.Name, b.columns[i].Name, "column %d", i)
				assert.Equal(t, c.Type, b.columns[i].Type, "type of %s", c.Name)
				assert.Equal(t, c.Format, b.columns[i].Format, "format of %s", c.Name)
				assert.Equal(t, c.Priority, b.columns[i].Priority, "priority of %s", c.Name)
			}
			byName := map[string]*unstructured.Unstructured{}
			for i := range list.Items {
				byName[list.Items[i].GetName()] = &list.Items[i]
			}
			now := time.Now()
			require.Len(t, server.Rows, len(list.Items))
			for _, row := range server.Rows {
				var m metav1.PartialObjectMetadata
				require.NoError(t, json.Unmarshal(row.Object.Raw, &m))
				obj := byName[m.Name]
				require.NotNil(t, obj, m.Name)
				cells, err := b.cells(obj.Object, now)
				require.NoError(t, err)
				want := normalizeCells(row.Cells, len(server.ColumnDefinitions))
				got := normalizeCells(cells, len(server.ColumnDefinitions))
				assert.Equal(t, want, got, "%s %s", gr, m.Name)
			}
		})
	}
}

// normalizeCells prints cells as the table printer does (the server's numbers arrive as
// float64, kquery's as int64), with durations replaced.
func normalizeCells(cells []any, n int) []string {
	out := make([]string, n)
	for i := 0; i < n && i < len(cells); i++ {
		if cells[i] == nil {
			continue
		}
		out[i] = durationRE.ReplaceAllString(fmt.Sprint(cells[i]), "<d>")
	}
	return out
}

// A CRD's additionalPrinterColumns, evaluated by kquery with kindex's JSONPath compiler,
// print what the apiserver prints: every column type, values of the wrong type, missing
// values, an invalid date; numbers that the server's float64 rounds or prints as integers.
func TestCRDColumnsMatchServer(t *testing.T) {
	seedGolden(t)
	namespace(t, "kquery-golden-numbers")
	gizmos := cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: "golden.kquery.test", Version: "v1", Resource: "gizmos"}).
		Namespace("kquery-golden-numbers")
	for name, spec := range map[string]map[string]any{ // in Go, since YAML would read the integers as float64
		"big":  {"size": int64(1<<53 + 1), "ratio": int64(1<<53 + 1)},
		"huge": {"size": int64(1e11), "ratio": 1e21},
		"tiny": {"size": int64(-1), "ratio": -1.5e-7},
	} {
		_, err := gizmos.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "golden.kquery.test/v1", "kind": "Gizmo", "metadata": map[string]any{"name": name}, "spec": spec,
		}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		t.Cleanup(func() { _ = gizmos.Delete(context.Background(), name, metav1.DeleteOptions{}) }) // out of gizmos -A
	}
	for _, ns := range []string{"kquery-golden", "kquery-golden-numbers"} {
		t.Run(ns, func(t *testing.T) { crdColumnsMatchServer(t, ns) })
	}
}

func crdColumnsMatchServer(t *testing.T, ns string) {
	ctx := context.Background()
	cf, err := newColumnFinder(cp.AdminConfig(), func(string, ...any) {})
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Group: "golden.kquery.test", Version: "v1", Resource: "gizmos"}
	tgt := &target{}
	tgt.Res.GVR, tgt.Res.Namespaced = gvr, true
	src := cf.source(ctx, tgt, serverScope{Namespace: ns})
	local, ok := src.(*localColumns)
	require.True(t, ok, "columns from %s", src.describe())

	list, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	items := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		items[i] = &list.Items[i]
	}
	ours, err := local.table(ctx, items, time.Now())
	require.NoError(t, err)

	server := &serverColumns{raw: cf.raw}
	server.res.GVR, server.res.Namespaced = gvr, true
	theirs, err := server.get(ctx, server.basePath(ns), map[string][]string{"includeObject": {"Metadata"}})
	require.NoError(t, err)
	require.Len(t, ours.ColumnDefinitions, len(theirs.ColumnDefinitions))
	for i, c := range theirs.ColumnDefinitions {
		o := ours.ColumnDefinitions[i]
		assert.Equal(t, []any{c.Name, c.Type, c.Format, c.Priority}, []any{o.Name, o.Type, o.Format, o.Priority})
	}
	require.Len(t, ours.Rows, len(theirs.Rows))
	for i := range theirs.Rows {
		n := len(theirs.ColumnDefinitions)
		assert.Equal(t, normalizeCells(theirs.Rows[i].Cells, n), normalizeCells(ours.Rows[i].Cells, n), "row %d", i)
	}
}
