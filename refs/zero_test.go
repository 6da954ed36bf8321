package refs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/refs"
)

// TestZeroGraphIsErrUninitialized: a Graph not made by New, the zero value or a nil
// pointer, returns ErrUninitialized from every method with an error result and zero values
// from the others, instead of a nil dereference.
func TestZeroGraphIsErrUninitialized(t *testing.T) {
	ctx := context.Background()
	secrets := schema.GroupResource{Resource: "secrets"}
	obj := refs.ObjectRef{Resource: "secrets", Namespace: "ns", Name: "db"}
	for name, g := range map[string]*refs.Graph{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, g.Start(ctx), refs.ErrUninitialized)
			assert.ErrorIs(t, g.WaitForSync(ctx), refs.ErrUninitialized)
			_, err := g.References(obj, 1)
			assert.ErrorIs(t, err, refs.ErrUninitialized)
			_, err = g.Referrers(obj, 1)
			assert.ErrorIs(t, err, refs.ErrUninitialized)
			_, err = g.Unreferenced(secrets)
			assert.ErrorIs(t, err, refs.ErrUninitialized)
			_, err = g.EmptySelectors(secrets)
			assert.ErrorIs(t, err, refs.ErrUninitialized)
			assert.Empty(t, g.Dangling())
			assert.Equal(t, refs.Stats{}, g.Stats())
			g.Shutdown()
			g.Shutdown()
		})
	}
}

// TestTreeNodeStringOfHandBuiltTrees: a nil TreeNode renders as "", a nil child is left out
// and a child without an Edge is shown without a rule, instead of a nil dereference.
func TestTreeNodeStringOfHandBuiltTrees(t *testing.T) {
	var nilNode *refs.TreeNode
	assert.Equal(t, "", nilNode.String())
	root := &refs.TreeNode{
		Object: refs.ObjectRef{Resource: "pods", Namespace: "ns", Name: "web"},
		Children: []*refs.TreeNode{
			nil,
			{Object: refs.ObjectRef{Resource: "secrets", Namespace: "ns", Name: "db"}},
			{Object: refs.ObjectRef{Resource: "configmaps", Namespace: "ns", Name: "cfg"}, Edge: &refs.Edge{Rule: "pods:volume-configmap"}},
			nil,
		},
	}
	assert.Equal(t, "pods/ns/web\n├── secrets/ns/db\n└── [pods:volume-configmap] configmaps/ns/cfg\n", root.String())
}
