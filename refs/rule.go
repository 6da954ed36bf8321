package refs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/jsonpath"
)

// Rule says where the objects of one resource name other objects. A rule is data: a
// JSONPath expression evaluated on each object of From, and how its values name targets.
// The built-in rules (BuiltinRules) are written in the same form.
//
// The values of Path are read in one of three ways:
//
//   - names: with no field names and no Selector, each value is the name of an object of To
//     ("{.spec.volumes[*].configMap.name}" → configmaps);
//   - object references: with NameField set, each value is an object whose fields name the
//     target: NameField its name, NamespaceField its namespace, and either To's resource or,
//     with KindField, its kind, in the group GroupField names ("apiGroup", "group") or
//     APIVersionField names ("apiVersion": "apps/v1"), To.Group where the value has none
//     (an ObjectReference to a Pod has no apiVersion); a value whose name or namespace is a
//     template ("${pvc.name}") names nothing; a
//     cert-manager "{.spec.issuerRef}" has kind, group and name fields (and names an Issuer
//     when it names no kind: DefaultKind); with OptionalField,
//     a value whose field of that name is the boolean true is an optional reference (a Pod's
//     "{.spec.volumes[*].configMap}", NameField "name", OptionalField "optional");
//   - label selectors: with Selector set, each value is a selector and the rule's targets
//     are the objects of To whose labels it matches (but the object itself: a ClusterRole's
//     aggregation rule does not aggregate it), kept current as labels change on either
//     side.
//
// A value that is a list stands for its elements: a Path that ends at a list
// ("{.spec.secretNames}", "{.spec.secretRefs}") reads as one that selects each element
// ("{.spec.secretNames[*]}"). Values that are not of the expected shape (a number where a
// name is expected, a string where an object is, a list of lists) name nothing.
type Rule struct {
	// Name identifies the rule; every edge names the rule that made it. Unique in a rule set.
	Name string
	// From is the resource holding the references ("" group for the core group). Resource
	// "*" applies the rule to every resource; its Path may then read only .metadata, which
	// every storage mode keeps (ownerReferences are such a rule).
	From schema.GroupResource
	// Path is the JSONPath expression (kubectl's dialect) that yields the references.
	Path string
	// To is the target resource. Leave To.Resource empty when the values name their kind
	// (KindField); To.Group is then the group of values that name none.
	To schema.GroupResource
	// Namespace says where the targets of names and object references are: NamespaceAuto
	// (the default) places them in the source's namespace when their resource is namespaced
	// and nowhere otherwise, as the server's discovery says; NamespaceSame and
	// NamespaceCluster state it without asking. A value's NamespaceField wins when present.
	// Selectors select in the source's namespace, or in every namespace for a cluster-scoped
	// source; objects of a cluster-scoped target resource are selected wherever the source is.
	Namespace NamespaceMode

	// NameField, NamespaceField, KindField, GroupField, APIVersionField and UIDField are
	// keys of the objects Path yields (object references). UIDField names the UID the target
	// must have (ownerReferences): a target of that name with another UID is missing. A
	// cluster-scoped object's reference to a namespaced target that names no namespace names
	// nothing, unless it has a UID: then it names one object it cannot reach (an owner
	// reference from a cluster-scoped object to a namespaced kind), and is Missing.
	NameField, NamespaceField, KindField, GroupField, APIVersionField, UIDField string
	// OptionalField, for object references, is the key of a boolean in each value: true
	// marks that reference optional (Kubernetes' "optional: true" on a ConfigMap or Secret
	// volume, projection, key reference or envFrom source), so that its object works without
	// the target. Its edge is made all the same, and carries Edge.Optional; Dangling leaves
	// it out. Absent, false or not a boolean: the reference is required. An object naming
	// one target by one rule both optionally and not has one edge, not optional.
	OptionalField string
	// Kinds, for object references that name their kind, lists the kinds the rule follows;
	// values of other kinds are not references (RBAC subjects of kind User or Group). Empty:
	// every kind.
	Kinds []string
	// DefaultKind, for object references that name their kind, is the kind of a value whose
	// KindField is absent or empty, as its API defaults it: cert-manager's issuerRef names an
	// Issuer when it names no kind ({"name": "ca"}). Empty: such a value names nothing. With
	// Kinds, it must be one of them.
	DefaultKind string

	// Selector makes the values label selectors of this form.
	Selector SelectorForm

	// NamedAfterSource, for a rule whose values are names, makes each value the end of the
	// target's name, after the source object's own name and "-": Kubernetes names the
	// claim of a Pod's generic ephemeral volume so (<pod>-<volume>, which no field holds),
	// and the built-in "pods:ephemeral-claim" rule reads
	// {.spec.volumes[?(@.ephemeral)].name} this way.
	NamedAfterSource bool

	// Unless leaves out the objects on which the rule does not apply: on an object where
	// Unless.Path yields one of Unless.Values, the rule reads nothing. A Service of type
	// ExternalName has no endpoints (the EndpointSlice controller skips it), so that its
	// selector, if it has one, selects no Pod: the built-in "services:selector" rule has
	// Unless: Condition{Path: "{.spec.type}", Values: []string{"ExternalName"}}. The zero
	// Condition leaves out nothing.
	Unless Condition
}

