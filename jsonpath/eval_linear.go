package jsonpath

// objRunner is the evaluator's run specialized, without generics, for
// decoded objects and linear paths: walks, wildcards, slices and filters
// of the form [?(@.path)] or [?(@.path op literal)], which is what index
// expressions almost always are. It exists for speed (the generic
// evaluator pays for indirect calls on every node) and must behave
// exactly like the evaluator, budget included; the tests run every
// expression through both.
type objRunner struct {
	budget     budget
	results    int
	maxResults int
	fn         func(Value) bool // nil: append to out
	out        []Value
}

// linear reports whether objRunner can evaluate x.
func linear(x *expr) bool {
	if x.isLit || x.hasUnion {
		return false
	}
	for i := range x.segs {
		switch s := &x.segs[i]; s.kind {
		case segDescent, segUnion:
			return false
		case segFilter:
			if !s.filter.fast && !(s.filter.op == opExists && s.filter.left.simple()) {
				return false
			}
		}
	}
	return true
}

func (r *objRunner) fail(err error) {
	if r.budget.err == nil {
		r.budget.err = err
	}
}

func (r *objRunner) missing(n any) bool {
	if err := (objTree{}).check(n); err != nil {
		r.fail(err)
		return false
	}
	return true
}

func (r *objRunner) run(segs []segment, n any) bool {
	for i := 0; i < len(segs); i++ {
		seg := &segs[i]
		if seg.walk > 0 {
			if !r.budget.charge(seg.walk) {
				return false
			}
			c, done := objTree{}.follow(n, segs[i:i+seg.walk])
			if done < seg.walk {
				return r.missing(c)
			}
			n = c
			i += seg.walk - 1
			continue
		}
		if !r.budget.charge(1) {
			return false
		}
		rest := segs[i+1:]
		switch seg.kind {
		case segWildcard:
			l, ok := n.([]any)
			if !ok {
				var cost int
				if l, cost = (objTree{}).children(n, r.budget.left()); cost > 0 && !r.budget.charge(cost) {
					return false
				}
				if l == nil {
					return r.missing(n)
				}
			}
			if len(rest) > 0 && rest[0].walk == len(rest) {
				return r.eachWalk(l, rest) // [*].name: the common case, unrolled
			}
			for _, c := range l {
				if !r.budget.charge(1) || !r.run(rest, c) {
					return false
				}
			}
			return true
		case segSlice:
			l, ok := n.([]any)
			if !ok {
				return r.missing(n)
			}
			lo, hi := seg.slice.bounds(len(l))
			for j := lo; j < hi; j += seg.slice.step {
				if !r.budget.charge(1) || !r.run(rest, l[j]) {
					return false
				}
				if hi-j <= seg.slice.step {
					break
				}
			}
			return true
		case segFilter:
			l, ok := n.([]any)
			if !ok {
				return r.missing(n)
			}
			for _, e := range l {
				if !r.budget.charge(1) {
					return false
				}
				m := r.match(seg.filter, e)
				if r.budget.err != nil {
					return false
				}
				if m && !r.run(rest, e) {
					return false
				}
			}
			return true
		}
	}
	return r.emit(n)
}

// eachWalk is run(rest, c) for each c, for a rest made of fields and
// indexes, without the calls.
func (r *objRunner) eachWalk(l []any, rest []segment) bool {
	name, single := "", len(rest) == 1 && rest[0].kind == segField && rest[0].alt == nil
	if single {
		name = rest[0].name
	}
	for _, c := range l {
		if !r.budget.charge(1 + len(rest)) {
			return false
		}
		if single { // [*].name
			m, ok := c.(map[string]any)
			if !ok {
				if !r.missing(c) {
					return false
				}
				continue
			}
			if c, ok = m[name]; !ok {
				continue
			}
		} else {
			var done int
			if c, done = (objTree{}).follow(c, rest); done < len(rest) {
				if !r.missing(c) {
					return false
				}
				continue
			}
		}
		if s, ok := c.(string); ok && r.fn != nil && r.results != r.maxResults {
			r.results++ // emit, inlined for the common case
			var v Value
			v.kind, v.str = KindString, s
			if !r.fn(v) {
				return false
			}
			continue
		}
		if !r.emit(c) {
			return false
		}
	}
	return true
}

func (r *objRunner) match(f *filter, e any) bool {
	segs := f.left.segs
	if !r.budget.charge(len(segs)) {
		return false
	}
	var c any
	if len(segs) == 1 && segs[0].kind == segField && segs[0].alt == nil { // @.name
		m, ok := e.(map[string]any)
		if ok {
			c, ok = m[segs[0].name]
		}
		if !ok {
			r.missing(e)
			return false
		}
	} else {
		var done int
		if c, done = (objTree{}).follow(e, segs); done < len(segs) {
			r.missing(c)
			return false
		}
	}
	if f.op == opEq && f.right.lit.kind == KindString { // @.name == "literal"
		if s, ok := c.(string); ok {
			return s == f.right.lit.str
		}
	}
	if f.op != opExists {
		if res, ok := (objTree{}).compareLit(c, &f.right.lit, f.op); ok {
			return res
		}
	}
	if cost := (objTree{}).convCost(c); cost > 0 && !r.budget.charge(cost) {
		return false
	}
	var l Value
	if err := (objTree{}).valueInto(c, &l); err != nil {
		r.fail(err)
		return false
	}
	return f.op == opExists || compare(&l, &f.right.lit, f.op)
}

func (r *objRunner) emit(n any) bool {
	// As the evaluator's emit: convert, then count.
	switch n.(type) {
	case string:
	case map[string]any, []any: // printing it, if Eval returns it (see resultCost)
		if r.fn == nil && !r.budget.charge(printCost(n, 0, r.budget.left(), r.budget.depthLimit())) {
			return false
		}
	default:
		if cost := (objTree{}).convCost(n); cost > 0 && !r.budget.charge(cost) {
			return false
		}
	}
	if r.fn == nil { // build the value in its slot (see setValue)
		r.out = append(r.out, Value{})
		if err := (objTree{}).valueInto(n, &r.out[len(r.out)-1]); err != nil {
			r.out = r.out[:len(r.out)-1]
			r.fail(err)
			return false
		}
		if !r.count() {
			r.out = r.out[:len(r.out)-1]
			return false
		}
		return true
	}
	var v Value
	if s, ok := n.(string); ok {
		v.kind, v.str = KindString, s
	} else if err := (objTree{}).valueInto(n, &v); err != nil {
		r.fail(err)
		return false
	}
	return r.count() && r.fn(v)
}

// count counts a result against the budget.
func (r *objRunner) count() bool {
	r.results++
	if r.maxResults >= 0 && r.results > r.maxResults {
		r.fail(&BudgetError{Limit: "results", Max: r.maxResults})
		return false
	}
	return true
}
