package refs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/jsonpath"
)

func TestBuiltinRulesAreValidAndNamedOnce(t *testing.T) {
	rules := BuiltinRules()
	require.NoError(t, CheckRules(rules))
	names := map[string]bool{}
	for _, r := range rules {
		assert.False(t, names[r.Name], r.Name)
		names[r.Name] = true
		if r.Name != "owner" {
			assert.True(t, strings.HasPrefix(r.Name, resourceName(r.From)+":"), "%s is named after its resource", r.Name)
		}
	}
	// 21 Pod spec references for each of 9 holders, and the rest.
	assert.Equal(t, 1+9*21+52, len(rules))
	// Each call returns a new slice: appending to one does not change the next.
	rules[0].Name = "changed"
	assert.Equal(t, "owner", BuiltinRules()[0].Name)
}

func TestRuleValidation(t *testing.T) {
	w := gr("example.com", "widgets")
	for _, c := range []struct {
		name string
		rule Rule
		want string
	}{
		{"no name", Rule{From: w, Path: "{.a}", To: secrets}, "empty name"},
		{"no from", Rule{Name: "x", Path: "{.a}", To: secrets}, "no From resource"},
		{"bad path", Rule{Name: "x", From: w, Path: "{.a", To: secrets}, "syntax error"},
		{"template", Rule{Name: "x", From: w, Path: "{.a}/{.b}", To: secrets}, "is a template"},
		{"any resource reads spec", Rule{Name: "x", From: AnyResource, Path: "{.spec.a}", To: secrets}, "may read only .metadata"},
		{"names without target", Rule{Name: "x", From: w, Path: "{.a}"}, "needs a To resource"},
		{"kinds without kind field", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, Kinds: []string{"Secret"}}, "need a KindField"},
		{"objects without name", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, NamespaceField: "ns"}, "need a NameField"},
		{"kind and resource", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, NameField: "name", KindField: "kind"}, "either To.Resource or KindField"},
		{"neither kind nor resource", Rule{Name: "x", From: w, Path: "{.a}", NameField: "name"}, "either To.Resource or KindField"},
		{"group without kind", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, NameField: "name", GroupField: "g"}, "need a KindField"},
		{"group and apiVersion", Rule{Name: "x", From: w, Path: "{.a}", NameField: "name", KindField: "kind", GroupField: "g", APIVersionField: "v"}, "exclude each other"},
		{"selector fields", Rule{Name: "x", From: w, Path: "{.a}", To: pods, Selector: SelectorMap, NameField: "name"}, "no field names"},
		{"selector namespace", Rule{Name: "x", From: w, Path: "{.a}", To: pods, Selector: SelectorMap, Namespace: NamespaceSame}, "Namespace does not apply"},
		{"selector target", Rule{Name: "x", From: w, Path: "{.a}", Selector: SelectorMap}, "needs a To resource"},
		{"selector form", Rule{Name: "x", From: w, Path: "{.a}", To: pods, Selector: "Set"}, "unknown Selector"},
		{"namespace mode", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, Namespace: "Other"}, "unknown Namespace"},
		{"every target", Rule{Name: "x", From: w, Path: "{.a}", To: AnyResource}, "cannot be every resource"},
		{"optional selector", Rule{Name: "x", From: w, Path: "{.a}", To: pods, Selector: SelectorMap, OptionalField: "optional"}, "OptionalField is for object references"},
		{"optional names", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, OptionalField: "optional"}, "OptionalField needs object references"},
		{"optional is the name", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, NameField: "name", OptionalField: "name"}, `OptionalField "name" is also another field`},
		{"named after source, objects", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, NameField: "name", NamedAfterSource: true}, "NamedAfterSource is for rules whose values are names"},
		{"named after source, selector", Rule{Name: "x", From: w, Path: "{.a}", To: pods, Selector: SelectorMap, NamedAfterSource: true}, "NamedAfterSource is for rules whose values are names"},
		{"unless without values", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, Unless: Condition{Path: "{.b}"}}, "no Values"},
		{"unless without path", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, Unless: Condition{Values: []string{"b"}}}, "Values and no Path"},
		{"unless bad path", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, Unless: Condition{Path: "{.b", Values: []string{"b"}}}, "Unless: "},
		{"unless template", Rule{Name: "x", From: w, Path: "{.a}", To: secrets, Unless: Condition{Path: "{.b}/{.c}", Values: []string{"b"}}}, "is a template"},
		{"any resource unless reads spec", Rule{Name: "x", From: AnyResource, Path: "{.metadata.annotations.a}", To: secrets,
			Unless: Condition{Path: "{.spec.b}", Values: []string{"b"}}}, "may read only .metadata"},
		// Names discovery never gives a resource: they matched nothing, silently.
		{"every resource of a group", Rule{Name: "x", From: gr("apps", "*"), Path: "{.metadata.name}", To: secrets}, "takes no group"},
		{"kind as From", Rule{Name: "x", From: gr("", "ConfigMap"), Path: "{.a}", To: secrets}, `"ConfigMap" is not a resource's plural`},
		{"kind as To", Rule{Name: "x", From: w, Path: "{.a}", To: gr("", "Secret")}, `"Secret" is not a resource's plural`},
		{"resource with a version", Rule{Name: "x", From: w, Path: "{.a}", To: gr("", "secrets.v1")}, `"secrets.v1" is not a resource's plural`},
		{"upper-case group", Rule{Name: "x", From: gr("Example.com", "widgets"), Path: "{.a}", To: secrets}, `"Example.com" is not an API group`},
		{"group of a kind", Rule{Name: "x", From: w, Path: "{.a}", To: gr("-x", ""), KindField: "kind", NameField: "name"}, `"-x" is not an API group`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRules([]Rule{c.rule})
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidRule)
			assert.Contains(t, err.Error(), c.want)
			var re *RuleError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, c.rule.Name, re.Rule)
		})
	}
	var se *jsonpath.SyntaxError
	assert.True(t, errors.As(CheckRules([]Rule{{Name: "x", From: w, Path: "{.a", To: secrets}}), &se))
	dup := Rule{Name: "x", From: w, Path: "{.a}", To: secrets}
	assert.ErrorContains(t, CheckRules([]Rule{dup, dup}), "duplicate name")
}

