package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// atOnce bounds a whole run of kquery that answers a forbidden resource: kubeconfig,
// discovery, the informer's first request and its 403 (the sync timeout, which a forbidden
// resource used to wait for, is a minute).
const atOnce = 2 * time.Second

// answersAtOnce runs kquery up to three times, until a run ends within atOnce, and returns
// that run or the fastest: the bound is on kquery's answer, not on the worst moment of a
// loaded 2-core machine running every package under the race detector (nor on the moment
// the API server's authorizer takes to see a grant).
func answersAtOnce(t *testing.T, kc string, args ...string) result {
	t.Helper()
	var best result
	for i := range 3 {
		r := kquery(t, kc, args...)
		if i == 0 || r.took < best.took {
			best = r
		}
		if r.took < atOnce {
			break
		}
	}
	return best
}

// A resource the user may not list is answered at once, in kubectl's words and with its
// exit status, not after the sync timeout; the resources the user may list are printed.
func TestForbiddenAnswersAtOnce(t *testing.T) {
	seedGolden(t)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	kc := writeKubeconfig(t, cfg, "kquery-golden")

	for _, typ := range []string{"pods", "gizmos"} {
		r := answersAtOnce(t, kc, typ)
		assert.Less(t, r.took, atOnce, "%s answered in %v", typ, r.took)
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		gr := map[string]string{"pods": `"pods" in API group ""`, "gizmos": `"gizmos" in API group "golden.kquery.test"`}[typ]
		name := map[string]string{"pods": "pods", "gizmos": "gizmos.golden.kquery.test"}[typ]
		assert.Equal(t, fmt.Sprintf("Error from server (Forbidden): %s is forbidden: User %q cannot list resource %s in the namespace \"kquery-golden\"\n", name, user, gr), r.stderr)
	}

	// Objects asked for by name are GETs for kubectl: its refusal names each, and the verb.
	r := answersAtOnce(t, kc, "pods", "p1", "p2")
	assert.Less(t, r.took, atOnce)
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	refused := func(name string) string {
		return fmt.Sprintf("Error from server (Forbidden): pods %q is forbidden: User %q cannot get resource \"pods\" in API group \"\" in the namespace \"kquery-golden\"\n", name, user)
	}
	assert.Equal(t, refused("p1")+refused("p2"), r.stderr)
	r = answersAtOnce(t, kc, "pods/p1", "--count")
	assert.Equal(t, refused("p1"), r.stderr)

	cp.Grant(t, user, "kquery-golden", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	r = answersAtOnce(t, kc, "cm,pods", "-o", "name")
	assert.Less(t, r.took, atOnce)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "configmap/cm-a\nconfigmap/cm-b\n", r.stdout)
	assert.Contains(t, r.stderr, "Error from server (Forbidden): pods is forbidden")

	// A count of a forbidden resource is the error alone, as kubectl prints no table.
	r = answersAtOnce(t, kc, "pods", "--count")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout, "no header without a count")
	assert.Contains(t, r.stderr, "Error from server (Forbidden): pods is forbidden")

	// -v 1 says why.
	r = kquery(t, kc, "pods", "-v", "1")
	assert.Contains(t, r.stderr, "kquery: pods: informer parked (Forbidden)")

	// A user who may get pods but not list them (a Role with resourceNames, say) reads them
	// by name as with kubectl: the objects, kubectl's columns, NotFound for a missing name.
	cp.Grant(t, user, "kquery-golden", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}})
	testenv.Eventually(t, 30*time.Second, func() bool {
		r = kquery(t, kc, "pods", "web-1", "nope")
		return strings.Contains(r.stdout, "web-1")
	}, "pods read by GET once the grant takes effect")
	assert.Equal(t, 1, r.code)
	assert.Regexp(t, `^NAME +READY +STATUS +RESTARTS +AGE\nweb-1 +1/1 +Running +0 +\S+\n$`, r.stdout)
	assert.Equal(t, "Error from server (NotFound): pods \"nope\" not found\n", r.stderr)
	r = kquery(t, kc, "pods/web-1", "-o", "name")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "pod/web-1\n", r.stdout)
	assert.Empty(t, r.stderr)
	// What needs the cache still needs the LIST.
	for _, args := range [][]string{{"pods", "web-1", "--where", "{.spec.nodeName}=node-a"}, {"pods", "web-1", "--count"}, {"pods", "web-1", "--sort-by", "{.metadata.name}"}} {
		r = kquery(t, kc, args...)
		assert.Equal(t, 1, r.code, "%q", args)
		assert.Empty(t, r.stdout, "%q", args)
		assert.Contains(t, r.stderr, "cannot list resource \"pods\"", "%q", args)
	}
}

// --as by a user who may not impersonate prints the server's refusal, naming the user and
// what was refused (client-go's discovery drops it, and says "unknown"); once the user may
// impersonate, the impersonated user's refusal names that user, the verb and the resource.
func TestImpersonationForbidden(t *testing.T) {
	seedGolden(t)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	kc := writeKubeconfig(t, cfg, "kquery-golden")
	for _, args := range [][]string{{"cm"}, {"cm,gizmos", "--count"}, {"refs", "--dangling"}} {
		r := kquery(t, kc, append(args, "--as", "someone")...)
		assert.Equal(t, 1, r.code, "%q", args)
		assert.Empty(t, r.stdout, "%q", args)
		assert.Regexp(t, fmt.Sprintf(`^Error from server \(Forbidden\): \S.* User %q cannot impersonate\S* .*\n$`, user), r.stderr, "%q", args)
		assert.NotContains(t, r.stderr, "unknown", "%q", args)
	}

	cp.Grant(t, user, "", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}})
	r := kquery(t, kc, "cm", "--as", "someone")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, `Error from server (Forbidden): configmaps is forbidden: User "someone" cannot list resource "configmaps" in API group "" in the namespace "kquery-golden"`+"\n", r.stderr)
}

// An unknown type is a sentence with the closest names first; an ambiguous one lists the
// candidates aligned.
func TestResourceErrors(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct{ typed, first string }{
		{"gizmoz", "gizmos.golden.kquery.test"},
		{"gimzos", "gizmos.golden.kquery.test"},
		{"confgmaps", "configmaps"},
		{"deploymnets", "deployments.apps"},
		{"cmm", "configmaps"},
	} {
		r := kquery(t, goldenKubeconfig, tc.typed)
		assert.Equal(t, 1, r.code)
		lines := strings.Split(r.stderr, "\n")
		require.GreaterOrEqual(t, len(lines), 3, r.stderr)
		assert.Equal(t, fmt.Sprintf("error: the server doesn't have a resource type %q", tc.typed), lines[0])
		assert.Equal(t, "Did you mean:", lines[1])
		assert.Equal(t, tc.first, strings.Fields(lines[2])[0], r.stderr)
	}

	for _, group := range []string{"a.kquery.test", "bb.kquery.test"} {
		cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	}
	r := kquery(t, goldenKubeconfig, "gadgets")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "error: \"gadgets\" names 2 resources; qualify it with the group:\n"+
		"  gadgets.a.kquery.test    Gadget   a.kquery.test/v1\n"+
		"  gadgets.bb.kquery.test   Gadget   bb.kquery.test/v1\n", stripTrailing(r.stderr))
	r = kquery(t, goldenKubeconfig, "gadgets.bb.kquery.test")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "No resources found in kquery-golden namespace.\n", r.stderr)
}

