package informer

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/indexfuncs"
)

func owned(ns, name string, uid types.UID, owners ...metav1.OwnerReference) obj {
	o := newObj(ns, name, nil)
	o.UID = uid
	o.OwnerReferences = owners
	return o
}

func widgetRef(uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "widget", Name: "w", UID: uid}
}

func gadgetRef(uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "gadget", Name: "g", UID: uid}
}

func dependentNames(ds []Dependent[obj]) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Resource.GVR.Resource+" "+d.Object.Namespace+"/"+d.Object.Name)
	}
	return out
}

// orphanStates maps "namespace/name" to "orphan" (every owner dangling) or "unknown".
func orphanStates(os []Orphan[obj]) map[string]string {
	out := map[string]string{}
	for _, o := range os {
		state := "unknown"
		if o.Orphaned() {
			state = "orphan"
		}
		out[o.Object.Namespace+"/"+o.Object.Name] = state
	}
	return out
}

// ownerFixture: widgets W1 (namespace a) and W2 (namespace b); gadgets in namespace a with
// owners present, gone, in the wrong namespace, of an unknown kind, or a mix.
func ownerFixture(t *testing.T, opts Options[obj]) (*env, *Informer[obj]) {
	t.Helper()
	e := newEnv(t, opts)
	ws, gs := e.mode.server(widgets.GVR), e.mode.server(gadgets.GVR)
	ws.add(owned("a", "w1", "W1"))
	ws.add(owned("b", "w2", "W2"))
	gs.add(owned("a", "g1", "G1", widgetRef("W1")))
	gs.add(owned("a", "g2", "G2", widgetRef("gone")))
	gs.add(owned("a", "g3", "G3", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "D"}))
	gs.add(owned("a", "g4", "G4", widgetRef("gone"), widgetRef("W1")))
	gs.add(owned("a", "g5", "G5", widgetRef("W2")))
	gs.add(owned("a", "g6", "G6", gadgetRef("G1")))
	gs.add(owned("a", "g7", "G7", gadgetRef("gone"), metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "D"}))
	inf, err := e.f.Informer(context.Background(), "gadgets")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.WaitForSync(context.Background()))
	return e, inf
}

func TestDependentsAcrossInformers(t *testing.T) {
	e, gadgetsInf := ownerFixture(t, Options[obj]{})
	ctx := context.Background()
	assert.NotContains(t, storeIndexes(gadgetsInf), ownerIndexKey, "lazy: not registered before first use")
	ws, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer ws.Release()
	inA, err := e.f.Informer(ctx, "gadgets", WithNamespace("a"))
	require.NoError(t, err)
	defer inA.Release()
	require.NoError(t, e.f.WaitForSync(ctx))

	ds, err := e.f.Dependents(ctx, "W1")
	require.NoError(t, err)
	assert.Equal(t, []string{"gadgets a/g1", "gadgets a/g4"}, dependentNames(ds), "once each, though two informers cache them")
	assert.Contains(t, storeIndexes(gadgetsInf), ownerIndexKey, "registered and backfilled on first use")
	assert.Contains(t, storeIndexes(gadgetsInf), uidIndexKey)

	// Followed from then on, on informers created later too.
	e.mode.server(gadgets.GVR).add(owned("a", "g8", "G8", widgetRef("W1")))
	eventually(t, func() bool {
		ds, _ := e.f.Dependents(ctx, "W1")
		return len(ds) == 3
	}, "new dependent found")
	later, err := e.f.Informer(ctx, "widgets", WithNamespace("b"))
	require.NoError(t, err)
	defer later.Release()
	assert.Contains(t, storeIndexes(later), ownerIndexKey)

	ds, err = e.f.Dependents(ctx, "G1")
	require.NoError(t, err)
	assert.Equal(t, []string{"gadgets a/g6"}, dependentNames(ds))
	ds, err = e.f.Dependents(ctx, "nobody")
	require.NoError(t, err)
	assert.Empty(t, ds)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.f.Dependents(canceled, "W1")
	assert.ErrorIs(t, err, context.Canceled)
}

