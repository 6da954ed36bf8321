package refs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// ruleSpec is a Rule as a rule file writes it: resources as kubectl names them
// ("secrets", "issuers.cert-manager.io", "*"), the other fields by their JSON names.
type ruleSpec struct {
	Name             string         `json:"name"`
	From             string         `json:"from"`
	Path             string         `json:"path"`
	To               string         `json:"to,omitempty"`
	ToGroup          string         `json:"toGroup,omitempty"`
	Namespace        NamespaceMode  `json:"namespace,omitempty"`
	NameField        string         `json:"nameField,omitempty"`
	NamespaceField   string         `json:"namespaceField,omitempty"`
	KindField        string         `json:"kindField,omitempty"`
	GroupField       string         `json:"groupField,omitempty"`
	APIVersionField  string         `json:"apiVersionField,omitempty"`
	UIDField         string         `json:"uidField,omitempty"`
	OptionalField    string         `json:"optionalField,omitempty"`
	Kinds            []string       `json:"kinds,omitempty"`
	DefaultKind      string         `json:"defaultKind,omitempty"`
	Selector         SelectorForm   `json:"selector,omitempty"`
	NamedAfterSource bool           `json:"namedAfterSource,omitempty"`
	Unless           *conditionSpec `json:"unless,omitempty"`
}

type conditionSpec struct {
	Path   string   `json:"path"`
	Values []string `json:"values"`
}

// ParseRules reads rules from a rule file, YAML or JSON: a list of rules whose fields are
// Rule's in lower camel case, with From and To written as kubectl names resources
// ("secrets" for the core group, "issuers.cert-manager.io", "deployments.v1.apps" with a
// version, which is dropped, "*" for AnyResource) and
// toGroup for To.Group when To names no resource (references that name their kind):
//
//	# rules.yaml
//	- name: widgets:secret
//	  from: widgets.example.com
//	  path: "{.spec.secretRef.name}"
//	  to: secrets
//	- name: certificates:issuer
//	  from: certificates.cert-manager.io
//	  path: "{.spec.issuerRef}"
//	  toGroup: cert-manager.io
//	  nameField: name
//	  kindField: kind
//	  groupField: group
//	  kinds: [Issuer, ClusterIssuer]
//	  defaultKind: Issuer
//
// An unknown field, a value of the wrong type or a document that is not a list is an error
// naming it; so is a rule that CheckRules refuses (a *RuleError: ErrInvalidRule), checked
// here as New checks it, so that a file is judged when it is read. Names must be unique
// within the file; New also refuses a name that another rule of its set has.
func ParseRules(data []byte) ([]Rule, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("refs: rule file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var specs []ruleSpec
	if err := dec.Decode(&specs); err != nil {
		return nil, fmt.Errorf("refs: rule file: %w", err)
	}
	rules := make([]Rule, 0, len(specs))
	for i, s := range specs {
		r := Rule{Name: s.Name, Path: s.Path, Namespace: s.Namespace, NameField: s.NameField,
			NamespaceField: s.NamespaceField, KindField: s.KindField, GroupField: s.GroupField,
			APIVersionField: s.APIVersionField, UIDField: s.UIDField, OptionalField: s.OptionalField,
			Kinds: s.Kinds, DefaultKind: s.DefaultKind, Selector: s.Selector, NamedAfterSource: s.NamedAfterSource,
			From: parseResource(s.From), To: parseResource(s.To)}
		if s.ToGroup != "" {
			if s.To != "" {
				return nil, fmt.Errorf("refs: rule file: rule %d (%q): to and toGroup exclude each other: toGroup is the group of references that name their kind", i+1, s.Name)
			}
			r.To.Group = s.ToGroup
		}
		if s.Unless != nil {
			r.Unless = Condition{Path: s.Unless.Path, Values: s.Unless.Values}
		}
		rules = append(rules, r)
	}
	if _, err := compileRules(rules); err != nil {
		return nil, err
	}
	return rules, nil
}

// parseResource reads "resource", "resource.group" or, as kubectl reads them,
// "resource.version.group" and "resource.version" (the core group): rules name resources,
// not versions, so a version is dropped ("deployments.v1.apps" is deployments.apps, not
// group "v1.apps"). "" and "*" are as they are.
func parseResource(s string) schema.GroupResource {
	if s == "" || s == "*" {
		return schema.GroupResource{Resource: s}
	}
	resource, group, _ := strings.Cut(s, ".")
	if version, rest, _ := strings.Cut(group, "."); isVersion(version) {
		group = rest
	}
	return schema.GroupResource{Group: group, Resource: resource}
}

// isVersion reports whether s has the form of a Kubernetes API version: v1, v2beta1,
// v1alpha3.
func isVersion(s string) bool {
	rest, ok := strings.CutPrefix(s, "v")
	n := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if !ok || n == 0 || rest[0] == '0' {
		return false
	}
	rest = rest[n:]
	for _, level := range []string{"alpha", "beta"} {
		if after, ok := strings.CutPrefix(rest, level); ok {
			m := len(after) - len(strings.TrimLeft(after, "0123456789"))
			return m > 0 && m == len(after) && after[0] != '0'
		}
	}
	return rest == ""
}
