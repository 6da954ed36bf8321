package refs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// syncingGraph is a graph whose resources in syncing are not cached completely until the
// first look at coverage (cover or the incomplete list): then complete is run, which hands
// the graph the objects the sync brings, and they are. It models a sync that completes while
// a query runs, between its reading of the graph and its check of coverage.
func syncingGraph(t *testing.T, syncing []schema.GroupResource, complete func(tg *testGraph)) *testGraph {
	tg := newTestGraph(t, nil)
	for _, gr := range syncing {
		tg.uncovered[gr] = resourceName(gr) + " is Syncing"
	}
	done := false
	sync := func() {
		if done {
			return
		}
		done = true
		complete(tg)
		for _, gr := range syncing {
			delete(tg.uncovered, gr)
		}
	}
	cover, incomplete := tg.cover, tg.incomplete
	tg.cover = func(gr schema.GroupResource, ns string) (bool, string) { sync(); return cover(gr, ns) }
	tg.incomplete = func() []schema.GroupResource { sync(); return incomplete() }
	return tg
}

const s52PodUsingCM = `{"metadata":{"name":"p","namespace":"ns","labels":{"app":"x"}},"spec":{"volumes":[{"name":"v","configMap":{"name":"cm"}}]}}`

// An answer read from the graph before a sync completed, and checked for coverage after,
// came without an *IncompleteError although it missed what the sync brought: Unreferenced
// listed a ConfigMap a Pod uses, EmptySelectors a Service that selects that Pod,
// Referrers and References no edge at all. (On the apiserver: a graph queried as it
// starts listed, without error, ConfigMaps that Pods mount.) The answer is now incomplete
// unless what it depends on was cached completely before it was read.
func TestS52AnswerReadBeforeASyncCompletesIsIncompleteOrRight(t *testing.T) {
	addPod := func(tg *testGraph) { tg.put(pods, s52PodUsingCM) }

	tg := syncingGraph(t, []schema.GroupResource{pods}, addPod)
	tg.put(configMaps, `{"metadata":{"name":"cm","namespace":"ns"}}`)
	unused, err := tg.Graph.Unreferenced(configMaps)
	if err == nil {
		assert.Empty(t, refStrs(unused), "a complete answer: the Pod mounts the ConfigMap")
	}

	tg = syncingGraph(t, []schema.GroupResource{pods}, addPod)
	tg.put(services, `{"metadata":{"name":"s","namespace":"ns"},"spec":{"selector":{"app":"x"}}}`)
	empty, err := tg.Graph.EmptySelectors(services)
	if err == nil {
		assert.Empty(t, refStrs(empty), "a complete answer: the Service selects the Pod")
	}

	tg = syncingGraph(t, []schema.GroupResource{pods}, addPod)
	tg.put(configMaps, `{"metadata":{"name":"cm","namespace":"ns"}}`)
	users, err := tg.Graph.Referrers(oref(configMaps, "ns", "cm"), 1)
	if err == nil {
		assert.Equal(t, lines(`pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm`), strs(users))
	}

	tg = syncingGraph(t, []schema.GroupResource{pods}, addPod)
	used, err := tg.Graph.References(oref(pods, "ns", "p"), 1)
	if err == nil {
		assert.Equal(t, lines(`pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)`), strs(used))
	}
}

// A target handed to the graph after a query collected its edges, by a sync that completed
// before the query asked for coverage, was reported Missing ("not found") although the
// graph held it by then: Dangling listed a Pod's mount of a ConfigMap that exists, and
// References called it Missing. A target found absent is now looked for again once its
// resource is known to be cached completely.
func TestS52TargetHandedDuringAQueryIsNotMissing(t *testing.T) {
	addCM := func(tg *testGraph) { tg.put(configMaps, `{"metadata":{"name":"cm","namespace":"ns"}}`) }

	tg := syncingGraph(t, []schema.GroupResource{configMaps}, addCM)
	tg.put(pods, s52PodUsingCM)
	assert.Empty(t, strs(tg.Dangling()))

	tg = syncingGraph(t, []schema.GroupResource{configMaps}, addCM)
	tg.put(pods, s52PodUsingCM)
	used, err := tg.Graph.References(oref(pods, "ns", "p"), 1)
	require.NoError(t, err)
	assert.Equal(t, lines(`pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm`), strs(used))

	// Still missing once covered: Missing, as before.
	tg = syncingGraph(t, []schema.GroupResource{configMaps}, func(*testGraph) {})
	tg.put(pods, s52PodUsingCM)
	assert.Equal(t, lines(`pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)`), strs(tg.Dangling()))

	// An owner handed during the query with another UID than the reference requires.
	tg = syncingGraph(t, []schema.GroupResource{configMaps}, func(tg *testGraph) {
		tg.put(configMaps, `{"metadata":{"name":"owner","namespace":"ns","uid":"new"}}`)
	})
	tg.put(secrets, `{"metadata":{"name":"s","namespace":"ns","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"old"}]}}`)
	assert.Equal(t, lines(`secrets/ns/s -[owner]-> configmaps/ns/owner (Missing: the object has UID new, the reference requires old)`), strs(tg.Dangling()))
}
