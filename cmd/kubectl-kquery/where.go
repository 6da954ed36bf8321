package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// The --where language. One --where is one condition; repeat --where for AND.
//
//	condition = subject                          the subject has a value
//	          | "!" subject                      the subject has no value
//	          | subject op value                 op: = == != < <= > >= ^= (starts with)
//	          | subject ("in" | "notin") "(" value { "," value } ")"
//	subject   = NAME                             an --index name or a built-in index
//	          | "{" jsonpath "}"                 a JSONPath, evaluated on each object
//	          | "." jsonpath                     the same without braces
//	value     = WORD | 'text' | "text"           quoted text may hold anything ("\" escapes)
//
// White space is allowed around operators and values. A NAME is letters, digits, '_' and '-'.
// A WORD is a run of characters other than white space, quotes, parentheses, commas and
// = ! < > ~, and holds no Unicode space (quote it). A path without braces ends at white
// space or an operator (^= included) outside its brackets, parentheses and quotes; one that
// leaves a quote, '(' or '[' open is refused. The values of < <= > >= must be numbers.
// Everything else is refused with the byte offset where it went wrong: =~ (regular
// expressions), two conditions in one --where, text after a complete condition, an unknown
// operator.

// whereExpr is one parsed --where.
type whereExpr struct {
	Arg     string // as typed
	Subject string // an index name, or a JSONPath when Path is true
	Path    bool
	SubjAt  int // byte offset of the subject in Arg
	Op      query.Op
	NotIn   bool // notin: Op is NotEqual, once per value
	Values  []string
}

// argError is a command-line argument that cannot be used as written, with the byte offset
// of the problem in it, so that the message can point at it.
type argError struct {
	Flag   string // "--where", "--index", "--sort-by", ...
	Arg    string
	Offset int
	Msg    string
	Hint   string // an extra line, or ""
}

func (e *argError) Error() string {
	return fmt.Sprintf("%s %q: %s (at byte %d)", e.Flag, clip(e.Arg), e.Msg, e.Offset)
}

// where errors, for tests and callers that branch.
var errWhere = errors.New("invalid --where")

func (e *argError) Unwrap() error {
	if e.Flag == "--where" {
		return errWhere
	}
	return nil
}

type whereParser struct {
	s   string
	pos int
}

func (p *whereParser) fail(at int, format string, args ...any) *argError {
	return &argError{Flag: "--where", Arg: p.s, Offset: at, Msg: fmt.Sprintf(format, args...)}
}

func (p *whereParser) skipSpace() {
	for p.pos < len(p.s) && isSpace(p.s[p.pos]) {
		p.pos++
	}
}

