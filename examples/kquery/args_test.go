package main

import (
	"errors"
	"io"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/query"
)

func TestParseWhere(t *testing.T) {
	tests := []struct {
		arg     string
		subject string
		op      query.Op
		value   string
	}{
		{"size=3", "size", query.Equal, "3"},
		{"size==3", "size", query.Equal, "3"},
		{"phase!=Running", "phase", query.NotEqual, "Running"},
		{"size<3", "size", query.LessThan, "3"},
		{"size<=3", "size", query.LessOrEqual, "3"},
		{"size>2.5", "size", query.GreaterThan, "2.5"},
		{"size>=-1", "size", query.GreaterOrEqual, "-1"},
		{"size", "size", query.Exists, ""},
		{"!size", "size", query.NotExists, ""},
		{" size = 3", "size", query.Equal, " 3"}, // a value is taken as written
		{"owner=", "owner", query.Equal, ""},
		{"url=a=b", "url", query.Equal, "a=b"},
		{"{.spec.size}>3", "{.spec.size}", query.GreaterThan, "3"},
		{".spec.size>3", ".spec.size", query.GreaterThan, "3"},
		{"!{.status.phase}", "{.status.phase}", query.NotExists, ""},
		// Operators inside a path's brackets, parentheses and quotes belong to the path.
		{`{.spec.containers[?(@.name=="web")].image}=nginx`, `{.spec.containers[?(@.name=="web")].image}`, query.Equal, "nginx"},
		{`{.metadata.labels['a=b']}!=x`, `{.metadata.labels['a=b']}`, query.NotEqual, "x"},
		{`.metadata.labels['k>1']`, `.metadata.labels['k>1']`, query.Exists, ""},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			w, err := parseWhere(tt.arg)
			require.NoError(t, err)
			assert.Equal(t, tt.subject, w.Subject)
			assert.Equal(t, tt.op, w.Op)
			assert.Equal(t, tt.value, w.Value)
		})
	}
}

func TestParseWhereErrors(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"", "missing NAME"},
		{"=3", "missing NAME"},
		{"!", "missing NAME"},
		{"!size=3", "!NAME takes no operator"},
		{"size>big", `> needs a number, got "big"`},
		{"size<", `< needs a number, got ""`},
		{"si!ze", "unexpected '!'"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			_, err := parseWhere(tt.arg)
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestWhereCondition(t *testing.T) {
	indexes := map[string]bool{"size": true, "phase": true}
	cond := func(arg string) (query.Condition, error) {
		w, err := parseWhere(arg)
		require.NoError(t, err)
		return w.condition(indexes)
	}
	c, err := cond("size>3")
	require.NoError(t, err)
	assert.Equal(t, query.Gt("size", "3"), c)
	c, err = cond("!phase")
	require.NoError(t, err)
	assert.Equal(t, query.HasNot("phase"), c)
	c, err = cond("{.spec.color}=red")
	require.NoError(t, err)
	assert.Equal(t, query.Where("{.spec.color}", query.Equal, "red"), c)

	_, err = cond("color=red")
	var ue *usageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), `"color" is not an --index name (have: phase, size)`)

	_, err = cond("{.spec.color=red")
	var ee *exprError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "--where", ee.Flag)
	assert.Equal(t, 0, ee.Offset)
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"wdg", "--index", "size={.spec.size}", "--index", "img={.spec.containers[*].image}",
		"--where", "size>3", "--where", ".spec.color=red", "-l", "app=demo", "-A", "-o", "name", "--limit", "5",
		"-w", "--context", "ctx", "--kubeconfig", "/k", "-n", "ns1"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "wdg", o.Resource)
	require.Len(t, o.Indexes, 2)
	assert.Equal(t, "img", o.Indexes[1].Name)
	assert.Equal(t, "{.spec.containers[*].image}", o.Indexes[1].Expr, "a JSONPath with commas or brackets is kept whole")
	assert.Equal(t, []query.Condition{query.Gt("size", "3"), query.Where(".spec.color", query.Equal, "red")}, o.Conditions)
	assert.Equal(t, "app=demo", o.Selector)
	assert.True(t, o.AllNamespaces)
	assert.Equal(t, "name", o.Output)
	assert.Equal(t, 5, o.Limit)
	assert.True(t, o.Watch)
	assert.Equal(t, "ctx", o.Overrides.CurrentContext)
	assert.Equal(t, "ns1", o.Overrides.Context.Namespace)
	assert.Equal(t, "/k", o.Rules.ExplicitPath)

	o, err = parseArgs([]string{"pods"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "table", o.Output)
	assert.False(t, o.AllNamespaces)
	assert.Empty(t, o.Overrides.Context.Namespace, "no -n: the context's namespace applies")

	var help testWriter
	_, err = parseArgs([]string{"--help"}, &help)
	assert.True(t, errors.Is(err, pflag.ErrHelp))
	assert.Contains(t, help.String(), "Usage:\n  kquery RESOURCE")
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no resource", nil, "expected exactly one RESOURCE"},
		{"two resources", []string{"pods", "nodes"}, "expected exactly one RESOURCE"},
		{"unknown flag", []string{"pods", "--bogus"}, "unknown flag: --bogus"},
		{"bad output", []string{"pods", "-o", "yaml"}, `--output "yaml": must be table, json or name`},
		{"negative limit", []string{"pods", "--limit", "-1"}, "--limit must not be negative"},
		{"index without expr", []string{"pods", "--index", "node"}, "want NAME=JSONPATH"},
		{"index name with dot", []string{"pods", "--index", ".a={.b}"}, "must not contain"},
		{"duplicate index", []string{"pods", "--index", "a={.b}", "--index", "a={.c}"}, `the name "a" is already used`},
		{"where on unknown name", []string{"pods", "--where", "node=x"}, `"node" is not an --index name (there are none)`},
		{"bad where", []string{"pods", "--index", "n={.a}", "--where", "n>x"}, `> needs a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseArgs(tt.args, io.Discard)
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseArgsBadJSONPath(t *testing.T) {
	_, err := parseArgs([]string{"pods", "--index", "node={.spec.nodeName"}, io.Discard)
	var ee *exprError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "--index", ee.Flag)
	assert.Equal(t, "node={.spec.nodeName", ee.Arg)
	assert.Equal(t, len("node="), ee.Offset, "the expression starts after NAME=")
	assert.Equal(t, len("{.spec.nodeName"), ee.Err.Offset, "the error is at the end of the expression")
}

func TestNeedsScan(t *testing.T) {
	assert.False(t, needsScan([]query.Condition{query.Eq("a", "1")}))
	assert.False(t, needsScan([]query.Condition{query.NotEq("a", "1"), query.Gt("b", "1")}))
	assert.True(t, needsScan(nil), "no condition: list everything")
	assert.True(t, needsScan([]query.Condition{query.NotEq("a", "1"), query.HasNot("b")}), "negations find no candidates")
	assert.True(t, needsScan([]query.Condition{query.Where("{.a}", query.Equal, "1")}), "a JSONPath is evaluated on every object")
}
