package indexfuncs_test

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/safecall"
	"github.com/kindex/kindex/jsonpath"
)

func TestJSONPathOfBadExpressions(t *testing.T) {
	cases := map[string]string{
		"empty":              "",
		"open brace":         "{",
		"unclosed bracket":   "{.a[",
		"unclosed filter":    "{.a[?(@.b==}",
		"bad slice":          "{.a[1:2:0]}",
		"unterminated quote": "{.a['b}",
		"only braces":        "{}",
		"too long":           "{." + strings.Repeat("a", 5000) + "}",
		"too deep":           "{" + strings.Repeat(".a[?(@", 40) + strings.Repeat(")]", 40) + "}",
		"range without end":  "{range .items[*]}{.x}",
		"end without range":  "{end}",
	}
	for name, expr := range cases {
		t.Run(name, func(t *testing.T) {
			err := safecall.Call(t, func() error {
				fn, err := indexfuncs.JSONPath(expr)
				if err == nil && fn == nil {
					t.Error("nil function and nil error")
				}
				return err
			})
			var se *jsonpath.SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, jsonpath.ErrSyntax) {
				t.Fatalf("JSONPath(%.40q) = %v, want a *jsonpath.SyntaxError", expr, err)
			}
			if se.Offset < 0 || se.Offset > len(expr) {
				t.Errorf("offset %d outside the expression of %d bytes", se.Offset, len(expr))
			}
			if len(err.Error()) > 2048 {
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
		})
	}
}

func TestIndexFuncsOnBadObjects(t *testing.T) {
	var nilU *unstructured.Unstructured
	var nilMeta *metav1.PartialObjectMetadata
	objs := map[string]any{
		"nil":                        nil,
		"nil unstructured":           nilU,
		"nil metadata":               nilMeta,
		"string":                     "pod",
		"int":                        3,
		"tombstone of nil":           cache.DeletedFinalStateUnknown{Key: "a/b"},
		"tombstone of nil pointer":   cache.DeletedFinalStateUnknown{Key: "a/b", Obj: nilU},
		"pointer to tombstone":       &cache.DeletedFinalStateUnknown{Key: "a/b", Obj: &metav1.PartialObjectMetadata{}},
		"map of strings":             map[string]string{"a": "b"},
		"struct value with metadata": metav1.ObjectMeta{},
	}
	fns := map[string]cache.IndexFunc{
		"FromPath":      indexfuncs.FromPath(jsonpath.MustCompile("{.metadata.name}")),
		"FromPath tmpl": indexfuncs.FromPath(jsonpath.MustCompile("{.metadata.namespace}/{.metadata.name}")),
		"Namespace":     indexfuncs.Namespace,
		"OwnerUID":      indexfuncs.OwnerUID,
		"ControllerUID": indexfuncs.ControllerUID,
		"UID":           indexfuncs.UID,
	}
	for _, name := range indexfuncs.BuiltinNames() {
		fn, ok := indexfuncs.Builtin(name)
		if !ok {
			t.Fatalf("Builtin(%q) not found", name)
		}
		fns["builtin "+name] = fn
	}
	for fname, fn := range fns {
		for oname, o := range objs {
			err := safecall.Call(t, func() error { _, err := fn(o); return err })
			if !errors.Is(err, indexfuncs.ErrUnsupportedObject) {
				t.Errorf("%s(%s) = %v, want ErrUnsupportedObject", fname, oname, err)
			}
		}
	}
	if _, ok := indexfuncs.Builtin(""); ok {
		t.Error(`Builtin("") found`)
	}
}

func TestNilAndZeroPaths(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	for name, p := range map[string]*jsonpath.Path{"nil": nil, "zero": {}} {
		want := jsonpath.ErrNotCompiled
		if p == nil {
			want = indexfuncs.ErrNilPath
		}
		if err := safecall.Call(t, func() error { _, err := indexfuncs.FromPath(p)(u); return err }); !errors.Is(err, want) {
			t.Errorf("FromPath(%s path) = %v, want %v", name, err, want)
		}
		if err := safecall.Call(t, func() error { _, err := indexfuncs.Values(p, u); return err }); !errors.Is(err, want) {
			t.Errorf("Values(%s path) = %v, want %v", name, err, want)
		}
	}
}
