package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// The command lines kubectl refuses for their TYPE/NAME arguments are refused in kubectl's
// words (cli-runtime's builder), as the plain errors kubectl prints: "error: " and the
// message, without the usage hint kubectl prints only for usage errors.
func TestAuditS53ArgumentFormErrorsAsKubectl(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	const (
		slash  = "arguments in resource/name form may not have more than one slash"
		single = "arguments in resource/name form must have a single resource and name"
	)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"cm/a/b"}, slash},
		{[]string{"cm/a", "cm/b/c"}, slash},
		{[]string{"cm,secrets/a"}, single},
		{[]string{"/a"}, single},
		{[]string{"cm/"}, single},
		{[]string{"cm", "cm/a"}, "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl kquery resource/<resource_name>' instead of 'kubectl kquery resource resource/<resource_name>')"},
		{[]string{"all", "web"}, "you must specify only one resource"},
	} {
		r := kquery(t, kc, tc.args...)
		assert.Equal(t, 1, r.code, "%q", tc.args)
		assert.Empty(t, r.stdout, "%q", tc.args)
		assert.Equal(t, "error: "+tc.msg+"\n", r.stderr, "%q", tc.args)
	}
}

// -o json prints one object as itself where kubectl does, and a List where kubectl does:
// the rule is cli-runtime's builder's (one TYPE/NAME, or one TYPE and one NAME), not the
// number of objects kquery prints. A name typed twice, or one object named by two spellings
// of its type, is printed once (README) but in a List, as kubectl prints it.
func TestAuditS53SingleObjectOrListAsKubectl(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), configMap("web"), metav1.CreateOptions{})
	require.NoError(t, err)

	// What kubectl get's printGeneric decides: a List unless the builder implies a single
	// item and found exactly one.
	kubectlKind := func(args []string) string {
		flags := genericclioptions.NewConfigFlags(true)
		flags.KubeConfig = &kc
		implied := false
		infos, err := resource.NewBuilder(flags).Unstructured().NamespaceParam(ns).DefaultNamespace().
			ResourceTypeOrNameArgs(true, args...).ContinueOnError().Latest().Flatten().Do().
			IntoSingleItemImplied(&implied).Infos()
		require.NoError(t, err, "%q", args)
		if implied && len(infos) == 1 {
			return "ConfigMap"
		}
		return "List"
	}
	for _, args := range [][]string{
		{"cm", "web"},
		{"cm/web"},
		{"cm,cm", "web"},
		{"cm", "web", "web"},
		{"cm/web", "cm/web"},
		{"cm/web", "configmap/web"},
		{"cm,configmap", "web"},
	} {
		want := kubectlKind(args)
		r := kquery(t, kc, append(args, "-o", "json")...)
		require.Equal(t, 0, r.code, "%q: %s", args, r.stderr)
		var got struct {
			Kind  string
			Items []struct{ Metadata struct{ Name string } }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), "%q", args)
		assert.Equal(t, want, got.Kind, "%q", args)
		if got.Kind == "List" {
			require.Len(t, got.Items, 1, "%q: the object once", args)
			assert.Equal(t, "web", got.Items[0].Metadata.Name, "%q", args)
		}
	}
}