func TestOrphansNeedACompleteSyncedOwnerCache(t *testing.T) {
	e, _ := ownerFixture(t, Options[obj]{OwnerIndex: true})
	ctx := context.Background()

	// No widgets informer: every widget owner is unknown, never dangling. Gadget owners are
	// cached: g6's owner exists, g7's is gone but its other owner is an unknown kind.
	os, err := e.f.Orphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a/g1": "unknown", "a/g2": "unknown", "a/g3": "unknown", "a/g4": "unknown", "a/g5": "unknown", "a/g7": "unknown"}, orphanStates(os))
	for _, o := range os {
		for _, u := range o.Unknown {
			if u.Ref.Kind == "Deployment" {
				assert.True(t, meta.IsNoMatchError(u.Err), "an unserved kind: discovery's error: %v", u.Err)
			} else {
				assert.ErrorIs(t, u.Err, ErrOwnerNotCached)
			}
		}
	}

	// Informers that cannot prove absence: a label selector, another namespace.
	sel, err := e.f.Informer(ctx, "widgets", WithLabelSelector("x=y"))
	require.NoError(t, err)
	defer sel.Release()
	other, err := e.f.Informer(ctx, "widgets", WithNamespace("b"))
	require.NoError(t, err)
	defer other.Release()
	require.NoError(t, e.f.WaitForSync(ctx))
	os, err = e.f.Orphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, "unknown", orphanStates(os)["a/g2"])

	// Widgets of namespace a cached: g2 (owner gone) and g5 (owner in another namespace) are
	// orphans; g4 keeps an owner; g1 has its owner.
	inA, err := e.f.Informer(ctx, "widgets", WithNamespace("a"))
	require.NoError(t, err)
	defer inA.Release()
	require.NoError(t, e.f.WaitForSync(ctx))
	os, err = e.f.Orphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a/g2": "orphan", "a/g3": "unknown", "a/g5": "orphan", "a/g7": "unknown"}, orphanStates(os))
	for _, o := range os {
		if o.Object.Name == "g2" {
			assert.Equal(t, []metav1.OwnerReference{widgetRef("gone")}, o.Dangling)
			assert.Equal(t, "gadgets", o.Resource.GVR.Resource)
		}
	}

	// The owner is deleted: its dependent becomes an orphan.
	e.mode.server(widgets.GVR).remove(owned("a", "w1", "W1"))
	eventually(t, func() bool {
		os, _ := e.f.Orphans(ctx)
		st := orphanStates(os)
		return st["a/g1"] == "orphan" && st["a/g4"] == "orphan"
	}, "g1 and g4 orphaned")

	// The search honours its context.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.f.Orphans(canceled)
	assert.ErrorIs(t, err, context.Canceled)
}

// A cluster-scoped object with a namespaced owner cannot be checked.
func TestOrphansClusterScopedDependent(t *testing.T) {
	nodes := resource("", "v1", "nodes")
	nodes.Namespaced = false
	e := newEnv(t, Options[obj]{}, widgets, nodes)
	ctx := context.Background()
	e.mode.server(nodes.GVR).add(owned("", "n1", "N1", widgetRef("W1")))
	e.mode.server(nodes.GVR).add(owned("", "n2", "N2", metav1.OwnerReference{APIVersion: "v1", Kind: "node", Name: "n1", UID: "N1"}))
	e.mode.server(nodes.GVR).add(owned("", "n3", "N3", metav1.OwnerReference{APIVersion: "v1", Kind: "node", Name: "n0", UID: "N0"}))
	inf, err := e.f.Informer(ctx, "nodes")
	require.NoError(t, err)
	defer inf.Release()
	ws, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer ws.Release()
	require.NoError(t, e.f.WaitForSync(ctx))
	os, err := e.f.Orphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"/n1": "unknown", "/n3": "orphan"}, orphanStates(os))
}

