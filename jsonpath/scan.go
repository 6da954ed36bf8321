package jsonpath

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// A scanner over JSON text. Raw JSON is navigated with it rather than with
// gjson's ForEach, which converts every value it passes over (numbers to
// float64, which takes milliseconds for a number of a million digits;
// escaped strings to new strings) before the evaluator can charge for
// them: the scanner only skips values, and only the values the evaluator
// selects, charged first, are parsed by gjson.
//
// The scanner expects valid JSON. On invalid JSON it returns arbitrary
// parts of its input, but it never panics and its work is linear in the
// length of the input.

// scanClass classifies bytes for skipping: the bytes that open or close a
// string, an object or an array.
var scanClass = [256]uint8{'"': 1, '{': 2, '[': 2, '}': 3, ']': 3}

// skipSpace returns the position of the first byte at or after i that is
// not white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the position just after the string that starts at
// s[i] (a quote), or len(s) if it does not end.
func skipString(s string, i int) int {
	return endOfString(s, i+1)
}

// endOfString returns the position just after the quote that ends the
// string whose contents start at i (after its opening quote), or len(s).
// It looks for quotes 8 bytes at a time, and then at the backslashes
// before one: an odd number of them escapes it.
func endOfString(s string, i int) int {
	for {
		for i+8 <= len(s) {
			w := s[i : i+8]
			if w[0] == '"' {
				break
			}
			if w[1] == '"' {
				i++
				break
			}
			if w[2] == '"' {
				i += 2
				break
			}
			if w[3] == '"' {
				i += 3
				break
			}
			if w[4] == '"' {
				i += 4
				break
			}
			if w[5] == '"' {
				i += 5
				break
			}
			if w[6] == '"' {
				i += 6
				break
			}
			if w[7] == '"' {
				i += 7
				break
			}
			i += 8
		}
		for i < len(s) && s[i] != '"' {
			i++
		}
		if i >= len(s) {
			return len(s)
		}
		k := i // the opening quote stops this
		for s[k-1] == '\\' {
			k--
		}
		if i++; (i-1-k)%2 == 0 {
			return i
		}
	}
}

// skipValue returns the position just after the value that starts at
// s[i], or i if none does.
func skipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			// Find the next byte of interest, 8 bytes at a time.
			for i+8 <= len(s) {
				w := s[i : i+8]
				if scanClass[w[0]] != 0 {
					break
				}
				if scanClass[w[1]] != 0 {
					i++
					break
				}
				if scanClass[w[2]] != 0 {
					i += 2
					break
				}
				if scanClass[w[3]] != 0 {
					i += 3
					break
				}
				if scanClass[w[4]] != 0 {
					i += 4
					break
				}
				if scanClass[w[5]] != 0 {
					i += 5
					break
				}
				if scanClass[w[6]] != 0 {
					i += 6
					break
				}
				if scanClass[w[7]] != 0 {
					i += 7
					break
				}
				i += 8
			}
			if i >= len(s) {
				break
			}
			switch c := s[i]; c {
			case '"':
				// endOfString, inlined: documents have many short strings.
				i++
			str:
				for {
					for i+8 <= len(s) {
						w := s[i : i+8]
						if w[0] == '"' {
							break
						}
						if w[1] == '"' {
							i++
							break
						}
						if w[2] == '"' {
							i += 2
							break
						}
						if w[3] == '"' {
							i += 3
							break
						}
						if w[4] == '"' {
							i += 4
							break
						}
						if w[5] == '"' {
							i += 5
							break
						}
						if w[6] == '"' {
							i += 6
							break
						}
						if w[7] == '"' {
							i += 7
							break
						}
						i += 8
					}
					for i < len(s) && s[i] != '"' {
						i++
					}
					if i >= len(s) {
						return len(s)
					}
					k := i
					for s[k-1] == '\\' {
						k--
					}
					if i++; (i-1-k)%2 == 0 {
						break str
					}
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(s)
	}
	for j := i; j < len(s); j++ { // a number or a literal
		switch s[j] {
		case ',', '}', ']', ':', ' ', '\n', '\t', '\r':
			return j
		}
	}
	return len(s)
}

