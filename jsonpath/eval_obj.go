package jsonpath

import "slices"

// objTree evaluates on decoded objects: map[string]any, []any and the
// scalar types an unstructured.Unstructured holds. Nodes are the any
// values themselves, so navigation neither allocates nor reflects.
type objTree struct{}

func (objTree) walk(n any, segs []segment) (any, int) {
	for i := range segs {
		s := &segs[i]
		if s.kind == segField {
			m, ok := n.(map[string]any)
			if !ok {
				return n, i
			}
			c, ok := m[s.name]
			if !ok {
				return n, i
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

func (objTree) elems(n any) ([]any, bool) {
	l, ok := n.([]any)
	return l, ok
}

func (objTree) children(n any) []any {
	switch t := n.(type) {
	case []any:
		return t
	case map[string]any:
		return sortedValues(t)
	}
	return nil
}

// sortedValues returns the values of m in key order (nil if m is empty).
func sortedValues(m map[string]any) []any {
	switch len(m) {
	case 0:
		return nil
	case 1:
		for _, v := range m {
			return []any{v}
		}
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vs := make([]any, len(keys))
	for i, k := range keys {
		vs[i] = m[k]
	}
	return vs
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

func (objTree) scan(any) int { return 0 }

func (objTree) check(n any) error {
	if _, ok := valueOf(n); !ok {
		return unsupported(n)
	}
	return nil
}