// A category with one resource stands for that resource, names included: kubectl expands
// the category before it reads the names, and refuses names only when the category names
// several resources ("all web"). kquery refused a name after any category.
func TestAuditS53NamesAfterCategoryOfOneResource(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	crd := testenv.NewCRD("s53.kquery.test", "Trinket", "trinkets")
	crd.Spec.Names.Categories = []string{"kq-s53-trinkets"}
	cp.InstallCRD(t, crd)
	gvr := schema.GroupVersionResource{Group: "s53.kquery.test", Version: "v1", Resource: "trinkets"}
	_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "s53.kquery.test/v1", "kind": "Trinket", "metadata": map[string]any{"name": "bauble"},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return kquery(t, kc, "trinkets", "bauble").code == 0 }, 30*time.Second, 200*time.Millisecond,
		"the CRD in discovery")

	// kubectl's builder, with its category expander, takes the command line.
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kc
	cacheDir := t.TempDir()
	flags.CacheDir = &cacheDir
	implied := false
	infos, err := resource.NewBuilder(flags).Unstructured().NamespaceParam(ns).DefaultNamespace().
		ResourceTypeOrNameArgs(true, "kq-s53-trinkets", "bauble").ContinueOnError().Latest().Flatten().Do().
		IntoSingleItemImplied(&implied).Infos()
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.True(t, implied)

	r := kquery(t, kc, "kq-s53-trinkets", "bauble")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^NAME +AGE\nbauble +\S+\n$`, r.stdout)
	assert.Empty(t, r.stderr)

	r = kquery(t, kc, "kq-s53-trinkets", "bauble", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var obj struct {
		Kind     string
		Metadata struct{ Name string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &obj))
	assert.Equal(t, "Trinket", obj.Kind, "one object named: itself, as kubectl prints it")
	assert.Equal(t, "bauble", obj.Metadata.Name)

	r = kquery(t, kc, "kq-s53-trinkets", "nope")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Equal(t, `Error from server (NotFound): trinkets.s53.kquery.test "nope" not found`+"\n", r.stderr)
}

// --watch on an empty answer prints nothing until an object appears: kubectl's watch has no
// "No resources found" note (its plain listing has); kquery printed the note on stderr.
func TestAuditS53WatchOfNothingPrintsNoNote(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testsupport.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--kubeconfig", kc, "cm", "-w", "-v", "1"}, &stdout, &stderr) }()
	// -v 1 says when the first answer was computed; anything it prints comes before the
	// object created next.
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return strings.Contains(stderr.String(), "query answered from") }, stderr.String)
	_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), configMap("late"), metav1.CreateOptions{})
	require.NoError(t, err)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return strings.Contains(stdout.String(), "late") }, stdout.String)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("--watch did not stop on cancel")
	}
	assert.Regexp(t, `^NAME +DATA +AGE\nlate +1 +\S+\n$`, stdout.String())
	assert.NotContains(t, stderr.String(), "No resources found")
}

// kubectl's relaxed paths (RelaxedJSONPathExpression) of -o custom-columns, of
// custom-columns-file and of --sort-by take "{metadata.name}", a path in braces without its
// leading dot, as {.metadata.name}, as in kubectl's own example of a columns file; kquery
// refused it as a JSONPath syntax error.
func TestAuditS53RelaxedBracedPathsAsKubectl(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	cs := cp.Clientset(t)
	for _, n := range []string{"web", "api"} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(n), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	r := kquery(t, kc, "cm", "-o", "custom-columns=NAME:{metadata.name},A:{data.a}")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "NAME   A\napi    1\nweb    1\n", r.stdout)

	file := filepath.Join(t.TempDir(), "columns")
	require.NoError(t, os.WriteFile(file, []byte("NAME               API_VERSION\n{metadata.name}    {apiVersion}\n"), 0o600))
	r = kquery(t, kc, "cm", "web", "-o", "custom-columns-file="+file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "NAME   API_VERSION\nweb    v1\n", r.stdout)

	want := kquery(t, kc, "cm", "--sort-by", ".metadata.name", "-o", "name")
	require.Equal(t, 0, want.code, want.stderr)
	r = kquery(t, kc, "cm", "--sort-by", "{metadata.name}", "-o", "name")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, want.stdout, r.stdout)
	assert.Equal(t, "configmap/api\nconfigmap/web\n", r.stdout)

	// A syntax error in such a path points at its byte in what was typed: one before where
	// it is in the same path written with its dot.
	caret := func(arg string) int {
		r := kquery(t, kc, "cm", "--sort-by", arg)
		require.Equal(t, 1, r.code)
		lines := strings.Split(r.stderr, "\n")
		require.GreaterOrEqual(t, len(lines), 3, r.stderr)
		require.Equal(t, "  --sort-by "+arg, lines[1], r.stderr)
		return strings.Index(lines[2], "^") - len("  --sort-by ")
	}
	assert.Equal(t, caret("{.metadata.labels[}")-1, caret("{metadata.labels[}"))
}

// -o yaml and -o json hide managedFields unless --show-managed-fields asks for them, as
// kubectl's do, also when the cache keeps them for an expression that reads them (here a
// --where on the manager): kquery printed them then.
func TestAuditS53ManagedFieldsHiddenWhenKeptForAnExpression(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	var manager string
	for _, n := range []string{"web", "api"} {
		cm, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(n), metav1.CreateOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, cm.ManagedFields)
		manager = cm.ManagedFields[0].Manager
	}
	where := "{.metadata.managedFields[0].manager}=" + manager
	for _, args := range [][]string{{"cm", "web"}, {"cm"}} {
		for _, format := range []string{"yaml", "json"} {
			r := kquery(t, kc, append(args, "-o", format, "--where", where)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, "web", "%q %s", args, format)
			assert.NotContains(t, r.stdout, "managedFields", "%q %s", args, format)
			r = kquery(t, kc, append(args, "-o", format, "--where", where, "--show-managed-fields")...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, "managedFields", "%q %s", args, format)
		}
	}
	// JSONPath sees them, as kubectl's does.
	r := kquery(t, kc, "cm", "web", "-o", "jsonpath={.metadata.managedFields[0].manager}")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, manager, r.stdout)
}

// --group-by -o json names the value of every group, the empty string included (a label
// set to ""), and marks only the objects without a value as none: the empty value's group
// had no value key, so it read like the none group.
func TestAuditS53GroupByEmptyValueJSON(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	for name, labels := range map[string]map[string]string{"e1": {"tier": ""}, "e2": {"tier": ""}, "a": {"tier": "a"}, "n": nil} {
		cm := configMap(name)
		cm.Labels = labels
		_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	r := kquery(t, kc, "cm", "--group-by", "{.metadata.labels.tier}", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Equal(t, []map[string]any{
		{"resource": "configmaps", "value": "", "count": float64(2)},
		{"resource": "configmaps", "value": "a", "count": float64(1)},
		{"resource": "configmaps", "none": true, "count": float64(1)},
	}, out.Items, r.stdout)
}
