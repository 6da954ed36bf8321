package jsonpath

// The evaluator is written once, generically, over the two data
// representations (decoded objects in eval_obj.go, raw JSON in
// eval_json.go), so that the two cannot drift apart. It walks the data
// depth-first and streams results into a sink; it allocates only where the
// semantics require buffering (unions, ranges, sorted map keys).

// tree abstracts a data representation whose nodes have type N.
type tree[N any] interface {
	// elems returns the elements of n; ok is false if n is not an array.
	elems(n N) ([]N, bool)
	// walk follows a run of segField and segIndex segments from n. It
	// returns the node reached and how many segments it followed; when
	// that is fewer than len(segs), the node is the one where
	// segs[done] found nothing.
	walk(n N, segs []segment) (_ N, done int)
	// children returns the elements of an array, or the member values
	// of an object in key order; nil for anything else.
	children(n N) []N
	// value converts n. (It returns the Value rather than filling a
	// *Value: a pointer passed to a method of a type parameter escapes,
	// and would cost an allocation per call.)
	value(n N) (Value, error)
	// compareLit compares n (left) with a literal (right); ok is false
	// if the tree has no fast path for that pair, and the caller then
	// compares Values.
	compareLit(n N, lit *Value, op cmpOp) (result, ok bool)
	// scan returns the steps to charge before navigating into n: the
	// work of scanning it (raw JSON is scanned byte by byte; decoded
	// objects cost nothing extra).
	scan(n N) int
	// check returns ErrUnsupportedType for a node of an unsupported Go
	// type; it is called only when navigation into n found nothing.
	check(n N) error
}

type sinkKind uint8

const (
	sinkFunc    sinkKind = iota // results go to the caller's function
	sinkSlice                   // results are appended to values
	sinkProbe                   // filter operand: count, keep the first
	sinkCollect                 // buffer nodes (unions, ranges)
	sinkText                    // template output
)

// sink receives the results of an evaluation.
type sink[N any] struct {
	kind   sinkKind
	fn     func(Value) bool // sinkFunc
	values []Value          // sinkSlice
	count  int              // sinkProbe: results seen; sinkText: values in the current action
	limit  int              // sinkProbe: stop after this many
	first  Value            // sinkProbe
	nodes  []N              // sinkCollect
	text   []byte           // sinkText
}

type evaluator[N any, T tree[N]] struct {
	t          T
	budget     budget // budget.err is the evaluation's error
	results    int
	maxResults int
	depth      int
}

func (ev *evaluator[N, T]) fail(err error) {
	if ev.budget.err == nil {
		ev.budget.err = err
	}
}

func (ev *evaluator[N, T]) charge(n int) bool { return ev.budget.charge(n) }

// scanning charges the cost of navigating into n.
func (ev *evaluator[N, T]) scanning(n N) bool {
	c := ev.t.scan(n)
	return c == 0 || ev.charge(c)
}

// top evaluates a compiled program (see Path) and sends its values to s.
func (ev *evaluator[N, T]) top(p *Path, root N, s *sink[N]) {
	if p.template {
		out := sink[N]{kind: sinkText}
		if ev.template(p.nodes, root, &out) {
			ev.emitValue(stringValue(string(out.text)), s)
		}
		return
	}
	exprs := p.nodes[0].exprs
	for i := range exprs {
		if !ev.query(&exprs[i], root, s) {
			return
		}
	}
}

// query evaluates one expression on n. It returns false when the
// evaluation must stop (an error, or the sink asked to stop).
func (ev *evaluator[N, T]) query(x *expr, n N, s *sink[N]) bool {
	switch {
	case x.isLit:
		return ev.emitValue(x.lit, s)
	case x.hasUnion:
		return ev.staged(x.segs, n, s)
	}
	return ev.run(x.segs, n, s)
}

