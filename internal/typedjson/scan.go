package typedjson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kindex/kindex/internal/jsondecode"
)

// The scanner: every function takes the offset of the first byte of what it reads and
// returns the offset after it, validating as it goes, so that one pass over the input both
// checks it and decodes it. Nesting is counted in d.depth, for objects and arrays that are
// decoded and for those that are skipped alike.

// maxDepth is the deepest nesting of objects and arrays accepted, encoding/json's bound
// (and so sigs.k8s.io/json's): deeper input is an error, never a stack overflow.
const maxDepth = 10000

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		c := data[i]
		if c > ' ' {
			return i
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// plain[c] is true for the bytes that stand for themselves in a string: printable ASCII
// other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// needsLook flags (sets the high bit of) each byte of the little-endian word x that is a
// quote, a backslash, a control character or a byte of a multi-byte sequence, and may flag
// bytes above a flagged one (a borrow reaches them): the lowest flag is exact.
func needsLook(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	return ((x - lo*0x20) | ((x ^ lo*'"') - lo) | ((x ^ lo*'\\') - lo) | x) & hi
}

// scanString reads the string whose opening quote is at i-1. It returns the offset of its
// closing quote and whether its contents need rewriting (escapes or invalid UTF-8) to be
// the string encoding/json decodes; when they do not, data[i:end] is the string.
func (d *decoder) scanString(i int) (end int, rewrite bool, err error) {
	data := d.data
	for {
		// Eight bytes at a time to the first that needs a look: a quote, a backslash, a
		// control character or a byte of a multi-byte sequence. A byte is flagged (its
		// high bit set in m) if it is one of those, or if a borrow from a flagged byte
		// below it reaches it: the lowest flag is exact.
		for i+8 <= len(data) {
			if m := needsLook(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, false, d.errEOF()
		}
		switch c := data[i]; {
		case c == '"':
			return i, rewrite, nil
		case c == '\\':
			rewrite = true
			if i+1 >= len(data) {
				return i + 1, false, d.errEOF()
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(data) {
						return j, false, d.errEOF()
					}
					if unhex(data[j]) < 0 {
						return j, false, d.syntaxErr(j, "invalid character "+quoteChar(data[j])+" in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, false, d.syntaxErr(i+1, "invalid character "+quoteChar(data[i+1])+" in string escape code")
			}
		case c < 0x20:
			return i, false, d.syntaxErr(i, "invalid character "+quoteChar(c)+" in string literal")
		default: // c >= 0x80
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				rewrite = true // each invalid byte becomes U+FFFD
			}
			i += size
		}
	}
}

// unescape appends to buf the string whose contents s (between the quotes) scanString
// has validated, unescaped as encoding/json does: \u surrogate pairs joined, a lone or
// mismatched surrogate escape as U+FFFD, each byte of invalid UTF-8 as U+FFFD.
func unescape(buf, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\\' {
				buf = append(buf, c)
				i++
				continue
			}
			e := s[i+1]
			if e != 'u' {
				buf = append(buf, unescapeByte[e])
				i += 2
				continue
			}
			r := hex4(s[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = hex4(s[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					buf = utf8.AppendRune(buf, dec)
					i += 6
					continue
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		buf = utf8.AppendRune(buf, r)
		i += size
	}
	return buf
}

// unescapeByte maps the byte after a backslash to what the escape stands for (\u aside).
var unescapeByte = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 decodes four hexadecimal digits, -1 if they are not.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		h := unhex(c)
		if h < 0 {
			return -1
		}
		r = r<<4 | h
	}
	return r
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// str reads the string whose opening quote is at i-1 and returns its contents, unescaped,
// as a view: of the input when nothing needs rewriting, else of d.buf (valid until the
// next call), with the offset after the closing quote.
func (d *decoder) str(i int) ([]byte, int, error) {
	end, rewrite, err := d.scanString(i)
	if err != nil {
		return nil, end, err
	}
	if !rewrite {
		return d.data[i:end], end + 1, nil
	}
	d.buf = unescape(d.buf[:0], d.data[i:end])
	return d.buf, end + 1, nil
}

// literal checks that the literal lit (true, false or null) starts at i.
func (d *decoder) literal(i int, lit string) (int, error) {
	data := d.data
	if i+len(lit) <= len(data) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	for j := 0; j < len(lit); j++ {
		if i+j >= len(data) {
			break
		}
		if data[i+j] != lit[j] {
			return i + j, d.syntaxErr(i+j, "invalid character "+quoteChar(data[i+j])+" in literal "+lit+" (expecting "+quoteChar(lit[j])+")")
		}
	}
	return len(data), d.errEOF()
}

// scanNumber reads the number that starts at i (a '-' or a digit, or an error). isInt is
// true when it has neither fraction nor exponent. The grammar and its error messages are
// jsondecode's (the unstructured decode of the compact mode).
func (d *decoder) scanNumber(i int) (end int, isInt bool, err error) {
	end, isInt, msg := jsondecode.ScanNumber(d.data, i)
	if msg != "" {
		return end, false, d.syntaxErr(end, msg)
	}
	return end, isInt, nil
}

// validNumber reports whether s is exactly one JSON number.
func validNumber(s []byte) bool {
	d := decoder{data: s}
	end, _, err := d.scanNumber(0)
	return err == nil && end == len(s) && len(s) > 0
}

// skip validates the value that starts at i without decoding it.
func (d *decoder) skip(i int) (int, error) {
	data := d.data
	if i >= len(data) {
		return i, d.errEOF()
	}
	switch c := data[i]; c {
	case '{':
		return d.skipObject(i)
	case '[':
		return d.skipArray(i)
	case '"':
		end, _, err := d.scanString(i + 1)
		return end + 1, err
	case 't':
		return d.literal(i, "true")
	case 'f':
		return d.literal(i, "false")
	case 'n':
		return d.literal(i, "null")
	default:
		if c == '-' || c-'0' <= 9 {
			end, _, err := d.scanNumber(i)
			return end, err
		}
		return i, d.syntaxErr(i, "invalid character "+quoteChar(c)+" looking for beginning of value")
	}
}

// enter counts one more level of nesting for the object or array whose bracket is at i.
func (d *decoder) enter(i int) error {
	if d.depth++; d.depth > maxDepth {
		return d.syntaxErr(i, "exceeded max depth")
	}
	return nil
}

// skipObject validates the object whose '{' is at i.
func (d *decoder) skipObject(i int) (int, error) {
	if err := d.enter(i); err != nil {
		return i, err
	}
	data := d.data
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		d.depth--
		return i + 1, nil
	}
	for {
		var err error
		if i, err = d.objectKey(i); err != nil {
			return i, err
		}
		end, _, err := d.scanString(i + 1)
		if err != nil {
			return end, err
		}
		if i, err = d.colon(end + 1); err != nil {
			return i, err
		}
		if i, err = d.skip(i); err != nil {
			return i, err
		}
		var more bool
		if i, more, err = d.next(i, '}'); err != nil || !more {
			return i, err
		}
	}
}

// skipArray validates the array whose '[' is at i.
func (d *decoder) skipArray(i int) (int, error) {
	if err := d.enter(i); err != nil {
		return i, err
	}
	data := d.data
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		d.depth--
		return i + 1, nil
	}
	for {
		var err error
		if i, err = d.skip(i); err != nil {
			return i, err
		}
		var more bool
		if i, more, err = d.next(i, ']'); err != nil || !more {
			return i, err
		}
	}
}

// open enters the object or array whose bracket is at i and returns the offset of its
// first key or element, or, if it is empty, the offset after it with empty true.
func (d *decoder) open(i int, closing byte) (next int, empty bool, err error) {
	if err := d.enter(i); err != nil {
		return i, false, err
	}
	i = skipSpace(d.data, i+1)
	if i < len(d.data) && d.data[i] == closing {
		d.depth--
		return i + 1, true, nil
	}
	return i, false, nil
}

// key reads the key that starts at i and the ':' after it: it returns the key unescaped
// (a view, valid until the next key is read) and the offset of the value.
func (d *decoder) key(i int) ([]byte, int, error) {
	i, err := d.objectKey(i)
	if err != nil {
		return nil, i, err
	}
	key, end, err := d.str(i + 1)
	if err != nil {
		return nil, end, err
	}
	i, err = d.colon(end)
	return key, i, err
}

// objectKey checks that a key starts at i (its opening quote).
func (d *decoder) objectKey(i int) (int, error) {
	data := d.data
	if i >= len(data) {
		return i, d.errEOF()
	}
	if data[i] != '"' {
		return i, d.syntaxErr(i, "invalid character "+quoteChar(data[i])+" looking for beginning of object key string")
	}
	return i, nil
}

// colon reads the ':' after a key, with the space around it, and returns the offset of the
// value.
func (d *decoder) colon(i int) (int, error) {
	data := d.data
	if i < len(data) && data[i] == ':' {
		i++
	} else if i = skipSpace(data, i); i >= len(data) {
		return i, d.errEOF()
	} else if data[i] != ':' {
		return i, d.syntaxErr(i, "invalid character "+quoteChar(data[i])+" after object key")
	} else {
		i++
	}
	if i < len(data) && data[i] <= ' ' {
		i = skipSpace(data, i)
	}
	return i, nil
}

// next reads what follows a member or an element: a ',' (more is true, and i is the start
// of the next key or element) or the closing bracket (more is false, i is after it, and
// the nesting level is left).
func (d *decoder) next(i int, closing byte) (int, bool, error) {
	data := d.data
	if i < len(data) && data[i] <= ' ' {
		i = skipSpace(data, i)
	}
	if i >= len(data) {
		return i, false, d.errEOF()
	}
	switch data[i] {
	case ',':
		return skipSpace(data, i+1), true, nil
	case closing:
		d.depth--
		return i + 1, false, nil
	}
	what := "after object key:value pair"
	if closing == ']' {
		what = "after array element"
	}
	return i, false, d.syntaxErr(i, "invalid character "+quoteChar(data[i])+" "+what)
}