// nextItem scans the next member of an object or element of an array in
// its text s, from position i: just after the opening bracket or after the
// previous item. key is the member's key as written, quotes included, and
// at its position; val is the value's text. ok is false at the end of the
// container (next is then the position of the closing bracket), or at
// anything that is not an item.
func nextItem(s string, i int, object bool) (key string, at int, val string, next int, ok bool) {
	i = skipSpace(s, i)
	if i < len(s) && s[i] == ',' {
		i = skipSpace(s, i+1)
	}
	if object {
		if i >= len(s) || s[i] != '"' {
			return "", 0, "", i, false
		}
		at = i
		end := skipString(s, i)
		key = s[i:end]
		if i = skipSpace(s, end); i < len(s) && s[i] == ':' {
			i = skipSpace(s, i+1)
		}
	}
	end := skipValue(s, i)
	if end == i || s[i] == '}' || s[i] == ']' {
		return "", 0, "", i, false
	}
	return key, at, s[i:end], end, true
}

// scanEnd returns how far a scan from s[i] may read when steps are left:
// an item (or white space) that does not end before that costs more (see
// itemCost), so the scan stops there, a step's worth of bytes past what the
// steps pay for at most, and its charge fails. Scanning a single huge value
// thus overshoots the budget by a constant, not in proportion to its size.
func scanEnd(s string, i, steps int) int {
	if steps >= (len(s)-i)/scanBytesPerStep {
		return len(s)
	}
	return i + max(steps, 1)*scanBytesPerStep
}

// scanItem is nextItem reading no further than what steps, the steps
// left, pay for (see scanEnd). cost is the steps of what it read: the
// itemCost of an item; at the end of the container, a step per
// scanBytesPerStep bytes of the white space before it; and when it was cut
// short, the itemCost of what it read, which exceeds steps (ok is then
// false).
func scanItem(s string, i int, object bool, steps int) (key string, at int, val string, next int, ok bool, cost int) {
	lim := scanEnd(s, i, steps)
	key, at, val, next, ok = nextItem(s[:lim], i, object)
	switch {
	case next >= lim && lim < len(s): // cut short
		return "", 0, "", next, false, itemCost(s[i:next])
	case !ok:
		return "", 0, "", next, false, (next - i) / scanBytesPerStep
	}
	return key, at, val, next, true, itemCost(s[i:next])
}

// keyIs reports whether a key as written (see nextItem) is name, and the
// steps decoding its escapes cost, if it has any. When they exceed left it
// returns them without decoding: the caller's charge then fails first.
func keyIs(written, name string, left int) (bool, int) {
	if len(written) < 2 {
		return false, 0
	}
	inner := written[1 : len(written)-1]
	if len(inner) < len(name) { // escapes only make keys longer
		return false, 0
	}
	if len(inner) == len(name) && inner != name {
		// Equal lengths: an escape would make the key decode shorter than name.
		return false, 0
	}
	if len(inner) > len(name) && len(name) > 0 {
		// Only an escape can make it decode to name, and the first byte of what it decodes
		// to is its own unless it is a backslash (or a control byte, which ends the key).
		if c := inner[0]; c != '\\' && c >= ' ' && c != name[0] {
			return false, 0
		}
	}
	if strings.IndexByte(inner, '\\') < 0 {
		return inner == name, 0
	}
	c := len(written) / textBytesPerStep
	if c > left {
		return false, c // charged first: the caller fails without the key being decoded
	}
	return unquoteKey(written) == name, c
}

// unquoteKey returns a key as written (see nextItem), its escapes decoded
// the way gjson decodes them.
func unquoteKey(written string) string {
	return stringOf(parseRaw(written))
}

// stringOf returns the string a raw JSON string r holds, as encoding/json
// (and so Kubernetes' decoders) decode it. gjson decodes it the same way
// except for an escaped UTF-16 surrogate that is not followed by its pair:
// gjson takes the escape after it, whatever it is, as the pair, and
// yields a single U+FFFD for both ("\ud800\u0041" gives "\ufffd" where
// encoding/json gives "\ufffdA"). Such a string has U+FFFD in gjson's
// result and escapes in its text (which make the result shorter than the
// text): only then is it decoded again.
func stringOf(r gjson.Result) string {
	if len(r.Str)+2 < len(r.Raw) && strings.Contains(r.Str, "\ufffd") {
		return unquoteJSON(r.Raw)
	}
	return r.Str
}

// unquoteJSON decodes the text of a JSON string, quotes included, the way
// encoding/json does (bytes that are not escapes are kept as they are).
func unquoteJSON(raw string) string {
	if len(raw) < 2 {
		return ""
	}
	s := raw[1 : len(raw)-1]
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch e := s[i+1]; e {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return string(b)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s[i+2:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError // the next escape is read on its own
				}
			}
			b = utf8.AppendRune(b, r)
			continue
		default: // '"', '\\', '/'
			b = append(b, e)
		}
		i += 2
	}
	return string(b)
}