// TestObjectFormsReadAlike reads one object as a decoded map, as JSON bytes and (for the
// metadata rules) as metadata only: the same references.
func TestObjectFormsReadAlike(t *testing.T) {
	compiled, err := compileRules(BuiltinRules())
	require.NoError(t, err)
	g := newGraph(compiled)
	info := g.rulesOf(pods)
	js := []byte(fullPod)
	dec, err := read(info, obj(t, fullPod))
	require.NoError(t, err)
	raw, err := read(info, newRawObject(js))
	require.NoError(t, err)
	assert.Equal(t, dec, raw)
	assert.Len(t, dec.raws, 18)

	// Metadata only: the owner reference, nothing from the spec.
	pom := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "p1",
		Labels:          map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-rs", UID: types.UID("rs1")}}}}
	meta, err := read(info, pom)
	require.NoError(t, err)
	require.Len(t, meta.raws, 1)
	assert.Equal(t, dec.raws[0], meta.raws[0])
	assert.Equal(t, dec.labels, meta.labels)

	_, err = read(info, "not an object")
	assert.Error(t, err)
}

func TestDeletionsByObjectAndTombstone(t *testing.T) {
	tg := newTestGraph(t, nil)
	info := tg.g.rulesOf(configMaps)
	for _, n := range []string{"a", "b", "c"} {
		tg.put(pods, `{"metadata":{"name":"p-`+n+`","namespace":"ns"},"spec":{"volumes":[{"name":"v","configMap":{"name":"`+n+`"}}]}}`)
		tg.put(configMaps, `{"metadata":{"name":"`+n+`","namespace":"ns"}}`)
	}
	tg.delete(info, obj(t, `{"metadata":{"name":"a","namespace":"ns"}}`))
	tg.delete(info, cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: obj(t, `{"metadata":{"name":"b","namespace":"ns"}}`)})
	tg.delete(info, cache.DeletedFinalStateUnknown{Key: "ns/c"}) // no last state
	tg.delete(info, cache.DeletedFinalStateUnknown{Key: "ns/x/y"})
	tg.delete(info, "junk")
	assert.Len(t, tg.Dangling(), 3)
	assert.Equal(t, 3, tg.Stats().Objects)
}

