package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []request
		err  string
	}{
		{args: []string{"pods"}, want: []request{{Input: "pods"}}},
		{args: []string{"pods", "a", "b", "a"}, want: []request{{Input: "pods", Names: []string{"a", "b"}}}},
		{args: []string{"pods,svc", "web"}, want: []request{{Input: "pods", Names: []string{"web"}}, {Input: "svc", Names: []string{"web"}}}},
		{args: []string{"pods,pods"}, want: []request{{Input: "pods"}}},
		{args: []string{"po/a", "svc/b", "po/c"}, want: []request{{Input: "po", Names: []string{"a", "c"}}, {Input: "svc", Names: []string{"b"}}}},
		{args: nil, err: "you must specify the type of resource"},
		{args: []string{"pods", "svc/b"}, err: "there is no need to specify a resource type as a separate argument"},
		{args: []string{"po/a/b"}, err: "arguments in resource/name form may not have more than one slash"},
		{args: []string{"po,svc/a"}, err: "arguments in resource/name form must have a single resource and name"},
		{args: []string{"pods,"}, err: "empty resource type"},
	} {
		got, err := splitArgs(tc.args)
		if tc.err != "" {
			require.Error(t, err, "%q", tc.args)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.want, got, "%q", tc.args)
	}
}

func res(group, plural, kind string, short ...string) discovery.Resource {
	return discovery.Resource{
		GVR: schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}, GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
		Singular: plural[:len(plural)-1], ShortNames: short,
	}
}

// Suggestions come closest first: an exact short name, then prefixes, then edits (a swap of
// two neighbours counting one), built-in resources first among equals.
func TestSuggest(t *testing.T) {
	all := []discovery.Resource{
		res("", "configmaps", "ConfigMap", "cm"), res("", "pods", "Pod", "po"),
		res("cert-manager.io", "certificates", "Certificate", "cert", "certs"),
		res("cert-manager.io", "certificaterequests", "CertificateRequest", "cr", "crs"),
		res("demo.kindex.io", "widgets", "Widget", "wdg"), res("apps", "deployments", "Deployment", "deploy"),
		res("", "secrets", "Secret"), res("", "services", "Service", "svc"), res("", "serviceaccounts", "ServiceAccount", "sa"),
	}
	names := func(rs []discovery.Resource) []string {
		var out []string
		for _, r := range rs {
			out = append(out, qualified(r))
		}
		return out
	}
	for _, tc := range []struct {
		typed string
		first string
	}{
		{"cm", "configmaps"},
		{"cmm", "configmaps"},
		{"wigdets", "widgets.demo.kindex.io"},
		{"deploymnets", "deployments.apps"},
		{"certificat", "certificates.cert-manager.io"},
		{"servce", "services"},
		{"pod.apps", "pods"},
	} {
		got := suggest(tc.typed, all, 3)
		require.NotEmpty(t, got, tc.typed)
		assert.Equal(t, tc.first, qualified(got[0]), "%s: %v", tc.typed, names(got))
	}
	assert.Empty(t, suggest("zzzzzz", all, 3))
	assert.Empty(t, suggest("", all, 3))
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"widgets", "wigdets", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"pods", "pods", 0},
	} {
		assert.Equal(t, tc.d, editDistance(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.d, editDistance(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
}

// kubectl runs a plugin as "kubectl kquery": its help, usage lines and hints say so, for the
// subcommands too.
func TestHelpNamesThePlugin(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"refs", "--help"}, {"completion", "--help"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		require.Equal(t, 0, code, "%q: %s", args, errOut.String())
		usage := out.String()[strings.Index(out.String(), "Usage:"):]
		lines := strings.Split(usage, "\n")
		require.GreaterOrEqual(t, len(lines), 2, "%q", args)
		assert.True(t, strings.HasPrefix(strings.TrimSpace(lines[1]), "kubectl kquery "), "%q: %q", args, lines[1])
		assert.NotContains(t, usage, "kubectl [command]", "%q", args)
		assert.NotContains(t, usage, "kquery kquery", "%q", args)
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run(context.Background(), []string{"--nosuchflag"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "See 'kubectl kquery --help' for usage.")
}
