package informer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/safecall"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// badQueries are queries every read refuses, with what the error must match and a part of
// its message that names the bad part.
func badQueries(inf *Informer[obj]) []struct {
	name string
	q    query.Query
	is   error
	want string
} {
	red := []query.Condition{query.Eq("color", "red")}
	page, _ := inf.Query(context.Background(), query.Query{Conditions: red, Limit: 1})
	otherToken := page.Continue
	return []struct {
		name string
		q    query.Query
		is   error
		want string
	}{
		{"empty index name", query.Query{Conditions: []query.Condition{query.Eq("", "x")}}, query.ErrInvalidQuery, "exactly one of"},
		{"unknown index", query.Query{Conditions: []query.Condition{query.Eq("nope", "x")}}, ErrIndexNotFound, `"nope"`},
		{"unknown index with Exists", query.Query{Conditions: []query.Condition{query.Has("nope")}}, ErrIndexNotFound, `"nope"`},
		{"unknown index with In", query.Query{Conditions: []query.Condition{query.OneOf("nope", "a")}}, ErrIndexNotFound, `"nope"`},
		{"nil values", query.Query{Conditions: []query.Condition{{Index: "color", Op: query.Equal}}}, query.ErrInvalidQuery, "got 0"},
		{"empty In", query.Query{Conditions: []query.Condition{query.OneOf("color")}}, query.ErrInvalidQuery, "at least one value"},
		{"NonScalar", query.Query{Conditions: []query.Condition{query.Eq("color", query.NonScalar)}}, query.ErrInvalidQuery, "NonScalar"},
		{"NonScalar In", query.Query{Conditions: []query.Condition{query.OneOf("color", query.NonScalar)}}, query.ErrInvalidQuery, "NonScalar"},
		{"NonScalar prefix", query.Query{Conditions: []query.Condition{query.HasPrefix("color", query.NonScalar)}}, query.ErrInvalidQuery, "NonScalar"},
		{"zero op", query.Query{Conditions: []query.Condition{{Index: "color", Values: []string{"red"}}}}, query.ErrInvalidQuery, "Op(0)"},
		{"invalid op", query.Query{Conditions: []query.Condition{{Index: "color", Op: 42, Values: []string{"red"}}}}, query.ErrInvalidQuery, "Op(42)"},
		{"bad bound", query.Query{Conditions: []query.Condition{query.Gt("gen", "x")}}, query.ErrInvalidQuery, `"x" is not a number`},
		{"bad JSONPath", query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.a[", query.Exists)}}, query.ErrInvalidQuery, "bad JSONPath"},
		{"no index, no scan", query.Query{Conditions: []query.Condition{query.NotEq("color", "red")}}, query.ErrScanRequired, ""},
		{"negative limit", query.Query{Conditions: red, Limit: -1}, query.ErrInvalidQuery, "got -1"},
		{"min int limit", query.Query{Conditions: red, Limit: math.MinInt}, query.ErrInvalidQuery, "negative"},
		{"empty AnyOf group", query.Query{Conditions: red, AnyOf: [][]query.Condition{{query.Has("tier")}, {}}}, query.ErrInvalidQuery, "AnyOf group 1"},
		{"nil AnyOf group", query.Query{AnyOf: [][]query.Condition{nil}}, query.ErrInvalidQuery, "AnyOf group 0"},
		{"AnyOf group without index", query.Query{AnyOf: [][]query.Condition{{query.Has("tier")}, {query.HasNot("tier")}}}, query.ErrScanRequired, "AnyOf group 1"},
		{"AnyOf bad condition", query.Query{AnyOf: [][]query.Condition{{query.Has("tier")}, {query.Lt("gen", "NaN")}}}, query.ErrInvalidQuery, "gen<NaN"},
		{"garbage continue", query.Query{Conditions: red, Continue: "garbage!"}, ErrInvalidContinue, "continue"},
		{"random base64 continue", query.Query{Conditions: red, Continue: "q83vEjRWeJq83vASNFZ4mrze8BI0VniavN7wEjRWeJo"}, ErrInvalidContinue, "continue"},
		{"truncated continue", query.Query{Conditions: red, Limit: 1, Continue: otherToken[:len(otherToken)-3]}, ErrInvalidContinue, "continue"},
		{"another query's continue", query.Query{Conditions: []query.Condition{query.Eq("color", "blue")}, Limit: 1, Continue: otherToken}, ErrInvalidContinue, "continue"},
		{"huge continue", query.Query{Conditions: red, Continue: strings.Repeat("A", 1<<20)}, ErrInvalidContinue, "continue"},
		{"unknown SortBy", query.Query{Conditions: red, SortBy: "nope"}, ErrIndexNotFound, `"nope"`},
		{"unknown SortBy with limit", query.Query{Conditions: red, SortBy: "nope", Limit: 3}, ErrIndexNotFound, `"nope"`},
		{"Descending without SortBy", query.Query{Conditions: red, Descending: true}, query.ErrInvalidQuery, "Descending needs SortBy"},
		{"Descending without SortBy, with limit", query.Query{Conditions: red, Descending: true, Limit: 2}, query.ErrInvalidQuery, "Descending needs SortBy"},
	}
}

func TestBadQueriesFailClearlyOnEveryRead(t *testing.T) {
	inf := queryEnv(t)
	ctx := context.Background()
	for _, tc := range badQueries(inf) {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, tc.is) {
					t.Errorf("%s: %v, want %v", what, err, tc.is)
					return
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %q does not name %q", what, err, tc.want)
				}
				if len(err.Error()) > 2048 {
					t.Errorf("%s: an error of %d bytes", what, len(err.Error()))
				}
			}
			check("Query", safecall.Call(t, func() error { _, err := inf.Query(ctx, tc.q); return err }))
			check("QueryItems", safecall.Call(t, func() error { _, err := inf.QueryItems(ctx, tc.q); return err }))
			// Count and CountBy ignore Limit, Continue, SortBy and Descending.
			switch {
			case tc.q.Continue != "", tc.q.Limit < 0, tc.q.SortBy != "", tc.q.Descending:
				return
			}
			check("Count", safecall.Call(t, func() error { _, err := inf.Count(ctx, tc.q); return err }))
			check("CountBy", safecall.Call(t, func() error { _, err := inf.CountBy(ctx, tc.q, "tier"); return err }))
		})
	}
}

