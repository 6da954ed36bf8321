package main

import (
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
func joinArgs(args []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}
