package subscribe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	widgets = schema.GroupResource{Group: "example.com", Resource: "widgets"}
	gadgets = schema.GroupResource{Group: "example.com", Resource: "gadgets"}
)

func TestApplySkipsWhatEventsTouched(t *testing.T) {
	var g Guard
	g.Touch(widgets)
	ran := map[schema.GroupResource]bool{}
	assert.False(t, g.Apply(widgets, func() { ran[widgets] = true }))
	assert.True(t, g.Apply(gadgets, func() { ran[gadgets] = true }))
	assert.Equal(t, map[schema.GroupResource]bool{gadgets: true}, ran)
	g.Done()
	g.Touch(gadgets)
	assert.True(t, g.Apply(gadgets, func() {}), "after Done nothing is recorded")
}

// fn runs under the guard's lock, so that an event that arrives while a listed resource is
// applied is marked (Touch waits for the lock) only after the application, and handled
// over it.
func TestApplyHoldsTheLockAcrossFn(t *testing.T) {
	var g Guard
	held := false
	g.Apply(widgets, func() { held = !g.mu.TryLock() })
	assert.True(t, held, "fn ran while the guard was unlocked: an event could be marked between the check and fn")
	assert.True(t, g.mu.TryLock(), "unlocked after fn")
}
