package compact

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

func TestProjection(t *testing.T) {
	in := []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","managedFields":[1],"labels":{"x":"y"}},` +
		`"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"volumes":[{"name":"v"}]},` +
		`"status":{"phase":"Running","conditions":[{"type":"Ready"}]},"extra":{"big":"payload"}}`)
	cases := []struct {
		name  string
		exprs []string
		want  string // exact bytes
	}{
		{name: "fields and lists", exprs: []string{"{.spec.containers[*].image}", ".status.phase"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}`},
		{name: "a whole subtree", exprs: []string{"{.spec}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"volumes":[{"name":"v"}]}}`},
		{name: "prefix and deeper path", exprs: []string{"{.spec.nodeName}", "{.spec}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"volumes":[{"name":"v"}]}}`},
		{name: "template", exprs: []string{"{.spec.nodeName}/{.status.phase}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}`},
		{name: "filter", exprs: []string{"{.status.conditions[?(@.type=='Ready')].type}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"status":{"conditions":[{"type":"Ready"}]}}`},
		{name: "metadata only", exprs: []string{},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}}}`},
		{name: "metadata paths add nothing", exprs: []string{"{.metadata.labels.x}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}}}`},
		{name: "missing fields", exprs: []string{"{.nothing.here}", "{.spec.nothing}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{}}`},
		{name: "through a non-object keeps it whole", exprs: []string{"{.spec.volumes.name}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"volumes":[{"name":"v"}]}}`},
		{name: "recursive descent needs everything", exprs: []string{"{.spec.nodeName}", "{..image}"},
			want: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"volumes":[{"name":"v"}]},"status":{"phase":"Running","conditions":[{"type":"Ready"}]},"extra":{"big":"payload"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDecoder(Options{Projection: tc.exprs})
			require.NoError(t, err)
			o := mustDecode(t, d, in)
			assert.Equal(t, tc.want, string(o.RawJSON()))
			assert.Equal(t, "a", o.GetName())
		})
	}
	t.Run("invalid expression", func(t *testing.T) {
		_, err := NewDecoder(Options{Projection: []string{"{.spec[}"}})
		var se *jsonpath.SyntaxError
		assert.True(t, errors.As(err, &se), "%v", err)
		_, err = New(nil, Options{Projection: []string{"{.spec[}"}})
		assert.Error(t, err)
		// A 100 KB expression makes no 100 KB message: the syntax error quotes it cut.
		_, err = NewDecoder(Options{Projection: []string{"{.spec}", "{." + strings.Repeat("x", 100_000) + "}"}})
		require.ErrorAs(t, err, &se)
		assert.Less(t, len(err.Error()), 2000)
		assert.Contains(t, err.Error(), "Projection[1]")
	})
}

// TestProjectionKeepsIndexValues: index functions over the projected expressions yield what
// they yield on the whole object.
func TestProjectionKeepsIndexValues(t *testing.T) {
	exprs := []string{
		"{.spec.containers[*].image}", "{.spec.nodeName}", "{.status.containerStatuses[?(@.restartCount>0)].name}",
		"{.status.podIPs[*].ip}", "{.metadata.ownerReferences[*].name}", "{.spec.volumes[*].configMap.name}",
	}
	d, err := NewDecoder(Options{Projection: exprs})
	require.NoError(t, err)
	for i := range 8 {
		full := mustDecode(t, &Decoder{}, podJSON(t, i))
		proj := mustDecode(t, d, podJSON(t, i))
		assert.Less(t, len(proj.RawJSON()), len(full.RawJSON()))
		for _, expr := range exprs {
			fn, err := indexfuncs.JSONPath(expr)
			require.NoError(t, err)
			want, werr := fn(full)
			got, gerr := fn(proj)
			assert.Equal(t, werr, gerr)
			sort.Strings(want)
			sort.Strings(got)
			assert.Equal(t, want, got, expr)
		}
	}
}

// TestCheckPath: an expression is accepted when every field it reads is kept whole, and
// refused with a *ProjectionError naming the first dropped field otherwise.
func TestCheckPath(t *testing.T) {
	d, err := NewDecoder(Options{Projection: []string{"{.spec.containers[*].image}", "{.status.phase}"}})
	require.NoError(t, err)
	for _, expr := range []string{
		"{.spec.containers[*].name}", "{.status.phase}", "{.metadata.labels.app}", "{.kind}",
		"{.spec.containers[0].resources.limits.cpu}", "literal",
	} {
		p, err := jsonpath.Compile(expr)
		require.NoError(t, err)
		assert.NoError(t, d.CheckPath(p), expr)
	}
	for expr, field := range map[string]string{
		"{.spec.nodeName}": ".spec.nodeName",
		"{.spec}":          ".spec",
		"{.status}":        ".status",
		"{..image}":        "the whole object",
		"{.data.x}":        ".data.x",
		// The key "status.phase" (read before the path .status.phase) is not kept: named
		// as written.
		"{['status.phase']}": "['status.phase']",
	} {
		p, err := jsonpath.Compile(expr)
		require.NoError(t, err)
		err = d.CheckPath(p)
		require.ErrorIs(t, err, ErrNotProjected, expr)
		var pe *ProjectionError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, field, pe.Field, expr)
		assert.Contains(t, err.Error(), field)
	}
	none, err := NewDecoder(Options{})
	require.NoError(t, err)
	p, err := jsonpath.Compile("{..anything}")
	require.NoError(t, err)
	assert.NoError(t, none.CheckPath(p), "no projection keeps everything")

	// metadata.managedFields are cut unless kept: an expression naming them is refused, with
	// or without a projection, as by the metadata-only mode.
	mf := jsonpath.MustCompile("{.metadata.managedFields[*].manager}")
	for _, dec := range []*Decoder{d, none} {
		require.ErrorIs(t, dec.CheckPath(mf), storage.ErrManagedFieldsDropped)
	}
	kept, err := NewDecoder(Options{KeepManagedFields: true, Projection: []string{"{.status.phase}"}})
	require.NoError(t, err)
	assert.NoError(t, kept.CheckPath(mf), "kept")
}