// A short name that several resources have answers with the first, and warns as kubectl
// warns; a plural or a qualified name does not.
func TestShortNameWarning(t *testing.T) {
	seedGolden(t)
	r := kquery(t, goldenKubeconfig, "ev", "--field-selector", "metadata.name=none")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Warning: short name \"ev\" could also match lower priority resource events.events.k8s.io\n"+
		"No resources found in kquery-golden namespace.\n", r.stderr)
	for _, typed := range []string{"events", "ev.events.k8s.io", "cm"} {
		r := kquery(t, goldenKubeconfig, typed, "--field-selector", "metadata.name=none")
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "No resources found in kquery-golden namespace.\n", r.stderr, typed)
	}
}

func stripTrailing(s string) string {
	return regexp.MustCompile(`[ \t]+\n`).ReplaceAllString(s, "\n")
}

// A missing kubeconfig names the file that is missing.
func TestMissingKubeconfig(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	runWith := func(args ...string) (int, string) {
		var out, errOut testsupport.Buffer
		code := run(ctx, args, &out, &errOut)
		return code, errOut.String()
	}
	missing := filepath.Join(home, "nope.yaml")
	code, stderr := runWith("pods", "--kubeconfig", missing)
	assert.Equal(t, 1, code)
	assert.Equal(t, fmt.Sprintf("error: the kubeconfig file %q given with --kubeconfig does not exist\n", missing), stderr)

	t.Setenv("KUBECONFIG", missing+string(os.PathListSeparator)+filepath.Join(home, "other.yaml"))
	code, stderr = runWith("pods")
	assert.Equal(t, 1, code)
	assert.Equal(t, fmt.Sprintf("error: no kubeconfig: $KUBECONFIG names %q, %q, and none of them exists\n", missing, filepath.Join(home, "other.yaml")), stderr)

	// ~/.kube/config, as client-go computed it when the process started.
	if _, err := os.Stat(clientcmd.RecommendedHomeFile); err == nil {
		t.Logf("%s exists: the case without any kubeconfig is not checked", clientcmd.RecommendedHomeFile)
		return
	}
	t.Setenv("KUBECONFIG", "")
	code, stderr = runWith("pods")
	assert.Equal(t, 1, code)
	assert.Equal(t, fmt.Sprintf("error: no kubeconfig: %q does not exist (set $KUBECONFIG or --kubeconfig, or --server)\n", clientcmd.RecommendedHomeFile), stderr)
}

// Command lines kubectl refuses are refused with its words, before connecting.
func TestUsageErrors(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "error: you must specify the type of resource to get."},
		{[]string{"cm", "cm/cm-a"}, "error: there is no need to specify a resource type as a separate argument"},
		{[]string{"cm", "cm-a", "-l", "app=x"}, "error: name cannot be provided when a selector is specified"},
		{[]string{"cm", "cm-a", "-A"}, "error: a resource cannot be retrieved by name across all namespaces"},
		{[]string{"cm,gizmos", "-w"}, "error: --watch takes one resource type"},
		{[]string{"cm", "-o", "xml"}, `error: unable to match a printer suitable for the output format "xml"`},
		{[]string{"cm", "--where", "size>3"}, `error: --where: "size" is not an index`},
		{[]string{"cm", "--index", "a b={.x}"}, "error: --index: an index name is letters, digits, '_' and '-'"},
		{[]string{"cm", "--index", "x={.x[}"}, "error: --index: bad JSONPath"},
		{[]string{"cm", "--index", "name={.spec.size}"}, `error: --index: the name "name" is a built-in index`},
		{[]string{"cm", "--nosuchflag"}, "error: unknown flag: --nosuchflag"},
		// kubectl's refusals, in its words.
		{[]string{"all", "web"}, "error: you must specify only one resource"},
		{[]string{"cm", "--show-labels", "-o", "json"}, "error: --show-labels option cannot be used with json printer"},
		{[]string{"cm", "-L", "app", "-o", "custom-columns=N:.metadata.name"},
			"error: --label-columns option cannot be used with custom-columns=N:.metadata.name printer"},
		{[]string{"cm", "--output-watch-events"}, "error: --output-watch-events option can only be used with --watch or --watch-only"},
	} {
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.True(t, strings.HasPrefix(r.stderr, tc.msg), "%q: %s", tc.args, r.stderr)
	}
}

// What kubectl refuses with a plain error (its printer flags' and get's checks) is refused
// in the same words, without the usage hint kubectl prints only for usage errors; a
// format kubectl does not have (-o yaml=x) is refused, not read as another.
func TestPlainErrorsAsKubectl(t *testing.T) {
	seedGolden(t)
	missing := filepath.Join(t.TempDir(), "missing")
	oneLine := filepath.Join(t.TempDir(), "columns")
	require.NoError(t, os.WriteFile(oneLine, []byte("NAME SIZE\n"), 0o600))
	const formats = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"cm", "-o", "xml"}, `unable to match a printer suitable for the output format "xml", allowed formats are: ` + formats},
		{[]string{"cm", "-o", "yaml=x"}, `unable to match a printer suitable for the output format "yaml=x", allowed formats are: ` + formats},
		{[]string{"cm", "-o", "json="}, `unable to match a printer suitable for the output format "json=", allowed formats are: ` + formats},
		{[]string{"cm", "-o", "name=x"}, `unable to match a printer suitable for the output format "name=x", allowed formats are: ` + formats},
		{[]string{"cm", "-o", "jsonpath"}, "template format specified but no template given"},
		{[]string{"cm", "-o", "go-template"}, "template format specified but no template given"},
		{[]string{"cm", "-o", "custom-columns"}, "custom-columns format specified but no custom columns given"},
		{[]string{"cm", "-o", "custom-columns=NAME"}, "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{[]string{"cm", "-o", "jsonpath-file=" + missing}, "error reading --template " + missing + ", open " + missing + ": no such file or directory"},
		{[]string{"cm", "-o", "templatefile=" + missing}, "error reading --template " + missing + ", open " + missing + ": no such file or directory"},
		{[]string{"cm", "-o", "custom-columns-file=" + missing}, "error reading template " + missing + ", open " + missing + ": no such file or directory"},
		{[]string{"cm", "-o", "custom-columns-file=" + oneLine}, "invalid template, missing spec line. Expected format is one line of space separated headers, one line of space separated column specs."},
		{[]string{"cm", "-o", "go-template={{.x"}, "error parsing template {{.x, template: output:1: unclosed action"},
		{[]string{"cm", "cm-a", "-A"}, "a resource cannot be retrieved by name across all namespaces"},
		{[]string{"cm", "--show-labels", "-o", "json"}, "--show-labels option cannot be used with json printer"},
		{[]string{"cm", "-L", "app", "-o", "custom-columns=N:.metadata.name"}, "--label-columns option cannot be used with custom-columns=N:.metadata.name printer"},
		{[]string{"cm", "--output-watch-events"}, "--output-watch-events option can only be used with --watch or --watch-only"},
	} {
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.Equal(t, "error: "+tc.msg+"\n", r.stderr, "%q", tc.args)
		assert.Empty(t, r.stdout, "%q", tc.args)
	}
}

