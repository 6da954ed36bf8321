package shard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kindex/kindex/informer"
)

// TestZeroInformerAndMemberAreErrUninitialized: an Informer that NewInformer did not make,
// and a nil Member, return ErrUninitialized from the methods with an error result and zero
// values from the others, instead of a nil dereference (or, for WaitForSync, a wait until
// the context ends).
func TestZeroInformerAndMemberAreErrUninitialized(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]*Informer[*unstructured.Unstructured]{"zero": {}, "nil": nil} {
		t.Run("Informer/"+name, func(t *testing.T) {
			assert.ErrorIs(t, s.Run(ctx), ErrUninitialized)
			assert.ErrorIs(t, s.WaitForSync(ctx), ErrUninitialized)
			_, err := s.List()
			assert.ErrorIs(t, err, ErrUninitialized)
			assert.Equal(t, informer.Shard{}, s.Held())
			assert.False(t, s.Settled())
			assert.Empty(t, s.Informers())
		})
	}
	t.Run("Member/nil", func(t *testing.T) {
		var m *Member
		assert.ErrorIs(t, m.Run(ctx), ErrUninitialized)
		assert.ErrorIs(t, m.Leave(ctx), ErrUninitialized)
		assert.Empty(t, m.Identity())
		assert.Empty(t, m.Field())
		_, ok := m.Assignment()
		assert.False(t, ok)
		assert.False(t, m.Leaving())
		assert.False(t, m.Owns("uid"))
		assert.Empty(t, m.Members())
		assert.Nil(t, m.Changed())
		assert.Equal(t, informer.Shard{}, m.OthersHeld())
		_, err := NewInformer[*unstructured.Unstructured](m, &informer.Factory[*unstructured.Unstructured]{}, "pods", InformerOptions{})
		assert.ErrorIs(t, err, ErrUninitialized)
	})
	t.Run("Member/zero", func(t *testing.T) {
		var m Member
		assert.ErrorIs(t, m.Run(ctx), ErrUninitialized)
		_, err := NewInformer[*unstructured.Unstructured](&m, &informer.Factory[*unstructured.Unstructured]{}, "pods", InformerOptions{})
		assert.ErrorIs(t, err, ErrUninitialized)
	})
}