// Condition tests an object: it holds when the JSONPath expression Path yields a value (a
// string, number or boolean, compared as its text, as kubectl prints it: "ExternalName",
// "true", "3") that is one of Values. A field that is absent yields nothing, so that the
// condition does not hold.
type Condition struct {
	// Path is the JSONPath expression evaluated on the object.
	Path string
	// Values are the texts one of which the value must be.
	Values []string
}

// NamespaceMode says in which namespace a rule's targets are.
type NamespaceMode string

const (
	// NamespaceAuto: the source's namespace if the target's resource is namespaced, none if
	// it is cluster-scoped, as discovery describes the resource.
	NamespaceAuto NamespaceMode = ""
	// NamespaceSame: the source's namespace.
	NamespaceSame NamespaceMode = "Same"
	// NamespaceCluster: the targets are cluster-scoped.
	NamespaceCluster NamespaceMode = "Cluster"
)

// SelectorForm is the shape of a label selector a rule reads.
type SelectorForm string

const (
	// SelectorNone: the rule's values are names or object references, not selectors.
	SelectorNone SelectorForm = ""
	// SelectorMap: a map of label keys to values, all of which must match (a Service's
	// .spec.selector). An empty or missing map selects nothing.
	SelectorMap SelectorForm = "Map"
	// SelectorLabelSelector: a metav1.LabelSelector (matchLabels and matchExpressions). An
	// empty selector ({}) selects every object; a missing or null one selects nothing.
	SelectorLabelSelector SelectorForm = "LabelSelector"
)

// AnyResource as a rule's From applies the rule to the objects of every resource.
var AnyResource = schema.GroupResource{Resource: "*"}

// ErrInvalidRule is matched (errors.Is) by the *RuleError of a rule that cannot be used.
var ErrInvalidRule = errors.New("refs: invalid rule")

// RuleError names a rule that cannot be used and why. errors.Is(err, ErrInvalidRule) holds;
// a Path that does not compile also unwraps to its *jsonpath.SyntaxError.
type RuleError struct {
	// Rule is the rule's Name.
	Rule string
	// Err is why the rule cannot be used.
	Err error
}

// Error names the rule and why it cannot be used.
func (e *RuleError) Error() string { return fmt.Sprintf("refs: rule %q: %v", e.Rule, e.Err) }

// Unwrap returns ErrInvalidRule and the cause.
func (e *RuleError) Unwrap() []error { return []error{ErrInvalidRule, e.Err} }

// ruleKind is how a compiled rule reads its values.
type ruleKind uint8

const (
	kindNames ruleKind = iota
	kindObjects
	kindSelector
)

