package crcache_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kindex/kindex/crcache"
)

func req(field string, op crcache.FieldOp, values ...string) crcache.FieldRequirement {
	return crcache.FieldRequirement{Field: field, Op: op, Values: values}
}

func TestParseFields(t *testing.T) {
	tests := []struct {
		in   string
		want []crcache.FieldRequirement
	}{
		{"", nil},
		{"  ", nil},
		{"spec.nodeName=n1", []crcache.FieldRequirement{req("spec.nodeName", crcache.FieldEquals, "n1")}},
		{"a==b", []crcache.FieldRequirement{req("a", crcache.FieldEquals, "b")}},
		{"a!=b, c = d ", []crcache.FieldRequirement{req("a", crcache.FieldNotEquals, "b"), req("c", crcache.FieldEquals, "d")}},
		{"a in (x, y,z)", []crcache.FieldRequirement{req("a", crcache.FieldIn, "x", "y", "z")}},
		{"a notin (x)", []crcache.FieldRequirement{req("a", crcache.FieldNotIn, "x")}},
		{"a in(x)", []crcache.FieldRequirement{req("a", crcache.FieldIn, "x")}},
		{"spec.paused", []crcache.FieldRequirement{req("spec.paused", crcache.FieldExists)}},
		{"!spec.paused,x=1", []crcache.FieldRequirement{req("spec.paused", crcache.FieldDoesNotExist), req("x", crcache.FieldEquals, "1")}},
		{"n>3,n>=3.5,n<-1,n<=1e3", []crcache.FieldRequirement{
			req("n", crcache.FieldGreaterThan, "3"), req("n", crcache.FieldGreaterEqual, "3.5"),
			req("n", crcache.FieldLessThan, "-1"), req("n", crcache.FieldLessEqual, "1e3"),
		}},
		{"metadata.labels['app.kubernetes.io/name']=web", []crcache.FieldRequirement{req("metadata.labels['app.kubernetes.io/name']", crcache.FieldEquals, "web")}},
		{"{.spec.containers[?(@.name==\"app\")].image}=nginx", []crcache.FieldRequirement{req(`{.spec.containers[?(@.name=="app")].image}`, crcache.FieldEquals, "nginx")}},
		{`a=x\,y\=z`, []crcache.FieldRequirement{req("a", crcache.FieldEquals, "x,y=z")}},
		{`a=x\ `, []crcache.FieldRequirement{req("a", crcache.FieldEquals, "x ")}},
		{"a=", []crcache.FieldRequirement{req("a", crcache.FieldEquals, "")}},
		{"index=in", []crcache.FieldRequirement{req("index", crcache.FieldEquals, "in")}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sel, err := crcache.ParseFields(tt.in)
			require.NoError(t, err)
			got := sel.FieldRequirements()
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				assert.True(t, sel.Empty())
				return
			}
			assert.Equal(t, tt.want, got)
			again, err := crcache.ParseFields(sel.String())
			require.NoError(t, err, "String %q parses", sel.String())
			assert.Equal(t, tt.want, again.FieldRequirements(), "String %q round-trips", sel.String())
		})
	}
}

func TestParseFieldsErrors(t *testing.T) {
	for _, in := range []string{
		"=x", "a>b", "a in x", "a in (x", "a<", "a,", ",a", "{.spec=1", "a b", "!", "a in ()", "a notin(", "a=1,,b=2",
		"a>NaN", "a<Inf", "a>=-Inf", "a<=1e999",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := crcache.ParseFields(in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, crcache.ErrInvalidFieldSelector), "%v", err)
		})
	}
	assert.Panics(t, func() { crcache.MustParseFields("a in (") })
}

func TestFieldSelectorInterface(t *testing.T) {
	sel := crcache.MustParseFields("a=1,b!=2,c in (x,y),d,!e,n>5,n<=9")
	var _ fields.Selector = sel
	assert.True(t, sel.Matches(fields.Set{"a": "1", "c": "y", "d": "", "n": "7"}))
	assert.False(t, sel.Matches(fields.Set{"a": "1", "c": "y", "d": "", "n": "10"}))
	assert.False(t, sel.Matches(fields.Set{"a": "1", "c": "y", "d": "", "e": "", "n": "7"}))
	assert.False(t, sel.Matches(fields.Set{"a": "1", "b": "2", "c": "y", "d": "", "n": "7"}))
	v, ok := sel.RequiresExactMatch("a")
	assert.True(t, ok)
	assert.Equal(t, "1", v)
	_, ok = sel.RequiresExactMatch("b")
	assert.False(t, ok)

	ops := map[string]selection.Operator{}
	for _, r := range sel.Requirements() {
		ops[r.Field+string(r.Operator)] = r.Operator
	}
	assert.Contains(t, ops, "a=")
	assert.Contains(t, ops, "b!=")
	assert.Contains(t, ops, "cin")
	assert.Contains(t, ops, "dexists")
	assert.Contains(t, ops, "e!")
	assert.Contains(t, ops, "ngt")
	assert.Contains(t, ops, "n<=", "an operator of its own: never left out")
	assert.Len(t, sel.Requirements(), 7)

	cp := sel.DeepCopySelector()
	assert.Equal(t, sel.String(), cp.String())
	tr, err := sel.Transform(func(f, v string) (string, string, error) { return "x." + f, v + "!", nil })
	require.NoError(t, err)
	assert.Contains(t, tr.String(), "x.a=1\\!")

	_, err = crcache.NewFieldSelector(req("n", crcache.FieldGreaterThan, "abc"))
	assert.ErrorIs(t, err, crcache.ErrInvalidFieldSelector)
	ns, err := crcache.NewFieldSelector(req("a", crcache.FieldIn, "x", "y"))
	require.NoError(t, err)
	assert.Equal(t, "a in (x,y)", ns.String())
}

// FuzzParseFields: parsing never panics, and what parses prints back to an equal selector
// (fields without reserved characters).
func FuzzParseFields(f *testing.F) {
	for _, s := range []string{"a=b", "a in (x,y)", "!a,b", "n>=3", `{.a[?(@.b=="c")]}=d`, `a=x\,y`, "metadata.labels['x']!=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := crcache.ParseFields(s)
		if err != nil {
			return
		}
		again, err := crcache.ParseFields(sel.String())
		if err != nil {
			t.Fatalf("%q parsed, but its String %q does not: %v", s, sel.String(), err)
		}
		if sel.String() != again.String() {
			t.Fatalf("%q: String %q reparses as %q", s, sel.String(), again.String())
		}
	})
}