// Selectors the server refuses, refused in kubectl's words: the server's message with the
// resource and the selectors kubectl's LIST names (kubectl sends them as typed, and kindex's
// informer would refuse a malformed one itself, in its own words).
func TestSelectorErrorsAsKubectl(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"cm", "-l", "app in"}, `Error from server (BadRequest): Unable to find "/v1, Resource=configmaps" that match label selector "app in", ` +
			`field selector "": unable to parse requirement: found '' expected: '('`},
		{[]string{"cm", "--field-selector", "x"}, `Error from server (BadRequest): Unable to find "/v1, Resource=configmaps" that match label selector "", ` +
			`field selector "x": invalid selector: 'x'; can't understand 'x'`},
		{[]string{"gizmos", "-l", "app", "--field-selector", "spec.size=3"}, `Error from server (BadRequest): Unable to find ` +
			`"golden.kquery.test/v1, Resource=gizmos" that match label selector "app", field selector "spec.size=3": field label not supported: spec.size`},
	} {
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.Equal(t, tc.msg+"\n", r.stderr, "%q", tc.args)
	}
}

// -o custom-columns takes what kubectl takes: an empty header, an empty path (its cells are
// <none>); a custom-columns file is its first two lines.
func TestCustomColumnsAsKubectl(t *testing.T) {
	seedGolden(t)
	r := kquery(t, goldenKubeconfig, "cm", "cm-a", "-o", "custom-columns=:.metadata.name,DATA:")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "       DATA\ncm-a   <none>\n", r.stdout)
	file := filepath.Join(t.TempDir(), "columns")
	require.NoError(t, os.WriteFile(file, []byte("\nNAME\n.metadata.name\n"), 0o600)) // no headers, one path
	r = kquery(t, goldenKubeconfig, "cm", "cm-a", "-o", "custom-columns-file="+file)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "error: number of headers (0) and field specifications (1) don't match\n", r.stderr)
}

// What kubectl get prints for one name that does not exist, and for nothing found: the
// error alone (no empty List, no watch that never ends), custom-columns' headers; and its
// --template flag.
// kubectl get's --chunk-size is accepted, and changes nothing.
func TestChunkSizeIsAccepted(t *testing.T) {
	seedGolden(t)
	want := kquery(t, goldenKubeconfig, "cm", "-A", "-o", "name")
	require.Equal(t, 0, want.code, want.stderr)
	require.NotEmpty(t, want.stdout)
	for _, size := range []string{"0", "1", "-1"} {
		r := kquery(t, goldenKubeconfig, "cm", "-A", "-o", "name", "--chunk-size", size)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, want.stdout, r.stdout, "--chunk-size %s", size)
	}
	r := kquery(t, goldenKubeconfig, "cm", "--chunk-size", "abc")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `invalid argument "abc" for "--chunk-size" flag`)
}

// The server's warnings reach stderr once each, as kubectl prints them: the v1 Endpoints
// API is deprecated.
func TestServerWarningsArePrintedOnce(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	_, err := cp.Clientset(t).CoreV1().Endpoints(ns).Create(context.Background(),
		&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ep"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	r := kquery(t, kc, "endpoints", "-o", "name")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "endpoints/ep\n", r.stdout)
	assert.Equal(t, 1, strings.Count(r.stderr, "Warning: v1 Endpoints is deprecated"), r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, "Warning: "), r.stderr)
}

