package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/query"
)

var testIndexes = map[string]bool{"size": true, "phase": true, "owner-uid": true, "label": true}

// Every accepted form, and the conditions it builds.
func TestWhereForms(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []query.Condition
	}{
		{"phase=Running", []query.Condition{query.Eq("phase", "Running")}},
		{"phase==Running", []query.Condition{query.Eq("phase", "Running")}},
		{" phase = Running ", []query.Condition{query.Eq("phase", "Running")}},
		{"phase!=Running", []query.Condition{query.NotEq("phase", "Running")}},
		{"phase in (Running,Pending)", []query.Condition{query.OneOf("phase", "Running", "Pending")}},
		{"phase in(Running, 'Pen ding')", []query.Condition{query.OneOf("phase", "Running", "Pen ding")}},
		{"phase notin (Running,Pending)", []query.Condition{query.NotEq("phase", "Running"), query.NotEq("phase", "Pending")}},
		{"size<3", []query.Condition{query.Lt("size", "3")}},
		{"size<=3", []query.Condition{query.Le("size", "3")}},
		{"size>3", []query.Condition{query.Gt("size", "3")}},
		{"size>=-1.5", []query.Condition{query.Ge("size", "-1.5")}},
		{"size", []query.Condition{query.Has("size")}},
		{"!size", []query.Condition{query.HasNot("size")}},
		{"phase^=Run", []query.Condition{query.HasPrefix("phase", "Run")}},
		{"phase ^= 'Run ning'", []query.Condition{query.HasPrefix("phase", "Run ning")}},
		{"{.spec.nodeName}^=worker-", []query.Condition{query.Where("{.spec.nodeName}", query.Prefix, "worker-")}},
		{"phase^==x", nil}, // an unknown operator: refused below
		{"! size", []query.Condition{query.HasNot("size")}},
		{"owner-uid=0d6c-11", []query.Condition{query.Eq("owner-uid", "0d6c-11")}},
		{`label="app=web"`, []query.Condition{query.Eq("label", "app=web")}},
		{`phase='it''s'`, nil}, // two quoted strings: refused below
		{"{.spec.size}>3", []query.Condition{query.Where("{.spec.size}", query.GreaterThan, "3")}},
		{".spec.size >= 3", []query.Condition{query.Where("{.spec.size}", query.GreaterOrEqual, "3")}},
		{"{.status.phase}=Running", []query.Condition{query.Where("{.status.phase}", query.Equal, "Running")}},
		{"{.status.phase} in (a,b)", []query.Condition{query.Where("{.status.phase}", query.In, "a", "b")}},
		{"{.status.phase} notin (a,b)", []query.Condition{query.Where("{.status.phase}", query.NotEqual, "a"), query.Where("{.status.phase}", query.NotEqual, "b")}},
		{"{.metadata.ownerReferences}", []query.Condition{query.Where("{.metadata.ownerReferences}", query.Exists)}},
		{"!{.metadata.ownerReferences}", []query.Condition{query.Where("{.metadata.ownerReferences}", query.NotExists)}},
		{`{.spec.containers[?(@.name=="web")].image}=nginx`, []query.Condition{query.Where(`{.spec.containers[?(@.name=="web")].image}`, query.Equal, "nginx")}},
		{`.metadata.labels['app.kubernetes.io/name']=web`, []query.Condition{query.Where(`{.metadata.labels['app.kubernetes.io/name']}`, query.Equal, "web")}},
		{`{.metadata.annotations.a\.b}="x y"`, []query.Condition{query.Where(`{.metadata.annotations.a\.b}`, query.Equal, "x y")}},
		{`phase=""`, []query.Condition{query.Eq("phase", "")}},
		{`phase="a\"b"`, []query.Condition{query.Eq("phase", `a"b`)}},
		{"image=nginx:1.27", nil}, // "image" is not an index: refused below
	} {
		t.Run(tc.arg, func(t *testing.T) {
			w, err := parseWhere(tc.arg)
			if tc.want == nil {
				if err == nil {
					_, err = w.conditions(testIndexes)
				}
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			got, err := w.conditions(testIndexes)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Every refused form, with the byte the error points at.
func TestWhereRejected(t *testing.T) {
	for _, tc := range []struct {
		arg    string
		offset int
		msg    string
	}{
		{"", 0, "empty condition"},
		{"   ", 3, "empty condition"},
		{"size=~big", 4, "=~ (regular expression match) is not supported"},
		{"size !~ big", 5, "!~ (regular expression match) is not supported"},
		{"size=~", 4, "=~ (regular expression match) is not supported"},
		{"size>3 extra", 7, `unexpected "extra" after the condition`},
		{"size>3,phase=Running", 6, `unexpected ",phase=Running" after the condition`},
		{"phase=Running Pending", 14, `unexpected "Pending" after the condition`},
		{"size>three", 5, `> compares numbers; "three" is not a number`},
		{"size<=", 6, "missing value after <="},
		{"size=", 5, "missing value after ="},
		{"size===3", 4, `unknown operator "==="`},
		{"size=>3", 4, `unknown operator "=>"`},
		{"size<>3", 4, `unknown operator "<>"`},
		{"size ~ 3", 5, "expected an operator"},
		{"size like 3", 5, "expected an operator"},
		{"!size=3", 5, "takes no operator"},
		{"phase in Running", 9, "in needs a parenthesized list"},
		{"phase in ()", 10, "in needs at least one value"},
		{"phase notin (a b)", 15, "expected ',' or ')'"},
		{"phase in (a,b", 13, "missing ')'"},
		{"phase='open", 6, "unterminated quoted value"},
		{"{.spec.size>3", 13, "missing '}'"},
		{"{.spec.size[}>3", 12, "bad JSONPath"},
		// {range} is a template's: refused as such, not as a range without its {end}.
		{"{range .items[*]}{end}", 0, "{range} and {end} are for -o jsonpath"},
		{"{ end}=3", 0, "{range} and {end} are for -o jsonpath"},
		{"spec.size>3", 0, `"spec.size" is neither an index name nor a JSONPath`},
		{"=3", 0, "expected an index name or a JSONPath"},
		{"!", 1, "missing an index name or a JSONPath"},
		{"nosuch=3", 0, `"nosuch" is not an index`},
		{"phase=a(b)", 7, "unexpected"},
		// A bound the query would refuse when it runs is refused here, with its offset.
		{`size>" 5"`, 5, `> compares numbers; " 5" is not a number`},
		{"size<='5\n'", 6, "is not a number"},
		{"size>1e999", 5, "is not a number"},
		// A bare path is a path: braces in it are an error, not a template.
		{".a{.b}=x", 2, "bad JSONPath"},
		{".a}=x", 2, "bad JSONPath"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			w, err := parseWhere(tc.arg)
			if err == nil {
				_, err = w.conditions(testIndexes)
			}
			require.Error(t, err)
			var ae *argError
			require.True(t, errors.As(err, &ae), "%T %v", err, err)
			assert.True(t, errors.Is(err, errWhere))
			assert.Contains(t, ae.Msg, tc.msg)
			assert.Equal(t, tc.offset, ae.Offset, "offset of %q in %q", ae.Msg, tc.arg)
		})
	}
}

// The caret of a refused --where sits under the byte the error names.
func TestWhereCaret(t *testing.T) {
	_, err := parseWhere("size=~big")
	var ae *argError
	require.True(t, errors.As(err, &ae))
	lines := strings.Split(formatArgError(ae), "\n")
	assert.Equal(t, "error: --where: =~ (regular expression match) is not supported; use =, !=, in (...) or notin (...)", lines[0])
	assert.Equal(t, "  --where size=~big", lines[1])
	assert.Equal(t, "  "+strings.Repeat(" ", strings.Index(lines[1], "=~")-2)+"^", lines[2])
}

func TestNeedsScan(t *testing.T) {
	assert.True(t, needsScan(nil))
	assert.True(t, needsScan([]query.Condition{query.NotEq("a", "b"), query.Where("{.a}", query.Equal, "b")}))
	assert.False(t, needsScan([]query.Condition{query.Has("a")}))
}

// The parser never panics and every error it returns points inside the argument.
func FuzzWhere(f *testing.F) {
	for _, s := range []string{"size>3", "phase in (a,b)", "!{.a}", "{.a[?(@.b=='c')]}=x", `x="a\"b"`, "a=~b", ".a.b notin (x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := parseWhere(s)
		if err != nil {
			var ae *argError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v", err, err)
			}
			if ae.Offset < 0 || ae.Offset > len(s) {
				t.Fatalf("offset %d outside %q", ae.Offset, s)
			}
			_ = formatArgError(ae)
			return
		}
		if w.Subject == "" {
			t.Fatalf("empty subject for %q", s)
		}
		cs, err := w.conditions(map[string]bool{w.Subject: true})
		if err != nil {
			t.Fatalf("conditions: %v", err)
		}
		// What the parser accepts, the query accepts: no error later, when it runs.
		for _, c := range cs {
			if err := c.Validate(); err != nil {
				t.Fatalf("%q parsed, but its condition is invalid: %v", s, err)
			}
		}
	})
}