func (p *whereParser) eof() bool { return p.pos >= len(p.s) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isWordByte says whether c may appear in an unquoted value.
func isWordByte(c byte) bool {
	return !isSpace(c) && strings.IndexByte(`'"(),=!<>~`, c) < 0
}

// parseWhere parses one --where argument.
func parseWhere(arg string) (*whereExpr, error) {
	p := &whereParser{s: arg}
	w := &whereExpr{Arg: arg}
	p.skipSpace()
	if p.eof() {
		return nil, p.fail(p.pos, "empty condition; want NAME, !NAME, NAME=VALUE, NAME in (A,B), ...")
	}
	negated := false
	if p.s[p.pos] == '!' {
		negated = true
		p.pos++
		p.skipSpace()
	}
	if err := p.subject(w); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.eof() {
		w.Op = query.Exists
		if negated {
			w.Op = query.NotExists
		}
		return w, nil
	}
	opAt := p.pos
	if err := p.operator(w); err != nil {
		return nil, err
	}
	if negated {
		subj := clip(w.Subject)
		return nil, p.fail(opAt, "!%s means \"has no value\" and takes no operator; write %s!=VALUE or %s notin (...)", subj, subj, subj)
	}
	p.skipSpace()
	switch w.Op {
	case query.In:
		if err := p.set(w); err != nil {
			return nil, err
		}
	default:
		at := p.pos
		v, err := p.value(w.Op)
		if err != nil {
			return nil, err
		}
		if isNumeric(w.Op) {
			// The query's own rule (query.ParseNumber), so that no bound passes here and fails
			// when the query runs: " 5" is not a number there either.
			if _, err := query.ParseNumber(v); err != nil {
				return nil, p.fail(at, "%s compares numbers; %q is not a number", w.Op, clip(v))
			}
		}
		w.Values = []string{v}
	}
	p.skipSpace()
	if !p.eof() {
		e := p.fail(p.pos, "unexpected %q after the condition", p.rest())
		if c := p.s[p.pos]; c == ',' || isNameByte(c) || c == '{' || c == '.' || c == '!' {
			e.Hint = "one condition per --where: repeat --where for AND; quote a value that holds spaces or commas"
		}
		return nil, e
	}
	return w, nil
}

// rest is the unparsed text, shortened for a message.
func (p *whereParser) rest() string {
	r := p.s[p.pos:]
	if len(r) > 20 {
		r = r[:runeStart(r, 17)] + "..."
	}
	return r
}

// charAt is the character that starts at s[i], for a message: the whole UTF-8 sequence,
// not its first byte read as a character ("é", not "Ã").
func charAt(s string, i int) string {
	_, n := utf8.DecodeRuneInString(s[i:])
	return s[i : i+n]
}

func isNumeric(op query.Op) bool {
	switch op {
	case query.LessThan, query.LessOrEqual, query.GreaterThan, query.GreaterOrEqual:
		return true
	}
	return false
}

// subject reads an index name or a JSONPath.
func (p *whereParser) subject(w *whereExpr) error {
	start := p.pos
	braced := 0 // 1 when Subject is a bare path given braces: offsets in it are one more
	open := -1  // in a bare path, the quote, '(' or '[' left open that took in the rest
	w.SubjAt = start
	if p.eof() {
		return p.fail(start, "missing an index name or a JSONPath")
	}
	c := p.s[p.pos]
	switch {
	case c == '{':
		end, err := p.scanBraces(start)
		if err != nil {
			return err
		}
		p.pos = end
		w.Subject, w.Path = p.s[start:end], true
		if isRangeAction(w.Subject) {
			e := p.fail(start, "bad JSONPath: a condition reads one path in braces; {range} and {end} are for -o jsonpath")
			e.Hint = "filter inside the path instead, for example {.spec.containers[?(@.name==\"app\")].image}"
			return e
		}
	case c == '.':
		// A bare path means the same in braces: compiled as such, ".a{.b}" is the error it
		// is, not a template that prints ".a" before {.b}.
		p.pos, open = p.scanBarePath(start)
		if at := unquotedBrace(p.s[start:p.pos]); at >= 0 {
			return p.fail(start+at, "bad JSONPath: a path without braces cannot hold %q; write the whole path in braces", p.s[start+at])
		}
		w.Subject, w.Path, braced = "{"+p.s[start:p.pos]+"}", true, 1
	case isNameByte(c):
		for p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
			p.pos++
		}
		w.Subject = p.s[start:p.pos]
		if p.pos < len(p.s) && (p.s[p.pos] == '.' || p.s[p.pos] == '[') {
			// "spec.size>3": a path without its leading dot.
			end, _ := p.scanBarePath(p.pos)
			word := clip(p.s[start:end])
			e := p.fail(start, "%q is neither an index name nor a JSONPath", word)
			e.Hint = fmt.Sprintf("a JSONPath starts with '.' or '{': .%s or {.%s}", word, word)
			return e
		}
	default:
		return p.fail(start, "expected an index name or a JSONPath ({...} or .path), found %q", charAt(p.s, start))
	}
	if w.Path {
		if _, err := jsonpath.Compile(w.Subject); err != nil {
			var se *jsonpath.SyntaxError
			if errors.As(err, &se) {
				return p.fail(start+min(max(se.Offset-braced, 0), p.pos-start), "bad JSONPath: %s", se.Msg)
			}
			return p.fail(start, "bad JSONPath: %v", err)
		}
	}
	if open >= 0 {
		// The JSONPath compiler takes a quote or a parenthesis in a field name as part of
		// the name (".a'b", ".a(b"), so ".a(=b" would compile as a path to the field "a(=b".
		c := p.s[open]
		if c == '\'' || c == '"' {
			return p.fail(open, "unterminated quoted text in the JSONPath")
		}
		return p.fail(open, "%q is not closed in the JSONPath; write the whole path in braces if it is part of a name", c)
	}
	return nil
}

// isRangeAction says whether action, a JSONPath in braces, is {range ...} or {end}: the
// compiler would say that one lacks its {end} and the other its {range}.
func isRangeAction(action string) bool {
	kw := strings.TrimLeft(action[1:], " \t")
	return kw == "end}" || strings.HasPrefix(kw, "end ") ||
		strings.HasPrefix(kw, "range ") || strings.HasPrefix(kw, "range\t") || kw == "range}"
}