// crule is a validated, compiled rule.
type crule struct {
	Rule
	id   int32
	toID resID // the interned To resource, noRes when the values name their kind
	path *jsonpath.Path
	kind ruleKind
	// byKind: object references that name their kind.
	byKind bool
	kinds  map[string]bool
	// unless is Unless.Path compiled (nil without a condition).
	unless *jsonpath.Path
	// metaOnly: the path (and the condition's) reads only .metadata, which metadata-only
	// objects hold.
	metaOnly bool
}

// mayName reports whether the rule's values may name objects of gr, whose kind is kind (""
// when discovery has not said): its To, or for references that name their kind, any
// resource of a kind it follows, in its group unless the values name the group too. The
// RBAC bindings' rules name Roles, ClusterRoles and ServiceAccounts this way, an HPA's its
// target.
func (r *crule) mayName(gr schema.GroupResource, kind string) bool {
	if !r.byKind {
		return r.To == gr
	}
	if len(r.kinds) > 0 && !r.kinds[kind] {
		return false
	}
	return r.GroupField != "" || r.APIVersionField != "" || gr.Group == r.To.Group
}

// compileRules validates and compiles a rule set.
func compileRules(rules []Rule) ([]*crule, error) {
	out := make([]*crule, 0, len(rules))
	names := map[string]bool{}
	for i, r := range rules {
		c, err := compileRule(r)
		if err != nil {
			return nil, err
		}
		if names[r.Name] {
			return nil, &RuleError{Rule: r.Name, Err: errors.New("duplicate name")}
		}
		names[r.Name] = true
		c.id = int32(i)
		out = append(out, c)
	}
	return out, nil
}

func compileRule(r Rule) (*crule, error) {
	fail := func(format string, args ...any) (*crule, error) {
		return nil, &RuleError{Rule: r.Name, Err: fmt.Errorf(format, args...)}
	}
	if r.Name == "" {
		return fail("empty name")
	}
	if r.From.Resource == "" {
		return fail("no From resource")
	}
	if r.From.Resource == "*" && r.From.Group != "" {
		return fail("From %q: \"*\" applies the rule to every resource and takes no group", resourceName(r.From))
	}
	for _, gr := range []schema.GroupResource{r.From, r.To} {
		if err := checkResourceName(gr); err != nil {
			return fail("%v", err)
		}
	}
	p, err := jsonpath.Compile(r.Path)
	if err != nil {
		return nil, &RuleError{Rule: r.Name, Err: err}
	}
	if p.IsTemplate() {
		return fail("path %q is a template; a rule needs the values of one expression", r.Path)
	}
	c := &crule{Rule: r, path: p, metaOnly: readsOnlyMetadata(p)}
	switch {
	case r.Unless.Path != "":
		if len(r.Unless.Values) == 0 {
			return fail("Unless has a Path and no Values: it would never hold")
		}
		u, err := jsonpath.Compile(r.Unless.Path)
		if err != nil {
			return nil, &RuleError{Rule: r.Name, Err: fmt.Errorf("Unless: %w", err)}
		}
		if u.IsTemplate() {
			return fail("Unless path %q is a template; a condition needs the values of one expression", r.Unless.Path)
		}
		c.unless = u
		c.metaOnly = c.metaOnly && readsOnlyMetadata(u)
	case len(r.Unless.Values) > 0:
		return fail("Unless has Values and no Path")
	}
	if r.From == AnyResource && !c.metaOnly {
		return fail("a rule for every resource may read only .metadata, not %s", strings.TrimSpace(r.Path+" "+r.Unless.Path))
	}
	switch r.Namespace {
	case NamespaceAuto, NamespaceSame, NamespaceCluster:
	default:
		return fail("unknown Namespace %q", r.Namespace)
	}
	fields := r.NameField != "" || r.NamespaceField != "" || r.KindField != "" || r.GroupField != "" ||
		r.APIVersionField != "" || r.UIDField != "" || r.OptionalField != ""
	switch {
	case r.Selector != SelectorNone:
		if r.Selector != SelectorMap && r.Selector != SelectorLabelSelector {
			return fail("unknown Selector %q", r.Selector)
		}
		if r.OptionalField != "" {
			return fail("OptionalField is for object references; a selector rule's edges exist only while their targets do")
		}
		if fields || len(r.Kinds) > 0 || r.DefaultKind != "" {
			return fail("a selector rule has no field names or kinds")
		}
		if r.To.Resource == "" {
			return fail("a selector rule needs a To resource")
		}
		if r.Namespace != NamespaceAuto {
			return fail("a selector selects in its own namespace; Namespace does not apply")
		}
		c.kind = kindSelector
	case fields:
		if r.NameField == "" {
			if r.OptionalField != "" {
				return fail("OptionalField needs object references (a NameField): a value that is a name has no field to mark it optional")
			}
			return fail("object references need a NameField")
		}
		if r.OptionalField != "" && slices.Contains([]string{r.NameField, r.NamespaceField, r.KindField, r.GroupField, r.APIVersionField, r.UIDField}, r.OptionalField) {
			return fail("OptionalField %q is also another field of the reference", r.OptionalField)
		}
		if r.GroupField != "" && r.APIVersionField != "" {
			return fail("GroupField and APIVersionField exclude each other")
		}
		c.kind = kindObjects
		c.byKind = r.KindField != ""
		if c.byKind == (r.To.Resource != "") {
			return fail("give either To.Resource or KindField")
		}
		if !c.byKind && (r.GroupField != "" || r.APIVersionField != "" || len(r.Kinds) > 0 || r.DefaultKind != "") {
			return fail("GroupField, APIVersionField, Kinds and DefaultKind need a KindField")
		}
		if len(r.Kinds) > 0 {
			c.kinds = map[string]bool{}
			for _, k := range r.Kinds {
				c.kinds[k] = true
			}
			if r.DefaultKind != "" && !c.kinds[r.DefaultKind] {
				return fail("DefaultKind %q is not one of Kinds %v: a value that names no kind would name nothing", r.DefaultKind, r.Kinds)
			}
		}
	default:
		if r.To.Resource == "" {
			return fail("a rule of names needs a To resource")
		}
		if len(r.Kinds) > 0 || r.DefaultKind != "" {
			return fail("Kinds and DefaultKind need a KindField")
		}
		c.kind = kindNames
	}
	if r.NamedAfterSource && c.kind != kindNames {
		return fail("NamedAfterSource is for rules whose values are names, not object references or selectors")
	}
	if r.To.Resource == "*" {
		return fail("To cannot be every resource")
	}
	return c, nil
}

