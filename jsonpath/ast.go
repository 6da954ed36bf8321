package jsonpath

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The compiled program is a tree of the types below. It is built once by
// the parser and never modified afterwards, so a Path is safe for
// concurrent use.

type segKind uint8

const (
	segField    segKind = iota + 1 // .name or ['name']
	segWildcard                    // .* or [*]
	segIndex                       // [i]
	segSlice                       // [start:end:step]
	segUnion                       // [a,b,...]
	segFilter                      // [?(...)]
	segDescent                     // ..
)

type segment struct {
	kind     segKind
	walk     int         // segField, segIndex: length of the run of fields and indexes starting here
	name     string      // segField
	quoted   string      // segField: name as a JSON string, "" if it needs escapes (see mayRepeat)
	anchor   int         // segField: the position in quoted of its rarest byte (see mayRepeat)
	alt      []segment   // segField of a quoted key with unescaped dots: its parts, read when the key is missing (see dottedKey)
	index    int         // segIndex
	slice    sliceSpec   // segSlice
	branches [][]segment // segUnion: each branch is one selector segment
	filter   *filter     // segFilter
}

type sliceSpec struct {
	start, end, step int
	hasStart, hasEnd bool
	hasStep          bool // only for printing; step is 1 when absent
}

// expr is one expression: a literal or a path.
type expr struct {
	isLit    bool
	lit      Value     // when isLit
	segs     []segment // a path relative to the current value ($ and @)
	hasUnion bool      // a segUnion occurs in segs (evaluated in stages)
}

// finish computes the derived fields of a parsed path.
func (e *expr) finish() {
	for i := len(e.segs) - 1; i >= 0; i-- {
		s := &e.segs[i]
		switch s.kind {
		case segField, segIndex:
			s.walk = 1
			if i+1 < len(e.segs) {
				s.walk += e.segs[i+1].walk
			}
			if s.kind == segField {
				s.quoted, s.anchor = quotedName(s.name)
			}
		case segUnion:
			e.hasUnion = true
			for _, br := range s.branches {
				if k := br[0].kind; k == segField || k == segIndex {
					br[0].walk = 1
				}
				if br[0].kind == segField {
					br[0].quoted, br[0].anchor = quotedName(br[0].name)
				}
			}
		}
	}
}

// simple reports whether the path is made of fields and indexes only.
func (e *expr) simple() bool {
	return !e.isLit && (len(e.segs) == 0 || e.segs[0].walk == len(e.segs))
}

type cmpOp uint8

const (
	opExists cmpOp = iota
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
)

var opNames = [...]string{"", "==", "!=", "<", "<=", ">", ">="}

type filter struct {
	left, right expr
	op          cmpOp
	fast        bool // left is a path of fields and indexes, right a literal
}

type nodeKind uint8

const (
	nodeText   nodeKind = iota + 1 // literal text between actions
	nodeAction                     // {expr,...}
	nodeRange                      // {range expr,...}body{end}
)

type node struct {
	kind  nodeKind
	text  string
	exprs []expr
	body  []node
}

// ---- canonical printing ----

func appendNodes(b []byte, nodes []node) []byte {
	for i := range nodes {
		n := &nodes[i]
		switch n.kind {
		case nodeText:
			b = append(b, n.text...)
		case nodeAction:
			b = append(b, '{')
			b = appendExprs(b, n.exprs)
			b = append(b, '}')
		case nodeRange:
			b = append(b, "{range "...)
			b = appendExprs(b, n.exprs)
			b = append(b, '}')
			b = appendNodes(b, n.body)
			b = append(b, "{end}"...)
		}
	}
	return b
}

func appendExprs(b []byte, es []expr) []byte {
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendExpr(b, &es[i], false)
	}
	return b
}

// appendExpr prints an expression. Paths print without a root symbol at
// the top level ({.a}) and with @ inside filters (@.a); the empty path is
// @ in both places.
func appendExpr(b []byte, e *expr, inFilter bool) []byte {
	if e.isLit {
		return appendLiteral(b, e.lit)
	}
	if inFilter || len(e.segs) == 0 {
		b = append(b, '@')
	}
	return appendSegments(b, e.segs)
}

