package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/query"
)

// A path without braces ends where the operator starts, ^= included, and one that leaves a
// quote or a parenthesis open is refused, not read as a field name that takes in the
// operator and the value.
func TestWhereBarePathEnd(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want query.Condition
	}{
		{".a^=x", query.Where("{.a}", query.Prefix, "x")},
		{".spec.nodeName^=worker-", query.Where("{.spec.nodeName}", query.Prefix, "worker-")},
		{".spec.nodeName ^= worker-", query.Where("{.spec.nodeName}", query.Prefix, "worker-")},
		{`.a[?(@.b=="c^=d")]^=x`, query.Where(`{.a[?(@.b=="c^=d")]}`, query.Prefix, "x")},
		{".a[?(@.x<3)]", query.Where("{.a[?(@.x<3)]}", query.Exists)},
		{`.a['x y']=1`, query.Where(`{.a['x y']}`, query.Equal, "1")},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			w, err := parseWhere(tc.arg)
			require.NoError(t, err)
			got, err := w.conditions(nil)
			require.NoError(t, err)
			assert.Equal(t, []query.Condition{tc.want}, got)
		})
	}
	for _, tc := range []struct {
		arg    string
		offset int
		msg    string
	}{
		{".a'b=x", 2, "unterminated quoted text in the JSONPath"},
		{`.a"=x`, 2, "unterminated quoted text in the JSONPath"},
		{".a(=b", 2, `'(' is not closed`},
		{".a(b=c", 2, `'(' is not closed`},
		{".a.b(c=d", 4, `'(' is not closed`},
		// The compiler's own message where it has one.
		{".a[?(@.b=='x)]=1", 10, "bad JSONPath: unterminated string"},
		{".a[=b", 3, "bad JSONPath"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := parseWhere(tc.arg)
			var ae *argError
			require.True(t, errors.As(err, &ae), "%v", err)
			assert.Contains(t, ae.Msg, tc.msg)
			assert.Equal(t, tc.offset, ae.Offset)
		})
	}
}

// Messages quote the character they found, not its first byte read as Latin-1, and do not
// cut one in two.
func TestWhereMessageCharacters(t *testing.T) {
	for _, tc := range []struct{ arg, msg string }{
		{"é=1", `found "é"`},
		{"a in ('x'é)", `found "é"`},
		{"a=b " + strings.Repeat("é", 20), `unexpected "` + strings.Repeat("é", 8) + `..."`},
		{"a " + strings.Repeat("é", 20), `found "` + strings.Repeat("é", 8) + `..."`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := parseWhere(tc.arg)
			var ae *argError
			require.True(t, errors.As(err, &ae), "%v", err)
			assert.Contains(t, ae.Msg, tc.msg)
		})
	}
}

// formatWhere writes w back as a --where, every value quoted.
func formatWhere(w *whereExpr) string {
	q := func(v string) string {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
	}
	switch {
	case w.Op == query.Exists:
		return w.Subject
	case w.Op == query.NotExists:
		return "!" + w.Subject
	case w.Op == query.In:
		kw := " in ("
		if w.NotIn {
			kw = " notin ("
		}
		vs := make([]string, len(w.Values))
		for i, v := range w.Values {
			vs[i] = q(v)
		}
		return w.Subject + kw + strings.Join(vs, ",") + ")"
	}
	return w.Subject + " " + w.Op.String() + " " + q(w.Values[0])
}

// Every accepted --where, written back with its values quoted, parses to the same
// condition; every refused one points inside the argument.
func FuzzWhereRoundTrip(f *testing.F) {
	for _, s := range []string{
		"size>=-1.5", "phase in (a,'b c')", "! {.a}", ".a^=x", ".a'b=x", ".a(=b", `x="a\"b\\"`,
		`{.a[?(@.b=="c=d")]}=x`, "a notin (x)", "a=b c", "é=1", "a in ('x'é)", ".a[0]^='{'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := parseWhere(s)
		if err != nil {
			var ae *argError
			if !errors.As(err, &ae) {
				t.Fatalf("%q: error %T %v", s, err, err)
			}
			if ae.Offset < 0 || ae.Offset > len(s) {
				t.Fatalf("%q: offset %d outside [0, %d]", s, ae.Offset, len(s))
			}
			return
		}
		again := formatWhere(w)
		w2, err := parseWhere(again)
		if err != nil {
			t.Fatalf("%q parsed, but written back as %q it does not: %v", s, again, err)
		}
		if w.Subject != w2.Subject || w.Path != w2.Path || w.Op != w2.Op || w.NotIn != w2.NotIn ||
			!reflect.DeepEqual(w.Values, w2.Values) {
			t.Fatalf("%q and %q parse differently: %+v, %+v", s, again, *w, *w2)
		}
	})
}

// A Unicode space in an unquoted value (a no-break space pasted with it) is refused where
// it stands; quoted, it is part of the value.
func TestWhereUnicodeSpaceInValue(t *testing.T) {
	for _, arg := range []string{"phase=Running\u00a0", "phase in (Running\u2003,Failed)"} {
		_, err := parseWhere(arg)
		var ae *argError
		require.True(t, errors.As(err, &ae), "%q: %v", arg, err)
		assert.Contains(t, ae.Msg, "space character")
		assert.Equal(t, strings.Index(arg, "Running")+len("Running"), ae.Offset, arg)
	}
	w, err := parseWhere("phase='Running\u00a0'")
	require.NoError(t, err)
	assert.Equal(t, []string{"Running\u00a0"}, w.Values)
}
