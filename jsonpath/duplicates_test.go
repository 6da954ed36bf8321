package jsonpath

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// dupDocs have duplicate keys at every level, spelled as is and with
// escapes, with values of different types.
var dupDocs = []string{
	`{"a":1,"a":2}`,
	`{"a":{"b":1,"c":[1]},"x":"y","a":{"b":2}}`,
	`{"a":{"b":1},"a":"scalar","b":[{"k":"x","k":"y"},{"k":"z"}],"b":[{"k":"w","v":1,"k":"v"}]}`,
	`{"m":{"z":1,"a":2,"z":3,"b":{"z":{"z":4},"z":[5]}},"m2":{"\u0061":1,"a":2,"a":3,"\u0061":4}}`,
	`{"p/q":1,"p\/q":2,"x":{"p/q":3},"x":{"p\/q":4,"p/q":5}}`,
	`{"l":[{"t":"A","s":"1","t":"B"},{"t":"B","s":"2"},{"s":"3","t":"A","t":"A"}],"n":{"a":{"a":{"a":1}},"a":{"a":2}}}`,
	`{"s":"\"a\":9","a":1,"q":"\"a\"","a":[1,2,{"a":3,"a":4}]}`,
	`{"e":{},"e":{"x":1},"f":[],"f":[1,2,3],"g":null,"g":false}`,
	`{"k\\":1,"k\\":2,"\n":1,"\n":2,"\"":1,"\u0022":2}`,
}

var dupExprs = []string{
	`{.a}`, `{.a.b}`, `{.a.c[0]}`, `{.x}`, `{@}`, `{.*}`, `{.m.*}`, `{.m.b.*}`, `{.m2.a}`, `{.m2.*}`,
	`{..z}`, `{..a}`, `{..*}`, `{..k}`, `{.b[*].k}`, `{.b[0].k}`, `{.b[-1].k}`, `{['p/q']}`, `{.x['p/q']}`,
	`{.l[?(@.t=="A")].s}`, `{.l[?(@.t=="B")].s}`, `{.l[?(@.t)].t}`, `{.n..a}`, `{.a[*]}`, `{.a[2].a}`,
	`{.b[?(@.k=="v")].v}`, `{range .l[*]}{.t}:{.s};{end}`, `{.e}{.f}{.g}`, `{.e.x}`, `{.f[-1]}`,
	`{['a','a','x']}`, `{['k\\']}`, `{["\n"]}`, `{['"']}`, `{.m[*]}`, `{.l[0]}`,
}

// TestDuplicateKeysLastWins checks that evaluation on raw JSON with
// duplicate keys gives what it gives on the document decoded by
// encoding/json (numbers as json.Number, so that kinds compare) and by
// Kubernetes' decoder: the last of duplicate keys wins, for field lookups,
// wildcards, recursive descent, filters and printing.
func TestDuplicateKeysLastWins(t *testing.T) {
	for _, doc := range dupDocs {
		var std any
		d := json.NewDecoder(bytes.NewReader([]byte(doc)))
		d.UseNumber()
		require.NoError(t, d.Decode(&std), doc)
		var k8s any
		require.NoError(t, k8sjson.Unmarshal([]byte(doc), &k8s), doc)
		for _, expr := range dupExprs {
			p := MustCompile(expr)
			want := evalObj(p, std)
			assert.Equal(t, want, evalObj(p, k8s), "%s on %s: encoding/json and Kubernetes' decoder differ", expr, doc)
			assert.Equal(t, want, evalRaw(p, []byte(doc)), "%s on %s", expr, doc)
			assert.Equal(t, want, evalObj(generic(p), std), "%s on %s: generic evaluator", expr, doc)
			if vs, err := p.Eval(JSON(doc)); err == nil {
				for i, v := range vs {
					if v.Kind() == KindMap || v.Kind() == KindList {
						ws, _ := p.Eval(k8s)
						assert.Equal(t, ws[i].Interface(), v.Interface(), "%s on %s: Interface", expr, doc)
					}
				}
			}
		}
	}
	// The example of the issue: the first "a" would be 1.
	vs, err := MustCompile(`{.a}`).Eval(JSON(`{"a":1,"a":2}`))
	require.NoError(t, err)
	assert.Equal(t, "int:2", joined(vs))
	// Long names skip the quick search.
	long := strings.Repeat("k", 70)
	vs, err = MustCompile(`{['` + long + `']}`).Eval(JSON(`{"` + long + `":1,"x":0,"` + long + `":2}`))
	require.NoError(t, err)
	assert.Equal(t, "int:2", joined(vs))
}

// TestMayRepeat checks the shortcut of member lookups: the scan stops at
// the first occurrence of a key only when the rest of the object cannot
// hold another.
func TestMayRepeat(t *testing.T) {
	seg := func(name string) *segment {
		s := &segment{kind: segField, name: name}
		s.quoted, s.anchor = quotedName(name)
		return s
	}
	cases := []struct {
		rest, name string
		want       bool
	}{
		{`,"b":2}`, "a", false},
		{`,"a":2}`, "a", true},
		{` , "b" : 2 , "a" : 3 }`, "a", true},
		{`,"b":"a"}`, "a", false},     // inside a string value
		{`,"b":{"a":1}}`, "a", false}, // inside a nested object
		{`,"b":[{"a":1}],"c":"\"a\"","a":3}`, "a", true},
		{`,"b":[{"a":1}],"c":"\"a\""}`, "a", false},
		{`,"x\"a":1}`, "a", false}, // inside a key
		{`,"ab":1,"ba":2}`, "a", false},
		{`,"\u0061":1}`, "a", true},
		{`,"b":"\u00e9"}`, "a", true}, // any \u: a false alarm, but allowed
		{`,"b":"\"\\\n"}`, "a", false},
		{`,"b":"x\\u"}`, "a", false}, // an escaped backslash, then u
		{`,"p\/q":1}`, "p/q", true},
		{`,"b":1}`, `a"b`, true}, // names that need escapes always rescan
		{`,"b":"` + strings.Repeat("x", 1000) + `"}`, strings.Repeat("x", 40), true}, // too many near misses: rescan
		{`,"x":"y"a"}`, "a", false}, // not valid JSON: any answer, but an answer
		{`}`, "a", false},
		{`}  `, "a", false},
		{`,"b":"`, "a", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, mayRepeat(c.rest, seg(c.name)), "%s after %q", c.rest, c.name)
	}
}
