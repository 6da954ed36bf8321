package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// The objects of testdata/audit_s52*.yaml are not those of testdata/parity.yaml: init
// containers waiting, failed by a signal or an exit code, sidecars not started, terminated
// containers without a reason, evicted pods, terminating pods of every phase, readiness gates
// partly met, scheduling gates, load balancers with hostnames, duplicates and external IPs,
// NodePorts with several ports, ExternalNames with ports, endpoints over several subsets,
// nodes with several roles and no conditions, volumes and claims in every phase, quotas with
// missing usage, workloads without status, jobs complete, failed and failing, cron jobs in a
// time zone, ingresses with more rules than hosts. kquery's cells equal the server's Table's,
// and so does what it prints with -o wide.
func TestAuditS52BuiltinParity(t *testing.T) {
	const ns = "kquery-s52"
	ago5m := time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339)
	read := func(name string) string {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		return strings.ReplaceAll(string(b), "AGO5M", ago5m)
	}
	namespace(t, ns)
	a := newApplier(t)
	t.Cleanup(func() { s52Cleanup(t, ns) })
	a.apply(t, ns, read("testdata/audit_s52.yaml"))
	a.apply(t, "", read("testdata/audit_s52_cluster.yaml"))

	cf, err := newColumnFinder(cp.AdminConfig(), func(string, ...any) {})
	require.NoError(t, err)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	for _, gvr := range s52Resources {
		t.Run(gvr.GroupResource().String(), func(t *testing.T) {
			namespaced := gvr.Resource != "nodes" && gvr.Resource != "persistentvolumes"
			listNS := ns
			if !namespaced {
				listNS = ""
			}
			s52CompareCells(t, cf, gvr, listNS, namespaced, builtinTables[gvr.GroupResource()].cells)
			s52CompareText(t, cf, kc, gvr, listNS, namespaced)
		})
	}
}

var s52Resources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"}, {Version: "v1", Resource: "services"}, {Version: "v1", Resource: "endpoints"},
	{Version: "v1", Resource: "events"}, {Version: "v1", Resource: "secrets"}, {Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "persistentvolumeclaims"}, {Version: "v1", Resource: "resourcequotas"},
	{Version: "v1", Resource: "nodes"}, {Version: "v1", Resource: "persistentvolumes"},
	{Group: "apps", Version: "v1", Resource: "deployments"}, {Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"}, {Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"}, {Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
}

// s52Cleanup lets go of the objects held by finalizers and deletes what the test created.
func s52Cleanup(t *testing.T, ns string) {
	ctx := context.Background()
	dyn := cp.Dynamic(t)
	unhold := []byte(`{"metadata":{"finalizers":null}}`)
	for _, gvr := range append([]schema.GroupVersionResource{{Version: "v1", Resource: "namespaces"}}, s52Resources...) {
		if gvr.Resource == "namespaces" {
			continue
		}
		namespaced := gvr.Resource != "nodes" && gvr.Resource != "persistentvolumes"
		ri := dyn.Resource(gvr).Namespace(ns)
		if !namespaced {
			ri = dyn.Resource(gvr).Namespace("")
		}
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, it := range l.Items {
			if !namespaced && !strings.HasPrefix(it.GetName(), "kquery-s52-") {
				continue
			}
			if len(it.GetFinalizers()) > 0 {
				_, _ = ri.Patch(ctx, it.GetName(), types.MergePatchType, unhold, metav1.PatchOptions{})
			}
			_ = ri.Delete(ctx, it.GetName(), metav1.DeleteOptions{})
		}
	}
	_ = dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Delete(ctx, ns, metav1.DeleteOptions{})
}

// s52ServerTable is the server's Table of the objects of gvr in ns ("" for all).
func s52ServerTable(t *testing.T, cf *columnFinder, gvr schema.GroupVersionResource, ns string, namespaced bool) *metav1.Table {
	t.Helper()
	src := &serverColumns{raw: cf.raw}
	src.res.GVR, src.res.Namespaced = gvr, namespaced
	server, err := src.get(context.Background(), src.basePath(ns), map[string][]string{"includeObject": {"Metadata"}})
	require.NoError(t, err)
	return server
}

