package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestTransforms(t *testing.T) {
	t.Run("unstructured strip", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
			"name": "x", "managedFields": []any{map[string]any{"manager": "m"}}}}}
		out, err := StripManagedFields(u)
		require.NoError(t, err)
		_, found, _ := unstructured.NestedFieldNoCopy(out.(*unstructured.Unstructured).Object, "metadata", "managedFields")
		assert.False(t, found)
		out, err = StripManagedFields(out) // idempotent
		require.NoError(t, err)
		assert.Equal(t, "x", out.(*unstructured.Unstructured).GetName())
	})
	t.Run("compose order", func(t *testing.T) {
		var order []string
		step := func(name string) cache.TransformFunc {
			return func(o any) (any, error) { order = append(order, name); return o, nil }
		}
		fn := ComposeTransforms(step("a"), nil, step("b"))
		_, err := fn(1)
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "b"}, order)
		assert.Nil(t, ComposeTransforms(nil, nil))
	})
}
