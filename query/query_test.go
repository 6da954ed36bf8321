package query_test

import (
	"context"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

func TestConditionString(t *testing.T) {
	for _, tt := range []struct {
		c    query.Condition
		want string
	}{
		{query.Eq("color", "red"), "color=red"},
		{query.OneOf("color", "red", "blue"), "color in (red,blue)"},
		{query.NotEq("color", "red"), "color!=red"},
		{query.Has("owner"), "owner"},
		{query.HasNot("owner"), "!owner"},
		{query.Le("size", "3"), "size<=3"},
		{query.Where("{.spec.size}", query.GreaterThan, "2"), "{.spec.size}>2"},
		// An invalid operator is visible as such (it printed as "vOp(0)1").
		{query.Condition{Index: "v", Values: []string{"1"}}, "v <invalid Op(0)> 1"},
		{query.Condition{Index: "v", Op: 42}, "v <invalid Op(42)>"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.c.String())
		})
	}
	assert.False(t, query.Op(0).Valid())
	assert.True(t, query.GreaterOrEqual.Valid())
}

func TestConditionValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    query.Condition
		want string // "" for a valid condition; else the whole message
	}{
		{"eq", query.Eq("color", "red"), ""},
		{"in", query.OneOf("color", "red"), ""},
		{"exists", query.Has("owner"), ""},
		{"integer bound", query.Gt("size", "-3"), ""},
		{"float bound", query.Lt("size", "2.5e3"), ""},
		{"where", query.Where("{.spec.size}", query.GreaterThan, "2"), ""},
		{"zero op", query.Condition{Index: "v", Values: []string{"1"}},
			`invalid query condition "v <invalid Op(0)> 1": operator Op(0) is not one of the query.Op constants`},
		{"no subject", query.Condition{Op: query.Equal, Values: []string{"1"}},
			`invalid query condition "=1": a condition needs exactly one of an index name and a JSONPath`},
		{"both subjects", query.Condition{Index: "a", Path: "{.a}", Op: query.Exists},
			`invalid query condition "{.a}": a condition needs exactly one of an index name and a JSONPath`},
		{"empty in", query.OneOf("color"), `invalid query condition "color in ()": in needs at least one value`},
		{"exists with value", query.Condition{Index: "a", Op: query.Exists, Values: []string{"x"}},
			`invalid query condition "a": exists takes no value`},
		{"two values", query.Condition{Index: "a", Op: query.Equal, Values: []string{"x", "y"}},
			`invalid query condition "a=x,y": = takes one value, got 2`},
		{"not a number", query.Gt("size", "big"), `invalid query condition "size>big": bad bound: "big" is not a number`},
		// 1e999 was refused while -Inf was accepted: both are refused now, for the same reason.
		{"overflow", query.Gt("size", "1e999"),
			`invalid query condition "size>1e999": bad bound: "1e999" is out of range: numeric comparisons take finite numbers`},
		{"minus infinity", query.Gt("size", "-Inf"),
			`invalid query condition "size>-Inf": bad bound: "-Inf" is not a finite number: numeric comparisons take finite numbers`},
		{"NaN", query.Le("size", "NaN"),
			`invalid query condition "size<=NaN": bad bound: "NaN" is not a finite number: numeric comparisons take finite numbers`},
		// NonScalar marks map- and list-valued fields: Equal on it matched them, although
		// such a field has "no value that Equal could match".
		{"non-scalar eq", query.Eq("x", query.NonScalar),
			`invalid query condition "x=\x00non-scalar": query.NonScalar is not a value to compare with: use Exists or NotExists`},
		{"non-scalar in", query.OneOf("x", "a", query.NonScalar),
			`invalid query condition "x in (a,\x00non-scalar)": query.NonScalar is not a value to compare with: use Exists or NotExists`},
		{"non-scalar where", query.Where("{.x}", query.NotEqual, query.NonScalar),
			`invalid query condition "{.x}!=\x00non-scalar": query.NonScalar is not a value to compare with: use Exists or NotExists`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
			require.ErrorIs(t, err, query.ErrInvalidQuery)
			var inv *query.InvalidError
			require.ErrorAs(t, err, &inv)
			assert.Equal(t, tt.c.String(), inv.Condition)
		})
	}
}

func TestParseNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "+5", "9223372036854775807", "9223372036854775808", "2.5", "1e308", "0x1p-2", "0e-999", "-0.000e-400", "0x0p-2000", "5e-324"} {
		_, err := query.ParseNumber(s)
		assert.NoError(t, err, s)
	}
	for _, s := range []string{"", " 1", "1e", "Inf", "+Inf", "-Inf", "infinity", "NaN", "1e999", "-1e999", "0x1p9999", "-1e-999", "1e-400", "0.0001e-320", "0x1p-1080", "0x.8p-1074"} {
		_, err := query.ParseNumber(s)
		assert.Error(t, err, s)
		assert.Contains(t, err.Error(), `"`+s+`"`, "the error names the input")
	}
	n := func(s string) query.Number {
		v, err := query.ParseNumber(s)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, -1, n("9007199254740992").Compare(n("9007199254740993")), "integers compare exactly")
	assert.Equal(t, 0, n("2").Compare(n("2.0")))
	assert.Equal(t, 1, n("2.5").Compare(n("2")))
	assert.Equal(t, 2.5, n("2.5").Float64())
}

// NumberOf, which reads the values a comparison visits, takes exactly what ParseNumber
// takes, as the same number. It took a value "1e-400" for 0, so that "<= 0" matched it and
// "> 0" did not, where ParseNumber refuses the same text as a bound.
func TestNumberOfAgreesWithParseNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "+5", "2.5", "1e3", "0x1p-2", "1_000", "9223372036854775808", "5e-324", "0e-999",
		"-0.000e-400", "0x0p-2000", "1e-400", "-1e-400", "0.0001e-320", "0x1p-1080", "-0x.8p-1074", "1e999", "Inf", "NaN", "", "a"} {
		want, err := query.ParseNumber(s)
		got, ok := query.NumberOf(s)
		assert.Equal(t, err == nil, ok, "%q: ParseNumber says %v", s, err)
		if ok && err == nil {
			assert.Equal(t, 0, got.Compare(want), s)
		}
	}
}

// An integer and a float64 compare by their exact values. Rounding the integer to a float64
// made -18014398509481986 equal to -18014398509481985.5 and that equal to
// -18014398509481985, while the two integers differ: an order that is not one, with which
// a sorted, paged query skipped an object.
func TestNumberCompareIsATotalOrder(t *testing.T) {
	n := func(s string) query.Number {
		v, err := query.ParseNumber(s)
		require.NoError(t, err)
		return v
	}
	// b is held as the float64 nearest it, -18014398509481984.
	a, b, c := n("-18014398509481986"), n("-18014398509481985.5"), n("-18014398509481985")
	assert.Equal(t, -1, a.Compare(c))
	assert.Equal(t, -1, c.Compare(b))
	assert.Equal(t, -1, a.Compare(b))
	assert.Equal(t, 1, b.Compare(c))
	// Against exact rational arithmetic, near the edges of float64's integers and int64's range.
	var texts []string
	for _, base := range []string{"9007199254740992", "18014398509481984", "9223372036854775807", "-9223372036854775808"} {
		bi, _ := new(big.Int).SetString(base, 10)
		for d := int64(-3); d <= 3; d++ {
			v := new(big.Int).Add(bi, big.NewInt(d))
			texts = append(texts, v.String(), v.String()+".5", v.String()+"e0")
		}
	}
	texts = append(texts, "9223372036854775808", "-9223372036854775809", "1e19", "-1e19", "0", "-0", "0.5")
	exact := func(s string) *big.Rat {
		f, err := strconv.ParseFloat(s, 64)
		if i, ierr := strconv.ParseInt(s, 10, 64); ierr == nil {
			return new(big.Rat).SetInt64(i)
		}
		require.NoError(t, err)
		return new(big.Rat).SetFloat64(f) // what ParseNumber holds for a non-integer text
	}
	for _, x := range texts {
		for _, y := range texts {
			want := exact(x).Cmp(exact(y))
			assert.Equal(t, want, n(x).Compare(n(y)), "%s vs %s", x, y)
		}
	}
}