// s52CompareCells compares, object by object, the cells kquery computes with the server's.
func s52CompareCells(t *testing.T, cf *columnFinder, gvr schema.GroupVersionResource, ns string, namespaced bool,
	cells func(map[string]any, time.Time) ([]any, error)) {
	t.Helper()
	list, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, list.Items)
	byName := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		byName[list.Items[i].GetName()] = &list.Items[i]
	}
	server := s52ServerTable(t, cf, gvr, ns, namespaced)
	n := len(server.ColumnDefinitions)
	now := time.Now()
	require.Len(t, server.Rows, len(list.Items))
	for _, row := range server.Rows {
		var m metav1.PartialObjectMetadata
		require.NoError(t, json.Unmarshal(row.Object.Raw, &m))
		obj := byName[m.Name]
		require.NotNil(t, obj, m.Name)
		got, err := cells(obj.Object, now)
		require.NoError(t, err)
		assert.Equal(t, normalizeCells(row.Cells, n), normalizeCells(got, n), "%s %s", gvr.Resource, m.Name)
	}
}

var s52Spaces = regexp.MustCompile(`[ \t]+`)

// s52Text normalizes printed table text: durations replaced, runs of blanks made one.
func s52Text(s string) string {
	s = durationRE.ReplaceAllString(s, "<d>")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(s52Spaces.ReplaceAllString(l, " "))
	}
	return strings.Join(lines, "\n")
}

// s52CompareText compares what kquery prints with -o wide with the server's Table printed
// by cli-runtime's table printer, as kubectl prints it.
func s52CompareText(t *testing.T, cf *columnFinder, kc string, gvr schema.GroupVersionResource, ns string, namespaced bool) {
	t.Helper()
	server := s52ServerTable(t, cf, gvr, ns, namespaced)
	var want bytes.Buffer
	require.NoError(t, printers.NewTablePrinter(printers.PrintOptions{Wide: true}).PrintObj(server, &want))
	arg := gvr.Resource
	if gvr.Group != "" {
		arg += "." + gvr.Group
	}
	r := kquery(t, kc, arg, "-o", "wide")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, s52Text(want.String()), s52Text(r.stdout), "kquery %s -o wide", arg)
}

// kubectl's -o custom-columns (k8s.io/kubectl/pkg/cmd/get's CustomColumnsPrinter): each
// column's values by client-go's JSONPath, printed with fmt and escaped for the terminal,
// comma-separated, <none> when there are none.
func s52KubectlCustomColumns(t *testing.T, spec string, items []unstructured.Unstructured) string {
	t.Helper()
	var headers []string
	var parsers []*jsonpath.JSONPath
	for _, part := range strings.Split(spec, ",") {
		h, expr, _ := strings.Cut(part, ":")
		headers = append(headers, h)
		p := jsonpath.New(h).AllowMissingKeys(true)
		require.NoError(t, p.Parse(relaxedTemplate(expr)))
		parsers = append(parsers, p)
	}
	var b bytes.Buffer
	w := printers.GetNewTabWriter(&b)
	fmt.Fprintln(w, strings.Join(headers, "\t"))
	for _, it := range items {
		cols := make([]string, len(parsers))
		for i, p := range parsers {
			values, err := p.FindResults(it.UnstructuredContent())
			require.NoError(t, err)
			var texts []string
			if len(values) == 0 || len(values[0]) == 0 {
				texts = append(texts, "<none>")
			}
			for _, vs := range values {
				for _, v := range vs {
					texts = append(texts, printers.EscapeTerminal(fmt.Sprint(v.Interface())))
				}
			}
			cols[i] = strings.Join(texts, ",")
		}
		fmt.Fprintln(w, strings.Join(cols, "\t"))
	}
	require.NoError(t, w.Flush())
	return b.String()
}

