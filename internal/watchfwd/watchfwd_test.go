package watchfwd

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func named(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// Keep sees every event, may change it, and drops those it refuses; OnEnd runs once when
// the inner watch ends, before the result channel closes.
func TestKeepAndEnd(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fw := watch.NewFakeWithChanSize(3, false)
	var ended atomic.Int32
	w := New(fw, Options{
		Keep: func(ev watch.Event) bool {
			p := ev.Object.(*metav1.PartialObjectMetadata)
			p.Kind = "Widget"
			return p.Name != "drop"
		},
		OnEnd: func() { ended.Add(1) },
	})
	fw.Add(named("a"))
	fw.Add(named("drop"))
	fw.Modify(named("b"))
	fw.Stop() // the server ends the watch

	var got []string
	for ev := range w.ResultChan() {
		p := ev.Object.(*metav1.PartialObjectMetadata)
		assert.Equal(t, "Widget", p.Kind)
		got = append(got, string(ev.Type)+" "+p.Name)
	}
	require.Equal(t, []string{"ADDED a", "MODIFIED b"}, got)
	require.Equal(t, int32(1), ended.Load(), "OnEnd ran before the channel closed")
	w.Stop()
	require.Equal(t, int32(1), ended.Load(), "once")
}

// Stop ends the forwarding at once, even while an event waits that nobody reads, runs OnEnd
// before it returns, and leaves no goroutine.
func TestStopWithAnEventUnread(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fw := watch.NewFakeWithChanSize(2, false)
	var ended atomic.Int32
	w := New(fw, Options{OnEnd: func() { ended.Add(1) }})
	fw.Add(named("a")) // never read
	w.Stop()
	require.Equal(t, int32(1), ended.Load())
	require.True(t, fw.IsStopped(), "the inner watch is stopped")
	w.Stop() // again: nothing
}