func TestRefOf(t *testing.T) {
	node := discovery.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Node"}}
	assert.Equal(t, ObjectRef{Resource: "nodes", Kind: "Node", Name: "n"}, RefOf(node, "ns", "n"))
	deploy := discovery.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}
	assert.Equal(t, "deployments.apps/ns/web", RefOf(deploy, "ns", "web").String())
}

func TestTreeOfReferrersAndCycles(t *testing.T) {
	tg := newTestGraph(t, nil)
	// Two ClusterRoles that aggregate each other: a cycle.
	tg.put(clusterRoles, `{"metadata":{"name":"a","labels":{"agg":"a"}},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"agg":"b"}}]}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"b","labels":{"agg":"b"}},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"agg":"a"}}]}}`)
	tg.put(clusterRoleBindings, `{"metadata":{"name":"bind"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"a"}}`)
	root := oref(clusterRoles, "", "a")
	assert.Equal(t, `clusterroles.rbac.authorization.k8s.io/a
├── [clusterrolebindings.rbac.authorization.k8s.io:role] clusterrolebindings.rbac.authorization.k8s.io/bind
└── [clusterroles.rbac.authorization.k8s.io:aggregation] clusterroles.rbac.authorization.k8s.io/b
    └── [clusterroles.rbac.authorization.k8s.io:aggregation] clusterroles.rbac.authorization.k8s.io/a (shown above)
`, Tree(root, tg.Referrers(root, 0), true).String())
	// The root as a query names it (a namespace on a cluster-scoped object) still roots the tree.
	named := oref(clusterRoles, "ignored", "a")
	tree := Tree(named, tg.References(named, 0), false)
	assert.Equal(t, `clusterroles.rbac.authorization.k8s.io/ignored/a
└── [clusterroles.rbac.authorization.k8s.io:aggregation] clusterroles.rbac.authorization.k8s.io/b
    └── [clusterroles.rbac.authorization.k8s.io:aggregation] clusterroles.rbac.authorization.k8s.io/a (shown above)
`, tree.String())
}

// Objects of unexpected shapes name nothing and never fail the graph.
func TestMalformedObjectsNameNothing(t *testing.T) {
	tg := newTestGraph(t, nil)
	for _, c := range []struct {
		res schema.GroupResource
		js  string
	}{
		{pods, `{"metadata":{"name":"a","namespace":"ns","ownerReferences":{"kind":"x"}},"spec":{"volumes":"none","containers":7}}`},
		{pods, `{"metadata":{"name":"b","namespace":"ns","ownerReferences":[{"kind":"ReplicaSet","name":"x"},7,null,{"apiVersion":"apps/v1","kind":"","name":"y"}]},
		  "spec":{"volumes":[{"configMap":{"name":7}},{"configMap":null},{"secret":{"secretName":""}}],"serviceAccountName":[["x"]],"nodeName":{}}}`},
		{services, `{"metadata":{"name":"c","namespace":"ns"},"spec":{"selector":{"app":7}}}`},
		{services, `{"metadata":{"name":"d","namespace":"ns"},"spec":{"selector":"app=web"}}`},
		{gr("policy", "poddisruptionbudgets"), `{"metadata":{"name":"e","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":1}}}}`},
		{gr("policy", "poddisruptionbudgets"), `{"metadata":{"name":"f","namespace":"ns"},"spec":{"selector":{"matchExpressions":[7,{"key":"a","operator":"In","values":[1]}]}}}`},
		{gr("policy", "poddisruptionbudgets"), `{"metadata":{"name":"g","namespace":"ns"},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"In","values":[]}]}}}`},
		{roleBindings, `{"metadata":{"name":"h","namespace":"ns"},"roleRef":"admin","subjects":[{"kind":"ServiceAccount"},{"name":"x"},null]}`},
		{clusterRoleBindings, `{"metadata":{"name":"i"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"kind":"ServiceAccount","name":"no-namespace"}]}`},
		{gr("autoscaling", "horizontalpodautoscalers"), `{"metadata":{"name":"j","namespace":"ns"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"}}}`},
	} {
		tg.put(c.res, c.js)
	}
	// b's ReplicaSet owner and j's target have no apiVersion: their kinds are read in the
	// core group, which has neither (the HPA controller reads j's so, and fails to find it);
	// y has no kind and names nothing. A ClusterRoleBinding to a namespaced Role, or to a
	// ServiceAccount without a namespace, names nothing: the server would not find them either.
	assert.Equal(t, lines(`
		pods/ns/b -[owner]-> ReplicaSet/ns/x (Unknown: no served resource known to have kind ReplicaSet)
		horizontalpodautoscalers.autoscaling/ns/j -[horizontalpodautoscalers.autoscaling:target]-> Deployment/ns/web (Unknown: no served resource known to have kind Deployment)
	`), strs(tg.Dangling()))
	assert.Equal(t, 2, tg.Stats().Unresolved)
	assert.Zero(t, tg.Stats().Edges+tg.Stats().Selectors)
	assert.Equal(t, 10, tg.Stats().Objects)
}