func TestNotFoundAndEmptyAsKubectl(t *testing.T) {
	seedGolden(t)
	for _, o := range []string{"json", "yaml", "name", "custom-columns=N:.metadata.name"} {
		r := kquery(t, goldenKubeconfig, "cm", "nope", "-o", o)
		assert.Equal(t, 1, r.code, o)
		assert.Empty(t, r.stdout, "-o %s prints nothing for a missing object", o)
		assert.Equal(t, `Error from server (NotFound): configmaps "nope" not found`+"\n", r.stderr, o)
	}
	// A name with a field selector's syntax in it is a name that is not there (kubectl GETs
	// it), not a selector the server refuses, nor one that selects another object.
	for _, n := range []string{`cm-a,metadata.name!=x`, `cm-a=`, `cm-a\`, `a\,b`} {
		r := kquery(t, goldenKubeconfig, "cm", n)
		assert.Equal(t, 1, r.code, n)
		assert.Empty(t, r.stdout, n)
		assert.Equal(t, fmt.Sprintf("Error from server (NotFound): configmaps %q not found\n", n), r.stderr, n)
	}
	// A count by name counts those there are and says which are missing.
	r := kquery(t, goldenKubeconfig, "cm", "cm-a", "nope", "--count")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "COUNT\n1\n", r.stdout)
	assert.Equal(t, `Error from server (NotFound): configmaps "nope" not found`+"\n", r.stderr)
	r = kquery(t, goldenKubeconfig, "cm", "nope", "--count", "--ignore-not-found")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "COUNT\n0\n", r.stdout)
	r = kquery(t, goldenKubeconfig, "cm", "nope", "-w")
	assert.Equal(t, 1, r.code, "no watch on an object that does not exist")
	assert.Equal(t, `Error from server (NotFound): configmaps "nope" not found`+"\n", r.stderr)
	// Nor on the others when one is missing: kubectl prints the error only.
	wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr testsupport.Buffer
	code := run(wctx, []string{"--kubeconfig", goldenKubeconfig, "cm", "cm-a", "nope", "-w"}, &stdout, &stderr)
	assert.NoError(t, wctx.Err(), "no watch when a name is missing")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout.String())
	assert.Equal(t, `Error from server (NotFound): configmaps "nope" not found`+"\n", stderr.String())

	empty := "kquery-empty"
	namespace(t, empty)
	kc := writeKubeconfig(t, cp.AdminConfig(), empty)
	r = kquery(t, kc, "cm", "-l", "nothing=here", "-o", "custom-columns=NAME:.metadata.name,DATA:.data")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "NAME   DATA\n", r.stdout, "headers, as kubectl prints them")
	assert.Empty(t, r.stderr)

	r = kquery(t, goldenKubeconfig, "cm", "-o", "go-template", "--template", "{{len .items}}")
	assert.Equal(t, 0, r.code, r.stderr)
	want := kquery(t, goldenKubeconfig, "cm", "-o", "go-template={{len .items}}")
	assert.Equal(t, want.stdout, r.stdout)
	assert.NotEmpty(t, r.stdout)
	r = kquery(t, goldenKubeconfig, "cm", "--template", "{{len .items}}")
	assert.Equal(t, want.stdout, r.stdout, "--template alone is a go-template")
	r = kquery(t, goldenKubeconfig, "cm", "cm-a", "-o", "jsonpath", "--template", "{.metadata.name}")
	assert.Equal(t, "cm-a", r.stdout)
}

// A name that cannot be a segment of a URL path is refused in kubectl's words, the names
// asked for with it still answered; among other errors, without "error: ", as kubectl.
func TestInvalidNamesAsKubectl(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct {
		args         []string
		stdout, want string
	}{
		{[]string{"cm", "."}, "", "error: invalid resource name \".\": [may not be '.']\n"},
		{[]string{"cm/..", "--ignore-not-found"}, "", "error: invalid resource name \"..\": [may not be '..']\n"},
		{[]string{"cm", "cm-a", "x%", "-o", "name"}, "configmap/cm-a\n", "error: invalid resource name \"x%\": [may not contain '%']\n"},
		{[]string{"cm", ".", "nope", "-o", "name"}, "", "invalid resource name \".\": [may not be '.']\nError from server (NotFound): configmaps \"nope\" not found\n"},
		{[]string{"cm,svc", "..", "-o", "name"}, "", "invalid resource name \"..\": [may not be '..']\ninvalid resource name \"..\": [may not be '..']\n"},
	} {
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.Equal(t, tc.stdout, r.stdout, "%q", tc.args)
		assert.Equal(t, tc.want, r.stderr, "%q", tc.args)
	}
}

// Names with a label or field selector are refused as kubectl refuses them, with its words
// and nothing else: not an empty answer, not NotFound, not the object the names select.
func TestNamesWithSelectors(t *testing.T) {
	seedGolden(t)
	const (
		names  = "error: name cannot be provided when a selector is specified\n"
		tuples = "error: selectors and the all flag cannot be used when passing resource/name arguments\n"
	)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cm", "cm-a", "--field-selector", "metadata.name=cm-a"}, names},
		{[]string{"cm", "cm-a", "--field-selector", "metadata.name=cm-b"}, names},
		{[]string{"cm", "cm-a", "cm-b", "--field-selector", "metadata.name=cm-b"}, names},
		{[]string{"cm", "cm-a", "-l", "app=gizmo"}, names},
		{[]string{"all", "web", "-l", "app=gizmo"}, names},
		{[]string{"cm,gizmos", "cm-a", "-l", "app=gizmo"}, tuples},
		{[]string{"cm,gizmos", "alpha", "--field-selector", "metadata.name=alpha"}, tuples},
		{[]string{"cm/cm-a", "--field-selector", "metadata.name=cm-a"}, tuples},
		{[]string{"cm/cm-a", "gz/alpha", "-l", "app=gizmo"}, tuples},
	} {
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.Empty(t, r.stdout, "%q", tc.args)
		assert.Equal(t, tc.want, r.stderr, "%q", tc.args)
	}
	// Each alone still selects.
	r := kquery(t, goldenKubeconfig, "cm", "--field-selector", "metadata.name=cm-a", "-o", "name")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "configmap/cm-a\n", r.stdout)
	r = kquery(t, goldenKubeconfig, "cm", "cm-a", "-o", "name")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "configmap/cm-a\n", r.stdout)
}

// --sort-by on a field whose values are maps or lists is refused, as kubectl refuses it, with
// the field and the type named, whatever the format or the page; a multi-valued path of
// scalars sorts.
func TestSortByUnsortable(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gizmos", "--sort-by", ".metadata.labels"}, `field "{.metadata.labels}" is an unsortable type: map (in kquery-golden/alpha)`},
		{[]string{"gizmos", "--sort-by", "{.spec}", "-o", "json"}, `field "{.spec}" is an unsortable type: map (in kquery-golden/alpha)`},
		{[]string{"gizmos", "--sort-by", "spec.tags", "--limit", "1"}, `field "{.spec.tags}" is an unsortable type: list (in kquery-golden/alpha)`},
		{[]string{"gizmos", "--sort-by", ".spec.tags", "-o", "name", "--where", "name!=beta"}, `field "{.spec.tags}" is an unsortable type: list (in kquery-golden/alpha)`},
	} {
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.NotContains(t, r.stdout, "alpha", "%q", tc.args) // -o json: an empty List, as for any error
		assert.Equal(t, "error: "+tc.want+"; --sort-by takes a field of strings, numbers or booleans\n", r.stderr, "%q", tc.args)
	}
	r := kquery(t, goldenKubeconfig, "gizmos", "--sort-by", "{.spec.tags[*]}", "-o", "name")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "gizmo.golden.kquery.test/alpha\ngizmo.golden.kquery.test/beta\ngizmo.golden.kquery.test/delta\ngizmo.golden.kquery.test/gamma\n", r.stdout)
}

// --group-by a JSONPath counts every object under the values the path evaluates to, maps and
// lists (as JSON) included, so that the counts add up to the objects in scope.
func TestGroupByValues(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct {
		path string
		want string
	}{
		{"{.metadata.labels}", "LABELS COUNT\n" +
			`{"app":"gizmo","tier":"back"} 1` + "\n" + `{"app":"gizmo","tier":"front"} 1` + "\n" + `{"app":"gizmo"} 1` + "\n<none> 1\n"},
		{".spec.tags", "TAGS COUNT\n" + `["a","b"] 1` + "\n<none> 3\n"},
		{"{.spec.tags[0]}", "TAGS COUNT\na 1\n<none> 3\n"},
		{"{.spec.tags[*]}", "TAGS COUNT\na 1\nb 1\n<none> 3\n"},
		{"{.status.phase}", "PHASE COUNT\nRunning 2\nPending 1\n<none> 1\n"},
	} {
		r := kquery(t, goldenKubeconfig, "gizmos", "--group-by", tc.path)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, tc.want, regexp.MustCompile(` +`).ReplaceAllString(r.stdout, " "), tc.path)
	}
	for _, path := range []string{"{.spec}", "{.metadata.labels}", "{.status}"} {
		r := kquery(t, goldenKubeconfig, "gizmos", "--group-by", path, "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		var out struct{ Items []struct{ Count int } }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
		sum := 0
		for _, it := range out.Items {
			sum += it.Count
		}
		assert.Equal(t, 4, sum, "%s: every gizmo counted once: %s", path, r.stdout)
	}
}

// An argument of a megabyte gives an error of a few lines, whatever echoes it: a positioned
// error shows the bytes around the problem, with the caret under the byte it names.
func TestLongArgumentsShortErrors(t *testing.T) {
	seedGolden(t)
	big := strings.Repeat("abcdefghij", 100_000) // 1 MB, every byte's neighbours differ
	atByte := regexp.MustCompile(`\(at byte (\d+) of (\d+)\)`)
	for _, tc := range []struct {
		args []string
		arg  string // the argument the caret is in; "" for a message without one
	}{
		{[]string{"cm", "--where", big + "=~x"}, big + "=~x"},
		{[]string{"cm", "--where", "x=" + big + "~y"}, "x=" + big + "~y"},
		{[]string{"cm", "--where", "{." + big + "[}"}, "{." + big + "[}"},
		{[]string{"cm", "--where", big[:1000] + "(x"}, big[:1000] + "(x"},
		{[]string{"cm", "--where", big}, big},
		{[]string{"cm", "--sort-by", "{." + big[:3000] + "[}"}, "{." + big[:3000] + "[}"},
		{[]string{"cm", "--sort-by", big}, big},
		{[]string{"cm", "-o", "jsonpath={." + big[:3000] + "[}"}, "{." + big[:3000] + "[}"},
		{[]string{"cm", "-o", "custom-columns=A:.x,B:" + big[:3000] + "["}, "A:.x,B:" + big[:3000] + "["},
		{[]string{"cm", "--index", "x={." + big + "[}"}, "x={." + big + "[}"},
		{[]string{"cm", "--index", big}, big},
		{[]string{"cm", "--group-by", big}, big},
		{[]string{"cm", "--group-by", "{." + big[:3000] + "[}"}, "{." + big[:3000] + "[}"},
		{[]string{big}, ""},
		{[]string{"cm," + big}, ""},
		{[]string{"cm/" + big + "/x"}, ""},
		{[]string{"cm", "-o", big}, ""},
		{[]string{"cm", "-o", "custom-columns=" + big}, ""},
		{[]string{"cm", "-o", "go-template={{." + big}, ""},
		{[]string{"cm", "-l", big + "("}, ""},
		{[]string{"cm", "--" + big}, ""},
		{[]string{"cm", "--sort-by", ".metadata.name" + big}, ""},
	} {
		name := fmt.Sprintf("%.40q", strings.Join(tc.args, " "))
		r := kquery(t, goldenKubeconfig, tc.args...)
		assert.Equal(t, 1, r.code, name)
		assert.Less(t, len(r.stderr), 2000, "%s: %.300s", name, r.stderr)
		if tc.arg == "" {
			continue
		}
		lines := strings.Split(r.stderr, "\n")
		require.GreaterOrEqual(t, len(lines), 3, name)
		m := atByte.FindStringSubmatch(lines[0])
		require.NotNil(t, m, "%s: %s", name, lines[0])
		at, _ := strconv.Atoi(m[1])
		assert.Equal(t, strconv.Itoa(len(tc.arg)), m[2], name)
		col := strings.Index(lines[2], "^")
		require.GreaterOrEqual(t, col, 0, name)
		if at < len(tc.arg) {
			require.Less(t, col, len(lines[1]), name)
			assert.Equal(t, string(tc.arg[at]), lines[1][col:col+1], "%s: the caret is under byte %d", name, at)
			assert.Equal(t, tc.arg[max(at-20, 0):at], lines[1][col-min(at, 20):col], "%s: the bytes before it", name)
		} else {
			assert.Equal(t, len(lines[1]), col, "%s: the caret is past the end", name)
		}
	}
}

// The continue token of -o json's metadata fed back with --continue gives the next page,
// until every object was listed once; a token of another query is refused.
func TestContinue(t *testing.T) {
	seedGolden(t)
	var names []string
	token := ""
	for page := 0; page < 10; page++ {
		args := []string{"gizmos", "--limit", "1", "-o", "json"}
		if token != "" {
			args = append(args, "--continue", token)
		}
		r := kquery(t, goldenKubeconfig, args...)
		require.Equal(t, 0, r.code, r.stderr)
		var list struct {
			Items    []struct{ Metadata struct{ Name string } }
			Metadata struct{ Continue string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
		for _, it := range list.Items {
			names = append(names, it.Metadata.Name)
		}
		if token = list.Metadata.Continue; token == "" {
			break
		}
	}
	assert.Equal(t, []string{"alpha", "beta", "delta", "gamma"}, names)

	r := kquery(t, goldenKubeconfig, "gizmos", "--limit", "1")
	m := regexp.MustCompile(`--continue (\S+)`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	r = kquery(t, goldenKubeconfig, "gizmos", "--limit", "1", "--continue", m[1])
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "NAME"))
	assert.Contains(t, r.stdout, "\nbeta ")
	r = kquery(t, goldenKubeconfig, "gizmos", "--limit", "1", "--continue", m[1], "--where", "{.spec.size}")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "continue token")
}

// With several types, the continue token of a page records where each type stands: fed back
// (from -o json's metadata or from stderr) it pages through every object of every type once,
// with the kind prefix of a listing of several types on every page. A token of another
// command line (other types, their order, a selector, a --where, one type's token) is refused.
func TestContinueMultiType(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	cs := cp.Clientset(t)
	ctx := context.Background()
	for i := range 5 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(fmt.Sprintf("cm-%d", i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := range 3 {
		_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sec-%d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// Page by page: two of each type, then what is left.
	want := []string{"ConfigMap/cm-0", "ConfigMap/cm-1", "Secret/sec-0", "Secret/sec-1",
		"ConfigMap/cm-2", "ConfigMap/cm-3", "Secret/sec-2", "ConfigMap/cm-4"}

	var got []string
	token, pages, first := "", 0, ""
	for ; pages < 10; pages++ {
		args := []string{"cm,secrets", "--limit", "2", "-o", "json"}
		if token != "" {
			args = append(args, "--continue", token)
		}
		r := kquery(t, kc, args...)
		require.Equal(t, 0, r.code, r.stderr)
		var list struct {
			Items []struct {
				Kind     string
				Metadata struct{ Name string }
			}
			Metadata struct{ Continue string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
		for _, it := range list.Items {
			got = append(got, it.Kind+"/"+it.Metadata.Name)
		}
		if pages == 0 {
			first = list.Metadata.Continue
		}
		if token = list.Metadata.Continue; token == "" {
			break
		}
	}
	assert.Equal(t, want, got, "every object of both types once")
	assert.Equal(t, 2, pages, "pages of 2 objects of each type: the third is the last")

	// The same from the tables' stderr; kinds on every page, the last included, where one
	// type has rows left.
	var rows []string
	token = ""
	for page := 0; page < 10; page++ {
		args := []string{"cm,secrets", "--limit", "2", "--no-headers"}
		if token != "" {
			args = append(args, "--continue", token)
		}
		r := kquery(t, kc, args...)
		require.Equal(t, 0, r.code, r.stderr)
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			rows = append(rows, strings.Fields(l)[0])
		}
		m := regexp.MustCompile(`(?m)^kquery: next page of every resource: --continue (\S+)$`).FindStringSubmatch(r.stderr)
		if m == nil {
			assert.NotContains(t, r.stderr, "--continue")
			break
		}
		token = m[1]
	}
	assert.Equal(t, []string{"configmap/cm-0", "configmap/cm-1", "secret/sec-0", "secret/sec-1",
		"configmap/cm-2", "configmap/cm-3", "secret/sec-2", "configmap/cm-4"}, rows)

	const foreign = "error: --continue: the continue token was not issued for this command line"
	for _, args := range [][]string{
		{"cm,services"},
		{"secrets,cm"},
		{"cm,secrets", "-l", "app=x"},
		{"cm,secrets", "--where", "{.data.a}=1"},
		{"cm,secrets", "--sort-by", ".metadata.name"},
		{"cm,secrets", "-A"},
		{"cm"},
	} {
		r := kquery(t, kc, append(args, "--limit", "2", "--continue", first)...)
		assert.Equal(t, 1, r.code, "%q", args)
		assert.Empty(t, r.stdout, "%q", args)
		assert.True(t, strings.HasPrefix(r.stderr, foreign), "%q: %s", args, r.stderr)
	}
	r := kquery(t, kc, "cm", "--limit", "2", "-o", "json")
	m := regexp.MustCompile(`"continue": "(\S+)"`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	r = kquery(t, kc, "cm,secrets", "--limit", "2", "--continue", m[1])
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, foreign), r.stderr)
	r = kquery(t, kc, "cm,secrets", "--limit", "2", "--continue", first[:len(first)-2])
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, foreign), r.stderr)
}

// Each --where form selects what it says, on an index and on a JSONPath alike; notin and !=
// keep the objects without a value, as a label selector's notin does.
func TestWhereSemantics(t *testing.T) {
	seedGolden(t)
	for _, tc := range []struct {
		where string
		want  string
	}{
		{"size=3", "alpha"},
		{"size==10", "beta"},
		{"size!=3", "beta delta gamma"},
		{"size in (3,10)", "alpha beta"},
		{"size notin (3,10)", "delta gamma"},
		{"size<7.9", "alpha"},
		{"size<=7.9", "alpha gamma"},
		{"size>3", "beta gamma"},
		{"size>=10", "beta"},
		{"size", "alpha beta gamma"},
		{"!size", "delta"},
		{"phase=Running", "alpha gamma"},
		{"phase notin (Running)", "beta delta"},
		{"owner-uid", ""},
		{"label='tier=front'", "alpha"},
		{"label-key notin (tier)", "delta gamma"},
	} {
		for _, form := range []string{"index", "jsonpath"} {
			where := tc.where
			if form == "jsonpath" {
				where = strings.NewReplacer("size", "{.spec.size}", "phase", "{.status.phase}").Replace(where)
				if where == tc.where {
					continue // a built-in index
				}
			}
			r := kquery(t, goldenKubeconfig, "gizmos", "--index", "size={.spec.size}", "--index", "phase={.status.phase}",
				"--where", where, "-o", "jsonpath={.items[*].metadata.name}")
			require.Equal(t, 0, r.code, "%s: %s", where, r.stderr)
			assert.Equal(t, tc.want, r.stdout, where)
		}
	}
}

// -v 1 shows what the help says: how each TYPE resolved, where each resource's columns come
// from, how each query was answered.
func TestVerbose(t *testing.T) {
	seedGolden(t)
	r := kquery(t, goldenKubeconfig, "gz,deploy,limitranges", "-v", "1", "--index", "size={.spec.size}", "--where", "size>1")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"kquery: gz resolved to gizmos.golden.kquery.test (kind Gizmo, namespaced)",
		"kquery: deploy resolved to deployments.apps (kind Deployment, namespaced)",
		`kquery: gizmos.golden.kquery.test: query answered from "size>1": 3 candidates, 3 matched`,
		"kquery: columns of gizmos.golden.kquery.test: the additionalPrinterColumns of CRD gizmos.golden.kquery.test (version v1)",
	} {
		assert.Contains(t, r.stderr, want)
	}
	r = kquery(t, goldenKubeconfig, "cm", "-v", "2")
	assert.Contains(t, r.stderr, `"msg"="Informer Synced"`, "-v 2: sync progress")
	assert.NotContains(t, kquery(t, goldenKubeconfig, "cm", "-v", "1").stderr, `"msg"="Informer Synced"`)
	r = kquery(t, goldenKubeconfig, "cm", "-v", "6")
	// The list's request (with or without a query: the watch after it may be cut short when
	// the query is answered, before its response is logged).
	assert.Regexp(t, `"msg"="Response" .*"verb"="GET" "url"="https://[^"]+/api/v1/namespaces/kquery-golden/configmaps[?"]`, r.stderr, "-v 6: requests")
	resetKlog := flag.NewFlagSet("klog", flag.ContinueOnError) // -v 6 set klog's global level
	klog.InitFlags(resetKlog)
	require.NoError(t, resetKlog.Set("v", "0"))

	help := kquery(t, goldenKubeconfig, "--help")
	assert.Contains(t, help.stdout, "1 shows how each TYPE resolved, where each resource's columns come from, how each query was answered and informer transitions")
}

// --watch prints the rows that change: a label change shown by --show-labels prints one row;
// a change the row does not show prints nothing; a deletion prints the last row; Ctrl-C
// exits 0.
func TestWatchPrintsChangedRows(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	ctx := context.Background()
	for _, n := range []string{"one", "two"} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(n), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--kubeconfig", goldenKubeconfig, "cm", "-n", ns, "-w", "--show-labels", "--output-watch-events"}, &stdout, &stderr)
	}()
	lines := func() []string { return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") }
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 3 }, stdout.String)
	assert.Equal(t, []string{"EVENT", "NAME", "DATA", "AGE", "LABELS"}, strings.Fields(lines()[0]))

	patch := func(name, body string) {
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	patch("one", `{"metadata":{"labels":{"color":"red"}}}`)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 4 }, stdout.String)
	assert.Equal(t, []string{"MODIFIED", "one", "1", "color=red"}, dropAge(strings.Fields(lines()[3])))

	patch("two", `{"metadata":{"annotations":{"note":"not shown"}}}`) // not in the row
	patch("one", `{"data":{"b":"2"}}`)                                // DATA 1 -> 2
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 5 }, stdout.String)
	assert.Equal(t, []string{"MODIFIED", "one", "2", "color=red"}, dropAge(strings.Fields(lines()[4])))

	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "two", metav1.DeleteOptions{}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 6 }, stdout.String)
	assert.Equal(t, []string{"DELETED", "two", "1", "<none>"}, dropAge(strings.Fields(lines()[5])))

	time.Sleep(500 * time.Millisecond) // nothing else arrives
	assert.Len(t, lines(), 6, stdout.String())
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("--watch did not stop on cancel")
	}
}