// scanBraces returns the offset just after the '}' that closes the '{' at start, skipping
// quoted text; nested braces are not JSONPath but are matched so that the compiler reports
// them.
func (p *whereParser) scanBraces(start int) (int, error) {
	depth := 0
	for i := start; i < len(p.s); i++ {
		switch c := p.s[i]; c {
		case '\'', '"':
			j, ok := skipQuoted(p.s, i)
			if !ok {
				return 0, p.fail(i, "unterminated quoted text in the JSONPath")
			}
			i = j - 1
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, p.fail(len(p.s), "missing '}' to close the JSONPath that starts at byte %d", start)
}

// scanBarePath returns the end of a path without braces: the first white space or
// operator character (^= included) outside brackets, parentheses and quotes. When the end
// is that of p.s because a quote, '(' or '[' is not closed, open is the offset of the
// outermost one; otherwise it is -1.
func (p *whereParser) scanBarePath(start int) (end, open int) {
	depth := 0
	open = -1
	for i := start; i < len(p.s); i++ {
		c := p.s[i]
		switch {
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			j, ok := skipQuoted(p.s, i)
			if !ok {
				if depth <= 0 {
					open = i
				}
				return len(p.s), open
			}
			i = j - 1
		case c == '[' || c == '(':
			if depth == 0 {
				open = i
			}
			depth++
		case c == ']' || c == ')':
			depth--
		case depth <= 0 && (isSpace(c) || strings.IndexByte("=!<>~", c) >= 0 ||
			c == '^' && i+1 < len(p.s) && p.s[i+1] == '='):
			return i, -1
		}
	}
	if depth <= 0 {
		open = -1
	}
	return len(p.s), open
}

// unquotedBrace returns the offset of the first '{' or '}' of s outside quoted text, or -1.
func unquotedBrace(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'', '"':
			j, ok := skipQuoted(s, i)
			if !ok {
				return -1
			}
			i = j - 1
		case '{', '}':
			return i
		}
	}
	return -1
}

// skipQuoted returns the offset after the quoted text that starts at s[i].
func skipQuoted(s string, i int) (int, bool) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j + 1, true
		}
	}
	return 0, false
}

// operator reads one of = == != < <= > >= ^= in notin.
func (p *whereParser) operator(w *whereExpr) error {
	at := p.pos
	rest := p.s[p.pos:]
	two := rest
	if len(two) > 2 {
		two = two[:2]
	}
	switch {
	case two == "=~" || two == "!~":
		return p.fail(at, "%s (regular expression match) is not supported; use =, !=, in (...) or notin (...)", two)
	case two == "==", two == "!=", two == "<=", two == ">=", two == "^=":
		p.pos += 2
		w.Op = map[string]query.Op{"==": query.Equal, "!=": query.NotEqual, "<=": query.LessOrEqual, ">=": query.GreaterOrEqual, "^=": query.Prefix}[two]
	case rest[0] == '=' || rest[0] == '<' || rest[0] == '>':
		p.pos++
		w.Op = map[byte]query.Op{'=': query.Equal, '<': query.LessThan, '>': query.GreaterThan}[rest[0]]
	case keywordAt(rest, "in"):
		p.pos += 2
		w.Op = query.In
	case keywordAt(rest, "notin"):
		p.pos += 5
		w.Op, w.NotIn = query.In, true
	default:
		return p.fail(at, "expected an operator (= == != < <= > >= ^= in notin) or the end, found %q", p.rest())
	}
	if p.pos < len(p.s) && strings.IndexByte("=!<>~", p.s[p.pos]) >= 0 && w.Op != query.In {
		op := p.s[at : p.pos+1]
		if strings.HasSuffix(op, "~") {
			return p.fail(at, "%s (regular expression match) is not supported; use =, !=, in (...) or notin (...)", op)
		}
		return p.fail(at, "unknown operator %q; want one of = == != < <= > >= ^= in notin", op)
	}
	return nil
}

// keywordAt says whether s starts with the keyword kw followed by white space or '('.
func keywordAt(s, kw string) bool {
	if !strings.HasPrefix(s, kw) {
		return false
	}
	return len(s) > len(kw) && (isSpace(s[len(kw)]) || s[len(kw)] == '(')
}

