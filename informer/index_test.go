package informer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

func colored(ns, name, color string) obj {
	o := newObj(ns, name, map[string]string{"color": color})
	o.UID = types.UID("uid-" + ns + "." + name)
	return o
}

// storeIndexes returns the indexes of the informer's store, whatever registered them.
func storeIndexes(inf *Informer[obj]) []string {
	return inf.h.e.store.IndexNames()
}

func colors(t *testing.T, inf *Informer[obj], color string) []string {
	t.Helper()
	res, err := inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Eq("color", color)}})
	require.NoError(t, err)
	return names(res.Items)
}

// An index added after sync indexes the cached objects at once and then follows adds,
// updates that move an object to another value, and deletes.
func TestIndexBackfillsAndFollowsChanges(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(colored("ns", "a", "red"))
	srv.add(colored("ns", "b", "blue"))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))

	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))
	assert.Equal(t, []string{"a"}, colors(t, inf, "red"), "backfilled")

	srv.add(colored("ns", "c", "red"))
	eventually(t, func() bool { return len(colors(t, inf, "red")) == 2 }, "add indexed")
	srv.update(colored("ns", "a", "blue"))
	eventually(t, func() bool { return len(colors(t, inf, "blue")) == 2 }, "update moves a to blue")
	assert.Equal(t, []string{"c"}, colors(t, inf, "red"), "and out of red")
	srv.remove(colored("ns", "c", "red"))
	eventually(t, func() bool { return len(colors(t, inf, "red")) == 0 }, "delete unindexed")

	st, err := inf.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, IndexStats{Name: "color", Definition: "{.metadata.labels.color}", Values: 1, Entries: 2, References: 1, Shared: 1}, st)
}

// An index registered before the informer has synced is filled by the initial list.
func TestIndexBeforeSyncIsFilledByTheList(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	gate := make(chan struct{})
	srv.listGate = gate
	srv.add(colored("ns", "a", "red"))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))
	assert.False(t, inf.HasSynced())
	close(gate)
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, []string{"a"}, colors(t, inf, "red"))
}

// Names belong to the informer; equal definitions share one store index; each reference
// holds its registrations and loses them on Release.
func TestIndexSharingAndReferenceCounts(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(colored("ns", "a", "red"))
	one, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	two, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer two.Release()
	require.NoError(t, one.WaitForSync(ctx))

	require.NoError(t, one.AddIndex("color", "{.metadata.labels.color}"))
	require.NoError(t, one.AddIndex("color", "{.metadata.labels.color}"), "again through the same reference: no-op")
	require.NoError(t, two.AddIndex("color", ".metadata.labels.color"), "same canonical expression: shared")
	require.NoError(t, two.AddIndex("tint", `{.metadata.labels["color"]}`), "another name, same expression")
	assert.Equal(t, []string{"jsonpath:{.metadata.labels.color}"}, storeIndexes(one), "one store index")
	st, err := two.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, 2, st.References)
	assert.Equal(t, 3, st.Shared)
	assert.Equal(t, []string{"color", "tint"}, one.IndexNames())
	assert.Equal(t, []string{"a"}, colors(t, two, "red"), "queries see every reference's names")

	one.Release()
	assert.Equal(t, []string{"a"}, colors(t, two, "red"), "two still holds color")
	st, err = two.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, 1, st.References)
	assert.Equal(t, 2, st.Shared)

	require.NoError(t, two.RemoveIndex("color"))
	assert.ErrorIs(t, two.RemoveIndex("color"), ErrIndexNotFound, "no longer held")
	_, err = two.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("color", "red")}})
	assert.ErrorIs(t, err, ErrIndexNotFound)
	assert.Equal(t, []string{"jsonpath:{.metadata.labels.color}"}, storeIndexes(two), "tint keeps the store index")
	require.NoError(t, two.RemoveIndex("tint"))
	assert.Empty(t, storeIndexes(two), "the last reference frees the store index")
	assert.Empty(t, two.IndexNames())
}