// -o custom-columns and -o jsonpath print what kubectl's printers print for the same
// objects: ConfigMaps whose labels and annotations hold terminal escape sequences and
// carriage returns (kubectl escapes them in custom columns), Pods with lists of values.
func TestAuditS52CustomColumnsAndJSONPath(t *testing.T) {
	const ns = "kquery-s52-cc"
	namespace(t, ns)
	t.Cleanup(func() {
		_ = cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
			Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	newApplier(t).apply(t, ns, `apiVersion: v1
kind: ConfigMap
metadata:
  name: colored
  annotations: {note: "\e[31mred\e[0m", cr: "over\rwritten"}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, annotations: {note: plain}}
---
apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers: [{name: a, image: "a:1", ports: [{containerPort: 80}, {containerPort: 443}]}, {name: b, image: "b:2"}]
---
apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  containers: [{name: c, image: "c:3", resources: {limits: {cpu: 1500m}}}]
`)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	dyn := cp.Dynamic(t)
	for _, tc := range []struct {
		resource string
		spec     string
	}{
		{"configmaps", "NAME:.metadata.name,NOTE:.metadata.annotations.note,CR:.metadata.annotations.cr,A:.data.a"},
		{"pods", "NAME:.metadata.name,IMAGES:.spec.containers[*].image,PORTS:.spec.containers[*].ports[*].containerPort,CPU:.spec.containers[0].resources.limits.cpu"},
		{"pods", "NAME:.metadata.name,FIRST:.spec.containers[0:1].image,REST:{.spec.containers[1:].name},PORTS:.spec.containers[0].ports[:1].containerPort"},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			l, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: tc.resource}).Namespace(ns).
				List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			r := kquery(t, kc, tc.resource, "-o", "custom-columns="+tc.spec)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, s52KubectlCustomColumns(t, tc.spec, l.Items), r.stdout)

			const tmpl = `{range .items[*]}{.metadata.name}{"\t"}{.metadata.annotations.note}{"\t"}{.spec.containers[*].image}{"\n"}{end}`
			jp, err := printers.NewJSONPathPrinter(tmpl)
			require.NoError(t, err)
			jp.AllowMissingKeys(true)
			var want bytes.Buffer
			require.NoError(t, jp.PrintObj(listObject(s52Ptrs(l.Items), ""), &want))
			r = kquery(t, kc, tc.resource, "-o", "jsonpath="+tmpl)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, want.String(), r.stdout)
		})
	}
}

func s52Ptrs(items []unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// A CRD's columns on values the golden CRD does not hold: an integer column given floats
// (truncated, negative, huge), a number with decimals, booleans false, dates in the future,
// with fractions of a second, with an offset, not a date, and missing; a string column of
// a list, of a number, of a boolean and of null (nullable); a filter, a negative index, a
// wildcard; a column of priority 1. kquery's cells equal the server's, and -o wide prints
// what kubectl prints from the server's Table.
func TestAuditS52CRDColumns(t *testing.T) {
	const ns = "kquery-s52-crd"
	namespace(t, ns)
	soon := time.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	gvr := schema.GroupVersionResource{Group: "s52.kquery.test", Version: "v1", Resource: "gadgets"}
	dyn := cp.Dynamic(t)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = dyn.Resource(crdGVR).Delete(ctx, "gadgets.s52.kquery.test", metav1.DeleteOptions{})
		_ = dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Delete(ctx, ns, metav1.DeleteOptions{})
	})
	a := newApplier(t)
	a.apply(t, ns, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.s52.kquery.test}
