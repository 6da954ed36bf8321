package jsonpath

import (
	"fmt"
	"strings"
)

// parser is a recursive-descent parser over the bytes of an expression.
// Its recursion is bounded by limits.maxNesting.
type parser struct {
	src     string
	pos     int
	lim     limits
	nesting int
}

func (p *parser) errorf(off int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Expr: p.src, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) unexpected(what string) *SyntaxError {
	return p.errorf(p.pos, "unexpected %s, expected %s", p.describe(p.pos), what)
}

func (p *parser) expect(c byte, what string) error {
	if p.peek() != c {
		return p.unexpected(what)
	}
	p.pos++
	return nil
}

// enter and leave track the nesting of filters and ranges.
func (p *parser) enter(off int) error {
	p.nesting++
	if p.nesting > p.lim.maxNesting {
		e := p.errorf(off, "filters and ranges nest deeper than %d", p.lim.maxNesting)
		e.cause = ErrTooComplex
		return e
	}
	return nil
}

func (p *parser) leave() { p.nesting-- }

// isBarePath reports whether src is a path without braces (".a.b"): it
// has no '{' and starts like a path.
func isBarePath(src string) bool {
	if src == "" || strings.IndexByte(src, '{') >= 0 {
		return false
	}
	switch src[0] {
	case '.', '$', '@', '[':
		return true
	}
	return false
}

// parseProgram parses a whole expression: a bare path or a template.
func (p *parser) parseProgram() ([]node, error) {
	if p.lim.maxLength >= 0 && len(p.src) > p.lim.maxLength {
		e := p.errorf(p.lim.maxLength, "expression is longer than %d bytes", p.lim.maxLength)
		e.cause = ErrTooComplex
		return nil, e
	}
	if p.src == "" {
		return nil, p.errorf(0, "empty expression")
	}
	if isBarePath(p.src) {
		exprs, err := p.parseExprList()
		if err != nil {
			return nil, err
		}
		if !p.eof() {
			return nil, p.unexpected("',' or end of expression")
		}
		return []node{{kind: nodeAction, exprs: exprs}}, nil
	}
	return p.parseTemplate(-1)
}

// parseTemplate parses text and actions up to the end of the input or,
// inside a range (rangeStart >= 0), up to the matching {end}.
func (p *parser) parseTemplate(rangeStart int) ([]node, error) {
	var nodes []node
	for {
		if p.eof() {
			if rangeStart >= 0 {
				return nil, p.errorf(rangeStart, "{range} without {end}")
			}
			return nodes, nil
		}
		i := strings.IndexByte(p.src[p.pos:], '{')
		if i < 0 {
			i = len(p.src) - p.pos
		}
		if i > 0 {
			nodes = append(nodes, node{kind: nodeText, text: p.src[p.pos : p.pos+i]})
			p.pos += i
			continue
		}
		start := p.pos
		p.pos++ // '{'
		p.skipSpace()
		switch {
		case p.hasWord("range", false):
			p.pos += len("range")
			switch p.peek() {
			case ' ', '\t', '\n', '\r', '.', '[', '$', '@': // {range .a} or {range.a}
			default:
				return nil, p.unexpected("an expression after range")
			}
			if err := p.enter(start); err != nil {
				return nil, err
			}
			p.skipSpace()
			exprStart := p.pos
			exprs, err := p.parseExprList()
			if err != nil {
				return nil, err
			}
			for i := range exprs {
				if exprs[i].isLit {
					return nil, p.errorf(exprStart, "{range} needs a path, not a literal")
				}
			}
			if err := p.expect('}', "',' or '}'"); err != nil {
				return nil, err
			}
			body, err := p.parseTemplate(start)
			if err != nil {
				return nil, err
			}
			p.leave()
			nodes = append(nodes, node{kind: nodeRange, exprs: exprs, body: body})
		case p.hasWord("end", false):
			p.pos += len("end")
			p.skipSpace()
			if err := p.expect('}', "'}'"); err != nil {
				return nil, err
			}
			if rangeStart < 0 {
				return nil, p.errorf(start, "{end} without {range}")
			}
			return nodes, nil
		default:
			exprs, err := p.parseExprList()
			if err != nil {
				return nil, err
			}
			if err := p.expect('}', "',' or '}'"); err != nil {
				return nil, err
			}
			nodes = append(nodes, node{kind: nodeAction, exprs: exprs})
		}
	}
}

