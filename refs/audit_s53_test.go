package refs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A cluster-scoped target named by one object with two namespaces, optionally in one and
// not in the other, is one edge, required. When its resource is described anew namespaced
// (a CRD deleted and created again), the two values name two objects, each as optional as
// its own values said: the edges must be what reading the object again makes of them.
func TestS53RescopedEdgesKeepTheOptionalityOfTheirOwnValues(t *testing.T) {
	gadgets := gr("example.com", "gadgets")
	rules := append(BuiltinRules(), Rule{Name: "pods:gadgets", From: pods, Path: "{.spec.gadgets}", To: gadgets,
		NameField: "name", NamespaceField: "namespace", OptionalField: "optional"})
	const p = `{"metadata":{"name":"p","namespace":"b"},"spec":{"gadgets":[
	  {"name":"g","namespace":"a","optional":true},
	  {"name":"g","namespace":"b","optional":true},
	  {"name":"g","namespace":"b"},
	  {"name":"h","namespace":"a","optional":true},
	  {"name":"h","namespace":"b","optional":true}]}}`
	read := func(namespaced bool) (refs, dangling []string) {
		tg := newTestGraph(t, rules)
		tg.g.learn(gadgets, "Gadget", namespaced)
		tg.put(pods, p)
		return strs(tg.References(oref(pods, "b", "p"), 1)), strs(tg.Dangling())
	}
	wantRefs, wantDangling := read(true)
	// What reading the Pod makes of its values, with gadgets namespaced: a/g and both h
	// optional, b/g required (named both ways).
	assert.Equal(t, lines(`
		pods/b/p -[pods:gadgets]-> gadgets.example.com/a/g (optional) (Missing: not found)
		pods/b/p -[pods:gadgets]-> gadgets.example.com/b/g (Missing: not found)
		pods/b/p -[pods:gadgets]-> gadgets.example.com/a/h (optional) (Missing: not found)
		pods/b/p -[pods:gadgets]-> gadgets.example.com/b/h (optional) (Missing: not found)
	`), wantRefs)
	assert.Equal(t, lines(`pods/b/p -[pods:gadgets]-> gadgets.example.com/b/g (Missing: not found)`), wantDangling)
	// Cluster-scoped, g is one edge, required (named so once), h one optional edge.
	clusterRefs, _ := read(false)
	assert.Equal(t, lines(`
		pods/b/p -[pods:gadgets]-> gadgets.example.com/g (Missing: not found)
		pods/b/p -[pods:gadgets]-> gadgets.example.com/h (optional) (Missing: not found)
	`), clusterRefs)

	// The Pod read while gadgets are cluster-scoped, then the resource comes back namespaced.
	tg := newTestGraph(t, rules)
	tg.g.learn(gadgets, "Gadget", false)
	tg.put(pods, p)
	tg.g.learn(gadgets, "Gadget", true)
	assert.Equal(t, wantRefs, strs(tg.References(oref(pods, "b", "p"), 1)))
	assert.Equal(t, wantDangling, strs(tg.Dangling()))
	// And back: one edge per name again.
	tg.g.learn(gadgets, "Gadget", false)
	assert.Equal(t, clusterRefs, strs(tg.References(oref(pods, "b", "p"), 1)))
}

// The same when the references name their target's kind and the resource stops having it
// (a CRD created again with another kind): each namespace's references wait for the kind,
// as optional as their own values, and only the required one dangles.
func TestS53ReferencesLeftWaitingForAKindKeepTheirOwnOptionality(t *testing.T) {
	gadgets := gr("example.com", "gadgets")
	rules := append(BuiltinRules(), Rule{Name: "pods:gadgets", From: pods, Path: "{.spec.gadgets}", To: gr("example.com", ""),
		KindField: "kind", NameField: "name", NamespaceField: "namespace", OptionalField: "optional"})
	const p = `{"metadata":{"name":"p","namespace":"b"},"spec":{"gadgets":[
	  {"kind":"Gadget","name":"g","namespace":"a","optional":true},
	  {"kind":"Gadget","name":"g","namespace":"b"}]}}`
	// Read while no resource has the kind.
	fresh := newTestGraph(t, rules)
	fresh.put(pods, p)
	want := lines(`
		pods/b/p -[pods:gadgets]-> Gadget.example.com/a/g (optional) (Unknown: no served resource known to have kind Gadget.example.com)
		pods/b/p -[pods:gadgets]-> Gadget.example.com/b/g (Unknown: no served resource known to have kind Gadget.example.com)
	`)
	assert.Equal(t, want, strs(fresh.References(oref(pods, "b", "p"), 1)))
	assert.Equal(t, want[1:], strs(fresh.Dangling()))

	// Read while gadgets are cluster-scoped and have the kind; then the kind goes.
	tg := newTestGraph(t, rules)
	tg.g.learn(gadgets, "Gadget", false)
	tg.put(pods, p)
	assert.Equal(t, lines(`pods/b/p -[pods:gadgets]-> gadgets.example.com/g (Missing: not found)`), strs(tg.Dangling()))
	tg.g.learn(gadgets, "Gizmo", false)
	assert.Equal(t, want, strs(tg.References(oref(pods, "b", "p"), 1)))
	assert.Equal(t, want[1:], strs(tg.Dangling()))
}