// staged evaluates a path with unions the way kubectl does: a union
// applies each of its branches to all the values that reach it, so the
// results are ordered by branch first (.items[*]['a','b'] yields every a,
// then every b). The segments between unions stream depth-first.
func (ev *evaluator[N, T]) staged(segs []segment, n N, s *sink[N]) bool {
	cur := []N{n}
	for {
		u := -1
		for i := range segs {
			if segs[i].kind == segUnion {
				u = i
				break
			}
		}
		if u < 0 {
			for _, c := range cur {
				if !ev.run(segs, c, s) {
					return false
				}
			}
			return true
		}
		mid := sink[N]{kind: sinkCollect}
		for _, c := range cur {
			if !ev.run(segs[:u], c, &mid) {
				return false
			}
		}
		next := sink[N]{kind: sinkCollect}
		for _, br := range segs[u].branches {
			for _, c := range mid.nodes {
				if !ev.run(br, c, &next) {
					return false
				}
			}
		}
		cur, segs = next.nodes, segs[u+1:]
	}
}

// run applies segs to n depth-first and emits the results into s.
// Single-valued segments loop; fan-out segments recurse on the rest.
func (ev *evaluator[N, T]) run(segs []segment, n N, s *sink[N]) bool {
	for i := 0; i < len(segs); i++ {
		seg := &segs[i]
		rest := segs[i+1:]
		if seg.walk > 0 { // fields and indexes: follow them in one call
			if !ev.charge(seg.walk) || !ev.scanning(n) {
				return false
			}
			c, done := ev.t.walk(n, segs[i:i+seg.walk])
			if done < seg.walk {
				return ev.missing(c)
			}
			n = c
			i += seg.walk - 1
			continue
		}
		if !ev.charge(1) || !ev.scanning(n) {
			return false
		}
		switch seg.kind {
		case segWildcard:
			ch := ev.t.children(n)
			if ch == nil {
				return ev.missing(n)
			}
			return ev.each(ch, rest, s)
		case segSlice:
			el, ok := ev.t.elems(n)
			if !ok {
				return ev.missing(n)
			}
			lo, hi := seg.slice.bounds(len(el))
			for j := lo; j < hi; j += seg.slice.step {
				if !ev.charge(1) || !ev.run(rest, el[j], s) {
					return false
				}
				if hi-j <= seg.slice.step {
					break
				}
			}
			return true
		case segFilter:
			el, ok := ev.t.elems(n)
			if !ok {
				return ev.missing(n)
			}
			for _, e := range el {
				if !ev.charge(1) {
					return false
				}
				m := ev.match(seg.filter, e)
				if ev.budget.err != nil {
					return false
				}
				if m && !ev.run(rest, e, s) {
					return false
				}
			}
			return true
		case segDescent:
			return ev.descend(rest, n, s)
		case segUnion:
			// query stages unions, so this is reached only for a single
			// input, where branch order and input order coincide.
			for _, br := range seg.branches {
				c := sink[N]{kind: sinkCollect}
				if !ev.run(br, n, &c) || !ev.each(c.nodes, rest, s) {
					return false
				}
			}
			return true
		}
	}
	return ev.emit(n, s)
}

// missing is called when navigation into n found nothing: that is not an
// error, unless n has a Go type the evaluator does not understand.
func (ev *evaluator[N, T]) missing(n N) bool {
	if err := ev.t.check(n); err != nil {
		ev.fail(err)
		return false
	}
	return true
}

func (ev *evaluator[N, T]) each(ns []N, rest []segment, s *sink[N]) bool {
	for _, c := range ns {
		if !ev.charge(1) || !ev.run(rest, c, s) {
			return false
		}
	}
	return true
}

// descend implements "..": rest applies to n and to every object and
// array below it, in pre-order, members of objects in key order. Scalars
// (including strings) and empty objects and arrays are not visited, as in
// kubectl.
func (ev *evaluator[N, T]) descend(rest []segment, n N, s *sink[N]) bool {
	if !ev.scanning(n) {
		return false
	}
	ch := ev.t.children(n)
	if len(ch) == 0 {
		return ev.missing(n)
	}
	if ev.depth >= ev.budget.maxDepth {
		ev.fail(ev.budget.tooDeep())
		return false
	}
	ev.depth++
	ok := ev.run(rest, n, s)
	for i := 0; ok && i < len(ch); i++ {
		ok = ev.charge(1) && ev.descend(rest, ch[i], s)
	}
	ev.depth--
	return ok
}

