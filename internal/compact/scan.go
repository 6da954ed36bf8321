package compact

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// A validating JSON scanner over a byte slice: it finds where values end without building
// anything. It accepts exactly what encoding/json's Valid accepts (the same grammar, the
// same nesting limit, no UTF-8 check), so that input it lets through decodes later, and
// reports anything else as a *SyntaxError. It never panics and never recurses deeper than
// maxDepth.

// maxDepth is encoding/json's nesting limit: 10000 nested arrays or objects are valid,
// one more is not.
const maxDepth = 10000

// strStop marks the bytes that end a run of plain string content: the closing quote, a
// backslash, and control characters (invalid in JSON strings).
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// hasStop reports whether one of the eight bytes of x is in strStop: below 0x20, a quote
// or a backslash (the classic "has a zero byte" and "has a byte less than n" tests).
func hasStop(x uint64) bool {
	ctl := (x - lsbs*0x20) &^ x
	q := x ^ (lsbs * '"')
	q = (q - lsbs) &^ q
	bs := x ^ (lsbs * '\\')
	bs = (bs - lsbs) &^ bs
	return (ctl|q|bs)&msbs != 0
}

// hasQuoteOrBackslash reports whether one of the eight bytes of x is '"' or '\\'.
func hasQuoteOrBackslash(x uint64) bool {
	q := x ^ (lsbs * '"')
	q = (q - lsbs) &^ q
	bs := x ^ (lsbs * '\\')
	bs = (bs - lsbs) &^ bs
	return (q|bs)&msbs != 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue validates the value starting at b[i] (no leading space) and returns the index
// after it. depth is the number of arrays and objects around the value.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, syntaxErr(i, "unexpected end of input")
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := scanString(b, i)
		return end, err
	case c == '{':
		return eachMember(b, i, depth, nil)
	case c == '[':
		return eachElement(b, i, depth, nil)
	case c == '-' || isDigit(c):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return i, syntaxErr(i, "invalid character "+quoteChar(b[i])+" looking for beginning of value")
}

// scanString validates the string starting at b[i] (a quote) and returns the index after
// its closing quote, and whether it holds an escape sequence (so that its text differs
// from its bytes).
func scanString(b []byte, i int) (end int, escaped bool, err error) {
	start := i
	i++
	for {
		// Eight bytes at a time while none of them ends the run, then byte by byte.
		for i+8 <= len(b) && !hasStop(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, escaped, syntaxErr(start, "unterminated string")
		}
		switch c := b[i]; c {
		case '"':
			return i + 1, escaped, nil
		case '\\':
			escaped = true
			if i+1 >= len(b) {
				return i, escaped, syntaxErr(start, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) {
						return i, escaped, syntaxErr(start, "unterminated string")
					}
					if !isHex(b[i+k]) {
						return i + k, escaped, syntaxErr(i+k, "invalid character "+quoteChar(b[i+k])+" in \\u escape")
					}
				}
				i += 6
			default:
				return i + 1, escaped, syntaxErr(i+1, "invalid escape "+quoteChar(b[i+1])+" in string")
			}
		default:
			return i, escaped, syntaxErr(i, "invalid control character "+quoteChar(c)+" in string")
		}
	}
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, syntaxErr(i, "unexpected end of input in number")
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, syntaxErr(i, "invalid character "+quoteChar(b[i])+" in numeric literal")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, syntaxErr(i, "expected a digit after the decimal point")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, syntaxErr(i, "expected a digit in the exponent")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, nil
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, syntaxErr(i, "invalid literal, expected "+lit)
	}
	return i + len(lit), nil
}

// member is one "key": value of an object, as offsets into the scanned bytes.
type member struct {
	keyStart, keyEnd int  // the key with its quotes
	valStart, valEnd int  // the value (valEnd is set once the value is scanned)
	keyEscaped       bool // the key holds an escape sequence: compare its decoded text
}

// key returns the member's key without quotes, as it is written.
func (m *member) key(b []byte) []byte { return b[m.keyStart+1 : m.keyEnd-1] }

// is reports whether the member's key, decoded, is name.
func (m *member) is(b []byte, name string) bool {
	if !m.keyEscaped {
		return string(m.key(b)) == name
	}
	s, ok := decodeString(b[m.keyStart:m.keyEnd])
	return ok && s == name
}

// keyString returns the member's decoded key.
func (m *member) keyString(b []byte) string {
	if k := m.key(b); !m.keyEscaped && utf8.Valid(k) {
		return string(k)
	}
	s, _ := decodeString(b[m.keyStart:m.keyEnd])
	return s
}

// eachMember validates the object starting at b[i] ('{'), which has depth arrays and
// objects around it, and returns the index after its closing brace. For each member it
// calls fn, which must scan the value starting at m.valStart (with depth+1 containers
// around it) and return the index after it; with a nil fn values are skipped.
func eachMember(b []byte, i, depth int, fn func(m member) (int, error)) (int, error) {
	if depth >= maxDepth {
		return i, syntaxErr(i, "exceeded max depth")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of input in object")
		}
		if b[i] != '"' {
			return i, syntaxErr(i, "invalid character "+quoteChar(b[i])+" looking for beginning of object key string")
		}
		var m member
		var err error
		m.keyStart = i
		if m.keyEnd, m.keyEscaped, err = scanString(b, i); err != nil {
			return m.keyEnd, err
		}
		i = skipSpace(b, m.keyEnd)
		if i >= len(b) || b[i] != ':' {
			if i >= len(b) {
				return i, syntaxErr(i, "unexpected end of input after object key")
			}
			return i, syntaxErr(i, "invalid character "+quoteChar(b[i])+" after object key")
		}
		m.valStart = skipSpace(b, i+1)
		if fn == nil {
			i, err = skipValue(b, m.valStart, depth+1)
		} else {
			i, err = fn(m)
		}
		if err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of input in object")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, syntaxErr(i, "invalid character "+quoteChar(b[i])+" after object key:value pair")
		}
	}
}

// eachElement is eachMember for arrays: fn scans the element starting at b[start].
func eachElement(b []byte, i, depth int, fn func(start int) (int, error)) (int, error) {
	if depth >= maxDepth {
		return i, syntaxErr(i, "exceeded max depth")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if fn == nil {
			i, err = skipValue(b, i, depth+1)
		} else {
			i, err = fn(i)
		}
		if err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of input in array")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, syntaxErr(i, "invalid character "+quoteChar(b[i])+" after array element")
		}
	}
}

// decodeString returns the text of a JSON string (with its quotes) that was validated.
func decodeString(raw []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// stringValue returns the text of the value b[start:end] if it is a string, and "" for
// any other value (as unstructured's accessors do).
func stringValue(b []byte, start, end int, escaped bool) string {
	if start >= end || b[start] != '"' {
		return ""
	}
	if raw := b[start+1 : end-1]; !escaped && utf8.Valid(raw) {
		return string(raw)
	}
	s, _ := decodeString(b[start:end])
	return s
}

func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c < 0x20 || c >= 0x7f:
		const hex = "0123456789abcdef"
		return `'\x` + string([]byte{hex[c>>4], hex[c&15]}) + `'`
	}
	return "'" + string(c) + "'"
}

// validDocument reports whether b is exactly one JSON value with optional surrounding
// space, as encoding/json's Valid does.
func validDocument(b []byte) error {
	i := skipSpace(b, 0)
	end, err := skipValue(b, i, 0)
	if err != nil {
		return err
	}
	if j := skipSpace(b, end); j != len(b) {
		return syntaxErr(j, "invalid character "+quoteChar(b[j])+" after top-level value")
	}
	return nil
}