func TestIndexReleaseRemovesItsIndexes(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	keep, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer keep.Release()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))
	require.NoError(t, inf.AddBuiltinIndex(indexfuncs.IndexOwnerUID))
	require.NoError(t, inf.AddIndexFunc("first", func(o any) ([]string, error) { return []string{"x"}, nil }))
	assert.Len(t, storeIndexes(keep), 3)
	inf.Release()
	assert.Empty(t, storeIndexes(keep), "released with the reference, like its handlers")
	assert.Empty(t, keep.IndexNames())
	assert.ErrorIs(t, inf.AddIndex("color", "{.x}"), ErrReleased)
	assert.ErrorIs(t, inf.RemoveIndex("color"), ErrReleased)
	_, err = inf.Query(ctx, query.Query{Scan: true})
	assert.ErrorIs(t, err, ErrReleased)
}

func TestIndexConflictsAndInvalidDefinitions(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	one, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer one.Release()
	two, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer two.Release()
	fn := func(o any) ([]string, error) { return nil, nil }

	require.NoError(t, one.AddIndex("color", "{.metadata.labels.color}"))
	require.NoError(t, one.AddIndexFunc("fn", fn))
	require.NoError(t, one.AddBuiltinIndex(indexfuncs.IndexLabel))
	for name, err := range map[string]error{
		"other expression, other reference":        two.AddIndex("color", "{.metadata.labels.size}"),
		"other expression, same reference":         one.AddIndex("color", "{.metadata.labels.size}"),
		"built-in under a JSONPath name":           func() error { return two.AddIndex(indexfuncs.IndexLabel, "{.x}") }(),
		"a function twice":                         two.AddIndexFunc("fn", fn),
		"a function twice, same reference":         one.AddIndexFunc("fn", fn),
		"JSONPath under a function's name":         two.AddIndex("fn", "{.x}"),
		"an item function under a function's name": two.AddItemIndexFunc("fn", func(Item[obj]) ([]string, error) { return nil, nil }),
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, err, ErrIndexConflict)
			var ce *IndexConflictError
			require.ErrorAs(t, err, &ce)
			assert.NotEmpty(t, ce.Name)
			assert.NotEmpty(t, ce.Existing, "names the definition in place")
			assert.Equal(t, fmt.Sprintf("kindex: index %q is registered as %s, cannot register it as %s", ce.Name, ce.Existing, ce.Requested), err.Error(),
				"the message names the index and both definitions")
		})
	}
	st, err := one.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, "{.metadata.labels.color}", st.Definition, "the first definition stays")

	_, err = one.IndexStats("missing")
	assert.ErrorIs(t, err, ErrIndexNotFound)
	err = one.AddIndex("bad", "{.spec[?(@.x==)]}")
	require.ErrorIs(t, err, ErrInvalidIndex)
	var se *jsonpath.SyntaxError
	require.ErrorAs(t, err, &se, "the positioned syntax error")
	assert.Greater(t, se.Offset, 0)
	assert.ErrorIs(t, one.AddBuiltinIndex("nope"), ErrInvalidIndex)
	assert.ErrorIs(t, one.AddIndex("", "{.x}"), ErrInvalidIndex)
	assert.ErrorIs(t, one.AddIndexFunc("nil", nil), ErrInvalidIndex)
	assert.ErrorIs(t, one.AddItemIndexFunc("nil", nil), ErrInvalidIndex)
	assert.NotContains(t, one.IndexNames(), "bad")

	// A compiled path: the same index as its expression (shared, no conflict), or a
	// conflict with another; a nil path is invalid.
	require.NoError(t, two.AddIndexPath("color", jsonpath.MustCompile("{.metadata.labels.color}")))
	st, err = one.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, 2, st.References, "one index for the expression and its compiled path")
	assert.ErrorIs(t, two.AddIndexPath("color", jsonpath.MustCompile("{.metadata.labels.size}")), ErrIndexConflict)
	assert.ErrorIs(t, two.AddIndexPath("nil", nil), ErrInvalidIndex)
}

