package refs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A rule file reads into the rules it writes, in YAML and JSON alike.
func TestParseRules(t *testing.T) {
	yamlDoc := `
- name: widgets:secret
  from: widgets.example.com
  path: "{.spec.secretRef.name}"
  to: secrets
- name: certificates:issuer
  from: certificates.cert-manager.io
  path: "{.spec.issuerRef}"
  toGroup: cert-manager.io
  nameField: name
  kindField: kind
  groupField: group
  kinds: [Issuer, ClusterIssuer]
  defaultKind: Issuer
- name: gadgets:pods
  from: gadgets.example.com
  path: "{.spec.selector}"
  to: pods
  selector: LabelSelector
  unless: {path: "{.spec.paused}", values: ["true"]}
- name: any:note
  from: "*"
  path: "{.metadata.annotations.example\\.com/config}"
  to: configmaps
  namespace: Same
`
	want := []Rule{
		{Name: "widgets:secret", From: schema.GroupResource{Group: "example.com", Resource: "widgets"},
			Path: "{.spec.secretRef.name}", To: schema.GroupResource{Resource: "secrets"}},
		{Name: "certificates:issuer", From: schema.GroupResource{Group: "cert-manager.io", Resource: "certificates"},
			Path: "{.spec.issuerRef}", To: schema.GroupResource{Group: "cert-manager.io"}, NameField: "name", KindField: "kind",
			GroupField: "group", Kinds: []string{"Issuer", "ClusterIssuer"}, DefaultKind: "Issuer"},
		{Name: "gadgets:pods", From: schema.GroupResource{Group: "example.com", Resource: "gadgets"}, Path: "{.spec.selector}",
			To: schema.GroupResource{Resource: "pods"}, Selector: SelectorLabelSelector,
			Unless: Condition{Path: "{.spec.paused}", Values: []string{"true"}}},
		{Name: "any:note", From: AnyResource, Path: `{.metadata.annotations.example\.com/config}`,
			To: schema.GroupResource{Resource: "configmaps"}, Namespace: NamespaceSame},
	}
	got, err := ParseRules([]byte(yamlDoc))
	require.NoError(t, err)
	assert.Equal(t, want, got)

	got, err = ParseRules([]byte(`[{"name":"widgets:secret","from":"widgets.example.com","path":"{.spec.secretRef.name}","to":"secrets"}]`))
	require.NoError(t, err)
	assert.Equal(t, want[:1], got)

	// kubectl's resource.version.group form names the resource, whatever the version; a
	// group whose first label only looks like a version is left whole.
	got, err = ParseRules([]byte(`[{"name":"a","from":"deployments.v1.apps","path":"{.spec.x}","to":"secrets.v1"},
		{"name":"b","from":"widgets.v2beta1.example.com","path":"{.spec.x}","to":"gadgets.v1alpha1.example.com"},
		{"name":"c","from":"widgets.v1x.example.com","path":"{.spec.x}","to":"gadgets.v0.example.com"}]`))
	require.NoError(t, err)
	gr := func(r, g string) schema.GroupResource { return schema.GroupResource{Group: g, Resource: r} }
	assert.Equal(t, []schema.GroupResource{gr("deployments", "apps"), gr("secrets", ""), gr("widgets", "example.com"),
		gr("gadgets", "example.com"), gr("widgets", "v1x.example.com"), gr("gadgets", "v0.example.com")},
		[]schema.GroupResource{got[0].From, got[0].To, got[1].From, got[1].To, got[2].From, got[2].To})

	got, err = ParseRules([]byte("[]"))
	require.NoError(t, err)
	assert.Empty(t, got)
}

// A file that cannot be read as written is an error that says why, never rules that mean
// something else.
func TestParseRulesRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", `[{name: a, from: widgets.example.com, path: "{.a}", to: secrets, nameFeild: name}]`, `unknown field "nameFeild"`},
		{"not a list", `{name: a, from: widgets.example.com, path: "{.a}", to: secrets}`, "cannot unmarshal object"},
		{"wrong type", `[{name: a, from: widgets.example.com, path: "{.a}", to: secrets, kinds: Issuer}]`, "cannot unmarshal string"},
		{"duplicate key", "- name: a\n  name: b\n  from: x\n  path: '{.a}'\n  to: secrets\n", `key "name" already set`},
		{"to and toGroup", `[{name: a, from: widgets.example.com, path: "{.a}", to: secrets, toGroup: g}]`, "to and toGroup exclude each other"},
		{"bad path", `[{name: a, from: widgets.example.com, path: "{.a[}", to: secrets}]`, `rule "a"`},
		{"unknown namespace mode", `[{name: a, from: widgets.example.com, path: "{.a}", to: secrets, namespace: same}]`, `unknown Namespace "same"`},
		{"duplicate name", `[{name: a, from: w.x, path: "{.a}", to: secrets}, {name: a, from: w.x, path: "{.b}", to: secrets}]`, "duplicate name"},
		{"no from", `[{name: a, path: "{.a}", to: secrets}]`, "no From resource"},
		{"not YAML", "- [", "rule file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := ParseRules([]byte(tc.doc))
			require.Error(t, err)
			assert.Nil(t, rules)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := ParseRules([]byte(`[{name: a, from: widgets.example.com, path: "{.a}", to: secrets, namespace: same}]`))
	assert.True(t, errors.Is(err, ErrInvalidRule), "a rule New would refuse is a *RuleError")
}