// value reads a quoted or unquoted value.
func (p *whereParser) value(op query.Op) (string, error) {
	if p.eof() {
		return "", p.fail(p.pos, "missing value after %s; write \"\" for an empty value", op)
	}
	c := p.s[p.pos]
	if c == '\'' || c == '"' {
		return p.quoted()
	}
	start := p.pos
	for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
		if p.s[p.pos] < utf8.RuneSelf {
			p.pos++
			continue
		}
		// A Unicode space (a no-break space pasted from a web page) would be part of the
		// value and match nothing: refused, as ASCII white space ends the value.
		r, n := utf8.DecodeRuneInString(p.s[p.pos:])
		if unicode.IsSpace(r) {
			return "", p.fail(p.pos, "unquoted value holds the space character %U; quote the value if it is meant", r)
		}
		p.pos += n
	}
	if p.pos == start {
		if c == '~' {
			return "", p.fail(start-1, "=~ (regular expression match) is not supported; use =, !=, in (...) or notin (...)")
		}
		return "", p.fail(start, "expected a value after %s, found %q; quote values that hold %q", op, string(c), string(c))
	}
	return p.s[start:p.pos], nil
}

// quoted reads 'text' or "text"; a backslash takes the next character as is.
func (p *whereParser) quoted() (string, error) {
	start := p.pos
	q := p.s[p.pos]
	var b strings.Builder
	for i := p.pos + 1; i < len(p.s); i++ {
		c := p.s[i]
		switch {
		case c == '\\' && i+1 < len(p.s):
			i++
			b.WriteByte(p.s[i])
		case c == q:
			p.pos = i + 1
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", p.fail(start, "unterminated quoted value")
}

// set reads "(" value { "," value } ")".
func (p *whereParser) set(w *whereExpr) error {
	kw := "in"
	if w.NotIn {
		kw = "notin"
	}
	if p.eof() || p.s[p.pos] != '(' {
		return p.fail(p.pos, "%s needs a parenthesized list of values, as in %s %s (a,b)", kw, clip(w.Subject), kw)
	}
	p.pos++
	for {
		p.skipSpace()
		if !p.eof() && p.s[p.pos] == ')' && len(w.Values) == 0 {
			return p.fail(p.pos, "%s needs at least one value", kw)
		}
		v, err := p.value(query.In)
		if err != nil {
			return err
		}
		w.Values = append(w.Values, v)
		p.skipSpace()
		if p.eof() {
			return p.fail(p.pos, "missing ')' to close the list of values")
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return nil
		default:
			return p.fail(p.pos, "expected ',' or ')' in the list of values, found %q", charAt(p.s, p.pos))
		}
	}
}

// conditions turns w into query conditions. Names must be in indexes (the --index names and
// the built-in indexes in use); a JSONPath is evaluated on each candidate. notin is one
// NotEqual per value: an object matches when none of its values is in the list, objects
// without a value included, as with a label selector's notin.
func (w *whereExpr) conditions(indexes map[string]bool) ([]query.Condition, error) {
	if !w.Path && !indexes[w.Subject] {
		return nil, &argError{Flag: "--where", Arg: w.Arg, Offset: w.SubjAt,
			Msg:  fmt.Sprintf("%q is not an index", clip(w.Subject)),
			Hint: fmt.Sprintf("define it with --index %s=JSONPATH, use a built-in index (%s), or write a JSONPath such as {.spec.%s}", clip(w.Subject), strings.Join(builtinWhereIndexes, ", "), clip(w.Subject))}
	}
	mk := func(op query.Op, values ...string) query.Condition {
		if w.Path {
			return query.Where(w.Subject, op, values...)
		}
		return query.Condition{Index: w.Subject, Op: op, Values: values}
	}
	switch {
	case w.NotIn:
		out := make([]query.Condition, 0, len(w.Values))
		for _, v := range w.Values {
			out = append(out, mk(query.NotEqual, v))
		}
		return out, nil
	case w.Op == query.Exists || w.Op == query.NotExists:
		return []query.Condition{mk(w.Op)}, nil
	default:
		return []query.Condition{mk(w.Op, w.Values...)}, nil
	}
}

// needsScan reports whether a query with conds may have to visit every object in scope:
// it has no positive condition on an index to find its candidates with.
func needsScan(conds []query.Condition) bool {
	for _, c := range conds {
		if c.Index != "" && c.Op.Positive() {
			return false
		}
	}
	return true
}