func appendLiteral(b []byte, v Value) []byte {
	switch v.kind {
	case KindString:
		return strconv.AppendQuote(b, v.str)
	case KindInt:
		return strconv.AppendInt(b, v.int(), 10)
	case KindFloat:
		n := len(b)
		b = strconv.AppendFloat(b, v.float(), 'f', -1, 64)
		for _, c := range b[n:] {
			if c == '.' {
				return b
			}
		}
		return append(b, ".0"...) // keep it a float literal
	case KindBool:
		return strconv.AppendBool(b, v.bool())
	}
	return b
}

func appendSegments(b []byte, segs []segment) []byte {
	for i := 0; i < len(segs); i++ {
		s := &segs[i]
		if s.kind == segDescent {
			b = append(b, ".."...)
			if i+1 < len(segs) && segs[i+1].kind == segField && simpleName(segs[i+1].name) && segs[i+1].name[0] != '-' {
				b = append(b, segs[i+1].name...)
				i++ // the field is printed as part of the descent
			}
			continue
		}
		b = appendSegment(b, s, i > 0 && segs[i-1].kind == segDescent)
	}
	return b
}

func appendSegment(b []byte, s *segment, afterDescent bool) []byte {
	switch s.kind {
	case segField:
		if simpleName(s.name) && !afterDescent {
			b = append(b, '.')
			return append(b, s.name...)
		}
		b = append(b, '[')
		b = appendFieldKey(b, s)
		return append(b, ']')
	case segFilter:
		b = append(b, "[?("...)
		b = appendExpr(b, &s.filter.left, true)
		if s.filter.op != opExists {
			b = append(b, opNames[s.filter.op]...)
			b = appendExpr(b, &s.filter.right, true)
		}
		return append(b, ")]"...)
	}
	b = append(b, '[')
	if s.kind == segUnion {
		for i, br := range s.branches {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSelector(b, &br[0])
		}
	} else {
		b = appendSelector(b, s)
	}
	return append(b, ']')
}

// appendSelector prints the inside of a bracket for one selector.
func appendSelector(b []byte, s *segment) []byte {
	switch s.kind {
	case segField:
		return appendFieldKey(b, s)
	case segWildcard:
		return append(b, '*')
	case segIndex:
		return strconv.AppendInt(b, int64(s.index), 10)
	case segSlice:
		if s.slice.hasStart {
			b = strconv.AppendInt(b, int64(s.slice.start), 10)
		}
		b = append(b, ':')
		if s.slice.hasEnd {
			b = strconv.AppendInt(b, int64(s.slice.end), 10)
		}
		if s.slice.hasStep {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(s.slice.step), 10)
		}
	}
	return b
}

// simpleName reports whether a key can be printed as .name: letters,
// digits, '_', '-' and '/', and not a keyword of the grammar.
func simpleName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '/') {
			return false
		}
	}
	return true
}

// appendFieldKey prints the key of a field segment quoted: a key with
// parts (see dottedKey) as its parts, their own dots escaped, joined by
// plain dots; any other with its dots escaped, so that it reads back as
// the same key.
func appendFieldKey(b []byte, s *segment) []byte {
	if s.alt == nil {
		return appendQuotedKey(b, s.name, true)
	}
	b = append(b, '\'')
	for i := range s.alt {
		if i > 0 {
			b = append(b, '.')
		}
		q := appendQuotedKey(nil, s.alt[i].name, true)
		b = append(b, q[1:len(q)-1]...)
	}
	return append(b, '\'')
}

// appendQuotedKey prints a key as a single-quoted string, the form
// kubectl users write in brackets (['app.kubernetes.io/name']), its dots
// escaped when it is one key only (see dottedKey).
func appendQuotedKey(b []byte, s string, escapeDots bool) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, '\\', 'x', hexDigits[s[i]>>4], hexDigits[s[i]&0xf])
		case r == '\'' || r == '\\' || r == '.' && escapeDots:
			b = append(b, '\\', byte(r))
		case r < utf8.RuneSelf && strconv.IsPrint(r):
			b = append(b, byte(r))
		case strconv.IsPrint(r):
			b = append(b, s[i:i+size]...)
		default:
			q := strconv.QuoteRune(r) // '\n', '\u2028', ...
			b = append(b, q[1:len(q)-1]...)
		}
		i += size
	}
	return append(b, '\'')
}
