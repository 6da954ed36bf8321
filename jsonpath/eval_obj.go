package jsonpath

import (
	"encoding/json"
	"slices"
)

// objTree evaluates on decoded objects: map[string]any, []any and the
// scalar types an unstructured.Unstructured holds. Nodes are the any
// values themselves, so navigation neither allocates nor reflects.
type objTree struct{}

// follow follows a run of segField and segIndex segments from n (see
// tree.walk).
func (objTree) follow(n any, segs []segment) (any, int) {
	for i := range segs {
		s := &segs[i]
		if s.kind == segField {
			m, ok := n.(map[string]any)
			if !ok {
				return n, i
			}
			c, ok := m[s.name]
			if !ok {
				if s.alt == nil {
					return n, i
				}
				// A dotted key the object lacks: its parts (see dottedKey).
				var done int
				if c, done = (objTree{}).follow(n, s.alt); done < len(s.alt) {
					return n, i
				}
			}
			n = c
			continue
		}
		l, ok := n.([]any)
		if !ok {
			return n, i
		}
		j := s.index
		if j < 0 {
			j += len(l)
		}
		if j < 0 || j >= len(l) {
			return n, i
		}
		n = l[j]
	}
	return n, len(segs)
}

// walk is follow for the tree interface: on decoded objects following a
// segment costs only the step the caller charged for it.
func (t objTree) walk(n any, segs []segment, _ int) (any, int, int) {
	c, done := t.follow(n, segs)
	return c, done, 0
}

func (objTree) elems(n any, _ int) ([]any, bool, int) {
	l, ok := n.([]any)
	return l, ok, 0
}

func (objTree) children(n any, left int) ([]any, int) {
	switch t := n.(type) {
	case []any:
		return t, 0
	case map[string]any:
		return sortedValues(t, left)
	}
	return nil, 0
}

// sortedValues returns the values of m in key order (nil if m is empty),
// and the cost of collecting and sorting the keys; it does nothing if that
// exceeds left.
func sortedValues(m map[string]any, left int) ([]any, int) {
	switch len(m) {
	case 0:
		return nil, 0
	case 1:
		for _, v := range m {
			return []any{v}, 1
		}
	}
	cost := len(m)
	if cost > left {
		return nil, cost
	}
	var buf [16]string
	keys := buf[:0]
	keyBytes := 0
	for k := range m {
		keys = append(keys, k)
		keyBytes += len(k)
	}
	if cost += sortCost(len(keys), keyBytes); cost > left {
		return nil, cost
	}
	meter.did(cost)
	slices.Sort(keys)
	vs := make([]any, len(keys))
	for i, k := range keys {
		vs[i] = m[k]
	}
	return vs, cost
}

func (objTree) value(n any) (Value, error) {
	var v Value
	if !setValue(&v, n) {
		return Value{}, unsupported(n)
	}
	return v, nil
}

// valueInto is value building the Value in place (see setValue); the
// non-generic fast paths use it.
func (objTree) valueInto(n any, dst *Value) error {
	if !setValue(dst, n) {
		return unsupported(n)
	}
	return nil
}

func (objTree) compareLit(n any, lit *Value, op cmpOp) (result, ok bool) {
	switch lit.kind {
	case KindString:
		if s, ok := n.(string); ok {
			return compareStrings(s, lit.str, op), true
		}
	case KindInt:
		if i, ok := n.(int64); ok {
			return compareInts(i, lit.int(), op), true
		}
	case KindBool:
		if b, ok := n.(bool); ok {
			eq := b == lit.bool()
			return (op == opEq && eq) || (op == opNe && !eq), true
		}
	}
	return false, false
}

func (objTree) convCost(n any) int {
	if num, ok := n.(json.Number); ok {
		return numCost(string(num))
	}
	return 0
}

// check tells whether n has a supported type without converting it: a
// json.Number is not parsed (which takes milliseconds for a long one), so
// that a wildcard, filter or descent that finds nothing in the elements it
// visits costs only their steps.
func (objTree) check(n any) error {
	if !supported(n) {
		return unsupported(n)
	}
	return nil
}
