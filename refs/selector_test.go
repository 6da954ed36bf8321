package refs

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func pod(ns, name, labels string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"labels":{%s}}}`, name, ns, labels)
}

func TestServiceSelectionFollowsLabelsOnBothSides(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, pod("ns", "a", `"app":"web","tier":"front"`))
	tg.put(pods, pod("ns", "b", `"app":"web"`))
	tg.put(pods, pod("ns", "c", `"app":"db"`))
	tg.put(pods, pod("other", "d", `"app":"web"`)) // another namespace: never selected
	tg.put(services, `{"metadata":{"name":"web","namespace":"ns"},"spec":{"selector":{"app":"web"}}}`)
	tg.put(services, `{"metadata":{"name":"front","namespace":"ns"},"spec":{"selector":{"app":"web","tier":"front"}}}`)
	tg.put(services, `{"metadata":{"name":"external","namespace":"ns"},"spec":{"type":"ExternalName"}}`) // no selector
	tg.put(services, `{"metadata":{"name":"empty","namespace":"ns"},"spec":{"selector":{}}}`)            // selects nothing
	tg.put(services, `{"metadata":{"name":"cache","namespace":"ns"},"spec":{"selector":{"app":"cache"}}}`)
	selected := func(svc string) []string {
		var out []string
		for _, e := range tg.References(oref(services, "ns", svc), 1) {
			require.True(t, e.Selector)
			out = append(out, e.To.Name)
		}
		return out
	}
	assert.Equal(t, []string{"a", "b"}, selected("web"))
	assert.Equal(t, []string{"a"}, selected("front"))
	assert.Empty(t, selected("external"))
	empty, err := tg.EmptySelectors(services)
	require.NoError(t, err)
	assert.Equal(t, []string{"services/ns/cache"}, refStrs(empty))

	// A Pod relabelled leaves one selection and joins another.
	tg.put(pods, pod("ns", "b", `"app":"cache"`))
	assert.Equal(t, []string{"a"}, selected("web"))
	assert.Equal(t, []string{"b"}, selected("cache"))
	assert.Equal(t, lines(`services/ns/cache -[services:selector]-> pods/ns/b`), strs(tg.Referrers(oref(pods, "ns", "b"), 1)))
	// The Service's selector changes: the selection follows.
	tg.put(services, `{"metadata":{"name":"web","namespace":"ns"},"spec":{"selector":{"app":"db"}}}`)
	assert.Equal(t, []string{"c"}, selected("web"))
	// A Pod deleted leaves every selection; one created joins.
	tg.del(pods, "ns", "c")
	assert.Empty(t, selected("web"))
	tg.put(pods, pod("ns", "e", `"app":"db","x":"y"`))
	assert.Equal(t, []string{"e"}, selected("web"))
	// Selector edges never dangle.
	assert.Empty(t, tg.Dangling())
	// A Service deleted: its Pods are used by nothing any more.
	tg.del(services, "ns", "web")
	assert.Empty(t, tg.Referrers(oref(pods, "ns", "e"), 1))
	st := tg.Stats()
	assert.Equal(t, 2, st.Selectors) // front and cache: external has none, empty selects nothing, web is gone
	assert.Equal(t, 2, st.SelectorEdges)
}

func TestLabelSelectorForms(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, pod("ns", "a", `"app":"web","env":"prod"`))
	tg.put(pods, pod("ns", "b", `"app":"web","env":"dev"`))
	tg.put(pods, pod("ns", "c", `"app":"db"`))
	pdbs := gr("policy", "poddisruptionbudgets")
	netpols := gr("networking.k8s.io", "networkpolicies")
	tg.put(pdbs, `{"metadata":{"name":"in","namespace":"ns"},"spec":{"selector":{"matchExpressions":[{"key":"env","operator":"In","values":["prod","staging"]}]}}}`)
	tg.put(pdbs, `{"metadata":{"name":"notin","namespace":"ns"},"spec":{"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"env","operator":"NotIn","values":["prod"]}]}}}`)
	tg.put(pdbs, `{"metadata":{"name":"exists","namespace":"ns"},"spec":{"selector":{"matchExpressions":[{"key":"env","operator":"Exists"}]}}}`)
	tg.put(pdbs, `{"metadata":{"name":"notexists","namespace":"ns"},"spec":{"selector":{"matchExpressions":[{"key":"env","operator":"DoesNotExist"}]}}}`)
	tg.put(pdbs, `{"metadata":{"name":"null","namespace":"ns"},"spec":{"selector":null}}`)
	tg.put(pdbs, `{"metadata":{"name":"invalid","namespace":"ns"},"spec":{"selector":{"matchExpressions":[{"key":"env","operator":"Sometimes"}]}}}`)
	// Fields of another shape make a selector invalid: skipped, they made it {}, which
	// selected every Pod.
	tg.put(pdbs, `{"metadata":{"name":"labels-text","namespace":"ns"},"spec":{"selector":{"matchLabels":"app=web"}}}`)
	tg.put(pdbs, `{"metadata":{"name":"exprs-map","namespace":"ns"},"spec":{"selector":{"matchExpressions":{"key":"app","operator":"In","values":["web"]}}}}`)
	tg.put(pdbs, `{"metadata":{"name":"labels-list","namespace":"ns"},"spec":{"selector":{"matchLabels":[{"app":"web"}]}}}`)
	tg.put(netpols, `{"metadata":{"name":"all","namespace":"ns"},"spec":{"podSelector":{}}}`)
	tg.put(netpols, `{"metadata":{"name":"nulls","namespace":"ns"},"spec":{"podSelector":{"matchLabels":null,"matchExpressions":null}}}`)
	tg.put(netpols, `{"metadata":{"name":"web","namespace":"ns"},"spec":{"podSelector":{"matchLabels":{"app":"web"}}}}`)
	selected := func(res ObjectRef) []string {
		var out []string
		for _, e := range tg.References(res, 1) {
			out = append(out, e.To.Name)
		}
		return out
	}
	assert.Equal(t, []string{"a"}, selected(oref(pdbs, "ns", "in")))
	assert.Equal(t, []string{"b"}, selected(oref(pdbs, "ns", "notin")))
	assert.Equal(t, []string{"a", "b"}, selected(oref(pdbs, "ns", "exists")))
	assert.Equal(t, []string{"c"}, selected(oref(pdbs, "ns", "notexists")))
	assert.Empty(t, selected(oref(pdbs, "ns", "null")))
	assert.Empty(t, selected(oref(pdbs, "ns", "invalid")))
	for _, name := range []string{"labels-text", "exprs-map", "labels-list"} {
		assert.Empty(t, selected(oref(pdbs, "ns", name)), name)
	}
	assert.Equal(t, []string{"a", "b", "c"}, selected(oref(netpols, "ns", "nulls")), "null fields are absent ones")
	assert.Equal(t, []string{"a", "b", "c"}, selected(oref(netpols, "ns", "all")))
	assert.Equal(t, []string{"a", "b"}, selected(oref(netpols, "ns", "web")))
	// A new Pod in the namespace: every selector that matches picks it up.
	tg.put(pods, pod("ns", "d", `"app":"web","env":"staging"`))
	assert.Equal(t, []string{"a", "d"}, selected(oref(pdbs, "ns", "in")))
	assert.Equal(t, []string{"a", "b", "c", "d"}, selected(oref(netpols, "ns", "all")))
	// Referrers of a Pod name every selector holding it.
	assert.Equal(t, lines(`
		networkpolicies.networking.k8s.io/ns/all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/ns/d
		networkpolicies.networking.k8s.io/ns/nulls -[networkpolicies.networking.k8s.io:pod-selector]-> pods/ns/d
		networkpolicies.networking.k8s.io/ns/web -[networkpolicies.networking.k8s.io:pod-selector]-> pods/ns/d
		poddisruptionbudgets.policy/ns/exists -[poddisruptionbudgets.policy:selector]-> pods/ns/d
		poddisruptionbudgets.policy/ns/in -[poddisruptionbudgets.policy:selector]-> pods/ns/d
		poddisruptionbudgets.policy/ns/notin -[poddisruptionbudgets.policy:selector]-> pods/ns/d
	`), strs(tg.Referrers(oref(pods, "ns", "d"), 1)))
	empty, _ := tg.EmptySelectors(pdbs)
	assert.Empty(t, empty) // null and invalid select nothing, but have no selector
}

func TestClusterScopedSelectorsSelectEverywhere(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(clusterRoles, `{"metadata":{"name":"view-extra","labels":{"rbac.example.com/aggregate-to-view":"true"}}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"edit-extra","labels":{"rbac.example.com/aggregate-to-edit":"true"}}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"view"},"aggregationRule":{"clusterRoleSelectors":[
	  {"matchLabels":{"rbac.example.com/aggregate-to-view":"true"}},{"matchLabels":{"rbac.example.com/aggregate-to-edit":"true"}}]}}`)
	assert.Equal(t, lines(`
		clusterroles.rbac.authorization.k8s.io/view -[clusterroles.rbac.authorization.k8s.io:aggregation]-> clusterroles.rbac.authorization.k8s.io/edit-extra
		clusterroles.rbac.authorization.k8s.io/view -[clusterroles.rbac.authorization.k8s.io:aggregation]-> clusterroles.rbac.authorization.k8s.io/view-extra
	`), strs(tg.References(oref(clusterRoles, "", "view"), 1)))
	// A user rule: a cluster-scoped policy selecting Pods selects them in every namespace.
	rules := append(BuiltinRules(), Rule{Name: "podpolicies:selector", From: gr("example.com", "podpolicies"),
		Path: "{.spec.selector}", To: pods, Selector: SelectorLabelSelector})
	tg = newTestGraph(t, rules)
	tg.put(pods, pod("a", "p", `"app":"x"`))
	tg.put(pods, pod("b", "p", `"app":"x"`))
	tg.put(gr("example.com", "podpolicies"), `{"metadata":{"name":"pol"},"spec":{"selector":{"matchLabels":{"app":"x"}}}}`)
	tg.put(pods, pod("c", "p", `"app":"x"`))
	assert.Len(t, tg.References(oref(gr("example.com", "podpolicies"), "", "pol"), 1), 3)

	// A namespaced object selecting cluster-scoped Nodes selects among all of them.
	rules = append(BuiltinRules(), Rule{Name: "nodepools:nodes", From: gr("example.com", "nodepools"),
		Path: "{.spec.nodeSelector}", To: nodes, Selector: SelectorMap})
	tg = newTestGraph(t, rules)
	tg.put(nodes, `{"metadata":{"name":"n1","labels":{"pool":"a"}}}`)
	tg.put(gr("example.com", "nodepools"), `{"metadata":{"name":"a","namespace":"ns"},"spec":{"nodeSelector":{"pool":"a"}}}`)
	tg.put(nodes, `{"metadata":{"name":"n2","labels":{"pool":"a"}}}`)
	assert.Len(t, tg.References(oref(gr("example.com", "nodepools"), "ns", "a"), 1), 2)
}

// A Service of type ExternalName has no endpoints: the EndpointSlice controller skips it,
// selector or not, so that it selects no Pod, and is no empty selector either. Its type
// changing either way brings its selection back or takes it away.
func TestExternalNameServiceSelectsNoPod(t *testing.T) {
	for _, form := range []struct {
		name string
		of   func(js string) any
	}{
		{"decoded", func(js string) any { return obj(t, js) }},
		{"bytes", func(js string) any { return newRawObject([]byte(js)) }},
	} {
		t.Run(form.name, func(t *testing.T) {
			tg := newTestGraph(t, nil)
			put := func(res schema.GroupResource, js string) { tg.upsert(tg.g.rulesOf(res), form.of(js)) }
			put(pods, pod("ns", "a", `"app":"web"`))
			put(pods, pod("ns", "b", `"app":"web"`))
			external := `{"metadata":{"name":"svc","namespace":"ns"},"spec":{"type":"ExternalName","externalName":"db.example.com","selector":{"app":"web"}}}`
			put(services, external)
			put(services, `{"metadata":{"name":"gone","namespace":"ns"},"spec":{"type":"ExternalName","externalName":"x.example.com","selector":{"app":"none"}}}`)
			assert.Empty(t, tg.References(oref(services, "ns", "svc"), 1))
			assert.Empty(t, tg.Referrers(oref(pods, "ns", "a"), 1))
			empty, err := tg.EmptySelectors(services)
			require.NoError(t, err)
			assert.Empty(t, empty, "an ExternalName Service has no selector that counts")
			unused, err := tg.Unreferenced(pods)
			require.NoError(t, err)
			assert.Equal(t, []string{"pods/ns/a", "pods/ns/b"}, refStrs(unused))

			put(services, `{"metadata":{"name":"svc","namespace":"ns"},"spec":{"type":"ClusterIP","selector":{"app":"web"}}}`)
			assert.Equal(t, lines(`
				services/ns/svc -[services:selector]-> pods/ns/a
				services/ns/svc -[services:selector]-> pods/ns/b
			`), strs(tg.References(oref(services, "ns", "svc"), 1)))
			put(services, external)
			assert.Empty(t, tg.References(oref(services, "ns", "svc"), 1))
			put(pods, pod("ns", "c", `"app":"web"`)) // a Pod created later is not selected either
			assert.Empty(t, tg.Referrers(oref(pods, "ns", "c"), 1))
			st := tg.Stats()
			assert.Zero(t, st.Selectors)
			assert.Zero(t, st.SelectorEdges)
		})
	}
}