// parseExprList parses expressions separated by commas, with optional
// white space around them.
func (p *parser) parseExprList() ([]expr, error) {
	var exprs []expr
	for {
		p.skipSpace()
		e, err := p.parseExpr(false)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		p.skipSpace()
		if p.peek() != ',' {
			return exprs, nil
		}
		p.pos++
	}
}

// parseExpr parses a literal or a path.
func (p *parser) parseExpr(inFilter bool) (expr, error) {
	switch c := p.peek(); {
	case c == '"' || c == '\'':
		s, err := p.scanString()
		return expr{isLit: true, lit: stringValue(s)}, err
	case c == '+' || c == '-' || isDigit(c):
		v, err := p.scanNumber()
		return expr{isLit: true, lit: v}, err
	case p.hasWord("true", inFilter):
		p.pos += len("true")
		return expr{isLit: true, lit: boolValue(true)}, nil
	case p.hasWord("false", inFilter):
		p.pos += len("false")
		return expr{isLit: true, lit: boolValue(false)}, nil
	case c == '$' || c == '@':
		p.pos++
		return p.parsePath(inFilter)
	case c == '.' || c == '[':
		return p.parsePath(inFilter)
	}
	return expr{}, p.unexpected("a path (starting with '.', '[', '$' or '@') or a literal")
}

// parsePath parses the segments of a path.
func (p *parser) parsePath(inFilter bool) (expr, error) {
	var e expr
	for !p.eof() {
		switch p.src[p.pos] {
		case '.':
			if strings.HasPrefix(p.src[p.pos:], "..") {
				p.pos += 2
				if strings.HasPrefix(p.src[p.pos:], "..") {
					return e, p.errorf(p.pos, "invalid multiple recursive descent")
				}
				e.segs = append(e.segs, segment{kind: segDescent})
				switch c := p.peek(); {
				case c == '.' || c == '[' || p.eof() || isNameStop(c, inFilter):
					continue // a bracket, ".name" or nothing follows
				case c == '\'' || c == '"' || c == '+' || c == '-':
					// client-go reads ..-1 and ..'x' as a descent followed
					// by a literal (printed once per node it visits).
					return e, p.errorf(p.pos, "a name after '..' cannot start with %s (quote it: ..['name'])", p.describe(p.pos))
				}
			} else {
				p.pos++
			}
			start := p.pos
			name, star, err := p.scanName(inFilter)
			if err != nil {
				return e, err
			}
			switch {
			case star:
				e.segs = append(e.segs, segment{kind: segWildcard})
			case p.pos == start:
				return e, p.unexpected("a field name after '.'")
			default:
				e.segs = append(e.segs, segment{kind: segField, name: name})
			}
		case '[':
			seg, err := p.parseBracket(inFilter)
			if err != nil {
				return e, err
			}
			e.segs = append(e.segs, seg)
		default:
			e.finish()
			return e, nil
		}
	}
	e.finish()
	return e, nil
}

// parseBracket parses [selectors] or [?(filter)].
func (p *parser) parseBracket(inFilter bool) (segment, error) {
	start := p.pos
	p.pos++ // '['
	p.skipSpace()
	if p.peek() == '?' {
		return p.parseFilter(start)
	}
	var sels []segment
	for {
		p.skipSpace()
		sel, err := p.parseSelector()
		if err != nil {
			return segment{}, err
		}
		sels = append(sels, sel)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			continue
		case ']':
			p.pos++
		default:
			return segment{}, p.unexpected("',' or ']'")
		}
		break
	}
	if len(sels) == 1 {
		return sels[0], nil
	}
	branches := make([][]segment, len(sels))
	for i := range sels {
		branches[i] = sels[i : i+1 : i+1]
	}
	return segment{kind: segUnion, branches: branches}, nil
}

// parseSelector parses one item of a bracket: *, a quoted key, an index
// or a slice.
func (p *parser) parseSelector() (segment, error) {
	switch c := p.peek(); {
	case c == '*':
		p.pos++
		return segment{kind: segWildcard}, nil
	case c == '\'' || c == '"':
		start := p.pos
		s, err := p.scanString()
		if err != nil {
			return segment{}, err
		}
		return segment{kind: segField, name: s, alt: dottedKey(p.src[start+1:p.pos-1], p.src[start])}, nil
	case c == '-' || c == ':' || isDigit(c):
		return p.parseIndexOrSlice()
	}
	return segment{}, p.unexpected("an index, a slice, '*', a quoted key or a filter")
}