func TestCountByOfABadIndexName(t *testing.T) {
	inf := queryEnv(t)
	ctx := context.Background()
	red := query.Query{Conditions: []query.Condition{query.Eq("color", "red")}}
	for _, q := range []query.Query{{}, red} {
		for _, name := range []string{"", "nope", strings.Repeat("x", 10000)} {
			err := safecall.Call(t, func() error { _, err := inf.CountBy(ctx, q, name); return err })
			if !errors.Is(err, ErrIndexNotFound) || len(err.Error()) > 1024 {
				t.Errorf("CountBy(%q) = %.200v, want a short ErrIndexNotFound", name, err)
			}
		}
	}
}

func TestReadsWithANilContext(t *testing.T) {
	inf := queryEnv(t)
	q := query.Query{Conditions: []query.Condition{query.Eq("color", "red")}}
	//nolint:staticcheck // a nil context is the bad input
	for what, fn := range map[string]func() error{
		"Query":      func() error { _, err := inf.Query(nil, q); return err },
		"QueryItems": func() error { _, err := inf.QueryItems(nil, q); return err },
		"Count":      func() error { _, err := inf.Count(nil, q); return err },
		"CountBy":    func() error { _, err := inf.CountBy(nil, q, "tier"); return err },
		"WaitForSync": func() error {
			return inf.WaitForSync(nil)
		},
		"WaitForSyncOrPark": func() error { return inf.WaitForSyncOrPark(nil) },
	} {
		if err := safecall.Call(t, fn); !errors.Is(err, ErrNilContext) {
			t.Errorf("%s(nil ctx) = %v, want ErrNilContext", what, err)
		}
	}
}

