package jsonpath

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Byte-level scanning helpers of the parser.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isNameStop reports whether c ends a field name. These are kubectl's
// terminators; inside a filter the characters of operators and the
// parentheses also end a name.
func isNameStop(c byte, inFilter bool) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '.', ',', '[', ']', '$', '@', '{', '}':
		return true
	case '(', ')', '=', '!', '<', '>':
		return inFilter
	}
	return false
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

// hasWord reports whether the input at the current position is the word
// w followed by a character that cannot continue a name.
func (p *parser) hasWord(w string, inFilter bool) bool {
	if !strings.HasPrefix(p.src[p.pos:], w) {
		return false
	}
	end := p.pos + len(w)
	return end == len(p.src) || isNameStop(p.src[end], inFilter)
}

// scanName scans a field name; a backslash makes the next character part
// of the name ("a\.b" is the key "a.b"). star reports a bare "*".
func (p *parser) scanName(inFilter bool) (name string, star bool, err error) {
	start := p.pos
	var b []byte // only when the name has escapes
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '\\' {
			if p.pos+1 >= len(p.src) {
				return "", false, p.errorf(p.pos, "backslash at end of expression")
			}
			if b == nil {
				b = append(make([]byte, 0, len(p.src)-start), p.src[start:p.pos]...)
			}
			_, size := utf8.DecodeRuneInString(p.src[p.pos+1:])
			b = append(b, p.src[p.pos+1:p.pos+1+size]...)
			p.pos += 1 + size
			continue
		}
		if isNameStop(c, inFilter) {
			break
		}
		if b != nil {
			b = append(b, c)
		}
		p.pos++
	}
	if b != nil {
		return string(b), false, nil
	}
	name = p.src[start:p.pos]
	return name, name == "*", nil
}

// scanString scans a single- or double-quoted string. Escapes are Go's
// (\n, \t, \\, \', \", \xHH, \uHHHH, ...); a backslash before any other
// character stands for that character, so "\." is a dot. A malformed Go
// escape (\x4g, \u12, \ud800, \400, \U00110000) is an error, as it is for
// client-go, not the letters that follow the backslash.
func (p *parser) scanString() (string, error) {
	start := p.pos
	quote := p.src[p.pos]
	p.pos++
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case quote:
			p.pos++
			body := p.src[start+1 : p.pos-1]
			if at := badEscape(body, quote); at >= 0 {
				return "", p.errorf(start+1+at, "invalid escape in a quoted string (a \\x, \\u, \\U or octal escape takes Go's form)")
			}
			return unquote(body, quote), nil
		}
		p.pos++
	}
	p.pos = len(p.src)
	return "", p.errorf(start, "unterminated string")
}

// badEscape returns the offset in s, the text between the quotes of a
// string, of the first escape that starts as one of Go's numeric escapes
// (\x, \u, \U, or an octal digit) but is not a valid one; -1 if there is
// none.
func badEscape(s string, quote byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 < len(s) && strings.IndexByte("xuU01234567", s[i+1]) >= 0 {
			if _, _, _, err := strconv.UnquoteChar(s[i:], quote); err != nil {
				return i
			}
		}
		i++ // the escaped character
	}
	return -1
}

// unquote decodes the escapes of s, the text between the quotes of a
// string that scanString accepted.
func unquote(s string, quote byte) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for len(s) > 0 {
		if s[0] != '\\' {
			i := strings.IndexByte(s, '\\')
			if i < 0 {
				i = len(s)
			}
			b = append(b, s[:i]...)
			s = s[i:]
			continue
		}
		r, multibyte, tail, err := strconv.UnquoteChar(s, quote)
		if err != nil {
			// Not a Go escape: the escaped character stands for itself.
			if len(s) < 2 { // unreachable: scanString pairs every backslash
				break
			}
			_, size := utf8.DecodeRuneInString(s[1:])
			b = append(b, s[1:1+size]...)
			s = s[1+size:]
			continue
		}
		if r < utf8.RuneSelf || !multibyte {
			b = append(b, byte(r))
		} else {
			b = utf8.AppendRune(b, r)
		}
		s = tail
	}
	return string(b)
}

// scanNumber scans a number literal: an optional sign, digits and an
// optional fraction. Integers that fit int64 are KindInt, others KindFloat.
func (p *parser) scanNumber() (Value, error) {
	start := p.pos
	if c := p.peek(); c == '+' || c == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == digits {
		return Value{}, p.errorf(p.pos, "expected a digit")
	}
	isFloat := false
	if p.pos+1 < len(p.src) && p.src[p.pos] == '.' && isDigit(p.src[p.pos+1]) {
		isFloat = true
		p.pos++
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
	}
	text := p.src[start:p.pos]
	if !isFloat {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return intValue(i), nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return Value{}, p.errorf(start, "number %s is out of range", shortened(text))
	}
	return floatValue(f), nil
}

// scanInt scans an array index: an optional minus sign and digits.
func (p *parser) scanInt() (int, error) {
	start := p.pos
	if p.peek() == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == digits {
		return 0, p.errorf(p.pos, "expected a digit")
	}
	i, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil {
		return 0, p.errorf(start, "index %s is out of range", shortened(p.src[start:p.pos]))
	}
	return i, nil
}

// describe names the byte at off for error messages.
func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "end of expression"
	}
	r, _ := utf8.DecodeRuneInString(p.src[off:])
	return strconv.QuoteRune(r)
}