// checkResourceName refuses what cannot be a resource's plural and group as discovery names
// them (lower case, no dots in the plural): a kind ("ConfigMap") or "pods.v1" would never
// match an object. "*" and an empty resource (To of a rule by kind) pass.
func checkResourceName(gr schema.GroupResource) error {
	if gr.Resource != "" && gr.Resource != "*" && !isName(gr.Resource, false) {
		return fmt.Errorf("%q is not a resource's plural (lower-case letters, digits and '-'): rules name resources as discovery does, \"configmaps\"", gr.Resource)
	}
	if gr.Group != "" && !isName(gr.Group, true) {
		return fmt.Errorf("%q is not an API group (lower case, dot-separated)", gr.Group)
	}
	return nil
}

// isName reports whether s is a lower-case DNS label (dots allowed: a subdomain).
func isName(s string, dots bool) bool {
	if s == "" || len(s) > 253 || s[0] == '-' || s[len(s)-1] == '-' || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c == '.' && dots:
		default:
			return false
		}
	}
	return true
}

// readsOnlyMetadata reports whether p reads nothing but fields under .metadata.
func readsOnlyMetadata(p *jsonpath.Path) bool {
	fields := p.Fields()
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		if len(f) == 0 || f[0] != "metadata" {
			return false
		}
	}
	return true
}

// resourceName is "plural.group", or "plural" for the core group.
func resourceName(gr schema.GroupResource) string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// groupOfAPIVersion returns the group of "group/version" ("" for "v1").
func groupOfAPIVersion(apiVersion string) string {
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}
