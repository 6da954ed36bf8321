package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/internal/testenv"
)

// `kquery refs --rules FILE` follows the rules of a rule file besides the built-in ones: a
// custom resource's field that names a Secret makes an edge of the file's rule, a missing
// Secret a dangling reference, and the named Secret no longer unused; a file that cannot be
// used is an error naming it, before anything is asked of the server.
func TestRefsRuleFile(t *testing.T) {
	ctx := context.Background()
	group := "rules.kquery.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Vault", "vaults"))
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	for _, s := range []string{"used", "spare"} {
		_, err := cp.Clientset(t).CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	vaults := cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "vaults"}).Namespace(ns)
	for name, secret := range map[string]string{"v1": "used", "v2": "gone"} {
		_, err := vaults.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Vault", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"secretRef": map[string]any{"name": secret}},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
- name: vaults:secret
  from: vaults.`+group+`
  path: "{.spec.secretRef.name}"
  to: secrets
`), 0o600))

	r := kquery(t, kc, "refs", "vaults/v1", "--uses", "--rules", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, strings.ReplaceAll("vaults.G/NS/v1 uses:\nvaults.G/NS/v1\n└── [vaults:secret] secrets/NS/used\n", "NS", ns),
		strings.ReplaceAll(r.stdout, group, "G"), r.stderr)

	r = kquery(t, kc, "refs", "secret/used", "--used-by", "--rules", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[vaults:secret] vaults."+group+"/"+ns+"/v1")

	r = kquery(t, kc, "refs", "--dangling", "--rules", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "vaults."+group+"/"+ns+"/v2 -[vaults:secret]-> secrets/"+ns+"/gone (Missing: not found)\n")

	r = kquery(t, kc, "refs", "--unused", "secrets", "--rules", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ns+"/spare")
	assert.NotContains(t, r.stdout, ns+"/used")
	// Without the file, nothing names the Secret.
	r = kquery(t, kc, "refs", "--unused", "secrets")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ns+"/used")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("- name: x\n  from: vaults."+group+"\n  path: '{.spec.secretRef.name}'\n  too: secrets\n"), 0o600))
	r = kquery(t, kc, "refs", "--dangling", "--rules", bad)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "--rules "+bad+": ")
	assert.Contains(t, r.stderr, `unknown field "too"`)
	dup := filepath.Join(dir, "dup.yaml")
	require.NoError(t, os.WriteFile(dup, []byte("- name: pods:volume-configmap\n  from: vaults."+group+"\n  path: '{.spec.secretRef.name}'\n  to: secrets\n"), 0o600))
	r = kquery(t, kc, "refs", "--dangling", "--rules", dup)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `rule "pods:volume-configmap" is already in the built-in rules`)
	r = kquery(t, kc, "refs", "--dangling", "--rules", filepath.Join(dir, "missing.yaml"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "missing.yaml: no such file or directory")
}