// With columns from the server's Table (leases have no local printer), a change of a shown
// cell prints the row, a change of anything else does not, and AGE never counts.
func TestWatchServerColumns(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	cs := cp.Clientset(t)
	ctx := context.Background()
	holder := "a"
	_, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--kubeconfig", goldenKubeconfig, "leases", "-n", ns, "-w", "-v", "1"}, &stdout, &stderr)
	}()
	lines := func() []string { return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") }
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 2 }, stdout.String)
	assert.Equal(t, []string{"NAME", "HOLDER", "AGE"}, strings.Fields(lines()[0]))
	assert.Contains(t, stderr.String(), "columns of leases.coordination.k8s.io: the server's Table")

	patch := func(body string) {
		_, err := cs.CoordinationV1().Leases(ns).Patch(ctx, "lock", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	patch(`{"spec":{"leaseDurationSeconds":15}}`) // not shown
	time.Sleep(time.Second)
	assert.Len(t, lines(), 2, stdout.String())
	patch(`{"spec":{"holderIdentity":"b"}}`)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 3 }, stdout.String)
	assert.Equal(t, []string{"lock", "b"}, strings.Fields(lines()[2])[:2])
	time.Sleep(500 * time.Millisecond)
	assert.Len(t, lines(), 3, stdout.String())
	cancel()
	assert.Equal(t, 0, <-done, stderr.String())
}