// match reports whether the element e passes the filter f.
//
// Values are handled by pointer here: copying a freshly built Value
// struct stalls the CPU (a wide load of narrower pending stores), which
// cost half the time of a filter.
func (ev *evaluator[N, T]) match(f *filter, e N) bool {
	if f.fast { // @.path op literal
		segs := f.left.segs
		if !ev.charge(len(segs)) || !ev.scanning(e) {
			return false
		}
		c, done := ev.t.walk(e, segs)
		if done < len(segs) {
			ev.missing(c)
			return false
		}
		if res, ok := ev.t.compareLit(c, &f.right.lit, f.op); ok {
			return res
		}
		l, err := ev.t.value(c)
		if err != nil {
			ev.fail(err)
			return false
		}
		return compare(&l, &f.right.lit, f.op)
	}
	var l, r Value
	if f.op == opExists {
		return ev.operand(&f.left, e, 1, &l) > 0
	}
	if ev.operand(&f.left, e, 2, &l) != 1 || ev.operand(&f.right, e, 2, &r) != 1 {
		return false
	}
	return compare(&l, &r, f.op)
}

// operand evaluates a filter operand on e, counting results up to limit,
// and stores the first in dst.
func (ev *evaluator[N, T]) operand(x *expr, e N, limit int, dst *Value) int {
	if x.isLit {
		*dst = x.lit
		return 1
	}
	if x.simple() { // the common case, @.type: no sink needed
		if !ev.charge(len(x.segs)) || !ev.scanning(e) {
			return 0
		}
		c, done := ev.t.walk(e, x.segs)
		if done < len(x.segs) {
			ev.missing(c)
			return 0
		}
		var err error
		if *dst, err = ev.t.value(c); err != nil {
			ev.fail(err)
			return 0
		}
		return 1
	}
	s := sink[N]{kind: sinkProbe, limit: limit}
	ev.query(x, e, &s)
	*dst = s.first
	return s.count
}

// emit sends the node n to s.
func (ev *evaluator[N, T]) emit(n N, s *sink[N]) bool {
	if s.kind == sinkCollect {
		s.nodes = append(s.nodes, n)
		return true
	}
	v, err := ev.t.value(n)
	if err != nil {
		ev.fail(err)
		return false
	}
	return ev.emitValue(v, s)
}

// emitValue sends v to s. It returns false when the evaluation must stop.
func (ev *evaluator[N, T]) emitValue(v Value, s *sink[N]) bool {
	switch s.kind {
	case sinkFunc, sinkSlice:
		ev.results++
		if ev.maxResults >= 0 && ev.results > ev.maxResults {
			ev.fail(&BudgetError{Limit: "results", Max: ev.maxResults})
			return false
		}
		if s.kind == sinkSlice {
			s.values = append(s.values, v)
			return true
		}
		return s.fn(v)
	case sinkProbe:
		s.count++
		if s.count == 1 {
			s.first = v
		}
		return s.count < s.limit
	case sinkText:
		if s.count > 0 {
			s.text = append(s.text, ' ')
		}
		s.count++
		n := len(s.text)
		var err error
		if s.text, err = v.appendText(s.text, &ev.budget); err != nil {
			ev.fail(err)
			return false
		}
		return ev.charge((len(s.text) - n) / textBytesPerStep)
	}
	return true // sinkCollect receives nodes only (range and union operands are paths)
}

// bounds returns the index range [lo, hi) a slice selects in an array of
// length n. Negative positions count from the end; positions outside the
// array are clamped (kubectl reports an error instead).
func (s *sliceSpec) bounds(n int) (lo, hi int) {
	lo, hi = 0, n
	if s.hasStart {
		lo = s.start
		if lo < 0 {
			lo += n
		}
	}
	if s.hasEnd {
		hi = s.end
		if hi < 0 {
			hi += n
		}
	}
	lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
	if lo > hi {
		lo = hi
	}
	return lo, hi
}