spec:
  group: s52.kquery.test
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              message: {type: string, nullable: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
    additionalPrinterColumns:
    - {name: Count, type: integer, jsonPath: .spec.count}
    - {name: Score, type: number, jsonPath: .spec.score}
    - {name: Enabled, type: boolean, jsonPath: .spec.enabled}
    - {name: Due, type: date, jsonPath: .spec.due}
    - {name: Hosts, type: string, jsonPath: .spec.hosts}
    - {name: First-Host, type: string, jsonPath: ".spec.hosts[*]"}
    - {name: Last-Host, type: string, jsonPath: ".spec.hosts[-1]"}
    - {name: Ready, type: string, jsonPath: ".status.conditions[?(@.type==\"Ready\")].status"}
    - {name: Heavy, type: string, jsonPath: ".spec.items[?(@.weight>5)].name"}
    - {name: As-Text, type: string, jsonPath: .spec.score}
    - {name: Flag-Text, type: string, jsonPath: .spec.enabled}
    - {name: Message, type: string, jsonPath: .spec.message}
    - {name: Note, type: string, jsonPath: .spec.note, priority: 1}
    - {name: Level, type: integer, jsonPath: .spec.level, priority: 2}
    - {name: Synced, type: string, jsonPath: ".status.conditions[?(@.type=='Synced')].status"}
    - {name: Owner, type: string, jsonPath: ".metadata.ownerReferences[?(@.controller==true)].name"}
    - {name: True-Conditions, type: string, jsonPath: ".status.conditions[?(@.status==\"True\")].type"}
    - {name: Labels, type: string, jsonPath: .metadata.labels}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`)
	var objs []map[string]any
	for _, o := range []struct {
		name   string
		spec   map[string]any
		status map[string]any
	}{
		{"a-floats", map[string]any{"count": 7.9, "score": 2.75, "enabled": false, "due": soon, "hosts": []any{"a.example.com", "b.example.com"},
			"items": []any{map[string]any{"name": "x", "weight": 3}, map[string]any{"name": "y", "weight": 9}}, "note": "wide only", "level": 3, "message": nil},
			map[string]any{"conditions": []any{map[string]any{"type": "Synced", "status": "True"}, map[string]any{"type": "Ready", "status": "False"}}}},
		{"b-negative", map[string]any{"count": -2.5, "score": -0.125, "enabled": true, "due": "2026-01-01T00:00:00.123Z", "hosts": []any{},
			"items": []any{map[string]any{"name": "z", "weight": 6}}, "message": "fine"}, nil},
		{"c-big", map[string]any{"count": 1e15 + 0.5, "score": 123456789.5, "due": "2026-01-01T00:00:00+02:00", "hosts": []any{"only"},
			"enabled": "false", "level": "3"}, map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}},
		{"d-missing", map[string]any{}, nil},
		{"e-wrong", map[string]any{"count": "7", "score": true, "due": "2026-01-01", "hosts": "not-a-list", "items": map[string]any{"weight": 7},
			"note": 5}, map[string]any{"conditions": "none"}},
	} {
		meta := map[string]any{"name": o.name}
		if o.name == "a-floats" {
			meta["labels"] = map[string]any{"tier": "back", "app": "gadget"}
			meta["ownerReferences"] = []any{
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "not-controller", "uid": "00000000-0000-0000-0000-000000000001"},
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "controller", "uid": "00000000-0000-0000-0000-000000000002", "controller": true},
			}
		}
		obj := map[string]any{"apiVersion": "s52.kquery.test/v1", "kind": "Gadget", "metadata": meta, "spec": o.spec}
		if o.status != nil {
			obj["status"] = o.status
		}
		objs = append(objs, obj)
	}
	for _, obj := range objs {
		u := &unstructured.Unstructured{Object: obj}
		u.SetNamespace(ns)
		created, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
		require.NoError(t, err)
		if st, ok := obj["status"]; ok {
			created.Object["status"] = st
			_, err = dyn.Resource(gvr).Namespace(ns).UpdateStatus(context.Background(), created, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
	}

	cf, err := newColumnFinder(cp.AdminConfig(), func(string, ...any) {})
	require.NoError(t, err)
	tgt := &target{}
	tgt.Res.GVR, tgt.Res.Namespaced = gvr, true
	local, ok := cf.source(context.Background(), tgt, serverScope{Namespace: ns}).(*localColumns)
	require.True(t, ok)
	server := s52ServerTable(t, cf, gvr, ns, true)
	require.Len(t, local.columns, len(server.ColumnDefinitions))
	for i, c := range server.ColumnDefinitions {
		o := local.columns[i]
		assert.Equal(t, []any{c.Name, c.Type, c.Format, c.Priority}, []any{o.Name, o.Type, o.Format, o.Priority})
	}
	s52CompareCells(t, cf, gvr, ns, true, local.cells)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	s52CompareText(t, cf, kc, gvr, ns, true)

	// the columns of priority 1 and 2 are in -o wide only, as kubectl prints them
	var want bytes.Buffer
	require.NoError(t, printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(server, &want))
	r := kquery(t, kc, "gadgets")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, s52Text(want.String()), s52Text(r.stdout))
	assert.NotContains(t, r.stdout, "NOTE")
	assert.NotContains(t, r.stdout, "LEVEL")

	// -o custom-columns prints a null as kubectl's printer prints it
	list, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	const spec = "NAME:.metadata.name,MESSAGE:.spec.message,NOTE:.spec.note,SCORE:.spec.score"
	r = kquery(t, kc, "gadgets", "-o", "custom-columns="+spec)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, s52KubectlCustomColumns(t, spec, list.Items), r.stdout)

	// and -o jsonpath as cli-runtime's printer prints it
	const tmpl = `{range .items[*]}{.metadata.name}={.spec.message},{.spec.note},{.spec.score},{.spec.hosts}{"\n"}{end}`
	jp, err := printers.NewJSONPathPrinter(tmpl)
	require.NoError(t, err)
	jp.AllowMissingKeys(true)
	var wantJP bytes.Buffer
	require.NoError(t, jp.PrintObj(listObject(s52Ptrs(list.Items), ""), &wantJP))
	r = kquery(t, kc, "gadgets", "-o", "jsonpath="+tmpl)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, wantJP.String(), r.stdout)
}