// Start(nil) panicked in context.WithCancel.
func TestStartRefusesANilContext(t *testing.T) {
	g, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	//nolint:staticcheck // a nil context is the input under test
	require.ErrorIs(t, g.Start(nil), informer.ErrNilContext)
	require.ErrorIs(t, g.WaitForSync(nil), informer.ErrNilContext)
	g.Shutdown()
	require.ErrorIs(t, g.Start(context.Background()), ErrStopped, "a graph shut down does not start")
}

// A deletion of an earlier object of a name, told after its successor was added (a resource
// that left the watched set and came back), leaves the successor in the graph; one of the
// same UID, or of none, removes it.
func TestLateDeletionOfAnEarlierObjectKeepsItsSuccessor(t *testing.T) {
	tg := newTestGraph(t, nil)
	info := tg.g.rulesOf(configMaps)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"volumes":[{"name":"v","configMap":{"name":"cfg"}}]}}`)
	tg.put(configMaps, `{"metadata":{"name":"cfg","namespace":"ns","uid":"new"}}`)
	tg.delete(info, obj(t, `{"metadata":{"name":"cfg","namespace":"ns","uid":"old"}}`))
	tg.delete(info, cache.DeletedFinalStateUnknown{Key: "ns/cfg", Obj: obj(t, `{"metadata":{"name":"cfg","namespace":"ns","uid":"old"}}`)})
	assert.Empty(t, tg.Dangling(), "the ConfigMap of UID new is still there")
	tg.delete(info, cache.DeletedFinalStateUnknown{Key: "ns/cfg", Obj: obj(t, `{"metadata":{"name":"cfg","namespace":"ns","uid":"new"}}`)})
	assert.Len(t, tg.Dangling(), 1, "its own deletion removes it")
	tg.put(configMaps, `{"metadata":{"name":"cfg","namespace":"ns","uid":"newer"}}`)
	tg.delete(info, cache.DeletedFinalStateUnknown{Key: "ns/cfg"}) // no last state: no UID to compare
	assert.Len(t, tg.Dangling(), 1)
}

// A rule's Path may end at a list ({.spec.secretNames} rather than
// {.spec.secretNames[*]}): its elements are the values, names, object references or
// selectors alike, on decoded objects and JSON bytes. Only one level: a list of lists names
// nothing.
func TestPathEndingAtAListReadsItsElements(t *testing.T) {
	widgets := gr("example.com", "widgets")
	rules := append(BuiltinRules(),
		Rule{Name: "widgets:secrets", From: widgets, Path: "{.spec.secretNames}", To: secrets, Namespace: NamespaceSame},
		Rule{Name: "widgets:configmaps", From: widgets, Path: "{.spec.configRefs}", To: configMaps, NameField: "name", OptionalField: "optional"},
		Rule{Name: "widgets:targets", From: widgets, Path: "{.spec.targets}", KindField: "kind", GroupField: "apiGroup", NameField: "name"},
		Rule{Name: "widgets:selectors", From: widgets, Path: "{.spec.selectors}", To: pods, Selector: SelectorLabelSelector},
		Rule{Name: "widgets:nested", From: widgets, Path: "{.spec.nested}", To: secrets, Namespace: NamespaceSame},
	)
	tg := newTestGraph(t, rules)
	tg.g.learn(widgets, "Widget", true)
	tg.put(pods, pod("ns", "a", `"app":"web"`))
	tg.put(pods, pod("ns", "b", `"app":"db"`))
	js := `{"metadata":{"name":"NAME","namespace":"ns"},"spec":{"secretNames":["s1","s2",7],
	  "configRefs":[{"name":"c1"},{"name":"c2","optional":true},"c3"],
	  "targets":[{"kind":"Service","name":"svc"},{"kind":"Deployment","apiGroup":"apps","name":"dep"}],
	  "selectors":[{"matchLabels":{"app":"web"}},{"matchLabels":{"app":"db"}}],
	  "nested":[["n1"]]}}`
	tg.put(widgets, strings.Replace(js, "NAME", "w", 1))
	tg.upsert(tg.g.rulesOf(widgets), newRawObject([]byte(strings.Replace(js, "NAME", "raw", 1))))
	for _, name := range []string{"w", "raw"} {
		assert.Equal(t, lines(strings.ReplaceAll(`
			widgets.example.com/ns/NAME -[widgets:secrets]-> secrets/ns/s1 (Missing: not found)
			widgets.example.com/ns/NAME -[widgets:secrets]-> secrets/ns/s2 (Missing: not found)
			widgets.example.com/ns/NAME -[widgets:configmaps]-> configmaps/ns/c1 (Missing: not found)
			widgets.example.com/ns/NAME -[widgets:configmaps]-> configmaps/ns/c2 (optional) (Missing: not found)
			widgets.example.com/ns/NAME -[widgets:targets]-> services/ns/svc (Missing: not found)
			widgets.example.com/ns/NAME -[widgets:targets]-> deployments.apps/ns/dep (Missing: not found)
			widgets.example.com/ns/NAME -[widgets:selectors]-> pods/ns/a
			widgets.example.com/ns/NAME -[widgets:selectors]-> pods/ns/b
		`, "NAME", name)), strs(tg.References(oref(widgets, "ns", name), 1)), name)
	}
}

// A rule's Unless leaves out the objects on which its path yields one of its values,
// compared as text (numbers and booleans too); absent, or another value, the rule applies.
// The rule is read from the objects' fields when only its condition reads them.
func TestRuleUnless(t *testing.T) {
	w := gr("example.com", "widgets")
	rules := append(BuiltinRules(),
		Rule{Name: "widgets:secret", From: w, Path: "{.spec.secretRef}", To: secrets, NameField: "name",
			Unless: Condition{Path: "{.spec.mode,.spec.disabled,.spec.replicas}", Values: []string{"External", "true", "0"}}},
		Rule{Name: "widgets:annotated", From: w, Path: "{.metadata.annotations['example.com/secret']}", To: secrets,
			Namespace: NamespaceSame, Unless: Condition{Path: "{.spec.mode}", Values: []string{"External"}}},
	)
	tg := newTestGraph(t, rules)
	for _, c := range []struct{ name, spec string }{ // spec: fields besides the secretRef
		{"plain", ``},
		{"other-mode", `,"mode":"Internal"`},
		{"replicas", `,"replicas":2,"disabled":false`},
		{"external", `,"mode":"External"`},
		{"disabled", `,"disabled":true`},
		{"scaled-down", `,"replicas":0`},
		{"listed", `,"mode":["External"]`}, // a list is no scalar: the rule applies
	} {
		tg.put(w, `{"metadata":{"name":"`+c.name+`","namespace":"ns","annotations":{"example.com/secret":"a-`+c.name+`"}},
			"spec":{"secretRef":{"name":"s-`+c.name+`"}`+c.spec+`}}`)
	}
	var got []string
	for _, e := range tg.Dangling() {
		got = append(got, e.From.Name+" "+e.Rule+" "+e.To.Name)
	}
	assert.ElementsMatch(t, []string{
		"plain widgets:secret s-plain", "plain widgets:annotated a-plain",
		"other-mode widgets:secret s-other-mode", "other-mode widgets:annotated a-other-mode",
		"replicas widgets:secret s-replicas", "replicas widgets:annotated a-replicas",
		"disabled widgets:annotated a-disabled", "scaled-down widgets:annotated a-scaled-down",
		"listed widgets:secret s-listed", "listed widgets:annotated a-listed",
	}, got)
	// A rule that reads metadata only but whose condition reads the spec is read from the
	// objects' fields (the compact factory), not from their metadata.
	g, err := New(&rest.Config{Host: "https://example.invalid"}, Options{Rules: rules})
	require.NoError(t, err)
	assert.Contains(t, g.fieldResources, w)
	assert.Contains(t, g.projection(), "{.spec.mode}")
}