func (p *parser) parseIndexOrSlice() (segment, error) {
	var vals [3]int
	var has [3]bool
	colons := 0
	for {
		if c := p.peek(); c == '-' || isDigit(c) {
			v, err := p.scanInt()
			if err != nil {
				return segment{}, err
			}
			vals[colons], has[colons] = v, true
		}
		if p.peek() != ':' || colons == 2 {
			break
		}
		p.pos++
		colons++
	}
	if colons == 0 {
		return segment{kind: segIndex, index: vals[0]}, nil
	}
	s := sliceSpec{start: vals[0], hasStart: has[0], end: vals[1], hasEnd: has[1], step: 1}
	if has[2] {
		if vals[2] <= 0 {
			return segment{}, p.errorf(p.pos, "slice step must be positive")
		}
		s.step, s.hasStep = vals[2], true
	}
	return segment{kind: segSlice, slice: s}, nil
}

// parseFilter parses ?(operand) or ?(operand op operand) and the closing
// bracket; start is the offset of '['.
func (p *parser) parseFilter(start int) (segment, error) {
	p.pos++ // '?'
	p.skipSpace()
	if err := p.expect('(', "'(' after '?'"); err != nil {
		return segment{}, err
	}
	if err := p.enter(start); err != nil {
		return segment{}, err
	}
	f := &filter{}
	var err error
	p.skipSpace()
	if f.left, err = p.parseExpr(true); err != nil {
		return segment{}, err
	}
	p.skipSpace()
	if p.peek() != ')' {
		if f.op, err = p.scanOp(); err != nil {
			return segment{}, err
		}
		p.skipSpace()
		if f.right, err = p.parseExpr(true); err != nil {
			return segment{}, err
		}
		p.skipSpace()
	}
	if err := p.expect(')', "a comparison operator or ')'"); err != nil {
		return segment{}, err
	}
	p.skipSpace()
	if err := p.expect(']', "']' after a filter"); err != nil {
		return segment{}, err
	}
	p.leave()
	f.fast = f.op != opExists && f.left.simple() && f.right.isLit
	return segment{kind: segFilter, filter: f}, nil
}

func (p *parser) scanOp() (cmpOp, error) {
	rest := p.src[p.pos:]
	ops := [...]cmpOp{opEq, opNe, opLe, opGe, opLt, opGt} // two-character operators first
	for _, op := range ops {
		if strings.HasPrefix(rest, opNames[op]) {
			p.pos += len(opNames[op])
			if c := p.peek(); c == '=' || c == '<' || c == '>' || c == '!' {
				return 0, p.errorf(p.pos-len(opNames[op]), "unknown operator %q", opNames[op]+string(c))
			}
			return op, nil
		}
	}
	return 0, p.unexpected("one of == != < <= > >= or ')'")
}

// dottedKey returns the parts of a quoted key (raw, its text between the
// quotes) split at its unescaped dots, as fields, or nil if it has none or
// a part would be empty. client-go reads ['metadata.name'] as the path
// .metadata.name; kindex reads the key "metadata.name" when the object has
// it (['app.kubernetes.io/name'] reads that label) and the path otherwise,
// so that kubectl's ['metadata.name','status.capacity'] works as it does
// there. An escaped dot (['a\.b']) is part of the key only. Parts are keys
// only: client-go would read a part * as a wildcard and an empty part as a
// recursive descent (['a..b'] as .a..b), which a key's fallback, a single
// value, cannot be; doc.go lists the difference.
func dottedKey(raw string, quote byte) []segment {
	var parts []string
	from := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '.':
			parts = append(parts, raw[from:i])
			from = i + 1
		}
	}
	if parts == nil {
		return nil
	}
	parts = append(parts, raw[from:])
	x := expr{segs: make([]segment, len(parts))}
	for i, part := range parts {
		if part == "" {
			return nil
		}
		x.segs[i] = segment{kind: segField, name: unquote(part, quote)}
	}
	x.finish()
	return x.segs
}
