package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An empty answer in a generic output format prints what kubectl get prints: an empty List
// through every format (a go-template sees .kind "List"), except with --ignore-not-found,
// where kubectl prints nothing at all when no object was found.
func TestEmptyAnswerGenericFormats(t *testing.T) {
	namespace(t, "kquery-audit-empty")
	kc := writeKubeconfig(t, cp.AdminConfig(), "kquery-audit-empty")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pods", "-o", "go-template={{.kind}}"}, "List"},
		{[]string{"pods", "--template={{.kind}}"}, "List"},
		{[]string{"pods", "-o", "jsonpath={.items}"}, "[]"},
		{[]string{"pods", "-o", "custom-columns=N:.metadata.name"}, "N\n"},
		{[]string{"pods", "-o", "yaml"}, "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"},
		{[]string{"pods", "--ignore-not-found", "-o", "yaml"}, ""},
		{[]string{"pods", "--ignore-not-found", "-o", "json"}, ""},
		{[]string{"pods", "--ignore-not-found", "-o", "jsonpath={.items}"}, ""},
		{[]string{"pods", "--ignore-not-found", "-o", "custom-columns=N:.metadata.name"}, ""},
		{[]string{"pods", "--ignore-not-found", "-o", "go-template={{.kind}}"}, ""},
		{[]string{"pods,svc", "--ignore-not-found", "-o", "yaml"}, ""},
		{[]string{"cm", "nosuch", "other", "--ignore-not-found", "-o", "yaml"}, ""},
		{[]string{"cm", "nosuch", "--ignore-not-found", "-o", "json"}, ""},
	} {
		t.Run(joinArgs(tc.args), func(t *testing.T) {
			r := kquery(t, kc, tc.args...)
			assert.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, tc.want, r.stdout)
			assert.Empty(t, r.stderr)
		})
	}
}

// joinArgs names a subtest after its command line.
func joinArgs(args []string) string { return strings.Join(args, " ") }

// A name asked for in a namespace that does not exist is kubectl's error for the namespace,
// once per name and type, as kubectl's GET of each reports it; --ignore-not-found ignores it
// as it ignores any NotFound. A cluster-scoped resource has no namespace to miss.
func TestNameInMissingNamespace(t *testing.T) {
	kc := writeKubeconfig(t, cp.AdminConfig(), "kquery-audit-no-such-namespace")
	nsErr := "Error from server (NotFound): namespaces \"kquery-audit-no-such-namespace\" not found\n"
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"cm", "web"}, 1, nsErr},
		{[]string{"cm,secrets", "a", "b", "-o", "name"}, 1, strings.Repeat(nsErr, 4)},
		{[]string{"cm", "web", "--ignore-not-found"}, 0, ""},
		{[]string{"ns", "kquery-audit-no-such-namespace"}, 1, nsErr},
		{[]string{"cm"}, 0, "No resources found in kquery-audit-no-such-namespace namespace.\n"},
	} {
		t.Run(joinArgs(tc.args), func(t *testing.T) {
			r := kquery(t, kc, tc.args...)
			assert.Equal(t, tc.code, r.code)
			assert.Empty(t, r.stdout)
			assert.Equal(t, tc.stderr, r.stderr)
		})
	}
}
