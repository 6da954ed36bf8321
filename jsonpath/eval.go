package jsonpath

import "unsafe"

// The evaluator is written once, generically, over the two data
// representations (decoded objects in eval_obj.go, raw JSON in
// eval_json.go), so that the two cannot drift apart. It walks the data
// depth-first and streams results into a sink; it allocates only where the
// semantics require buffering (unions, ranges, sorted map keys).

// tree abstracts a data representation whose nodes have type N.
//
// The methods that may do work proportional to the size of the data take
// left, the steps the budget has left, and return cost, the steps the work
// cost (see budget.go). They do no more than left allows: when the cost
// would exceed it they stop early and return a cost above left, with no
// results, and the caller's charge fails.
type tree[N any] interface {
	// elems returns the elements of n; ok is false if n is not an array.
	elems(n N, left int) (_ []N, ok bool, cost int)
	// walk follows a run of segField and segIndex segments from n. It
	// returns the node reached and how many segments it followed; when
	// that is fewer than len(segs), the node is the one where
	// segs[done] found nothing.
	walk(n N, segs []segment, left int) (_ N, done, cost int)
	// children returns the elements of an array, or the member values
	// of an object in key order; nil for anything else.
	children(n N, left int) (_ []N, cost int)
	// value converts n. (It returns the Value rather than filling a
	// *Value: a pointer passed to a method of a type parameter escapes,
	// and would cost an allocation per call.)
	value(n N) (Value, error)
	// convCost returns the steps converting n costs beyond the step of
	// visiting it: the parsing of a number from its text.
	convCost(n N) int
	// compareLit compares n (left) with a literal (right); ok is false
	// if the tree has no fast path for that pair, and the caller then
	// compares Values.
	compareLit(n N, lit *Value, op cmpOp) (result, ok bool)
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
	sinkGroups                  // template output as JSON arrays (ExecuteJSON)
)

// sink receives the results of an evaluation.
type sink[N any] struct {
	kind   sinkKind
	fn     func(Value) bool // sinkFunc
	values []Value          // sinkSlice
	count  int              // sinkProbe: results seen; sinkText, sinkGroups: values in the current action
	limit  int              // sinkProbe: stop after this many
	first  Value            // sinkProbe
	nodes  []N              // sinkCollect
	text   []byte           // sinkText, sinkGroups
	group  []byte           // sinkGroups: the current group's compact JSON
	detach bool             // sinkSlice: values will be copied (charge them, see detach)
	cover  string           // with detach: the text of the last map or list charged for its copy
}

type evaluator[N any, T tree[N]] struct {
	t          T
	budget     budget // budget.err is the evaluation's error
	results    int
	maxResults int
	depth      int
	// ranges holds the items of the {range} blocks being executed, one slice per level of
	// nesting, kept from one execution of a block to the next: a range nested in another
	// runs once per pass of the outer one, and collecting its items into a new slice each
	// time allocated about 170 bytes a step.
	ranges [][]N
	level  int
}

func (ev *evaluator[N, T]) fail(err error) {
	if ev.budget.err == nil {
		ev.budget.err = err
	}
}

func (ev *evaluator[N, T]) charge(n int) bool { return ev.budget.charge(n) }

// walk is the tree's walk, charged; ok is false when the budget ran out.
func (ev *evaluator[N, T]) walk(n N, segs []segment) (_ N, done int, ok bool) {
	c, done, cost := ev.t.walk(n, segs, ev.budget.left())
	return c, done, cost == 0 || ev.charge(cost)
}

// elems is the tree's elems, charged; ok is false when the budget ran out.
func (ev *evaluator[N, T]) elems(n N) (_ []N, isArray, ok bool) {
	el, isArray, cost := ev.t.elems(n, ev.budget.left())
	return el, isArray, cost == 0 || ev.charge(cost)
}

// children is the tree's children, charged; ok is false when the budget
// ran out.
func (ev *evaluator[N, T]) children(n N) (_ []N, ok bool) {
	ch, cost := ev.t.children(n, ev.budget.left())
	return ch, cost == 0 || ev.charge(cost)
}

