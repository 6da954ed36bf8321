package refs

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"
)

// churnWidgets are a CRD's resource that comes and goes in the tests below.
var churnWidgets = gr("churn.io", "widgets")

// churnRules are the built-in rules and a user rule for churnWidgets.
func churnRules() []Rule {
	return append(BuiltinRules(), Rule{Name: "widgets:secret", From: churnWidgets, Path: "{.spec.secretName}", To: secrets})
}

const churnWidget = `{"metadata":{"name":"w","namespace":"ns","uid":"w1"},"spec":{"secretName":"s"}}`

// Every resource the graph ever saw kept its record (and the map of its objects) for good,
// after its CRD was deleted and nothing of it was left: under CRD churn the graph only grew.
// A resource no longer served goes with the last entry of its objects, and a CRD created
// again works as before: its user rule's edges come back, and what it used is unused once
// it goes.
func TestCRDChurnReleasesResourceRecords(t *testing.T) {
	tg := newTestGraph(t, churnRules())
	tg.put(secrets, `{"metadata":{"name":"s","namespace":"ns","uid":"s1"}}`)
	baseline, slots := tg.g.sizes(), len(tg.g.res)
	secret := oref(secrets, "ns", "s")
	unusedSecrets := func() []string {
		unused, err := tg.Unreferenced(secrets)
		require.NoError(t, err)
		return refStrs(unused)
	}
	for i := range 200 {
		// A CRD of its own each cycle, whose object owns a ConfigMap, and widgets again.
		gizmos := gr("churn.io", fmt.Sprintf("gizmos%d", i))
		kind := fmt.Sprintf("Gizmo%d", i)
		tg.g.learn(gizmos, kind, true, strings.ToLower(kind))
		tg.g.learn(churnWidgets, "Widget", true, "widget")
		tg.put(gizmos, `{"metadata":{"name":"g","namespace":"ns","uid":"g1"}}`)
		tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns","ownerReferences":[
			{"apiVersion":"churn.io/v1","kind":"`+kind+`","name":"g","uid":"g1"}]}}`)
		tg.put(churnWidgets, churnWidget)
		require.Equal(t, []string{"widgets.churn.io/ns/w -[widgets:secret]-> secrets/ns/s"},
			strs(tg.Referrers(secret, 1)), "cycle %d: the user rule's edge", i)
		require.Empty(t, unusedSecrets(), "cycle %d", i)
		require.Empty(t, tg.Dangling(), "cycle %d", i)

		// The CRDs go. On a server the objects go first (the CRD's finalizer deletes them),
		// but discovery may say so before the informer does: both orders.
		if i%2 == 0 {
			tg.del(churnWidgets, "ns", "w")
			tg.del(gizmos, "ns", "g")
			tg.g.forget(churnWidgets)
			tg.g.forget(gizmos)
		} else {
			tg.g.forget(churnWidgets)
			tg.g.forget(gizmos)
			tg.del(churnWidgets, "ns", "w")
			tg.del(gizmos, "ns", "g")
		}
		assert.Equal(t, []string{"churn.io"}, recordGroups(tg.g, "churn.io"),
			"cycle %d: the ConfigMap still names its Gizmo: the record stays", i)
		require.Equal(t, []string{"configmaps/ns/c -[owner]-> gizmos" + fmt.Sprint(i) + ".churn.io/ns/g (Missing: not found)"},
			strs(tg.Dangling()), "cycle %d", i)
		tg.del(configMaps, "ns", "c")
		require.Equal(t, baseline, tg.g.sizes(), "cycle %d: nothing of the CRDs is left", i)
		require.Empty(t, tg.Referrers(secret, 1), "cycle %d", i)
		require.Equal(t, []string{"secrets/ns/s"}, unusedSecrets(), "cycle %d", i)
		require.Empty(t, tg.Dangling(), "cycle %d", i)
	}
	assert.LessOrEqual(t, len(tg.g.res), slots+2, "released ids are reused")
	// The widgets' user rule still reads fields: a query may name them, served or not.
	_, err := tg.Unreferenced(churnWidgets)
	assert.NotErrorIs(t, err, ErrUnknownResource)
}

// recordGroups returns group once per record of one of its resources.
func recordGroups(g *graph, group string) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []string
	for gr := range g.byGR {
		if gr.Group == group {
			out = append(out, gr.Group)
		}
	}
	return out
}

// A handler outlives its resource's record: an event read before the record was released,
// or told after it (the last events of a member that left the watched set, a CRD created
// again while its member's handler stayed). A deletion makes no record; an add makes one,
// which its tombstone (the watch-all set sends one for every object a leaving member held)
// releases again; once the CRD is back, the handler made before feeds the new record.
func TestHandlerEventsAfterTheRecordIsReleased(t *testing.T) {
	tg := newTestGraph(t, churnRules())
	tg.put(secrets, `{"metadata":{"name":"s","namespace":"ns","uid":"s1"}}`)
	baseline := tg.g.sizes()
	tg.g.learn(churnWidgets, "Widget", true)
	rs := tg.g.rulesOf(churnWidgets) // the member's handler's
	tg.upsert(rs, obj(t, churnWidget))
	tg.delete(rs, obj(t, churnWidget))
	tg.g.forget(churnWidgets)
	require.Equal(t, baseline, tg.g.sizes())

	tg.delete(rs, obj(t, churnWidget))
	tg.delete(rs, cache.DeletedFinalStateUnknown{Key: "ns/w"})
	assert.Equal(t, baseline, tg.g.sizes(), "a late deletion makes no record")

	tg.upsert(rs, obj(t, churnWidget))
	assert.Equal(t, []string{"widgets.churn.io/ns/w -[widgets:secret]-> secrets/ns/s"}, strs(tg.Referrers(oref(secrets, "ns", "s"), 1)))
	tg.delete(rs, cache.DeletedFinalStateUnknown{Key: "ns/w", Obj: obj(t, churnWidget)})
	assert.Equal(t, baseline, tg.g.sizes(), "the late add's tombstone releases the record")

	tg.g.learn(churnWidgets, "Widget", true)
	tg.upsert(rs, obj(t, churnWidget))
	assert.Equal(t, []string{"widgets.churn.io/ns/w -[widgets:secret]-> secrets/ns/s"}, strs(tg.References(oref(churnWidgets, "ns", "w"), 1)))
	unused, err := tg.Unreferenced(churnWidgets)
	require.NoError(t, err)
	assert.Equal(t, []string{"widgets.churn.io/ns/w"}, refStrs(unused))
}

// Discovery, handlers and queries at once, on a resource that comes and goes: no race, no
// panic on a released record, and once everything is deleted and no longer served, nothing
// is left of it.
func TestConcurrentChurnLeavesNothing(t *testing.T) {
	tg := newTestGraph(t, churnRules())
	tg.put(secrets, `{"metadata":{"name":"s","namespace":"ns","uid":"s1"}}`)
	baseline := tg.g.sizes()
	const rounds = 300
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // discovery
		defer wg.Done()
		for i := range rounds {
			if i%2 == 0 {
				tg.g.learn(churnWidgets, "Widget", i%4 == 0, "widget")
			} else {
				tg.g.forget(churnWidgets)
			}
		}
	}()
	go func() { // the member's handler: each object added, then deleted
		defer wg.Done()
		rs := tg.g.rulesOf(churnWidgets)
		for i := range rounds {
			w := strings.Replace(churnWidget, `"w"`, fmt.Sprintf(`"w%d"`, i%5), 1)
			tg.upsert(rs, obj(t, w))
			tg.delete(rs, obj(t, w))
		}
	}()
	go func() { // queries
		defer wg.Done()
		for range rounds {
			_, _ = tg.Graph.Referrers(oref(secrets, "ns", "s"), 0)
			_, _ = tg.Graph.References(oref(churnWidgets, "ns", "w1"), 0)
			_, _ = tg.Graph.Referrers(ObjectRef{Group: "churn.io", Kind: "Widget", Namespace: "ns", Name: "w1"}, 1)
			_, _ = tg.Unreferenced(churnWidgets)
			_ = tg.Dangling()
			_ = tg.Stats()
		}
	}()
	wg.Wait()
	tg.g.forget(churnWidgets)
	assert.Equal(t, baseline, tg.g.sizes())
	assert.Empty(t, tg.Referrers(oref(secrets, "ns", "s"), 1))
}
