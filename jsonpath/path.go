package jsonpath

import (
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Path is a compiled expression. It is immutable: all its methods are
// safe for concurrent use, and evaluation state lives on the caller's
// stack.
type Path struct {
	canon    string
	lim      limits
	nodes    []node // a single nodeAction unless template
	template bool
	single   bool
	fields   [][]string

	// mode selects the evaluator for decoded objects (and modeWalk also
	// for JSON); segs is the path of modeWalk and modeLinear.
	mode evalMode
	segs []segment
	keys []string // modeWalk with fields only: their names
}

type evalMode uint8

const (
	modeGeneric evalMode = iota // the generic evaluator (eval.go)
	modeWalk                    // fields and indexes only, within the step budget
	modeLinear                  // objRunner (eval_linear.go)
)

// Compile compiles an expression with the default Options.
//
// An expression is either a template in kubectl's syntax, where paths
// and literals are written in braces between literal text
// ("{.metadata.namespace}/{.metadata.name}"), or, when it contains no '{'
// and starts with '.', '[', '$' or '@', a bare path (".spec.nodeName",
// which means the same as "{.spec.nodeName}"). Errors are *SyntaxError.
func Compile(expr string) (*Path, error) {
	return CompileWithOptions(expr, Options{})
}

// CompileWithOptions is Compile with explicit limits. It returns an error
// wrapping ErrInvalidOptions if opts are out of range.
func CompileWithOptions(expr string, opts Options) (*Path, error) {
	lim, err := opts.limits()
	if err != nil {
		return nil, err
	}
	p := &parser{src: expr, lim: lim}
	nodes, err := p.parseProgram()
	if err != nil {
		return nil, err
	}
	path := &Path{lim: lim, nodes: nodes}
	path.template = len(nodes) != 1 || nodes[0].kind != nodeAction
	path.canon = string(appendNodes(nil, nodes))
	if lim.maxLength >= 0 && len(path.canon) > lim.maxLength {
		// The canonical form can be longer than the expression (..* is
		// ..[*]); the limit applies to both, so that String compiles.
		e := p.errorf(0, "the canonical form of the expression is %d bytes, longer than %d", len(path.canon), lim.maxLength)
		e.cause = ErrTooComplex
		return nil, e
	}
	path.single = !path.template && len(nodes[0].exprs) == 1 && singleValued(&nodes[0].exprs[0])
	path.fields = fieldsOf(nodes)
	if !path.template && len(nodes[0].exprs) == 1 {
		x := &nodes[0].exprs[0]
		switch {
		case x.simple() && (lim.maxSteps < 0 || lim.maxSteps >= len(x.segs)):
			path.mode, path.segs = modeWalk, x.segs
			path.keys = fieldNames(x.segs)
		case linear(x):
			path.mode, path.segs = modeLinear, x.segs
		}
	}
	return path, nil
}

// MustCompile is like Compile but panics if the expression does not
// compile. It simplifies initialization of package-level variables from
// constant expressions.
func MustCompile(expr string) *Path {
	p, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the canonical form of the expression: braces, paths
// relative to the current node written without a root (@ inside filters),
// simple keys as .name and others as ['key'], wildcards as [*]. Compiling
// it with the same Options gives an equivalent Path with the same String
// (Options.MaxLength bounds it too). A Path that Compile did not make, nil
// or the zero Path, returns "" here, false from IsTemplate and SingleValued
// and nil from Fields, and its evaluations fail with ErrNotCompiled.
func (p *Path) String() string {
	if p == nil {
		return ""
	}
	return p.canon
}

// compiled reports whether Compile made p: a compiled Path has at least one
// node, a nil or zero Path none.
func (p *Path) compiled() bool { return p != nil && len(p.nodes) > 0 }

// IsTemplate reports whether the expression is a template: literal text
// outside braces, more than one {...} action, or a {range}. A template
// evaluates to a single string (its text output); any other expression
// evaluates to the values its paths select.
func (p *Path) IsTemplate() bool { return p != nil && p.template }

// SingleValued reports whether the expression yields at most one value on
// any object: it is not a template and is a single literal or a single
// path made of fields and indexes only (no wildcard, slice, union, filter
// or descent). Such paths evaluate without allocating (see Each).
func (p *Path) SingleValued() bool { return p != nil && p.single }

// Fields returns the object keys the expression reads below the root, as
// key paths: for "{.spec.containers[*].image}" it returns
// [["spec" "containers"]], for a union of keys each key ("{.x['a','b']}":
// [["x" "a"] ["x" "b"]]), and for a quoted key with dots both the key and
// the path its dots split it into. Only the data under these paths can affect the
// results, so a projection that keeps them (and drops, for example,
// managedFields) evaluates identically. An empty key path means the
// expression needs the whole object. Key paths are sorted, and none is a
// prefix of another. Expressions made only of literals return nil.
func (p *Path) Fields() [][]string {
	if p == nil || len(p.fields) == 0 {
		return nil
	}
	out := make([][]string, len(p.fields))
	for i, f := range p.fields {
		out[i] = slices.Clone(f)
	}
	return out
}

// Eval evaluates the expression on obj and returns its values in order
// (a template returns one string, its text output). A missing field is
// not an error: it yields no values.
//
// obj is a decoded object or a raw JSON document of type JSON. A decoded
// object and everything in it must be nil, bool, string, int64, float64,
// map[string]any or []any, which is what unstructured.Unstructured and
// encoding/json produce; int, int8, int16, int32, uint types, float32 and
// json.Number are tolerated (numbers become KindInt or KindFloat). Other
// types make evaluation fail with ErrUnsupportedType when it has to look
// into them. Maps and lists in results refer to obj; they are not copied.
// A JSON document is read without being decoded (see JSON), and the
// values Eval returns do not refer to it.
func (p *Path) Eval(obj any) ([]Value, error) {
	if !p.compiled() {
		return nil, ErrNotCompiled
	}
	switch doc := obj.(type) {
	case Source:
		return p.appendEvalSource(nil, doc)
	case JSON:
		return p.appendEvalJSON(nil, doc)
	case IndexedJSON:
		return p.appendEvalIndexed(nil, doc)
	}
	return p.evalObj(obj, nil, nil)
}

// AppendEval is Eval appending the values to dst. With a dst of enough
// capacity it does not allocate when Each would not: index functions can
// reuse one buffer for every object. Like Eval's, the values it appends
// do not refer to a JSON document.
func (p *Path) AppendEval(dst []Value, obj any) ([]Value, error) {
	if !p.compiled() {
		return dst, ErrNotCompiled
	}
	switch doc := obj.(type) {
	case Source:
		return p.appendEvalSource(dst, doc)
	case JSON:
		return p.appendEvalJSON(dst, doc)
	case IndexedJSON:
		return p.appendEvalIndexed(dst, doc)
	}
	return p.evalObj(obj, nil, dst)
}

// Each evaluates the expression on obj, a decoded object or a JSON
// document (see Eval), and calls fn for each value in order, until fn
// returns false. On a decoded object it does not allocate unless the
// expression has a union of selectors, a recursive descent, a wildcard on
// a map or is a template; on either, every SingleValued path evaluates
// without allocating (see JSON for the conversion of a document to any).
// Errors are *BudgetError (wrapping ErrBudgetExceeded) and
// ErrUnsupportedType. The values passed to fn for a JSON document may
// refer to it: they are valid while it is not modified; Clone those to
// keep longer. A nil fn is ErrNilArgument.
func (p *Path) Each(obj any, fn func(Value) bool) error {
	if fn == nil {
		return fmt.Errorf("%w: Each with a nil function", ErrNilArgument)
	}
	if !p.compiled() {
		return ErrNotCompiled
	}
	if src, ok := obj.(Source); ok {
		doc := src.JSONSource()
		if doc.Spans == nil || p.mode != modeWalk {
			_, err := p.evalJSON(doc.Doc, fn, nil)
			return err
		}
		_, err := p.walkSpans(doc, fn, nil)
		return err
	}
	switch doc := obj.(type) {
	case JSON:
		_, err := p.evalJSON(doc, fn, nil)
		return err
	case IndexedJSON:
		if p.mode != modeWalk {
			_, err := p.evalJSON(doc.Doc, fn, nil)
			return err
		}
		_, err := p.walkSpans(doc, fn, nil)
		return err
	}
	if p.keys == nil {
		_, err := p.evalObj(obj, fn, nil)
		return err
	}
	var v Value
	found, err := p.lookupKeys(obj, &v, false)
	if found {
		fn(v)
	}
	return err
}

// appendEvalSource is AppendEval on a Source.
func (p *Path) appendEvalSource(dst []Value, src Source) ([]Value, error) {
	doc := src.JSONSource()
	if doc.Spans == nil {
		return p.appendEvalJSON(dst, doc.Doc)
	}
	return p.appendEvalIndexed(dst, doc)
}

// fromSource returns the document of a Source, anything else as it is (for Execute, whose
// evaluation allocates anyway).
func fromSource(obj any) any {
	if src, ok := obj.(Source); ok {
		return src.JSONSource().Doc
	}
	return obj
}

// lookupKeys evaluates a path of fields only (most index expressions)
// into *v, which must be the zero Value, with the tightest loop.
func (p *Path) lookupKeys(obj any, v *Value, kept bool) (found bool, err error) {
	n := obj
	for _, k := range p.keys {
		m, ok := n.(map[string]any)
		if !ok {
			return false, objTree{}.check(n)
		}
		if n, ok = m[k]; !ok {
			return false, nil
		}
	}
	if s, ok := n.(string); ok {
		v.kind, v.str = KindString, s
		return true, nil
	}
	if err := p.chargeWalked(n, kept); err != nil {
		return false, err
	}
	if !setValue(v, n) {
		return false, unsupported(n)
	}
	return true, nil
}

// chargeWalked charges converting n, the value a modeWalk path reached on a
// decoded object, as the evaluator would: the walk (its steps, which
// Compile checked the budget holds) and the conversion (see convCost), or,
// for a map or list that Eval returns (kept), printing it (see
// resultCost). It returns the budget error if they exceed the budget,
// before converting. Only those and long json.Numbers cost anything, so
// the fast paths build no budget for other values.
func (p *Path) chargeWalked(n any, kept bool) error {
	c := (objTree{}).convCost(n)
	switch n.(type) {
	case map[string]any, []any: // printing it, if Eval returns it (see resultCost)
		if !kept {
			break
		}
		left := math.MaxInt
		if p.lim.maxSteps >= 0 {
			left = p.lim.maxSteps - len(p.segs)
		}
		c = printCost(n, 0, left, p.lim.maxDepth)
	}
	if c == 0 {
		return nil
	}
	var b budget
	b.init(&p.lim)
	_ = b.charge(len(p.segs)) && b.charge(c)
	meter.ran(&b)
	return b.err
}

// evalObj evaluates on a decoded object; results go to fn, or, if fn is
// nil, are appended to dst and returned.
//
// The evaluators live in functions of their own: their state would make
// this one zero hundreds of bytes of stack on every call.
func (p *Path) evalObj(obj any, fn func(Value) bool, dst []Value) ([]Value, error) {
	switch {
	case p.keys != nil && fn == nil:
		// The value is built in its slot: copying a fresh Value stalls
		// the CPU (see setValue).
		dst = append(dst, Value{})
		found, err := p.lookupKeys(obj, &dst[len(dst)-1], true)
		if !found {
			dst = dst[:len(dst)-1]
		}
		return dst, err
	case p.keys != nil:
		var v Value
		if found, err := p.lookupKeys(obj, &v, false); !found {
			return nil, err
		}
		fn(v)
		return nil, nil
	case p.mode == modeWalk:
		n, done := objTree{}.follow(obj, p.segs)
		if done < len(p.segs) {
			return dst, objTree{}.check(n)
		}
		if err := p.chargeWalked(n, fn == nil); err != nil {
			return dst, err
		}
		if fn == nil {
			dst = append(dst, Value{})
			if err := (objTree{}).valueInto(n, &dst[len(dst)-1]); err != nil {
				return dst[:len(dst)-1], err
			}
			return dst, nil
		}
		var v Value
		if err := (objTree{}).valueInto(n, &v); err != nil {
			return nil, err
		}
		fn(v)
		return nil, nil
	case p.mode == modeLinear:
		return p.evalLinear(obj, fn, dst)
	}
	return p.evalGeneric(obj, fn, dst)
}

func (p *Path) evalLinear(obj any, fn func(Value) bool, dst []Value) (_ []Value, err error) {
	defer recoverInternal(&err)
	r := objRunner{maxResults: p.lim.maxResults, fn: fn, out: dst}
	r.budget.init(&p.lim)
	if fn == nil && dst == nil {
		r.out = make([]Value, 0, 4)
	}
	r.run(p.segs, obj)
	meter.ran(&r.budget)
	return r.out, r.budget.err
}

func (p *Path) evalGeneric(obj any, fn func(Value) bool, dst []Value) (_ []Value, err error) {
	defer recoverInternal(&err)
	ev := evaluator[any, objTree]{maxResults: p.lim.maxResults}
	ev.budget.init(&p.lim)
	s := sink[any]{kind: sinkSlice, values: dst}
	if fn != nil {
		s.kind, s.fn = sinkFunc, fn
	}
	ev.top(p, obj, &s)
	meter.ran(&ev.budget)
	return s.values, ev.budget.err
}

// appendEvalJSON is AppendEval on a JSON document: the values appended
// are detached from it.
func (p *Path) appendEvalJSON(dst []Value, doc JSON) ([]Value, error) {
	n := len(dst)
	dst, err := p.evalJSON(doc, nil, dst)
	detach(dst[n:], bytesView(doc))
	return dst, err
}

// appendEvalIndexed is AppendEval on an indexed document.
func (p *Path) appendEvalIndexed(dst []Value, doc IndexedJSON) (_ []Value, err error) {
	if p.mode != modeWalk {
		return p.appendEvalJSON(dst, doc.Doc)
	}
	n := len(dst)
	func() {
		defer recoverInternal(&err)
		dst, err = p.walkSpans(doc, nil, dst)
	}()
	detach(dst[n:], bytesView(doc.Doc))
	return dst, err
}

// evalJSON evaluates on a JSON document; results go to fn, or, if fn is
// nil, are appended to dst and returned.
func (p *Path) evalJSON(doc JSON, fn func(Value) bool, dst []Value) (_ []Value, err error) {
	defer recoverInternal(&err)
	if p.mode == modeWalk {
		return p.walkJSON(doc, fn, dst)
	}
	ev := evaluator[gjson.Result, jsonTree]{maxResults: p.lim.maxResults}
	ev.budget.init(&p.lim)
	s := sink[gjson.Result]{kind: sinkSlice, values: dst, detach: true}
	if fn != nil {
		s.kind, s.fn = sinkFunc, fn
	}
	if ev.charge(rootCost(doc, ev.budget.left())) {
		root := gjson.Parse(bytesView(doc))
		ev.t = p.treeFor(root)
		ev.top(p, root, &s)
	}
	meter.ran(&ev.budget)
	return s.values, ev.budget.err
}

// rootCost returns the steps reaching and parsing the root value of doc
// cost: the white space before it, read no further than left pays for
// (see scanEnd), and parseCost.
func rootCost(doc JSON, left int) int {
	s := bytesView(doc)
	lim := scanEnd(s, 0, left)
	i := skipSpace(s[:lim], 0)
	if i >= lim && lim < len(s) {
		return itemCost(s[:i]) // more than left
	}
	return i/scanBytesPerStep + parseCost(s[i:])
}

// walkJSON evaluates a path of fields and indexes (modeWalk) on raw JSON
// without the evaluator, charging what it would.
func (p *Path) walkJSON(doc JSON, fn func(Value) bool, dst []Value) ([]Value, error) {
	var b budget
	b.init(&p.lim)
	var n gjson.Result
	found := b.charge(len(p.segs)) && b.charge(rootCost(doc, b.left()))
	if found {
		var done, cost int
		n, done, cost = jsonTree{}.walk(gjson.Parse(bytesView(doc)), p.segs, b.left())
		found = b.charge(cost) && done == len(p.segs)
	}
	return deliverWalked(&b, found, n, fn, dst)
}

// deliverWalked ends a walk on raw JSON that reached n (if found): it charges converting n
// and, for Eval, copying it (see detach), then hands the value to fn or appends it to dst.
func deliverWalked(b *budget, found bool, n gjson.Result, fn func(Value) bool, dst []Value) ([]Value, error) {
	var v Value
	if found = found && b.charge((jsonTree{}).convCost(n)); found {
		setJSONValue(&v, n)
		if fn == nil { // printing it (see resultCost) and the copy Eval makes (see detach)
			found = b.charge(resultCost(&v, b.left(), b.depthLimit())) && b.charge(detachCost(&v))
		}
	}
	meter.ran(b)
	if !found {
		return dst, b.err
	}
	if fn == nil {
		return append(dst, v), nil
	}
	fn(v)
	return dst, nil
}

// Execute writes the text output of the expression on obj, a decoded
// object or a JSON document (see Eval), to w, as kubectl -o jsonpath
// does: literal text as is, the values of each {...} separated by spaces
// (strings unquoted, numbers as fmt prints them, maps and lists as
// compact JSON), {range} bodies once per value. Nothing is written if
// evaluation fails. A nil w is ErrNilArgument.
func (p *Path) Execute(w io.Writer, obj any) error {
	if w == nil {
		return fmt.Errorf("%w: Execute with a nil writer", ErrNilArgument)
	}
	b, err := p.appendExecute(nil, obj, sinkText)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ExecuteString returns the text output of the expression on obj (see
// Execute): "" with the error if the evaluation fails.
func (p *Path) ExecuteString(obj any) (string, error) {
	b, err := p.appendExecute(nil, obj, sinkText)
	if err != nil {
		return "", err
	}
	if len(b) < viewOutput {
		return string(b), nil
	}
	// The buffer is the evaluation's own and nothing else refers to it: a large output
	// is returned as a view of it rather than copied (it has at most as much room
	// again, see grown).
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// viewOutput is the length from which ExecuteString returns its buffer as the string
// instead of a copy: a copy costs little below it, and trims the buffer's spare room.
const viewOutput = 4096

// appendExecute appends the output of the template to dst: text (sinkText)
// or JSON arrays (sinkGroups, ExecuteJSON).
func (p *Path) appendExecute(dst []byte, obj any, kind sinkKind) (_ []byte, err error) {
	if !p.compiled() {
		return dst, ErrNotCompiled
	}
	defer recoverInternal(&err)
	obj = fromSource(obj)
	if doc, ok := obj.(IndexedJSON); ok {
		obj = doc.Doc
	}
	if doc, ok := obj.(JSON); ok {
		ev := evaluator[gjson.Result, jsonTree]{maxResults: p.lim.maxResults}
		ev.budget.init(&p.lim)
		out := sink[gjson.Result]{kind: kind, text: dst}
		if ev.charge(rootCost(doc, ev.budget.left())) {
			root := gjson.Parse(bytesView(doc))
			ev.t = p.treeFor(root)
			ev.template(p.nodes, root, &out)
		}
		meter.ran(&ev.budget)
		return out.text, ev.budget.err
	}
	ev := evaluator[any, objTree]{maxResults: p.lim.maxResults}
	ev.budget.init(&p.lim)
	out := sink[any]{kind: kind, text: dst}
	ev.template(p.nodes, obj, &out)
	meter.ran(&ev.budget)
	return out.text, ev.budget.err
}

// recoverInternal turns a panic into an error wrapping ErrInternal. It is
// a last resort: no input is known to cause one.
func recoverInternal(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: panic: %v", ErrInternal, r)
	}
}

// fieldNames returns the names of segs if they are all fields, else nil.
func fieldNames(segs []segment) []string {
	if len(segs) == 0 {
		return nil
	}
	keys := make([]string, len(segs))
	for i := range segs {
		if segs[i].kind != segField || segs[i].alt != nil {
			return nil
		}
		keys[i] = segs[i].name
	}
	return keys
}

// singleValued reports whether x yields at most one value.
func singleValued(x *expr) bool {
	if x.isLit {
		return true
	}
	for i := range x.segs {
		if k := x.segs[i].kind; k != segField && k != segIndex {
			return false
		}
	}
	return true
}

// fieldsOf computes Path.Fields: the leading keys of every path evaluated
// on the root. Paths inside range bodies and filters are relative to
// values under those, so they add nothing.
func fieldsOf(nodes []node) [][]string {
	var all [][]string
	for i := range nodes {
		for j := range nodes[i].exprs {
			x := &nodes[i].exprs[j]
			if x.isLit {
				continue
			}
			var keys []string
			union := false
			for k := range x.segs {
				s := &x.segs[k]
				if s.kind == segUnion && unionOfKeys(s) {
					// ['a','b.c']: each key (and its parts), whatever follows.
					for _, b := range s.branches {
						all = append(all, append(slices.Clip(keys), b[0].name))
						if b[0].alt != nil {
							all = append(all, append(slices.Clip(keys), fieldNames(b[0].alt)...))
						}
					}
					union = true
					break
				}
				if s.kind != segField {
					break
				}
				if s.alt != nil {
					// Either the key or its parts (see dottedKey), whatever follows.
					all = append(all, append(slices.Clip(keys), fieldNames(s.alt)...))
					keys = append(keys, s.name)
					break
				}
				keys = append(keys, s.name)
			}
			if !union {
				all = append(all, keys)
			}
		}
	}
	// Sort, then drop key paths that extend an earlier one (a prefix
	// sorts first).
	slices.SortFunc(all, func(a, b []string) int { return slices.Compare(a, b) })
	var out [][]string
	for _, k := range all {
		if n := len(out); n > 0 && hasPrefix(k, out[n-1]) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// unionOfKeys reports whether every branch of the union s is one key.
func unionOfKeys(s *segment) bool {
	for _, b := range s.branches {
		if len(b) != 1 || b[0].kind != segField {
			return false
		}
	}
	return true
}

func hasPrefix(k, prefix []string) bool {
	return len(k) >= len(prefix) && slices.Equal(k[:len(prefix)], prefix)
}