// dropAge removes the AGE cell (the one before LABELS) of a watch row.
func dropAge(f []string) []string {
	if len(f) < 2 {
		return f
	}
	return append(f[:len(f)-2:len(f)-2], f[len(f)-1])
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"a": "1"}}
}

// A watched resource whose CRD is deleted: its objects print as deleted rows at once, and a
// line on stderr says that the informer parked and why; Ctrl-C still exits 0.
func TestWatchCRDDeleted(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	crd := cp.InstallCRD(t, testenv.NewCRD("gone.kquery.test", "Vanisher", "vanishers"))
	a := newApplier(t)
	a.apply(t, ns, "apiVersion: gone.kquery.test/v1\nkind: Vanisher\nmetadata: {name: v1}\n---\napiVersion: gone.kquery.test/v1\nkind: Vanisher\nmetadata: {name: v2}")
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--kubeconfig", goldenKubeconfig, "vanishers", "-n", ns, "-w", "--output-watch-events"}, &stdout, &stderr)
	}()
	lines := func() []string { return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") }
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 3 }, stdout.String)

	cp.DeleteCRD(t, crd.Name)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(lines()) == 5 }, stdout.String)
	assert.Equal(t, []string{"DELETED", "v1"}, strings.Fields(lines()[3])[:2])
	assert.Equal(t, []string{"DELETED", "v2"}, strings.Fields(lines()[4])[:2])
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return strings.Contains(stderr.String(), "kquery: vanishers.gone.kquery.test is no longer served (its CRD deleted?)")
	}, stderr.String)
	cancel()
	assert.Equal(t, 0, <-done, stderr.String())
}

