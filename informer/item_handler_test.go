package informer

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/jsonpath"
)

// itemLog records what an ItemHandlerFuncs receives, as "kind key label".
type itemLog struct {
	mu     sync.Mutex
	events []string
	last   Item[obj] // the last deleted item
}

func (l *itemLog) add(ev string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *itemLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

func (l *itemLog) funcs(t *testing.T) ItemHandlerFuncs[obj] {
	v := jsonpath.MustCompile("{.metadata.labels.v}")
	val := func(it Item[obj]) string {
		vals, err := it.Eval(v)
		assert.NoError(t, err)
		if len(vals) == 0 {
			return "-"
		}
		return vals[0].String()
	}
	return ItemHandlerFuncs[obj]{
		AddFunc: func(it Item[obj], initial bool) {
			kind := "add"
			if initial {
				kind = "add-initial"
			}
			l.add(kind + " " + it.Key() + " " + val(it))
		},
		UpdateFunc: func(old, cur Item[obj]) {
			l.add("update " + cur.Key() + " " + val(old) + "->" + val(cur))
		},
		DeleteFunc: func(it Item[obj], unknown bool) {
			kind := "delete"
			if unknown {
				kind = "tombstone"
			}
			l.add(kind + " " + it.Key() + " " + val(it))
			l.mu.Lock()
			l.last = it
			l.mu.Unlock()
		},
	}
}

// TestItemHandlerFuncs: an ItemHandlerFuncs receives Items for adds (initial or not),
// updates with both states, deletions and inferred deletions, through AddEventHandler and
// WithEventHandler alike; its items decode on demand; one of another type is refused.
func TestItemHandlerFuncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[obj]{})
		ctx := context.Background()
		srv := e.mode.server(widgets.GVR)
		srv.add(newObj("ns", "a", map[string]string{"v": "1"}))
		early, late := &itemLog{}, &itemLog{}
		inf, err := e.f.Informer(ctx, "widgets", WithEventHandler(early.funcs(t)))
		require.NoError(t, err)
		defer inf.Release()
		synctest.Wait()
		require.NoError(t, inf.WaitForSync(ctx))
		reg, err := inf.AddEventHandler(late.funcs(t))
		require.NoError(t, err)
		synctest.Wait()
		assert.True(t, reg.HasSynced())

		// Another object type is refused wherever a handler is added.
		wrong := ItemHandlerFuncs[*unstructured.Unstructured]{}
		_, err = inf.AddEventHandler(wrong)
		assert.ErrorIs(t, err, ErrHandlerType)
		_, err = inf.AddEventHandler(&wrong)
		assert.ErrorIs(t, err, ErrHandlerType)
		_, err = e.f.Informer(ctx, "widgets", WithEventHandler(wrong))
		assert.ErrorIs(t, err, ErrHandlerType)
		assert.Len(t, inf.Registrations(), 2, "nothing added")

		srv.update(newObj("ns", "a", map[string]string{"v": "2"}))
		srv.add(newObj("ns", "b", map[string]string{"v": "3"}))
		srv.remove(newObj("ns", "a", map[string]string{"v": "2"}))
		synctest.Wait()
		assert.Equal(t, []string{"add-initial ns/a 1", "update ns/a 1->2", "add ns/b 3", "delete ns/a 2"}, early.get())
		assert.Equal(t, []string{"add-initial ns/a 1", "update ns/a 1->2", "add ns/b 3", "delete ns/a 2"}, late.get())
		o, err := early.last.Object()
		require.NoError(t, err, "a delivered item decodes")
		assert.Equal(t, "a", o.Name)
		var m metav1.PartialObjectMetadata
		require.NoError(t, early.last.DecodeInto(&m))
		assert.Equal(t, map[string]string{"v": "2"}, m.Labels)

		// The resource goes away: the cached object is an inferred deletion, its last state
		// in the item.
		e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
		srv.setErrors(notFoundErr(), notFoundErr())
		srv.closeWatches()
		srv.remove(newObj("ns", "b", nil))
		synctest.Wait()
		eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
		synctest.Wait()
		assert.Equal(t, "tombstone ns/b 3", early.get()[4])

	})
}

// TestItemWithoutState: an item without an object (the zero Item, an inferred deletion
// without a last state) fails Object and DecodeInto with a *DecodeError, never a panic.
func TestItemWithoutState(t *testing.T) {
	var it Item[obj]
	_, err := it.Object()
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.ErrorAs(t, it.DecodeInto(&metav1.PartialObjectMetadata{}), &de)
	assert.Empty(t, it.Name())

	var got Item[obj]
	var unknown bool
	ItemHandlerFuncs[obj]{DeleteFunc: func(it Item[obj], u bool) { got, unknown = it, u }}.
		OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/x"})
	assert.True(t, unknown)
	assert.Equal(t, "ns/x", got.Key())
	_, err = got.Object()
	assert.ErrorAs(t, err, &de)
}

// TestWatchAllItemHandler: a WatchAll handler factory may return ItemHandlerFuncs; one of
// another object type is logged and not added, and the other members are unaffected.
func TestWatchAllItemHandler(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"v": "1"}))
	e.mode.server(gadgets.GVR).add(newObj("ns", "g1", nil))
	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	got := &itemLog{}
	_, err = wa.AddEventHandler(func(res discovery.Resource) cache.ResourceEventHandler {
		if res.GVR == gadgets.GVR {
			return ItemHandlerFuncs[*unstructured.Unstructured]{}
		}
		return got.funcs(t)
	})
	require.NoError(t, err)
	eventually(t, func() bool { return len(got.get()) == 1 }, "the widget's add")
	assert.Equal(t, []string{"add-initial ns/w1 1"}, got.get())
	eventually(t, func() bool { return e.logs.count("WatchAll handler not added") == 1 }, "the gadgets' handler refused:\n%s", e.logs)
}
