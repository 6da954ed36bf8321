package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden")

var (
	goldenOnce       sync.Once
	goldenErr        error
	goldenKubeconfig string
	goldenNow        time.Time // AGE counts to this: 400 days and 12 hours after the last object
)

// seedGolden creates testdata/golden.yaml in the namespace kquery-golden, once, and fixes
// the clock so that every AGE prints as 400d.
func seedGolden(t *testing.T) {
	t.Helper()
	goldenOnce.Do(func() {
		goldenErr = errSeed // until the end is reached (a failed require ends the goroutine)
		func() {
			b, err := os.ReadFile("testdata/golden.yaml")
			require.NoError(t, err)
			expires := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
			namespace(t, "kquery-golden")
			newApplier(t).apply(t, "kquery-golden", strings.ReplaceAll(string(b), "EXPIRES", expires))
			var last time.Time
			dyn := cp.Dynamic(t)
			for _, gvr := range []schema.GroupVersionResource{
				{Group: "golden.kquery.test", Version: "v1", Resource: "gizmos"}, {Version: "v1", Resource: "configmaps"},
				{Group: "apps", Version: "v1", Resource: "deployments"}, {Version: "v1", Resource: "services"}, {Version: "v1", Resource: "pods"},
			} {
				l, err := dyn.Resource(gvr).Namespace("kquery-golden").List(context.Background(), metav1.ListOptions{})
				require.NoError(t, err)
				for _, it := range l.Items {
					if c := it.GetCreationTimestamp().Time; c.After(last) {
						last = c
					}
				}
			}
			goldenNow = last.Add(400*24*time.Hour + 12*time.Hour)
			goldenKubeconfig = writeKubeconfig(t, cp.AdminConfig(), "kquery-golden")
		}()
		goldenErr = nil
	})
	require.NoError(t, goldenErr)
}

var (
	uidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rvRE   = regexp.MustCompile(`("?resourceVersion"?: ?)"\d+"`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	contRE = regexp.MustCompile(`("continue": |--continue )"?[A-Za-z0-9_-]+"?`)
)

// normalize replaces what changes from run to run: UIDs, resource versions, timestamps,
// and continue tokens (their encoding is the library's; TestContinue feeds them back).
func normalize(s string) string {
	s = contRE.ReplaceAllString(s, "$1<token>")
	s = uidRE.ReplaceAllString(s, "<uid>")
	s = rvRE.ReplaceAllString(s, `$1"<rv>"`)
	return timeRE.ReplaceAllString(s, "<time>")
}

// Golden outputs of every output format and column set, against objects on a real
// apiserver: kubectl's columns for built-ins, a CRD's additionalPrinterColumns of every type
// (integer, number, boolean, string, date; wide columns; values of the wrong type; missing
// values), several types at once, labels, sorting, paging, counts. Run with -update to
// rewrite testdata/golden/*.txt after a deliberate change, and read the diff.
func TestGolden(t *testing.T) {
	seedGolden(t)
	defer func(c func() time.Time) { clock = c }(clock)
	clock = func() time.Time { return goldenNow }
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"crd-columns", []string{"gizmos"}},
		{"crd-columns-wide", []string{"gz", "-o", "wide"}},
		{"crd-all-namespaces-labels", []string{"gizmo.golden.kquery.test", "-A", "--show-labels"}},
		{"crd-label-columns-sorted", []string{"gizmos", "-L", "tier,app", "--sort-by", ".spec.size", "--no-headers"}},
		{"crd-sorted-page", []string{"gizmos", "--sort-by", "{.metadata.labels.tier}", "--limit", "2"}},
		{"crd-names", []string{"gizmos", "beta", "alpha"}},
		{"sort-by-missing", []string{"gizmos", "--sort-by", ".spec.nosuch"}},
		{"crd-slash-names", []string{"gz/alpha", "cm/cm-b"}},
		{"builtin-pods", []string{"pods"}},
		{"builtin-pods-wide", []string{"po", "-o", "wide"}},
		{"builtin-configmaps", []string{"configmaps", "--show-kind"}},
		{"multi-type", []string{"deploy,svc,cm"}},
		{"category", []string{"kquery-golden"}},
		{"category-all", []string{"all"}},
		{"output-name", []string{"gizmos,cm", "-o", "name"}},
		{"output-yaml-single", []string{"gizmo", "alpha", "-o", "yaml"}},
		{"output-json-page", []string{"gizmos", "--limit", "2", "-o", "json"}},
		{"output-jsonpath", []string{"gizmos", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.size}{"\n"}{end}`}},
		// kubectl's documented union: quoted keys with dots read as paths (kindex's jsonpath).
		{"output-jsonpath-union", []string{"gizmos", "-o", `jsonpath={.items[*]['metadata.name', 'spec.size']}`}},
		{"output-custom-columns", []string{"gizmos", "-o", "custom-columns=NAME:.metadata.name,SIZE:.spec.size,TAGS:.spec.tags[*],LABELS:.metadata.labels"}},
		{"output-go-template", []string{"gizmos", "-o", `go-template={{range .items}}{{.metadata.name}} {{.spec.color}}{{"\n"}}{{end}}`}},
		{"where-index", []string{"gizmos", "--index", "size={.spec.size}", "--where", "size>=5", "--explain"}},
		{"where-jsonpath", []string{"gizmos", "--where", "{.status.phase} in (Running)", "--where", "!{.spec.tags}"}},
		{"where-none", []string{"gizmos", "--where", "{.spec.size}>100"}},
		{"count", []string{"gizmos,cm", "--count"}},
		{"group-by", []string{"gizmos", "--group-by", "{.status.phase}"}},
		{"group-by-json", []string{"gizmos", "--index", "tier={.metadata.labels.tier}", "--group-by", "tier", "-o", "json"}},
		{"not-found", []string{"gizmos", "alpha", "alpah"}},
		// Columns from the server's Table (AGE from the server's clock: replaced).
		{"server-table", []string{"priorityclasses", "-o", "wide"}},
		{"server-table-namespaced", []string{"roles,rolebindings", "-A", "--no-headers", "--sort-by", ".metadata.name", "--limit", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kquery(t, goldenKubeconfig, tc.args...)
			if strings.HasPrefix(tc.name, "server-table") {
				r.stdout = regexp.MustCompile(`<age> +`).ReplaceAllString(durationRE.ReplaceAllString(r.stdout, "<age>"), "<age> ")
			}
			got := normalize(fmt.Sprintf("$ kubectl kquery %s\n%s--- stderr ---\n%s--- exit %d ---\n",
				strings.Join(quoteArgs(tc.args), " "), r.stdout, r.stderr, r.code))
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), got)
		})
	}
}

// quoteArgs quotes arguments as a shell would need them.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " {}()[]*<>!\"'$\\,=|&;") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