// Names as kubectl prints and resolves them: a group given by its start; the kind prefix only
// when the answer holds several types (a type asked for by name counts when one of its
// names was found); a listing's server Table is the LIST's, where a StorageClass's default
// is marked, and an object asked for by name is the GET's, where it is not.
func TestNamesAsKubectl(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	cs := cp.Clientset(t)
	ctx := context.Background()
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("web"), metav1.CreateOptions{})
	require.NoError(t, err)

	r := kquery(t, kc, "deployments.app")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "No resources found in "+ns+" namespace.\n", r.stderr)
	// kubectl's note comes from its table printer only, and only when nothing matched.
	r = kquery(t, kc, "deployments.app", "-o", "name")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr+r.stdout)
	// The core group written out, as kubectl reads it.
	for _, typ := range []string{"configmaps.v1.", "cm.", "ConfigMap.v1."} {
		r = kquery(t, kc, typ, "web", "-o", "name")
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "configmap/web\n", r.stdout, typ)
	}
	r = kquery(t, kc, "cm", "web", "-o", "jsonpath={.metadata.nope}")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr+r.stdout, "web exists: its JSONPath found nothing")

	r = kquery(t, kc, "cm,svc", "web")
	assert.Equal(t, 1, r.code)
	rows := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, rows, 2, r.stdout)
	assert.Equal(t, "web", strings.Fields(rows[1])[0], "one type found: no kind")
	assert.Contains(t, r.stderr, `services "web" not found`)
	r = kquery(t, kc, "cm,svc")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "configmap/web", "two types listed: kinds")

	name := "kquery-" + ns
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kquery-test": ns},
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "example.com/x"}
	_, err = cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	first := func(r result) string {
		t.Helper()
		require.Equal(t, 0, r.code, r.stderr)
		rows := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		require.Len(t, rows, 2, r.stdout)
		f := strings.Fields(rows[1])
		return strings.Join(f[:min(2, len(f))], " ")
	}
	assert.Equal(t, name+" (default)", first(kquery(t, kc, "storageclasses", "-l", "kquery-test="+ns)), "a listing of one")
	assert.Equal(t, name+" example.com/x", first(kquery(t, kc, "storageclasses", name)), "asked for by name")
}

