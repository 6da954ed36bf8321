package jsonpath

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestNumShape(t *testing.T) {
	for _, c := range []struct {
		text          string
		digits, exp10 int
	}{
		{"0", 0, 0}, {"-0.000", 0, 0}, {"0e-999", 0, 0}, {"7", 1, 0}, {"-123.4", 4, 2}, {"0.00123", 3, -3},
		{"1e21", 1, 21}, {"1E+21", 1, 21}, {"12.5e-3", 3, -2}, {"00012", 2, 1}, {"100", 3, 2},
		{"2.2250738585072011e-308", 17, -308}, {"615313260187962136346339e165", 24, 188},
		{"1e99999999999999999999", 1, 1_000_000}, {"1e-99999999999999999999", 1, -1_000_000},
	} {
		if d, e := numShape(c.text); d != c.digits || e != c.exp10 {
			t.Errorf("numShape(%s) = %d, %d, want %d, %d", c.text, d, e, c.digits, c.exp10)
		}
	}
}

// strconv.ParseFloat converts numbers with more than 19 significant digits,
// or near or beyond the ends of float64's range, the exact, slow way: 20 to
// 60 µs each for numbers of 20 to 30 bytes. They are charged as such: a list
// of 2,000 of them (48 KB) took 50 to 100 ms of CPU with the default budget, and
// now fails with the budget error (in about a millisecond), where normal
// numbers of the same length pass.
func TestSlowNumbersAreCharged(t *testing.T) {
	for _, n := range []string{"2.2250738585072011e-308", "4.9406564584124654e-324", "1e-320",
		"615313260187962136346339e165", "9" + strings.Repeat("1234567890", 80) + "e-1130"} {
		doc := `{"a":[` + strings.Repeat(n+",", 1999) + n + `]}`
		nums := make([]any, 2000)
		for i := range nums {
			nums[i] = json.Number(n)
		}
		for _, expr := range []string{"{.a[*]}", "{.a[?(@>0)]}", "{.a[?(@==1)]}", "{@}", "{..*}", "{range .a[*]}{end}"} {
			p := MustCompile(expr)
			ins := []any{JSON(doc), IndexedJSON{Doc: []byte(doc), Spans: BuildSpans(nil, []byte(doc), 0)}}
			if expr != "{range .a[*]}{end}" { // a decoded range does not convert its items
				ins = append(ins, map[string]any{"a": nums})
			}
			for _, in := range ins {
				_, err := p.ExecuteString(in)
				if !errors.Is(err, ErrBudgetExceeded) {
					t.Errorf("%s on 2,000 of %.30s (%T): error %v, want the budget error", expr, n, in, err)
				}
			}
		}
	}
	doc := `{"a":[` + strings.Repeat("1.2345678901234567e-7,", 1999) + `1]}`
	for _, expr := range []string{"{.a[*]}", "{.a[?(@>0)]}", "{@}"} {
		if _, err := MustCompile(expr).ExecuteString(JSON(doc)); err != nil {
			t.Errorf("%s on 2,000 normal numbers: %v", expr, err)
		}
	}
}

// numCost's shortcut (at most 19 bytes, no exponent: nothing to charge) gives what the
// full reading of the number gives, for every such number: at most 19 digits and a
// decimal exponent within ±18, both inside strconv's fast path.
func TestNumCostShortcutAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		b := []byte{}
		if r.IntN(2) == 0 {
			b = append(b, '-')
		}
		n := 1 + r.IntN(19-len(b))
		point := -1
		if n > 2 && r.IntN(2) == 0 {
			point = 1 + r.IntN(n-2)
		}
		for i := range n {
			if i == point {
				b = append(b, '.')
				continue
			}
			d := byte('0' + r.IntN(10))
			if r.IntN(3) == 0 {
				d = '0'
			}
			b = append(b, d)
		}
		s := string(b)
		if got, want := numCost(s), slowNumCost(s); got != want {
			t.Fatalf("numCost(%s) = %d, want %d", s, got, want)
		}
	}
}