// A JSONPath error in a condition says where the expression is wrong (it said only "bad
// JSONPath"), and errors.As reaches the *jsonpath.SyntaxError with its offset.
func TestJSONPathErrorHasTheOffset(t *testing.T) {
	c := query.Where("{.spec[}", query.Equal, "x")

	check := func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, query.ErrInvalidQuery)
		var se *jsonpath.SyntaxError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, c.Path, se.Expr)
		assert.Equal(t, 7, se.Offset)
		var inv *query.InvalidError
		require.ErrorAs(t, err, &inv)
		assert.Equal(t, c.String(), inv.Condition)
		assert.Contains(t, err.Error(), `invalid query condition "{.spec[}=x": bad JSONPath: jsonpath: syntax error at offset 7`)
	}
	t.Run("Validate", func(t *testing.T) { check(t, c.Validate()) })

	// The error the store returns when a query runs (the message of the issue).
	t.Run("store", func(t *testing.T) {
		s := store.New(store.Options{})
		_, _, _, err := s.Query(context.Background(), query.Query{Conditions: []query.Condition{c}, Scan: true}, store.QueryOptions{
			PathFunc: func(expr string) (store.IndexFunc, error) {
				_, err := jsonpath.Compile(expr)
				return nil, err
			},
		})
		check(t, err)
	})
}

func TestQueryValidate(t *testing.T) {
	require.NoError(t, query.Query{Conditions: []query.Condition{query.Eq("a", "b")}, Limit: 10}.Validate())
	require.NoError(t, query.Query{}.Validate())
	err := query.Query{Limit: -1}.Validate()
	require.ErrorIs(t, err, query.ErrInvalidQuery)
	assert.EqualError(t, err, "invalid query: Limit must not be negative, got -1")
	err = query.Query{Conditions: []query.Condition{query.Eq("a", "b"), query.Gt("n", "x")}}.Validate()
	assert.EqualError(t, err, `invalid query condition "n>x": bad bound: "x" is not a number`)

	// AnyOf groups are checked as the conditions are.
	require.NoError(t, query.Query{AnyOf: [][]query.Condition{{query.Eq("a", "b")}, {query.Has("c")}}}.Validate())
	err = query.Query{AnyOf: [][]query.Condition{{query.Eq("a", "b")}, {}}}.Validate()
	require.ErrorIs(t, err, query.ErrInvalidQuery)
	assert.EqualError(t, err, "invalid query: AnyOf group 1 needs at least one condition")
	err = query.Query{AnyOf: [][]query.Condition{{query.Eq("a", "b")}, {query.Has("c"), query.Le("n", "1e999")}}}.Validate()
	require.ErrorIs(t, err, query.ErrInvalidQuery)
	assert.ErrorContains(t, err, `invalid query condition "n<=1e999"`)

	// Descending without SortBy needs no cache to be refused.
	err = query.Query{Conditions: []query.Condition{query.Eq("a", "b")}, Descending: true}.Validate()
	require.ErrorIs(t, err, query.ErrInvalidQuery)
	assert.EqualError(t, err, "invalid query: Descending needs SortBy")
	require.NoError(t, query.Query{SortBy: "a", Descending: true}.Validate())
}

// A 100 KB input makes a message of a few hundred bytes, not 200 KB.
func TestHugeInputIsQuotedShort(t *testing.T) {
	huge := strings.Repeat("é", 50_000) // 100 KB, two bytes per character
	err := query.Condition{Index: huge, Op: query.GreaterThan, Values: []string{"x"}}.Validate()
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 1000, "%.300s", err.Error())
	assert.Contains(t, err.Error(), `"`+strings.Repeat("é", 128)+`"...`, "cut at a character boundary")
	var inv *query.InvalidError
	require.ErrorAs(t, err, &inv)
	assert.Len(t, inv.Condition, len(huge)+2, "the field keeps the whole condition")

	_, err = query.ParseNumber(strings.Repeat("9", 100_000) + "x")
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 1000)
}