// Values an index cannot use are counted, never lose the object, never panic.
func TestIndexStatsCountUnusableValues(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(colored("ns", "a", "red"))
	srv.add(colored("ns", "b", "blue"))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))

	// A map is present, with nothing to compare: no error, and existence agrees between the
	// index and the same path as a filter.
	require.NoError(t, inf.AddIndex("labels", "{.metadata.labels}"))
	st, err := inf.IndexStats("labels")
	require.NoError(t, err)
	assert.Zero(t, st.Errors)
	assert.Equal(t, 2, st.Entries)
	for _, op := range []query.Op{query.Exists, query.NotExists} {
		indexed, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{{Index: "labels", Op: op}}, Scan: true})
		require.NoError(t, err)
		filtered, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Where("{.metadata.labels}", op)}, Scan: true})
		require.NoError(t, err)
		assert.Equal(t, names(indexed.Items), names(filtered.Items), "%s", op)
		if op == query.Exists {
			assert.Equal(t, []string{"a", "b"}, names(indexed.Items))
		} else {
			assert.Empty(t, indexed.Items)
		}
	}

	require.NoError(t, inf.AddIndexFunc("panics", func(o any) ([]string, error) {
		if o.(obj).Name == "a" {
			panic("boom")
		}
		return []string{o.(obj).Name}, nil
	}))
	st, err = inf.IndexStats("panics")
	require.NoError(t, err)
	assert.EqualValues(t, 1, st.Errors)
	assert.Equal(t, 1, st.Entries)
	assert.Len(t, must(inf.List(nil)), 2, "nothing lost")
}

// The store outlives runs: a park that drops the objects empties the index, the resume fills
// it again, and the registration is never lost.
func TestIndexSurvivesParkAndResume(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	a := colored("ns", "a", "red")
	srv.add(a)
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))
	require.NoError(t, inf.WaitForSync(ctx))
	assert.Equal(t, []string{"a"}, colors(t, inf, "red"))

	e.disc.emit(discovery.Event{Type: discovery.Removed, Resource: widgets})
	srv.setErrors(notFoundErr(), notFoundErr())
	srv.closeWatches()
	srv.remove(a)
	eventually(t, func() bool { return inf.Status().Phase == PhaseParked }, "parked: %v", inf.Status())
	st, err := inf.IndexStats("color")
	require.NoError(t, err)
	assert.Zero(t, st.Entries, "the dropped objects left the index")
	assert.Empty(t, colors(t, inf, "red"))

	srv.setErrors(nil, nil)
	srv.add(colored("ns", "b", "red"))
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: widgets})
	eventually(t, func() bool { return inf.Status().Phase == PhaseSynced }, "resumed: %v", inf.Status())
	assert.Equal(t, []string{"b"}, colors(t, inf, "red"))
}

// Registrations, removals, queries and changes at once: the race detector watches.
func TestIndexConcurrency(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range 200 {
			srv.add(colored("ns", fmt.Sprint("o", i%20), []string{"red", "blue"}[i%2]))
		}
	}()
	go func() {
		defer wg.Done()
		for range 50 {
			other, err := e.f.Informer(ctx, "widgets")
			if !assert.NoError(t, err) {
				return
			}
			assert.NoError(t, other.AddIndex("color", "{.metadata.labels.color}"))
			assert.NoError(t, other.AddIndex("name", "{.metadata.name}"))
			other.Release()
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			_, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.OneOf("color", "red", "blue")}, Limit: 5})
			assert.NoError(t, err)
		}
	}()
	wg.Wait()
	eventually(t, func() bool { return len(colors(t, inf, "red"))+len(colors(t, inf, "blue")) == 20 }, "every object indexed once")
	assert.Equal(t, []string{"color"}, inf.IndexNames())
}