func TestBadIndexRegistrations(t *testing.T) {
	inf := queryEnv(t)
	var nilFunc cache.IndexFunc
	var nilItemFunc func(Item[obj]) ([]string, error)
	cases := []struct {
		name string
		fn   func() error
		is   error
		want string
	}{
		{"AddIndex empty name", func() error { return inf.AddIndex("", "{.metadata.name}") }, ErrInvalidIndex, "empty name"},
		{"AddIndex empty expression", func() error { return inf.AddIndex("x", "") }, ErrInvalidIndex, `"x"`},
		{"AddIndex bad expression", func() error { return inf.AddIndex("x", "{.a[") }, ErrInvalidIndex, `"x"`},
		{"AddIndex literal", func() error { return inf.AddIndex("x", "{'a'}") }, ErrInvalidIndex, "reads no field"},
		{"AddIndex conflicting", func() error { return inf.AddIndex("color", "{.metadata.name}") }, ErrIndexConflict, `"color"`},
		{"AddIndexPath nil", func() error { return inf.AddIndexPath("x", nil) }, ErrInvalidIndex, "nil path"},
		{"AddIndexPath zero path", func() error { return inf.AddIndexPath("x", &jsonpath.Path{}) }, jsonpath.ErrNotCompiled, `"x"`},
		{"AddIndexPath empty name", func() error { return inf.AddIndexPath("", jsonpath.MustCompile("{.a}")) }, ErrInvalidIndex, "empty name"},
		{"AddBuiltinIndex empty", func() error { return inf.AddBuiltinIndex("") }, ErrInvalidIndex, "no built-in index"},
		{"AddBuiltinIndex unknown", func() error { return inf.AddBuiltinIndex("nope") }, ErrInvalidIndex, `"nope"`},
		{"AddIndexFunc nil", func() error { return inf.AddIndexFunc("x", nil) }, ErrInvalidIndex, "nil function"},
		{"AddIndexFunc typed nil", func() error { return inf.AddIndexFunc("x", nilFunc) }, ErrInvalidIndex, "nil function"},
		{"AddIndexFunc empty name", func() error {
			return inf.AddIndexFunc("", func(any) ([]string, error) { return nil, nil })
		}, ErrInvalidIndex, "empty name"},
		{"AddIndexFunc over a JSONPath name", func() error {
			return inf.AddIndexFunc("color", func(any) ([]string, error) { return nil, nil })
		}, ErrIndexConflict, `"color"`},
		{"AddItemIndexFunc nil", func() error { return inf.AddItemIndexFunc("x", nilItemFunc) }, ErrInvalidIndex, "nil function"},
		{"AddItemIndexFunc empty name", func() error {
			return inf.AddItemIndexFunc("", func(Item[obj]) ([]string, error) { return nil, nil })
		}, ErrInvalidIndex, "empty name"},
		{"RemoveIndex unknown", func() error { return inf.RemoveIndex("nope") }, ErrIndexNotFound, `"nope"`},
		{"RemoveIndex empty", func() error { return inf.RemoveIndex("") }, ErrIndexNotFound, `""`},
		{"IndexStats unknown", func() error { _, err := inf.IndexStats("nope"); return err }, ErrIndexNotFound, `"nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := safecall.Call(t, tc.fn)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %v naming %q", err, tc.is, tc.want)
			}
		})
	}
	// A duplicate with the same definition is shared, not an error; the failures above
	// registered nothing.
	if err := inf.AddIndex("color", "{.metadata.labels.color}"); err != nil {
		t.Errorf("the same definition again: %v", err)
	}
	if got := inf.IndexNames(); strings.Join(got, ",") != "color,gen,tier" {
		t.Errorf("IndexNames = %v", got)
	}
}

func TestNilHandlers(t *testing.T) {
	inf := queryEnv(t)
	var typedNil *cache.ResourceEventHandlerFuncs
	var typedNilRec *recorder
	for name, h := range map[string]cache.ResourceEventHandler{
		"nil": nil, "typed nil funcs": typedNil, "typed nil struct pointer": typedNilRec,
	} {
		err := safecall.Call(t, func() error { _, err := inf.AddEventHandler(h); return err })
		if !errors.Is(err, ErrNilCallback) {
			t.Errorf("AddEventHandler(%s) = %v, want ErrNilCallback", name, err)
		}
	}
	if err := safecall.Call(t, func() error { return inf.RemoveEventHandler(nil) }); err != nil {
		t.Errorf("RemoveEventHandler(nil) = %v", err)
	}
	if err := safecall.Call(t, func() error { _, _, err := inf.HandOffEventHandler(nil); return err }); err == nil {
		t.Errorf("HandOffEventHandler(nil) = nil")
	}
}

// calls are every method of an informer that can fail, with a good input.
func calls(inf *Informer[obj]) map[string]func() error {
	ctx := context.Background()
	red := query.Query{Conditions: []query.Condition{query.Eq("color", "red")}}
	return map[string]func() error{
		"Query":       func() error { _, err := inf.Query(ctx, red); return err },
		"QueryItems":  func() error { _, err := inf.QueryItems(ctx, red); return err },
		"Count":       func() error { _, err := inf.Count(ctx, red); return err },
		"CountBy":     func() error { _, err := inf.CountBy(ctx, query.Query{}, "color"); return err },
		"Get":         func() error { _, err := inf.Get("a", "w00"); return err },
		"GetItem":     func() error { _, err := inf.GetItem("a", "w00"); return err },
		"List":        func() error { _, err := inf.List(nil); return err },
		"ListItems":   func() error { _, err := inf.ListItems(""); return err },
		"AddIndex":    func() error { return inf.AddIndex("name", "{.metadata.name}") },
		"AddBuiltin":  func() error { return inf.AddBuiltinIndex("uid") },
		"RemoveIndex": func() error { return inf.RemoveIndex("color") },
		"IndexStats":  func() error { _, err := inf.IndexStats("color"); return err },
		"AddEventHandler": func() error {
			_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
			return err
		},
		"WaitForSync": func() error { return inf.WaitForSync(ctx) },
	}
}

func TestMethodsAfterReleaseAndShutdown(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	srv := e.mode.server(widgets.GVR)
	srv.add(colored("a", "w00", "red"))
	ctx := context.Background()
	keep, err := e.f.Informer(ctx, "widgets")
	if err != nil {
		t.Fatal(err)
	}
	released, err := e.f.Informer(ctx, "widgets")
	if err != nil {
		t.Fatal(err)
	}
	if err := released.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := released.AddIndex("color", "{.metadata.labels.color}"); err != nil {
		t.Fatal(err)
	}
	if err := keep.AddIndex("color", "{.metadata.labels.color}"); err != nil {
		t.Fatal(err)
	}
	released.Release()
	released.Release()
	for what, fn := range calls(released) {
		if err := safecall.Call(t, fn); !errors.Is(err, ErrReleased) {
			t.Errorf("%s after Release: %v, want ErrReleased", what, err)
		}
	}
	e.f.Shutdown()
	for what, fn := range calls(keep) {
		if what == "RemoveIndex" {
			continue // a removal after Shutdown has nothing left to do: nil, or not found
		}
		if err := safecall.Call(t, fn); !errors.Is(err, ErrShutdown) && !errors.Is(err, ErrReleased) {
			t.Errorf("%s after Shutdown: %v, want ErrShutdown", what, err)
		}
	}
	if err := safecall.Call(t, func() error { _, err := e.f.Informer(ctx, "widgets"); return err }); !errors.Is(err, ErrShutdown) {
		t.Errorf("Factory.Informer after Shutdown: %v", err)
	}
	e.f.Shutdown()
	// The zero and nil informers.
	var zero Informer[obj]
	var nilInf *Informer[obj]
	for _, inf := range []*Informer[obj]{&zero, nilInf} {
		for what, fn := range calls(inf) {
			if err := safecall.Call(t, fn); !errors.Is(err, ErrUninitialized) {
				t.Errorf("%s of an uninitialized informer: %v", what, err)
			}
		}
		inf.Release()
	}
}

func TestZeroItem(t *testing.T) {
	var it Item[obj]
	p := jsonpath.MustCompile("{.metadata.name}")
	if err := safecall.Call(t, func() error {
		_ = it.Key() + it.Namespace() + it.Name() + string(it.UID()) + it.ResourceVersion()
		_, _ = it.Labels(), it.Annotations()
		_ = it.Raw()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for what, fn := range map[string]func() error{
		"Eval":             func() error { _, err := it.Eval(p); return err },
		"Eval nil path":    func() error { _, err := it.Eval(nil); return err },
		"Eval zero path":   func() error { _, err := it.Eval(&jsonpath.Path{}); return err },
		"Object":           func() error { _, err := it.Object(); return err },
		"DecodeInto nil":   func() error { return it.DecodeInto(nil) },
		"DecodeInto value": func() error { var m metav1.ObjectMeta; return it.DecodeInto(&m) },
	} {
		if err := safecall.Call(t, fn); err == nil {
			t.Errorf("%s of the zero Item: no error", what)
		}
	}
}

func TestDecodeIntoBadTargets(t *testing.T) {
	inf := queryEnv(t)
	it, err := inf.GetItem("a", "w00")
	if err != nil {
		t.Fatal(err)
	}
	var nilPtr *metav1.ObjectMeta
	var ch chan int
	var fn func()
	cases := map[string]any{
		"nil":                        nil,
		"typed nil":                  nilPtr,
		"non-pointer":                metav1.ObjectMeta{},
		"string":                     "x",
		"pointer to int":             new(int),
		"pointer to chan":            &ch,
		"pointer to func":            &fn,
		"pointer to complex":         new(complex128),
		"pointer to map of int keys": new(map[int]string),
		"pointer to error":           new(error),
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			err := safecall.Call(t, func() error { return it.DecodeInto(v) })
			var de *DecodeError
			if !errors.As(err, &de) || de.Key != "a/w00" {
				t.Errorf("DecodeInto(%T) = %v, want a *DecodeError naming a/w00", v, err)
			}
		})
	}
}

func TestHugeLimitUsesTheIndex(t *testing.T) {
	inf := queryEnv(t)
	ctx := context.Background()
	conds := []query.Condition{query.Eq("color", "red"), query.Eq("tier", "web")}
	big, err := inf.Query(ctx, query.Query{Conditions: conds, Limit: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{math.MaxInt, math.MaxInt - 1} {
		var res query.Result[obj]
		if err := safecall.Call(t, func() error {
			var err error
			res, err = inf.Query(ctx, query.Query{Conditions: conds, Limit: limit})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if res.Plan != big.Plan || len(res.Items) != len(big.Items) || res.Continue != "" {
			t.Errorf("Limit %d: plan %+v and %d items, want %+v and %d, as with Limit 1<<40",
				limit, res.Plan, len(res.Items), big.Plan, len(big.Items))
		}
	}
}

func TestBadInformerRequests(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	var nilHandler *cache.ResourceEventHandlerFuncs
	cases := []struct {
		name string
		fn   func() (*Informer[obj], error)
		is   error
		want string
	}{
		{"not watchable", func() (*Informer[obj], error) { return e.f.ForResource(discovery.Resource{}) }, ErrNotWatchable, "verbs"},
		{"bad namespace", func() (*Informer[obj], error) {
			return e.f.Informer(ctx, "widgets", WithNamespace("Not_A_Namespace"))
		}, nil, `"Not_A_Namespace"`},
		{"bad label selector", func() (*Informer[obj], error) {
			return e.f.Informer(ctx, "widgets", WithLabelSelector("a in ("))
		}, nil, `invalid label selector "a in ("`},
		{"bad field selector", func() (*Informer[obj], error) {
			return e.f.Informer(ctx, "widgets", WithFieldSelector("a=b=c=="))
		}, nil, "invalid field selector"},
		{"nil handler", func() (*Informer[obj], error) {
			return e.f.Informer(ctx, "widgets", WithEventHandler(nil))
		}, ErrNilCallback, "WithEventHandler"},
		{"typed nil handler", func() (*Informer[obj], error) {
			return e.f.Informer(ctx, "widgets", WithEventHandler(nilHandler))
		}, ErrNilCallback, "WithEventHandler"},
		{"nil context", func() (*Informer[obj], error) {
			return e.f.Informer(nil, "widgets") //nolint:staticcheck // the bad input
		}, ErrNilContext, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var inf *Informer[obj]
			err := safecall.Call(t, func() error {
				var err error
				inf, err = tc.fn()
				return err
			})
			if err == nil {
				inf.Release()
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %v naming %q", err, tc.is, tc.want)
			}
			if inf != nil {
				t.Errorf("an informer with the error")
			}
		})
	}
	// A nil Option overrides nothing.
	inf, err := e.f.Informer(ctx, "widgets", nil)
	if err != nil {
		t.Fatal(err)
	}
	inf.Release()
	// The informers the refused calls did not make are not held.
	if n := len(e.f.Statuses()); n != 0 {
		t.Errorf("%d informers held after refused calls", n)
	}
}

func TestBadQueriesFailClearlyOnAWatchAllSet(t *testing.T) {
	inf := queryEnv(t)
	ctx := context.Background()
	f := &Factory[obj]{c: inf.h.c}
	ws, err := f.WatchAll(ctx, discovery.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	if err := ws.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	for name, expr := range map[string]string{"color": "{.metadata.labels.color}", "tier": "{.metadata.labels.tier}", "gen": "{.metadata.generation}"} {
		if err := ws.AddIndex(name, expr); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range badQueries(inf) {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want %v naming %q", what, err, tc.is, tc.want)
				}
			}
			check("QueryItems", safecall.Call(t, func() error { _, err := ws.QueryItems(ctx, tc.q); return err }))
			switch {
			case tc.q.Continue != "", tc.q.Limit < 0, tc.q.SortBy != "", tc.q.Descending:
				return
			}
			check("Count", safecall.Call(t, func() error { _, err := ws.Count(ctx, tc.q); return err }))
			check("CountBy", safecall.Call(t, func() error { _, err := ws.CountBy(ctx, tc.q, "tier"); return err }))
		})
	}
}

func TestCheckPathOfAZeroPath(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	err := safecall.Call(t, func() error { return e.f.CheckPath(&jsonpath.Path{}) })
	if !errors.Is(err, jsonpath.ErrNotCompiled) {
		t.Errorf("CheckPath(zero Path) = %v, want ErrNotCompiled", err)
	}
	if err := safecall.Call(t, func() error { return e.f.CheckPath(nil) }); err == nil {
		t.Error("CheckPath(nil) = nil")
	}
	if err := e.f.CheckPath(jsonpath.MustCompile("{.metadata.name}")); err != nil {
		t.Errorf("CheckPath of a good path: %v", err)
	}
}

func TestHugeInputsGiveShortErrors(t *testing.T) {
	inf := queryEnv(t)
	ctx := context.Background()
	huge := strings.Repeat("x", 100000)
	many := make([]string, 10000)
	for i := range many {
		many[i] = "v" + strings.Repeat("y", 20)
	}
	for name, q := range map[string]query.Query{
		"huge index name": {Conditions: []query.Condition{query.Eq(huge, "a")}},
		"huge value":      {Conditions: []query.Condition{query.Eq("color", "a"), query.Lt("gen", huge)}},
		"huge path":       {Scan: true, Conditions: []query.Condition{query.Where("{."+huge+"[", query.Exists)}},
		"long path":       {Scan: true, Conditions: []query.Condition{query.Where("{."+huge+"}", query.Exists)}},
		"many values":     {Conditions: []query.Condition{query.OneOf("nope", many...)}},
		"huge SortBy":     {Conditions: []query.Condition{query.Eq("color", "a")}, SortBy: huge},
		"huge AnyOf":      {AnyOf: [][]query.Condition{{query.OneOf("color", many...)}, {query.HasNot("color")}}},
		"huge namespace":  {Namespace: huge, Conditions: []query.Condition{query.Has("nope")}},
	} {
		err := safecall.Call(t, func() error { _, err := inf.Query(ctx, q); return err })
		if err == nil || len(err.Error()) > 4096 {
			t.Errorf("%s: an error of %d bytes: %.300v", name, len(fmt.Sprint(err)), err)
		}
	}
	if err := safecall.Call(t, func() error { return inf.AddIndex(huge, "{.a[") }); err == nil || len(err.Error()) > 4096 {
		t.Errorf("AddIndex of a huge name: %d bytes", len(fmt.Sprint(err)))
	}
	if err := safecall.Call(t, func() error { return inf.AddIndex("x", "{."+huge+"[") }); err == nil || len(err.Error()) > 4096 {
		t.Errorf("AddIndex of a huge expression: %d bytes", len(fmt.Sprint(err)))
	}
	if _, err := inf.Get(huge, huge); err == nil || len(err.Error()) > 4096 {
		t.Errorf("Get of a huge name: %d bytes", len(fmt.Sprint(err)))
	}
}
