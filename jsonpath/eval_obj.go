package jsonpath

import (
	"slices"
	"strings"
)

// objTree evaluates on decoded objects: map[string]any, []any and the
// scalar types an unstructured.Unstructured holds. Nodes are the any
// values themselves, so navigation neither allocates nor reflects.
type objTree struct{}

func (objTree) lookup(n any, key string) (any, bool) {
	m, ok := n.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}

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
		if len(t) == 0 {
			return nil
		}
		type kv struct {
			k string
			v any
		}
		kvs := make([]kv, 0, len(t))
		for k, v := range t {
			kvs = append(kvs, kv{k, v})
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		vs := make([]any, len(kvs))
		for i := range kvs {
			vs[i] = kvs[i].v
		}
		return vs
	}
	return nil
}

func (objTree) value(n any) (Value, error) {
	v, ok := valueOf(n)
	if !ok {
		return Value{}, unsupported(n)
	}
	return v, nil
}

func (objTree) check(n any) error {
	if _, ok := valueOf(n); !ok {
		return unsupported(n)
	}
	return nil
}