// Index definitions and names that could only index nothing, or everything under one
// constant, are refused wherever they are given.
func TestIndexDefinitionsThatReadNothingAreRefused(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	for _, expr := range []string{"}", "\x00", "plain text", "{'constant'}", "{1}"} {
		err := inf.AddIndex("x", expr)
		assert.ErrorIs(t, err, ErrInvalidIndex, "%q", expr)
	}
	assert.ErrorIs(t, inf.AddIndex("", "{.metadata.name}"), ErrInvalidIndex)
	_, err = newFactory(restConfig(), Options[obj]{Discovery: e.disc, Indexes: map[string]string{"": "{.metadata.name}"}}, e.mode.builder(), hooks{Access: e.access})
	assert.ErrorIs(t, err, ErrInvalidIndex, "Options.Indexes refuses what AddIndex refuses")
	_, err = newFactory(restConfig(), Options[obj]{Discovery: e.disc, Indexes: map[string]string{"c": "}"}}, e.mode.builder(), hooks{Access: e.access})
	assert.ErrorIs(t, err, ErrInvalidIndex)
}

// Start after Shutdown says the factory was shut down.
func TestStartAfterShutdown(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	e.f.Shutdown()
	err := e.f.Start(context.Background())
	assert.ErrorIs(t, err, ErrShutdown)
	assert.NotContains(t, err.Error(), "already started")
}

// A second Start is an error callers can tell apart.
func TestStartTwice(t *testing.T) {
	e := newEnv(t, Options[obj]{}) // started
	assert.ErrorIs(t, e.f.Start(context.Background()), ErrAlreadyStarted)
}

// TestItemIndexFunc: an index function of Items indexes what it reads, follows changes, and
// its errors are counted without losing the object, as AddIndexFunc's.
func TestItemIndexFunc(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", map[string]string{"color": "red"}))
	srv.add(newObj("ns", "b", map[string]string{"color": "blue"}))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	require.NoError(t, inf.AddItemIndexFunc("color", func(it Item[obj]) ([]string, error) {
		if it.Name() == "bad" {
			return []string{"kept"}, errors.New("no color")
		}
		return []string{it.Labels()["color"] + "/" + it.Namespace()}, nil
	}))
	keys := func(v string) []string {
		res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("color", v)}})
		require.NoError(t, err)
		var out []string
		for _, it := range res.Items {
			out = append(out, it.Key())
		}
		return out
	}
	assert.Equal(t, []string{"ns/a"}, keys("red/ns"), "backfilled")
	srv.update(newObj("ns", "b", map[string]string{"color": "red"}))
	srv.add(newObj("ns", "bad", nil))
	eventually(t, func() bool { return len(keys("red/ns")) == 2 && len(keys("kept")) == 1 }, "follows changes")
	assert.Empty(t, keys("blue/ns"))
	st, err := inf.IndexStats("color")
	require.NoError(t, err)
	assert.Equal(t, "func:color", st.Definition)
	assert.EqualValues(t, 1, st.Errors, "the error is counted; the values returned with it are indexed")
}

// The slice an item index function returns stays the function's: kindex copies the values
// into a slice of its own, rather than writing the copies into the function's slice, which
// a function may return for every object, from several informers at once (a data race).
func TestItemIndexFuncSliceIsTheFunctions(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", nil))
	e.mode.server(widgets.GVR).add(newObj("ns", "b", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	shared := []string{strings.Clone("same")}
	data := unsafe.StringData(shared[0])
	require.NoError(t, inf.AddItemIndexFunc("s", func(Item[obj]) ([]string, error) { return shared, nil }))
	assert.Same(t, data, unsafe.StringData(shared[0]), "the function's slice was written to")
	n, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("s", "same")}})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

