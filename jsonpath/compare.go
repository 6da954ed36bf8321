package jsonpath

import (
	"math"
	"strings"
)

// compare applies a filter's comparison operator. kubectl reports an
// error for most comparisons between different types; kindex never
// errors on data:
//
//   - numbers compare by value, int64 and float64 alike (exactly, without
//     rounding the integer);
//   - strings compare bytewise;
//   - booleans and nulls support only == and !=;
//   - values of different kinds, and maps and lists, are never equal:
//     == is false, != is true, and <, <=, >, >= are false.
func compare(l, r *Value, op cmpOp) bool {
	eq, c, isOrdered := order(l, r)
	switch op {
	case opEq:
		return eq
	case opNe:
		return !eq
	}
	return isOrdered && ordered(c, op)
}

// order returns whether l equals r, and, if they are ordered (numbers or
// strings), their order c (-1, 0 or 1).
func order(l, r *Value) (eq bool, c int, ordered bool) {
	switch {
	case l.kind == KindString && r.kind == KindString:
		meter.did(min(len(l.str), len(r.str)) / cmpBytesPerStep)
		c = strings.Compare(l.str, r.str)
		return c == 0, c, true
	case isNumber(l) && isNumber(r):
		c, ok := compareNumbers(l, r)
		return ok && c == 0, c, ok
	case l.kind != r.kind:
		return false, 0, false
	case l.kind == KindBool:
		return l.bool() == r.bool(), 0, false
	case l.kind == KindNull:
		return true, 0, false
	}
	return false, 0, false // maps and lists
}

func isNumber(v *Value) bool { return v.kind == KindInt || v.kind == KindFloat }

// compareNumbers orders two numbers; ok is false if one is NaN.
func compareNumbers(l, r *Value) (c int, ok bool) {
	switch {
	case l.kind == KindInt && r.kind == KindInt:
		return cmp3(l.int(), r.int()), true
	case l.kind == KindFloat && r.kind == KindFloat:
		a, b := l.float(), r.float()
		if math.IsNaN(a) || math.IsNaN(b) {
			return 0, false
		}
		return cmp3(a, b), true
	case l.kind == KindInt:
		return compareIntFloat(l.int(), r.float())
	}
	c, ok = compareIntFloat(r.int(), l.float())
	return -c, ok
}

// compareIntFloat orders an int64 and a float64 exactly.
func compareIntFloat(i int64, f float64) (int, bool) {
	switch {
	case math.IsNaN(f):
		return 0, false
	case f >= 0x1p63:
		return -1, true
	case f < -0x1p63:
		return 1, true
	}
	t := math.Trunc(f)
	if c := cmp3(i, int64(t)); c != 0 {
		return c, true
	}
	switch frac := f - t; {
	case frac > 0:
		return -1, true
	case frac < 0:
		return 1, true
	}
	return 0, true
}

func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareStrings(a, b string, op cmpOp) bool {
	switch op {
	case opEq:
		return a == b
	case opNe:
		return a != b
	}
	return ordered(strings.Compare(a, b), op)
}

func compareInts(a, b int64, op cmpOp) bool {
	switch op {
	case opEq:
		return a == b
	case opNe:
		return a != b
	}
	return ordered(cmp3(a, b), op)
}

// ordered applies an ordering operator to the result of a comparison.
func ordered(c int, op cmpOp) bool {
	switch op {
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	}
	return false
}