// value converts n, charged; ok is false on an error (recorded).
func (ev *evaluator[N, T]) value(n N, dst *Value) (ok bool) {
	if c := ev.t.convCost(n); c > 0 && !ev.charge(c) {
		return false
	}
	v, err := ev.t.value(n)
	if err != nil {
		ev.fail(err)
		return false
	}
	*dst = v
	return true
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
			if !ev.charge(seg.walk) {
				return false
			}
			c, done, ok := ev.walk(n, segs[i:i+seg.walk])
			if !ok {
				return false
			}
			if done < seg.walk {
				return ev.missing(c)
			}
			n = c
			i += seg.walk - 1
			continue
		}
		if !ev.charge(1) {
			return false
		}
		switch seg.kind {
		case segWildcard:
			ch, ok := ev.children(n)
			if !ok {
				return false
			}
			if ch == nil {
				return ev.missing(n)
			}
			return ev.each(ch, rest, s)
		case segSlice:
			el, isArray, ok := ev.elems(n)
			if !ok {
				return false
			}
			if !isArray {
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
			el, isArray, ok := ev.elems(n)
			if !ok {
				return false
			}
			if !isArray {
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
	ch, ok := ev.children(n)
	if !ok {
		return false
	}
	if len(ch) == 0 {
		return ev.missing(n)
	}
	if ev.depth >= ev.budget.maxDepth {
		ev.fail(ev.budget.tooDeep())
		return false
	}
	ev.depth++
	ok = ev.run(rest, n, s)
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
		if !ev.charge(len(segs)) {
			return false
		}
		c, done, ok := ev.walk(e, segs)
		if !ok {
			return false
		}
		if done < len(segs) {
			ev.missing(c)
			return false
		}
		if res, ok := ev.t.compareLit(c, &f.right.lit, f.op); ok {
			return res
		}
		var l Value
		if !ev.value(c, &l) {
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
	if l.kind == KindString && r.kind == KindString && !ev.charge(min(len(l.str), len(r.str))/cmpBytesPerStep) {
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
		if !ev.charge(len(x.segs)) {
			return 0
		}
		c, done, ok := ev.walk(e, x.segs)
		if !ok {
			return 0
		}
		if done < len(x.segs) {
			ev.missing(c)
			return 0
		}
		if !ev.value(c, dst) {
			return 0
		}
		return 1
	}
	s := sink[N]{kind: sinkProbe, limit: limit}
	ev.query(x, e, &s)
	*dst = s.first
	return s.count
}

// growBytesPerStep is how many bytes of the nodes a sink collects (the items of a {range},
// the values a union applies its branches to), or the elements of a raw JSON list read
// for their children, cost a step to copy when the slice that
// holds them grows past largeCollect bytes: then each growth allocates a large object,
// zeroed in fresh memory, copies the nodes into it, and append grows it by a quarter, so
// that it copies about 4 times the bytes it keeps in all, which the garbage collector
// scans. Collecting the items of {range .m[*]} from a decoded list of 100,000 took 7 ms
// and 5.5 MB before the budget stopped it, where the step of each item was all it paid.
// Smaller collections (a {range} over 1,000 decoded items) are not charged for it.
const (
	growBytesPerStep = 64
	largeCollect     = 32 << 10
)

// growCost is what growing a full slice of size bytes costs (see growBytesPerStep).
func growCost(size int) int {
	if size < largeCollect {
		return 0
	}
	return size / growBytesPerStep
}

// emit sends the node n to s.
func (ev *evaluator[N, T]) emit(n N, s *sink[N]) bool {
	if s.kind == sinkCollect {
		if len(s.nodes) == cap(s.nodes) {
			if c := growCost(len(s.nodes) * int(unsafe.Sizeof(n))); c > 0 {
				if !ev.charge(c) {
					return false
				}
				meter.did(c)
			}
		}
		s.nodes = append(s.nodes, n)
		return true
	}
	var v Value
	if !ev.value(n, &v) {
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
			if c := resultCost(&v, ev.budget.left(), ev.budget.depthLimit()); c > 0 && !ev.charge(c) {
				return false // printing it (see resultCost)
			}
			if s.detach {
				c, cover := copyCost(&v, s.cover)
				if !ev.charge(c) {
					return false // the copy Eval makes (see detach)
				}
				s.cover = cover
			}
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
		s.text = grown(s.text, minRoom)
		if s.count > 0 {
			s.text = append(s.text, ' ')
		}
		s.count++
		if v.kind == KindString { // charged before it is copied: it can be long
			if !wrote(&ev.budget, len(v.str)) {
				return false
			}
			s.text = append(grown(s.text, len(v.str)), v.str...)
			return true
		}
		n := len(s.text)
		var err error
		if s.text, err = v.appendText(s.text, &ev.budget); err != nil {
			ev.fail(err)
			return false
		}
		if v.kind == KindMap || v.kind == KindList {
			return true // printing charged its output
		}
		return wrote(&ev.budget, len(s.text)-n)
	case sinkGroups:
		if s.count > 0 {
			s.group = append(s.group, ',')
		}
		s.count++
		var err error
		if s.group, err = v.appendJSON(s.group, &ev.budget); err != nil {
			ev.fail(err)
			return false
		}
		return ev.budget.err == nil
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
