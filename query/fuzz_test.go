package query_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// maxMessage bounds an error message whatever the input's size: user text is quoted cut to
// 256 bytes (at most 4 bytes of escape per byte, plus the syntax error's own excerpt).
const maxMessage = 4096

// FuzzConditionValidate: Validate never panics; an invalid condition is an *InvalidError
// naming the condition; a bad JSONPath carries its *jsonpath.SyntaxError with an offset
// inside the expression; messages stay short.
func FuzzConditionValidate(f *testing.F) {
	f.Add("size", false, int(query.GreaterThan), "2", "")
	f.Add("{.spec.size}", true, int(query.LessOrEqual), "1e999", "")
	f.Add("{.a[?(@.b==", true, int(query.Equal), "x", "")
	f.Add("color", false, int(query.In), "red", "blue")
	f.Add("v", false, 0, "1", "")
	f.Add(".spec.replicas", true, int(query.Exists), "", "")
	f.Fuzz(func(t *testing.T, subject string, isPath bool, op int, v1, v2 string) {
		c := query.Condition{Op: query.Op(op)}
		if isPath {
			c.Path = subject
		} else {
			c.Index = subject
		}
		for _, v := range []string{v1, v2} {
			if v != "" {
				c.Values = append(c.Values, v)
			}
		}
		_ = c.String()
		err := c.Validate()
		if err == nil {
			if !c.Op.Valid() || (c.Index == "") == (c.Path == "") {
				t.Fatalf("accepted %#v", c)
			}
			return
		}
		var inv *query.InvalidError
		if !errors.As(err, &inv) || !errors.Is(err, query.ErrInvalidQuery) {
			t.Fatalf("error of the wrong kind for %#v: %v", c, err)
		}
		if inv.Condition != c.String() {
			t.Fatalf("error names %q, not the condition %q", inv.Condition, c.String())
		}
		if len(err.Error()) > maxMessage {
			t.Fatalf("message of %d bytes for a condition of %d", len(err.Error()), len(c.String()))
		}
		var se *jsonpath.SyntaxError
		if errors.As(err, &se) {
			if !isPath || se.Expr != c.Path || se.Offset < 0 || se.Offset > len(c.Path) {
				t.Fatalf("syntax error %+v for path %q", se, c.Path)
			}
		}
	})
}

// FuzzParseNumber: no panic; a number is finite; an error names the input (cut short).
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-3", "2.5", "1e999", "-Inf", "NaN", "0x1p-2", "9223372036854775808", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := query.ParseNumber(s)
		if err == nil {
			if v := n.Float64(); math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("%q parsed as %v", s, v)
			}
			if n.Compare(n) != 0 {
				t.Fatalf("%q does not equal itself", s)
			}
			return
		}
		msg := err.Error()
		if len(msg) > maxMessage {
			t.Fatalf("message of %d bytes", len(msg))
		}
		if len(s) <= 64 && !strings.Contains(msg, s) && !strings.Contains(msg, `\`) {
			t.Fatalf("error %q does not name %q", msg, s)
		}
	})
}