// -o jsonpath-as-json prints what kubectl prints: cli-runtime's JSONPath printer with JSON
// output, run here on the server's objects (a List of them, or the one object named).
func TestJSONPathAsJSONAsKubectl(t *testing.T) {
	seedGolden(t)
	gizmos := cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: "golden.kquery.test", Version: "v1", Resource: "gizmos"}).Namespace("kquery-golden")
	l, err := gizmos.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, l.Items)
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
	list.Items = l.Items
	kubectl := func(t *testing.T, expr string, obj runtime.Object) string {
		p, err := printers.NewJSONPathPrinter(expr)
		require.NoError(t, err)
		p.AllowMissingKeys(true)
		p.EnableJSONOutput(true)
		var b bytes.Buffer
		require.NoError(t, p.PrintObj(obj, &b))
		return b.String()
	}
	for _, expr := range []string{
		`{.items[*].metadata.name}`,
		`{.items[*].spec}`,
		`{range .items[*]}{.metadata.name}:{.spec.tags}{"\n"}{end}`,
		`{.items[?(@.status.phase=="Running")].metadata.name}`,
		`{.items[*].metadata.nosuch}`,
		`.items[*].metadata.name`, // text, without actions
	} {
		t.Run(expr, func(t *testing.T) {
			r := kquery(t, goldenKubeconfig, "gizmos", "-o", "jsonpath-as-json="+expr)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, kubectl(t, expr, list), r.stdout)
			assert.NotEmpty(t, r.stdout)
		})
	}
	alpha, err := gizmos.Get(context.Background(), "alpha", metav1.GetOptions{})
	require.NoError(t, err)
	r := kquery(t, goldenKubeconfig, "gizmo", "alpha", "-o", "jsonpath-as-json", "--template", "{.metadata.labels}{.spec.size}")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, kubectl(t, "{.metadata.labels}{.spec.size}", alpha), r.stdout, "one object named prints as itself; --template gives the template")
	r = kquery(t, goldenKubeconfig, "gizmos", "-o", "jsonpath-as-json")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "error: template format specified but no template given\n", r.stderr)
	// A template without actions is text, as in kubectl.
	r = kquery(t, goldenKubeconfig, "gizmo", "alpha", "-o", "jsonpath=.metadata.name")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ".metadata.name", r.stdout)
}

// managedFields: hidden from -o yaml|json as kubectl hides them, shown with
// --show-managed-fields, and there for the expressions that name them (kubectl's JSONPath sees
// them; a --where on the manager of an object is a query people ask).
func TestManagedFields(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	cm, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), configMap("web"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, cm.ManagedFields)
	manager := cm.ManagedFields[0].Manager

	r := kquery(t, kc, "cm", "web", "-o", "yaml")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "managedFields")
	for _, format := range []string{"yaml", "json"} {
		r = kquery(t, kc, "cm", "web", "-o", format, "--show-managed-fields")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "managedFields", format)
		assert.Contains(t, r.stdout, manager, format)
	}
	r = kquery(t, kc, "cm", "web", "-o", "jsonpath={.metadata.managedFields[0].manager}")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, manager, r.stdout)
	r = kquery(t, kc, "cm", "-o", "name", "--where", "{.metadata.managedFields[0].manager}="+manager)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "configmap/web\n", r.stdout)
	r = kquery(t, kc, "cm", "--group-by", "{.metadata.managedFields[*].operation}", "--no-headers")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Update")
}

// Shell completion as kubectl completes get: types (the last of a comma list), names of a
// type, TYPE/NAME, namespaces for -n, for refs too; and the executable kubectl runs for a
// plugin's completions is kquery under another name.
func TestCompletion(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	for _, name := range []string{"web", "worker", "api"} {
		_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(name), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	cacheDir := t.TempDir()
	complete := func(args ...string) []string {
		t.Helper()
		r := kquery(t, kc, append([]string{"__complete", "--cache-dir", cacheDir}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		require.True(t, strings.HasPrefix(lines[len(lines)-1], ":"), "a directive ends the output: %q", r.stdout)
		var words []string
		for _, l := range lines[:len(lines)-1] {
			words = append(words, strings.SplitN(l, "\t", 2)[0])
		}
		return words
	}
	all := complete("")
	assert.Contains(t, all, "configmaps")
	assert.Contains(t, all, "deployments.apps")
	assert.Contains(t, all, "gizmos.golden.kquery.test", "custom resources")
	assert.NotContains(t, all, "pods/log", "no subresources")
	assert.Equal(t, []string{"configmaps"}, complete("configm"))
	assert.Equal(t, []string{"pods,configmaps"}, complete("pods,configm"))
	assert.Equal(t, []string{"api", "web", "worker"}, complete("cm", ""))
	assert.Equal(t, []string{"web", "worker"}, complete("configmaps", "w"))
	assert.Equal(t, []string{"worker"}, complete("cm", "web", "w"), "a name typed once is not offered again")
	assert.Equal(t, []string{"cm/web", "cm/worker"}, complete("cm/w"))
	assert.Equal(t, []string{"configmaps/"}, complete("refs", "configm"), "refs takes TYPE/NAME")
	assert.Equal(t, []string{"kquery-golden"}, complete("cm", "-n", "kquery-gol"))
	assert.Equal(t, []string{"cm/web", "cm/worker"}, complete("refs", "cm/w"))
	assert.Contains(t, complete("cm", "-o", ""), "jsonpath")
	assert.Empty(t, complete("cm", "-A", "web", "-n", "nosuch-"))

	assert.Equal(t, []string{"__complete", "po", ""}, completionArgs("/usr/local/bin/kubectl_complete-kquery", []string{"po", ""}))
	assert.Equal(t, []string{"po"}, completionArgs("/usr/local/bin/kubectl-kquery", []string{"po"}))
}

// A cell with a line break prints as its first line and "...", and its column is as wide as
// that, as kubectl sizes it: in tables, without headers, and in --watch.
func TestMultiLineCellsAsKubectl(t *testing.T) {
	seedGolden(t)
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	newApplier(t).apply(t, ns, `apiVersion: golden.kquery.test/v1
kind: Gizmo
metadata: {name: one}
spec: {size: 1, color: "red\r\nand blue", tags: [x]}
status: {phase: "Running\nsince noon"}
---
apiVersion: golden.kquery.test/v1
kind: Gizmo
metadata: {name: two}
spec: {size: 22, color: green}
status: {phase: Ok}`)
	gizmos := cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: "golden.kquery.test", Version: "v1", Resource: "gizmos"}).Namespace(ns)
	t.Cleanup(func() { // not in the golden outputs of every namespace
		require.NoError(t, gizmos.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}))
	})
	last, err := gizmos.Get(context.Background(), "two", metav1.GetOptions{})
	require.NoError(t, err)
	defer func(c func() time.Time) { clock = c }(clock)
	clock = func() time.Time { return last.GetCreationTimestamp().Add(400*24*time.Hour + 12*time.Hour) }

	r := kquery(t, kc, "gizmos", "-o", "wide")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, `NAME   SIZE   RATIO   READY   PHASE        COLOR    TAGS    EXPIRES   AGE
one    1                      Running...   red...   ["x"]             400d
two    22                     Ok           green                      400d
`, r.stdout)
	r = kquery(t, kc, "gizmos", "-o", "wide", "--no-headers", "--sort-by", ".status.phase") // the cut cells in the second row
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, `two   22                Ok           green                  400d
one   1                 Running...   red...   ["x"]         400d
`, r.stdout)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig", kc, "gizmos", "one", "-o", "wide", "-w"}, &stdout, &stderr)
	}()
	want := `NAME   SIZE   RATIO   READY   PHASE        COLOR    TAGS    EXPIRES   AGE
one    1                      Running...   red...   ["x"]             400d
`
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return stdout.String() == want }, stdout.String)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("--watch did not stop on cancel")
	}
}
