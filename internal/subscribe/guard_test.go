package subscribe

import (
	"sync"
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

// An event that arrives while a listed resource is applied is marked after the application
// ends, so that its handling comes after it.
func TestTouchWaitsForAnApplication(t *testing.T) {
	var g Guard
	var mu sync.Mutex
	var order []string
	inFn := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	g.Apply(widgets, func() {
		go func() {
			defer wg.Done()
			<-inFn
			g.Touch(widgets)
			mu.Lock()
			order = append(order, "event")
			mu.Unlock()
		}()
		close(inFn)
		mu.Lock()
		order = append(order, "list")
		mu.Unlock()
	})
	wg.Wait()
	assert.Equal(t, []string{"list", "event"}, order)
}