// hex4 returns the value of the four hexadecimal digits s starts with.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// numCost returns the steps converting the text of a number costs:
// nothing for the numbers of real objects; for a long one, strconv takes
// tens of nanoseconds a digit; and one that strconv may convert the
// exact, slow way (see slowNumCost) up to about 60 µs more.
func numCost(text string) int {
	if len(text) <= 19 && !strings.ContainsAny(text, "eE") {
		// At most 19 digits and a decimal exponent within ±18: strconv's fast path. The
		// numbers of real objects, without a look at each digit.
		return 0
	}
	c := slowNumCost(text)
	if len(text) > 32 {
		c += len(text) / 2
	}
	return c
}

// slowNumCost returns the steps of strconv.ParseFloat's exact conversion
// if text may need it: when the number has more than 19 significant
// digits, or a decimal exponent beyond 22 (the fast paths stop at 19
// digits and exact powers of ten; beyond them, a rounding that cannot be
// decided quickly, and values near or past the ends of float64's range,
// subnormal, rounding to zero or overflowing, take the exact conversion).
// That conversion shifts a decimal of up to 800 digits by the number's
// binary exponent, 60 bits at a time, the decimal growing as it goes: its
// time grows a little faster than the decimal exponent. Measured on the
// numbers no fast path can round (21 digits just off the halfway point
// between two float64s; BenchmarkSlowNumbers, the slowest of 4 runs on a
// loaded 2-core machine): about 1 µs near 1e0 and 1e-42, 6 µs at 1e91,
// 12 µs at 1e181, 24 µs at 1e271, 31 µs at 1e287, 14 µs at 1e-312 and
// 20 µs for the subnormal 4.9406564584124654e-324, where most numbers take
// 20 to 50 ns. The charge, 16 + e/2 + e²/512 for an exponent e (at most
// 350: beyond 1e±350 strconv gives up at once), keeps each at 50 to 120 ns
// a step. The digits of a long number are charged apart (numCost).
func slowNumCost(text string) int {
	digits, exp10 := numShape(text)
	if digits == 0 || digits <= 19 && abs(exp10) <= 22 {
		return 0
	}
	e := min(abs(exp10), 350)
	return 16 + e/2 + e*e/512
}

// numShape returns the number of significant digits of the JSON number
// text (leading zeros excepted) and the decimal exponent of its first
// one (2 for 123.4, -3 for 0.00123, 21 for 1e21); both are 0 for zero.
// Text that is not a number gives arbitrary results.
func numShape(text string) (digits, exp10 int) {
	i := 0
	if i < len(text) && text[i] == '-' {
		i++
	}
	whole, lead, point := 0, 0, false // digits before the point, zeros after it before the first digit
	for ; i < len(text); i++ {
		c := text[i]
		if c == '.' {
			point = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		if c == '0' && digits == 0 {
			if point {
				lead++
			}
			continue
		}
		digits++
		if !point {
			whole++
		}
	}
	switch {
	case digits == 0:
		return 0, 0
	case whole > 0:
		exp10 = whole - 1
	default:
		exp10 = -lead - 1
	}
	return digits, exp10 + expOf(text[i:])
}

// expOf returns the value of the exponent part s of a number (e-7,
// E+21), saturated at ±1,000,000, or 0 if s is not one.
func expOf(s string) int {
	if len(s) < 2 || s[0] != 'e' && s[0] != 'E' {
		return 0
	}
	s = s[1:]
	neg := s[0] == '-'
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	e := 0
	for i := 0; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		e = min(e*10+int(s[i]-'0'), 1_000_000)
	}
	if neg {
		return -e
	}
	return e
}

// abs returns the absolute value of n.
func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// parseCost returns the steps that parsing the text of a value with gjson
// costs beyond its scanning: converting a number, or reading a string
// again (gjson finds its end byte by byte) and unescaping it.
func parseCost(val string) int {
	if val == "" {
		return 0
	}
	switch c := val[0]; {
	case c == '"':
		if strings.IndexByte(val, '\\') >= 0 {
			return len(val) / textBytesPerStep
		}
		return len(val) / scanBytesPerStep
	case c == '-' || '0' <= c && c <= '9':
		return numCost(val)
	}
	return 0
}
