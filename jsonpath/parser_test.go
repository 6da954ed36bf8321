package jsonpath

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompile(t *testing.T) {
	cases := []struct {
		expr     string
		canon    string
		template bool
		single   bool
		fields   string // key paths joined: "a.b c" ; "-" for the whole object
	}{
		{`{.spec.nodeName}`, `{.spec.nodeName}`, false, true, "spec.nodeName"},
		{`.spec.nodeName`, `{.spec.nodeName}`, false, true, "spec.nodeName"},
		{`$.spec.nodeName`, `{.spec.nodeName}`, false, true, "spec.nodeName"},
		{`@.spec.nodeName`, `{.spec.nodeName}`, false, true, "spec.nodeName"},
		{`{$.spec['nodeName']}`, `{.spec.nodeName}`, false, true, "spec.nodeName"},
		{`{ .spec.nodeName }`, `{.spec.nodeName}`, false, true, "spec.nodeName"},
		{`{.spec.containers[*].image}`, `{.spec.containers[*].image}`, false, false, "spec.containers"},
		{`{.spec.containers.*.image}`, `{.spec.containers[*].image}`, false, false, "spec.containers"},
		{`{.status.conditions[?(@.type=="Ready")].status}`, `{.status.conditions[?(@.type=="Ready")].status}`, false, false, "status.conditions"},
		{`{.status.conditions[?( @.type == 'Ready' )].status}`, `{.status.conditions[?(@.type=="Ready")].status}`, false, false, "status.conditions"},
		{`{.items[?(.status.phase!="Running")]}`, `{.items[?(@.status.phase!="Running")]}`, false, false, "items"},
		// A quoted key with dots: the key, or its parts when the object lacks it (two key
		// paths, printed alike here: the second has five keys).
		{`{.metadata.labels['app.kubernetes.io/name']}`, `{.metadata.labels['app.kubernetes.io/name']}`, false, true, "metadata.labels.app.kubernetes.io/name metadata.labels.app.kubernetes.io/name"},
		{`{['a.b'].c}`, `{['a.b'].c}`, false, true, "a.b a.b"},
		// A union of keys: each key (and its parts), not the whole of what is above.
		{`{.x['a.b','c']}`, `{.x['a.b','c']}`, false, false, "x.a.b x.a.b x.c"},
		{`{['metadata.name','status.capacity']}`, `{['metadata.name','status.capacity']}`, false, false, "metadata.name metadata.name status.capacity status.capacity"},
		{`{.x['a','b'].c}`, `{.x['a','b'].c}`, false, false, "x.a x.b"},
		{`{.x['a',0]}`, `{.x['a',0]}`, false, false, "x"},
		{`{['a.']}`, `{['a\.']}`, false, true, "a."},
		// Escaped dots: one key only.
		{`{.metadata.labels.app\.kubernetes\.io/name}`, `{.metadata.labels['app\.kubernetes\.io/name']}`, false, true, "metadata.labels.app.kubernetes.io/name"},
		{`{['a\.b']}`, `{['a\.b']}`, false, true, "a.b"},
		// Escaped and plain dots in one key: the parts keep their escaped dots (fuzz).
		{`{['\..0']}`, `{['\..0']}`, false, true, "..0 ..0"},
		{`{["x\.y.z"]}`, `{['x\.y.z']}`, false, true, "x.y.z x.y.z"},
		{`{.metadata.labels["a'b"]}`, `{.metadata.labels['a\'b']}`, false, true, "metadata.labels.a'b"},
		{`{.a['\u00e9\n\\']}`, `{.a['é\n\\']}`, false, true, "a.é\n\\"},
		{`{.a.ключ.emoji🚀}`, `{.a.ключ['emoji🚀']}`, false, true, "a.ключ.emoji🚀"},
		{`{.a.b-c/d_e}`, `{.a.b-c/d_e}`, false, true, "a.b-c/d_e"},
		{`{.a[0][-1]}`, `{.a[0][-1]}`, false, true, "a"},
		{`{.a[1:2]}`, `{.a[1:2]}`, false, false, "a"},
		{`{.a[:2]}`, `{.a[:2]}`, false, false, "a"},
		{`{.a[1:]}`, `{.a[1:]}`, false, false, "a"},
		{`{.a[::2]}`, `{.a[::2]}`, false, false, "a"},
		{`{.a[-3:-1:1]}`, `{.a[-3:-1:1]}`, false, false, "a"},
		{`{.a[0:6:]}`, `{.a[0:6]}`, false, false, "a"},
		{`{.a[0,2]}`, `{.a[0,2]}`, false, false, "a"},
		{`{.a['x', "y",*, 3, 1:2]}`, `{.a['x','y',*,3,1:2]}`, false, false, "a"},
		{`{..name}`, `{..name}`, false, false, "-"},
		{`{...name}`, `{..name}`, false, false, "-"},
		{`{.a..['b.c']}`, `{.a..['b.c']}`, false, false, "a"},
		{`{.a..*}`, `{.a..[*]}`, false, false, "a"},
		{`{.a..[0]}`, `{.a..[0]}`, false, false, "a"},
		{`{..}`, `{..}`, false, false, "-"},
		{`{..['-1']}`, `{..['-1']}`, false, false, "-"},
		{`{..a-1}`, `{..a-1}`, false, false, "-"},
		{`{@}`, `{@}`, false, true, "-"},
		{`{$}`, `{@}`, false, true, "-"},
		{`{.a,.b.c}`, `{.a,.b.c}`, false, false, "a b.c"},
		{`{.a.b, .a}`, `{.a.b,.a}`, false, false, "a"},
		{`{"x"}`, `{"x"}`, false, true, ""},
		{`{'it\'s'}`, `{"it's"}`, false, true, ""},
		{`{3}`, `{3}`, false, true, ""},
		{`{-2.50}`, `{-2.5}`, false, true, ""},
		{`{3.0}`, `{3.0}`, false, true, ""},
		{`{99999999999999999999}`, `{100000000000000000000.0}`, false, true, ""},
		{`{true}`, `{true}`, false, true, ""},
		{`{.a[?(@.b>=-1.5)]}`, `{.a[?(@.b>=-1.5)]}`, false, false, "a"},
		{`{.a[?(@.b<+3)]}`, `{.a[?(@.b<3)]}`, false, false, "a"},
		{`{.a[?(@.b<=@.c)]}`, `{.a[?(@.b<=@.c)]}`, false, false, "a"},
		{`{.a[?("x"==@.c)]}`, `{.a[?("x"==@.c)]}`, false, false, "a"},
		{`{.a[?(@.b)]}`, `{.a[?(@.b)]}`, false, false, "a"},
		{`{.a[?(@)]}`, `{.a[?(@)]}`, false, false, "a"},
		{`{.a[?(@..b==true)]}`, `{.a[?(@..b==true)]}`, false, false, "a"},
		{`{.a[?(@.b[?(@.c>1)])]}`, `{.a[?(@.b[?(@.c>1)])]}`, false, false, "a"},
		{`{.a[?(@['x.y']=="z")]}`, `{.a[?(@['x.y']=="z")]}`, false, false, "a"},
		{`{.metadata.namespace}/{.metadata.name}`, `{.metadata.namespace}/{.metadata.name}`, true, false, "metadata.name metadata.namespace"},
		{`{.a}{.b}`, `{.a}{.b}`, true, false, "a b"},
		{`hello`, `hello`, true, false, ""},
		{`x{"}"}y}`, `x{"}"}y}`, true, false, ""},
		{`.{.a}`, `.{.a}`, true, false, "a"},
		{`{range .items[*]}{.metadata.name}{"\n"}{end}`, `{range .items[*]}{.metadata.name}{"\n"}{end}`, true, false, "items"},
		{`{ range  .a, .b }[{@}]{ end }`, `{range .a,.b}[{@}]{end}`, true, false, "a b"},
		{`{range.a[*]}{end}`, `{range .a[*]}{end}`, true, false, "a"},
		{`{range .a[*]}{range .b[*]}{.c}{end}{end}`, `{range .a[*]}{range .b[*]}{.c}{end}{end}`, true, false, "a"},
		{`{.range}{.end}{.true}`, `{.range}{.end}{.true}`, true, false, "end range true"},
		{`{.a.*b}`, `{.a['*b']}`, false, true, "a.*b"},
		{`{.a.\*}`, `{.a['*']}`, false, true, "a.*"},
		{`{.a(b)=c}`, `{['a(b)=c']}`, false, true, "a(b)=c"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			p, err := Compile(c.expr)
			require.NoError(t, err)
			assert.Equal(t, c.canon, p.String())
			assert.Equal(t, c.template, p.IsTemplate(), "IsTemplate")
			assert.Equal(t, c.single, p.SingleValued(), "SingleValued")
			var fields []string
			for _, f := range p.Fields() {
				if len(f) == 0 {
					fields = append(fields, "-")
				} else {
					fields = append(fields, strings.Join(f, "."))
				}
			}
			assert.Equal(t, c.fields, strings.Join(fields, " "), "Fields")

			again, err := Compile(p.String())
			require.NoError(t, err, "recompiling the canonical form")
			assert.Equal(t, p.String(), again.String())
			assert.Equal(t, p.IsTemplate(), again.IsTemplate())
			assert.Equal(t, p.SingleValued(), again.SingleValued())
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		expr   string
		offset int
		msg    string
	}{
		{``, 0, "empty expression"},
		{`{`, 1, "expected a path"},
		{`{.a`, 3, "unexpected end of expression, expected ',' or '}'"},
		{`{}`, 1, "unexpected '}'"},
		{`{.}`, 2, "expected a field name after '.'"},
		{`{.a.}`, 4, "expected a field name after '.'"},
		{`{.a .b}`, 4, "unexpected '.', expected ',' or '}'"},
		{`{.a 3}`, 4, "unexpected '3'"},
		{`{.a$.b}`, 3, "unexpected '$'"},
		{`{hello}`, 1, "unexpected 'h'"},
		{`{....a}`, 3, "invalid multiple recursive descent"},
		{`{..-1}`, 3, "a name after '..' cannot start with '-'"},
		{`{.a..+1}`, 5, "a name after '..' cannot start with '+'"},
		{`{..'x'}`, 3, "a name after '..' cannot start with '\\''"},
		{`{.a[?(@..-1==1)]}`, 9, "a name after '..' cannot start with '-'"},
		{`{.a[}`, 4, "expected an index, a slice"},
		{`{.a[0}`, 5, "expected ',' or ']'"},
		{`{.a[x]}`, 4, "unexpected 'x'"},
		{`{.a[1:2:3:4]}`, 9, "expected ',' or ']'"},
		{`{.a[::0]}`, 7, "slice step must be positive"},
		{`{.a[::-1]}`, 8, "slice step must be positive"},
		{`{.a[99999999999999999999]}`, 4, "index 99999999999999999999 is out of range"},
		{`{.a['b]}`, 4, "unterminated string"},
		{`{.a[?(@.b==1]}`, 12, "expected a comparison operator or ')'"},
		{`{.a[?(@.b==1)}`, 13, "expected ']' after a filter"},
		{`{.a[?@.b]}`, 5, "'(' after '?'"},
		{`{.a[?(@.b=1)]}`, 9, "unexpected '='"},
		{`{.a[?(@.b<>1)]}`, 9, `unknown operator "<>"`},
		{`{.a[?(@.b===1)]}`, 9, `unknown operator "==="`},
		{`{.a[?(@.b==)]}`, 11, "expected a path"},
		{`{.a[?()]}`, 6, "expected a path"},
		{`{.a[?(b==1)]}`, 6, "unexpected 'b'"},
		{`{.a,}`, 4, "expected a path"},
		{`{.a\`, 3, "backslash at end of expression"},
		{`{"abc}`, 1, "unterminated string"},
		// Malformed Go escapes are errors (client-go's too), not the letters after the backslash.
		{`{"\ud800"}`, 2, "invalid escape"},
		{`{"ab\u12"}`, 4, "invalid escape"},
		{`{'\x4g'}`, 2, "invalid escape"},
		{`{"\400"}`, 2, "invalid escape"},
		{`{"\0"}`, 2, "invalid escape"},
		{`{"\U00110000"}`, 2, "invalid escape"},
		{`{.a[?(@.s=="\ud800")]}`, 12, "invalid escape"},
		{`{.a['k\x']}`, 6, "invalid escape"},
		{`{1e5}`, 2, "unexpected 'e'"},
		{`{1.5.2}`, 4, "unexpected '.'"},
		{`{-}`, 2, "expected a digit"},
		{`{range .a}`, 0, "{range} without {end}"},
		{`x{range .a}{range .b}{end}`, 1, "{range} without {end}"},
		{`{range}{end}`, 6, "expected an expression after range"},
		{`{range "x"}{end}`, 7, "{range} needs a path"},
		{`{end}`, 0, "{end} without {range}"},
		{`{.a}{end}`, 4, "{end} without {range}"},
		{`{end x}`, 5, "expected '}'"},
		{`.a b`, 3, "unexpected 'b', expected ',' or end of expression"},
		{`.a}`, 2, "unexpected '}'"},
		{`{1e400}`, 2, "unexpected 'e'"},
		{`{` + strings.Repeat("9", 400) + `}`, 1, "is out of range"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			_, err := Compile(c.expr)
			require.Error(t, err)
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "%T", err)
			assert.True(t, errors.Is(err, ErrSyntax))
			assert.False(t, errors.Is(err, ErrTooComplex))
			assert.Equal(t, c.expr, se.Expr)
			assert.Equal(t, c.offset, se.Offset, se.Error())
			assert.Contains(t, se.Msg, c.msg)
		})
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	_, err := Compile(`{.a[?(@.b}`)
	require.Error(t, err)
	assert.Equal(t, "jsonpath: syntax error at offset 9: unexpected '}', expected one of == != < <= > >= or ')' in \"{.a[?(@.b}\"\n"+
		"\t{.a[?(@.b}\n"+
		"\t         ^", err.Error())

	// Long expressions are excerpted around the offset; control
	// characters are blanked so that the caret lines up.
	long := "{.a" + strings.Repeat("b", 100) + " x}"
	_, err = Compile(long)
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "jsonpath: syntax error at offset 104: unexpected 'x', expected ',' or '}'", lines[0])
	assert.Equal(t, "\t..."+strings.Repeat("b", 31)+" x}", lines[1])
	assert.Equal(t, "\t"+strings.Repeat(" ", 3+32)+"^", lines[2])

	_, err = Compile("{.a\n.b}")
	assert.Contains(t, err.Error(), "\n\t{.a .b}\n\t    ^")

	// A token quoted in the message is shortened: the message stays short whatever the
	// expression holds.
	digits := strings.Repeat("8", 3000)
	for _, expr := range []string{"{.a[?(@.b==" + digits + ")]}", "{.a[" + digits + "]}"} {
		_, err = Compile(expr)
		require.Error(t, err)
		lines := strings.Split(err.Error(), "\n")
		assert.Contains(t, lines[0], " is out of range")
		assert.Contains(t, lines[0], strings.Repeat("8", 32)+"... (3000 bytes)")
		assert.Less(t, len(err.Error()), 300, err.Error())
	}
}

func TestCompileLimits(t *testing.T) {
	t.Run("length", func(t *testing.T) {
		expr := "{.a" + strings.Repeat(".b", DefaultMaxLength) + "}"
		_, err := Compile(expr)
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrTooComplex))
		assert.True(t, errors.Is(err, ErrSyntax))
		var se *SyntaxError
		require.True(t, errors.As(err, &se))
		assert.Equal(t, DefaultMaxLength, se.Offset)

		_, err = CompileWithOptions(expr, Options{MaxLength: -1})
		assert.NoError(t, err)
		_, err = CompileWithOptions("{.abc}", Options{MaxLength: 5})
		assert.True(t, errors.Is(err, ErrTooComplex))
	})
	t.Run("canonical length", func(t *testing.T) {
		// {..*} prints as {..[*]}: 800 of them are 4,000 bytes, and their
		// canonical form 5,600, which could not be compiled again.
		expr := strings.Repeat("{..*}", 800)
		_, err := Compile(expr)
		require.True(t, errors.Is(err, ErrTooComplex), "%v", err)
		assert.Contains(t, err.Error(), "canonical form")
		p, err := CompileWithOptions(expr, Options{MaxLength: -1})
		require.NoError(t, err)
		assert.Len(t, p.String(), 5600)
		// Up to the limit, the canonical form compiles with the defaults.
		expr = strings.Repeat("{..*}", DefaultMaxLength/7)
		p, err = Compile(expr)
		require.NoError(t, err)
		q, err := Compile(p.String())
		require.NoError(t, err)
		assert.Equal(t, p.String(), q.String())
	})
	t.Run("nesting", func(t *testing.T) {
		nest := func(n int) string {
			return "{.a" + strings.Repeat("[?(@.a", n) + strings.Repeat(")]", n) + "}"
		}
		_, err := Compile(nest(DefaultMaxNesting))
		assert.NoError(t, err)
		_, err = Compile(nest(DefaultMaxNesting + 1))
		assert.True(t, errors.Is(err, ErrTooComplex), "%v", err)

		ranges := strings.Repeat("{range .a}", 3) + strings.Repeat("{end}", 3)
		_, err = CompileWithOptions(ranges, Options{MaxNesting: 3})
		assert.NoError(t, err)
		_, err = CompileWithOptions(ranges, Options{MaxNesting: 2})
		assert.True(t, errors.Is(err, ErrTooComplex), "%v", err)

		// The parser's recursion is bounded even for huge inputs.
		_, err = CompileWithOptions(nest(200000), Options{MaxLength: -1, MaxNesting: 1000})
		assert.True(t, errors.Is(err, ErrTooComplex), "%v", err)
	})
	t.Run("options", func(t *testing.T) {
		for _, n := range []int{-1, 1001} {
			_, err := CompileWithOptions("{.a}", Options{MaxNesting: n})
			assert.True(t, errors.Is(err, ErrInvalidOptions), "%v", err)
		}
	})
}
