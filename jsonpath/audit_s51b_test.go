package jsonpath

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kindex/kindex/internal/safecall"
)

func TestOptionsOutOfRange(t *testing.T) {
	bad := map[string]Options{
		"negative nesting":  {MaxNesting: -1},
		"min int nesting":   {MaxNesting: math.MinInt},
		"nesting over 1000": {MaxNesting: 1001},
		"max int nesting":   {MaxNesting: math.MaxInt},
	}
	for name, o := range bad {
		t.Run(name, func(t *testing.T) {
			err := safecall.Call(t, func() error { _, err := CompileWithOptions("{.a}", o); return err })
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "MaxNesting") {
				t.Fatalf("CompileWithOptions(%+v) = %v, want ErrInvalidOptions naming MaxNesting", o, err)
			}
		})
	}
	// Every other value is in range: negative means no limit, and extremes must not wrap.
	doc := map[string]any{"a": map[string]any{"b": []any{1.0, 2.0, 3.0}}}
	for _, o := range []Options{
		{MaxLength: math.MinInt, MaxSteps: math.MinInt, MaxResults: math.MinInt},
		{MaxLength: math.MaxInt, MaxSteps: math.MaxInt, MaxResults: math.MaxInt, MaxNesting: 1000},
		{MaxLength: -1, MaxSteps: -1, MaxResults: -1, MaxNesting: 1},
	} {
		for _, expr := range []string{"{.a.b[*]}", "{.a.b[0]}", "{range .a.b[*]}{@}{end}", "{..b}"} {
			var vs []Value
			err := safecall.Call(t, func() error {
				p, err := CompileWithOptions(expr, o)
				if err != nil {
					return err
				}
				vs, err = p.Eval(doc)
				if err != nil {
					return err
				}
				_, err = p.ExecuteString(doc)
				return err
			})
			if err != nil || len(vs) == 0 {
				t.Errorf("%+v %s: %v values, %v", o, expr, len(vs), err)
			}
		}
	}
	// The smallest limits fail clearly.
	p, err := CompileWithOptions("{.a.b[*]}", Options{MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	var be *BudgetError
	if _, err := p.Eval(doc); !errors.As(err, &be) {
		t.Errorf("MaxSteps 1: %v, want a *BudgetError", err)
	}
	if _, err := CompileWithOptions("{.a.b}", Options{MaxLength: 1}); !errors.Is(err, ErrTooComplex) {
		t.Errorf("MaxLength 1: %v, want ErrTooComplex", err)
	}
}