// A user's built-in owner-uid index shares the owner index's store index.
func TestBuiltinIndexSharesTheOwnerIndex(t *testing.T) {
	e, inf := ownerFixture(t, Options[obj]{OwnerIndex: true})
	require.NoError(t, inf.AddBuiltinIndex(indexfuncs.IndexOwnerUID))
	st, err := inf.IndexStats(indexfuncs.IndexOwnerUID)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Shared)
	assert.Equal(t, 1, st.References)
	inf.Release()
	ds, err := e.f.Dependents(context.Background(), "W1")
	require.NoError(t, err)
	assert.Empty(t, ds, "the informer is gone with its last reference")
}

// An owner cache that has not synced proves nothing: its owners are unknown until it has.
func TestOrphansWaitForOwnerCacheSync(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	ws := e.mode.server(widgets.GVR)
	gate := make(chan struct{})
	ws.listGate = gate
	ws.add(owned("a", "w1", "W1"))
	e.mode.server(gadgets.GVR).add(owned("a", "g1", "G1", widgetRef("W1")))
	e.mode.server(gadgets.GVR).add(owned("a", "g2", "G2", widgetRef("gone")))
	gs, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer gs.Release()
	require.NoError(t, gs.WaitForSync(ctx))
	wi, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer wi.Release()
	os, err := e.f.Orphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a/g1": "unknown", "a/g2": "unknown"}, orphanStates(os), "widgets not synced yet")
	close(gate)
	require.NoError(t, wi.WaitForSync(ctx))
	os, err = e.f.Orphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a/g2": "orphan"}, orphanStates(os))
}

// A dependent or an orphan that cannot be decoded fails the call with a *DecodeError
// naming it, as Query does: it is never silently left out of the answer.
func TestUndecodableDependentsAndOrphansAreErrors(t *testing.T) {
	e, _ := ownerFixture(t, Options[obj]{OwnerIndex: true})
	ctx := context.Background()
	ws, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer ws.Release()
	require.NoError(t, ws.WaitForSync(ctx))
	os, err := e.f.Orphans(ctx)
	require.NoError(t, err)
	require.Equal(t, "orphan", orphanStates(os)["a/g2"])

	e.mode.undecodable.Store("g1", true) // a dependent of W1, not an orphan
	var de *DecodeError
	_, err = e.f.Dependents(ctx, "W1")
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "a/g1", de.Key)
	_, err = e.f.Orphans(ctx)
	require.NoError(t, err, "g1 is no orphan: not decoded, not in the answer")

	e.mode.undecodable.Store("g2", true) // an orphan
	_, err = e.f.Orphans(ctx)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "a/g2", de.Key)
}

// Dependents stops decoding when its context ends: in the compact mode an owner with
// 100,000 dependents takes seconds to decode.
func TestDependentsDecodingHonoursContext(t *testing.T) {
	mode := newFakeMode()
	mode.decodes = true
	e := newEnvMode(t, mode, Options[obj]{OwnerIndex: true}, hooks{})
	gs := e.mode.server(gadgets.GVR)
	for i := range 1000 {
		gs.add(owned("a", fmt.Sprintf("g%04d", i), types.UID(fmt.Sprintf("G%d", i)), widgetRef("W1")))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	decoded := cancelOnDecode(t, mode, cancel)
	_, err = e.f.Dependents(ctx, "W1")
	assert.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, decoded.Load(), int32(decodeCheckEvery), "decoding stopped within one check")
}

// An informer without the owner index (one that is stopping, which ensureOwnerIndex skips)
// has no objects with owners for Orphans, rather than failing the whole call with the
// index's absence.
func TestWithOwnersOfAnInformerWithoutTheIndex(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(gadgets.GVR).add(owned("a", "g1", "G1", widgetRef("W1")))
	inf, err := e.f.Informer(ctx, "gadgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	items, err := inf.h.e.withOwners(ctx)
	require.NoError(t, err)
	assert.Empty(t, items)
}
