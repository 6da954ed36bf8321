package informer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// TestZeroFactoryIsErrUninitialized: a Factory not made by New, the zero value or a nil
// pointer, returns ErrUninitialized from every method with an error result and does nothing
// in the others, instead of a nil dereference.
func TestZeroFactoryIsErrUninitialized(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]*Factory[obj]{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, f.Start(ctx), ErrUninitialized)
			_, err := f.Informer(ctx, "widgets")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = f.InformerForGVR(ctx, widgets.GVR)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = f.InformerForGVK(ctx, widgets.GVK)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = f.ForResource(widgets)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = f.WatchAll(ctx, discovery.Filter{})
			assert.ErrorIs(t, err, ErrUninitialized)
			assert.ErrorIs(t, f.WaitForSync(ctx), ErrUninitialized)
			assert.ErrorIs(t, f.CheckPath(jsonpath.MustCompile("{.spec}")), ErrUninitialized)
			_, err = f.SubscribeStatus(func(Status) {})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = f.Dependents(ctx, "uid")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = f.Orphans(ctx)
			assert.ErrorIs(t, err, ErrUninitialized)
			assert.Empty(t, f.Statuses())
			f.Recheck()
			f.Shutdown()
		})
	}
}

// TestZeroInformerIsErrUninitialized: an Informer not made by a Factory (the zero value, or
// the nil *Informer a failed Factory.Informer returns, released by a deferred Release)
// returns ErrUninitialized from every method with an error result and zero values from the
// others, instead of a nil dereference.
func TestZeroInformerIsErrUninitialized(t *testing.T) {
	ctx := context.Background()
	for name, i := range map[string]*Informer[obj]{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			i.Release()
			i.Release()
			i.Recheck()
			assert.Equal(t, discovery.Resource{}, i.Resource())
			assert.Equal(t, Key{}, i.Key())
			assert.Equal(t, Status{}, i.Status())
			assert.False(t, i.HasSynced())
			assert.False(t, i.Queryable())
			assert.False(t, i.ServingFromSnapshot())
			assert.Empty(t, i.Registrations())
			assert.Empty(t, i.IndexNames())
			assert.ErrorIs(t, i.WaitForSync(ctx), ErrUninitialized)
			assert.ErrorIs(t, i.WaitForSyncOrPark(ctx), ErrUninitialized)
			_, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{})
			assert.ErrorIs(t, err, ErrUninitialized)
			assert.ErrorIs(t, i.RemoveEventHandler(&Registration{}), ErrUninitialized)
			_, _, err = i.HandOffEventHandler(&Registration{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.List(nil)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.Get("ns", "name")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.Namespace("ns").List(nil)
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.Namespace("ns").Get("name")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.GetItem("ns", "name")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.ListItems("")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.Query(ctx, query.Query{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.QueryItems(ctx, query.Query{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.Count(ctx, query.Query{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = i.CountBy(ctx, query.Query{}, "size")
			assert.ErrorIs(t, err, ErrUninitialized)
			assert.ErrorIs(t, i.AddIndex("size", "{.spec.size}"), ErrUninitialized)
			assert.ErrorIs(t, i.AddIndexPath("size", jsonpath.MustCompile("{.spec.size}")), ErrUninitialized)
			assert.ErrorIs(t, i.AddBuiltinIndex("label"), ErrUninitialized)
			assert.ErrorIs(t, i.AddIndexFunc("f", func(any) ([]string, error) { return nil, nil }), ErrUninitialized)
			assert.ErrorIs(t, i.AddItemIndexFunc("g", func(Item[obj]) ([]string, error) { return nil, nil }), ErrUninitialized)
			assert.ErrorIs(t, i.RemoveIndex("size"), ErrUninitialized)
			_, err = i.IndexStats("size")
			assert.ErrorIs(t, err, ErrUninitialized)
		})
	}
}

// TestZeroWatchAllIsErrUninitialized: a WatchAll not made by Factory.WatchAll, and an
// AllRegistration or Registration not made by AddEventHandler, fail or answer zero values
// instead of a nil dereference.
func TestZeroWatchAllIsErrUninitialized(t *testing.T) {
	ctx := context.Background()
	for name, w := range map[string]*WatchAll[obj]{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			w.Stop()
			w.Stop()
			_, err := w.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler { return nil })
			assert.ErrorIs(t, err, ErrUninitialized)
			w.RemoveEventHandler(&AllRegistration{})
			assert.Empty(t, w.Informers())
			inf, ok := w.Informer(schema.GroupResource{Group: "example.com", Resource: "widgets"})
			assert.Nil(t, inf)
			assert.False(t, ok)
			assert.ErrorIs(t, w.WaitForSync(ctx), ErrUninitialized)
			assert.ErrorIs(t, w.WaitForSyncOrPark(ctx), ErrUninitialized)
			assert.ErrorIs(t, w.AddIndex("size", "{.spec.size}"), ErrUninitialized)
			assert.ErrorIs(t, w.RemoveIndex("size"), ErrUninitialized)
			_, err = w.QueryItems(ctx, query.Query{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = w.Count(ctx, query.Query{})
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = w.CountBy(ctx, query.Query{}, "size")
			assert.ErrorIs(t, err, ErrUninitialized)
			_, err = w.Unavailable(ctx)
			assert.ErrorIs(t, err, ErrUninitialized)
		})
	}
	for name, r := range map[string]*AllRegistration{"zero": {}, "nil": nil} {
		t.Run("AllRegistration/"+name, func(t *testing.T) {
			assert.False(t, r.HasSynced())
			assert.False(t, r.MemberSynced(schema.GroupResource{Resource: "widgets"}))
		})
	}
	for name, r := range map[string]*Registration{"zero": {}, "nil": nil} {
		t.Run("Registration/"+name, func(t *testing.T) {
			assert.False(t, r.HasSynced())
			assert.Zero(t, r.Backlog())
			c := r.HasSyncedChecker()
			assert.NotEmpty(t, c.Name())
			assert.Nil(t, c.Done(), "never done, as HasSynced is never true")
		})
	}
}