// An index function may reuse the slice it returns for the next object, as client-go's
// indexer allows: the index keeps a copy of each object's values, not the function's slice,
// which the next call would change under it (NotEq and HasNot read the kept values).
func TestIndexFuncMayReuseItsSlice(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", map[string]string{"c": "red"}))
	srv.add(newObj("ns", "b", map[string]string{"c": "blue"}))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	buf := make([]string, 1)
	require.NoError(t, inf.AddIndexFunc("c", func(o any) ([]string, error) {
		buf[0] = o.(obj).Labels["c"]
		return buf, nil
	}))
	res, err := inf.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.NotEq("c", "red")}})
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/b"}, keysOf(res.Items))
	srv.update(newObj("ns", "a", map[string]string{"c": "green"}))
	eventually(t, func() bool {
		n, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("c", "green")}})
		return err == nil && n == 1
	}, "the update is indexed")
	n, err := inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("c", "red")}})
	require.NoError(t, err)
	assert.Zero(t, n, "a left red")
}

// Error messages quote at most 256 bytes of a caller's text (an index name, a namespace, a
// selector), as package query's and discovery's do: a 100 KB input makes no 100 KB message,
// and errors.Is and errors.As see what they saw before.
func TestHugeInputsMakeShortErrors(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	big := strings.Repeat("x", 100_000)
	informerErr := func(opt Option) error { _, err := e.f.Informer(ctx, "widgets", opt); return err }
	queryErr := func(q query.Query) error { _, err := inf.Query(ctx, q); return err }
	for name, tc := range map[string]struct {
		err  error
		want error
	}{
		"namespace":         {informerErr(WithNamespace(big)), nil},
		"label selector":    {informerErr(WithLabelSelector(big + " b")), nil},
		"label value":       {informerErr(WithLabelSelector("a in (" + big + ")")), nil},
		"field selector":    {informerErr(WithFieldSelector(big)), nil},
		"AddIndex":          {inf.AddIndex(big, "{.a"), ErrInvalidIndex},
		"AddIndexFunc nil":  {inf.AddIndexFunc(big, nil), ErrInvalidIndex},
		"AddBuiltinIndex":   {inf.AddBuiltinIndex(big), ErrInvalidIndex},
		"RemoveIndex":       {inf.RemoveIndex(big), ErrIndexNotFound},
		"query index":       {queryErr(query.Query{Conditions: []query.Condition{query.Eq(big, "1")}}), ErrIndexNotFound},
		"SortBy":            {queryErr(query.Query{Scan: true, SortBy: big}), ErrIndexNotFound},
		"WatchAll AddIndex": {ws.AddIndex(big, "{.a"), ErrInvalidIndex},
		"WatchAll Remove":   {ws.RemoveIndex(big), ErrIndexNotFound},
	} {
		require.Error(t, tc.err, name)
		assert.Less(t, len(tc.err.Error()), 2000, "%s: %.300s", name, tc.err.Error())
		if tc.want != nil {
			assert.ErrorIs(t, tc.err, tc.want, name)
		}
	}
	_, err = inf.IndexStats(big)
	assert.ErrorIs(t, err, ErrIndexNotFound)
	assert.Less(t, len(err.Error()), 2000)
	_, err = inf.CountBy(ctx, query.Query{}, big)
	assert.ErrorIs(t, err, ErrIndexNotFound)
	assert.Less(t, len(err.Error()), 2000)
	require.NoError(t, inf.AddIndexFunc(big, func(any) ([]string, error) { return nil, nil }))
	err = inf.AddIndexFunc(big, func(any) ([]string, error) { return nil, nil })
	var conflict *IndexConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Less(t, len(err.Error()), 2000)
	_, err = newFactory(&rest.Config{}, Options[obj]{Namespace: big, Discovery: e.disc}, e.mode.builder(), hooks{Access: &fakeAccess{}})
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 2000)
}
