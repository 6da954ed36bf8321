package jsondecode

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"math/bits"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays accepted, the same bound as
// apimachinery's decoder (encoding/json's scanner): deeper input is an error, never a
// stack overflow.
const MaxDepth = 10000

// Tuning, measured on realistic Pods (see bench_test.go and doc.go).
const (
	// maxLearnt bounds the strings a Decoder learns from its input, on top of
	// commonStrings; when that many are learnt, the table is emptied before the next
	// call.
	maxLearnt = 2048
	// maxInternKey and maxInternValue are the longest keys and string values interned.
	maxInternKey   = 128
	maxInternValue = 32
	// maxKeptScratch is the largest scratch stack (in entries) a Decoder keeps between
	// calls.
	maxKeptScratch = 1 << 16
)

// SyntaxError is returned for malformed JSON. Offset is the byte offset in the input
// at which the error was detected.
type SyntaxError struct {
	Offset int64
	msg    string
}

func (e *SyntaxError) Error() string {
	return e.msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

// Decoder decodes JSON into the values apimachinery's util/json.Unmarshal produces.
// It keeps scratch buffers and a bounded table of interned strings between calls:
// keeping one per stream (an informer's lists and watch events) shares more strings
// and costs less than the package functions, which draw Decoders from a sync.Pool.
// A Decoder is not safe for concurrent use. The zero value is ready to use.
type Decoder struct {
	data  []byte
	depth int

	// Scratch: the members and elements of the open objects and arrays, each made
	// into a map or slice of its exact size when it closes; unescaped string bytes.
	keys           []string
	vals           []any
	maxKey, maxVal int // high-water marks of keys and vals in this call
	esc            []byte

	// The intern table: commonStrings first, then strings learnt from the input.
	// slots (open addressing, linear probing) hold 1 + the number of a string, 0 if
	// free; box holds the interface value of a string once it is used as a value.
	slots []uint32
	seed  maphash.Seed
	strs  []string
	box   []any
	// pred guesses, before any hashing, which interned string comes next: 1 + its
	// number, 0 if no guess. Its slots are chosen by where the string is (see
	// predSlot), whatever the kind of object: Kubernetes objects of one kind repeat
	// their keys in the same order and many values with them.
	pred []uint32
}

var pool = sync.Pool{New: func() any { return new(Decoder) }}

// Object decodes a JSON object as util/json.Unmarshal(data, &m) does for a
// map[string]any m: "null" yields a nil map and no error, any other value that is not
// an object is an error. The maps and slices of the result are new and belong to the
// caller; its strings, and the interface values holding them, may be shared with other
// results, which is invisible because strings are immutable.
func Object(data []byte) (map[string]any, error) {
	d := pool.Get().(*Decoder)
	m, err := d.Object(data)
	pool.Put(d)
	return m, err
}

// Value decodes any JSON value as util/json.Unmarshal(data, &v) does for an any v.
func Value(data []byte) (any, error) {
	d := pool.Get().(*Decoder)
	v, err := d.Value(data)
	pool.Put(d)
	return v, err
}

// Object is the package function Object with d's scratch and intern table.
func (d *Decoder) Object(data []byte) (map[string]any, error) {
	v, err := d.Value(data)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case nil:
		return nil, nil
	}
	return nil, &json.UnmarshalTypeError{Value: typeName(v), Type: reflect.TypeFor[map[string]any](), Offset: int64(len(data))}
}

// Value is the package function Value with d's scratch and intern table.
func (d *Decoder) Value(data []byte) (any, error) {
	d.resetIntern()
	d.data = data
	d.depth = 0
	i := skipSpace(data, 0)
	v, i, err := d.value(i, 0, 0)
	if err == nil {
		if i = skipSpace(data, i); i < len(data) {
			err = d.errAt(i, "invalid character "+QuoteChar(data[i])+" after top-level value")
		}
	}
	d.reset()
	if err != nil {
		return nil, err
	}
	return v, nil
}

func typeName(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case int64, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "value"
}

// reset drops every reference to the input and to the values of the last call.
func (d *Decoder) reset() {
	d.data = nil
	clear(d.keys[:d.maxKey])
	clear(d.vals[:d.maxVal])
	d.maxKey, d.maxVal = 0, 0
	d.keys, d.vals, d.esc = d.keys[:0], d.vals[:0], d.esc[:0]
	if cap(d.keys) > maxKeptScratch {
		d.keys = nil
	}
	if cap(d.vals) > maxKeptScratch {
		d.vals = nil
	}
	if cap(d.esc) > maxKeptScratch*16 {
		d.esc = nil
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// QuoteChar quotes a byte for a syntax error message as encoding/json does.
func QuoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// eofMessage is the message of a syntax error at the end of the input.
const eofMessage = "unexpected end of JSON input"

// ScanNumber scans the JSON number that starts at data[i] (a '-' or a digit) and returns
// the position just after it and whether it is an integer (neither fraction nor exponent).
// On a syntax error it returns the error's position and encoding/json's message for it;
// msg is empty otherwise. kindex's typed decoder (internal/typedjson) shares it.
func ScanNumber(data []byte, i int) (end int, isInt bool, msg string) {
	if i < len(data) && data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return len(data), false, eofMessage
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
	default:
		return i, false, "invalid character " + QuoteChar(c) + " in numeric literal"
	}
	isInt = true
	if i < len(data) && data[i] == '.' {
		isInt = false
		i++
		if i >= len(data) {
			return len(data), false, eofMessage
		}
		if data[i]-'0' > 9 {
			return i, false, "invalid character " + QuoteChar(data[i]) + " after decimal point in numeric literal"
		}
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		isInt = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			return len(data), false, eofMessage
		}
		if data[i]-'0' > 9 {
			return i, false, "invalid character " + QuoteChar(data[i]) + " in exponent of numeric literal"
		}
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
	}
	return i, isInt, ""
}

func (d *Decoder) errAt(i int, msg string) error {
	return &SyntaxError{Offset: int64(i), msg: msg}
}

func (d *Decoder) errEOF() error {
	return &SyntaxError{Offset: int64(len(d.data)), msg: eofMessage}
}

// value decodes the value that starts at i and returns it with the offset after it.
// key is the member name it is the value of (of its array, for an element), parent
// the name of that member's object, each as 1 + an intern number, 0 if none.
func (d *Decoder) value(i int, parent, key uint32) (any, int, error) {
	data := d.data
	if i >= len(data) {
		return nil, i, d.errEOF()
	}
	switch c := data[i]; c {
	case '{':
		return d.object(i+1, key)
	case '[':
		return d.array(i+1, parent, key)
	case '"':
		s, k, i, err := d.str(i+1, false, predSlot(parent|1<<31, key))
		if err != nil || k < 0 {
			return s, i, err
		}
		b := d.box[k]
		if b == nil {
			b = d.strs[k]
			d.box[k] = b
		}
		return b, i, nil
	case 't':
		if i+4 <= len(data) && string(data[i:i+4]) == "true" {
			return true, i + 4, nil
		}
		return nil, i, d.errLiteral(i, "true")
	case 'f':
		if i+5 <= len(data) && string(data[i:i+5]) == "false" {
			return false, i + 5, nil
		}
		return nil, i, d.errLiteral(i, "false")
	case 'n':
		if i+4 <= len(data) && string(data[i:i+4]) == "null" {
			return nil, i + 4, nil
		}
		return nil, i, d.errLiteral(i, "null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return d.number(i)
		}
		return nil, i, d.errAt(i, "invalid character "+QuoteChar(c)+" looking for beginning of value")
	}
}

func (d *Decoder) errLiteral(i int, lit string) error {
	data := d.data
	for j := 0; j < len(lit); j++ {
		if i+j >= len(data) {
			break
		}
		if data[i+j] != lit[j] {
			return d.errAt(i+j, "invalid character "+QuoteChar(data[i+j])+" in literal "+lit+" (expecting "+QuoteChar(lit[j])+")")
		}
	}
	return d.errEOF()
}

// object decodes the members of the object whose '{' is at i-1; parent is the name
// of the member it is the value of (see value).
func (d *Decoder) object(i int, parent uint32) (any, int, error) {
	if d.depth++; d.depth > MaxDepth {
		return nil, i, d.errAt(i-1, "exceeded max depth")
	}
	data := d.data
	base := len(d.keys)
	i = skipSpace(data, i)
	if i < len(data) && data[i] == '}' {
		d.depth--
		return make(map[string]any), i + 1, nil
	}
	var prev uint32 // the previous key (see value)
	for {
		if i >= len(data) {
			return nil, i, d.errEOF()
		}
		if data[i] != '"' {
			return nil, i, d.errAt(i, "invalid character "+QuoteChar(data[i])+" looking for beginning of object key string")
		}
		key, k, j, err := d.str(i+1, true, predSlot(parent, prev))
		if err != nil {
			return nil, j, err
		}
		prev = uint32(k + 1) // 0 when not interned
		if d.keys = append(d.keys, key); len(d.keys) > d.maxKey {
			d.maxKey = len(d.keys)
		}
		i = j
		if i < len(data) && data[i] == ':' {
			i++
		} else if i = skipSpace(data, i); i >= len(data) {
			return nil, i, d.errEOF()
		} else if data[i] != ':' {
			return nil, i, d.errAt(i, "invalid character "+QuoteChar(data[i])+" after object key")
		} else {
			i++
		}
		if i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		var v any
		if v, i, err = d.value(i, parent, prev); err != nil {
			return nil, i, err
		}
		d.push(v)
		if i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		if i >= len(data) {
			return nil, i, d.errEOF()
		}
		if data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if data[i] == '}' {
			break
		}
		return nil, i, d.errAt(i, "invalid character "+QuoteChar(data[i])+" after object key:value pair")
	}
	// Every member is read: make the map at its final size. A duplicate key counts
	// twice in the size hint; the last value wins, as in encoding/json.
	keys := d.keys[base:]
	vbase := len(d.vals) - len(keys)
	vals := d.vals[vbase:]
	m := make(map[string]any, len(keys))
	for j, k := range keys {
		m[k] = vals[j]
	}
	d.keys = d.keys[:base]
	d.vals = d.vals[:vbase]
	d.depth--
	return m, i + 1, nil
}

// array decodes the elements of the array whose '[' is at i-1; parent and key are as
// for value.
func (d *Decoder) array(i int, parent, key uint32) (any, int, error) {
	if d.depth++; d.depth > MaxDepth {
		return nil, i, d.errAt(i-1, "exceeded max depth")
	}
	data := d.data
	base := len(d.vals)
	i = skipSpace(data, i)
	if i < len(data) && data[i] == ']' {
		d.depth--
		return make([]any, 0), i + 1, nil
	}
	for {
		v, j, err := d.value(i, parent, key)
		if err != nil {
			return nil, j, err
		}
		d.push(v)
		i = j
		if i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		if i >= len(data) {
			return nil, i, d.errEOF()
		}
		if data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if data[i] == ']' {
			break
		}
		return nil, i, d.errAt(i, "invalid character "+QuoteChar(data[i])+" after array element")
	}
	a := make([]any, len(d.vals)-base)
	copy(a, d.vals[base:])
	d.vals = d.vals[:base]
	d.depth--
	return a, i + 1, nil
}

func (d *Decoder) push(v any) {
	d.vals = append(d.vals, v)
	if len(d.vals) > d.maxVal {
		d.maxVal = len(d.vals)
	}
}

// plain[c] is true for bytes that stand for themselves inside a string and need no
// check: printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str decodes the string (an object key if key) whose opening quote is at i-1; slot is
// its prediction slot (see predSlot). It returns the string, its number in the intern table (-1 if not
// interned) and the offset after the closing quote.
func (d *Decoder) str(i int, key bool, slot uint32) (string, int, int, error) {
	data := d.data
	start := i
	for {
		// Eight bytes at a time to the first that needs a look: a quote, a backslash, a
		// control character or a byte of a multi-byte sequence. A byte is flagged (its
		// high bit set in m) if it is one of those, or if a borrow from a flagged byte
		// below it reaches it: the lowest flag is exact.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			const lo, hi = 0x0101010101010101, 0x8080808080808080
			if m := ((x - lo*0x20) | ((x ^ lo*'"') - lo) | ((x ^ lo*'\\') - lo) | x) & hi; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i >= len(data) {
			return "", -1, i, d.errEOF()
		}
		c := data[i]
		if c == '"' {
			s, k := d.intern(data[start:i], key, slot)
			return s, k, i + 1, nil
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				break // invalid UTF-8: to be rewritten
			}
			i += size
			continue
		}
		if c == '\\' {
			break
		}
		return "", -1, i, d.errAt(i, "invalid character "+QuoteChar(c)+" in string literal")
	}
	// Slow path: unescape into d.esc, from the first byte that needs it on, the way
	// encoding/json does.
	d.esc = append(d.esc[:0], data[start:i]...)
	for {
		if i >= len(data) {
			return "", -1, i, d.errEOF()
		}
		c := data[i]
		switch {
		case c == '"':
			s, k := d.intern(d.esc, key, slot)
			return s, k, i + 1, nil
		case c == '\\':
			if i+1 >= len(data) {
				return "", -1, i, d.errEOF()
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				d.esc = append(d.esc, e)
			case 'b':
				d.esc = append(d.esc, '\b')
			case 'f':
				d.esc = append(d.esc, '\f')
			case 'n':
				d.esc = append(d.esc, '\n')
			case 'r':
				d.esc = append(d.esc, '\r')
			case 't':
				d.esc = append(d.esc, '\t')
			case 'u':
				r, err := d.hex4(i + 2)
				if err != nil {
					return "", -1, i, err
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A valid pair is consumed whole; anything else yields U+FFFD for
					// this escape and leaves what follows to the next iteration.
					if r2, ok := peekU4(data[i:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							d.esc = utf8.AppendRune(d.esc, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				d.esc = utf8.AppendRune(d.esc, r)
				continue
			default:
				return "", -1, i, d.errAt(i+1, "invalid character "+QuoteChar(e)+" in string escape code")
			}
			i += 2
		case c < 0x20:
			return "", -1, i, d.errAt(i, "invalid character "+QuoteChar(c)+" in string literal")
		case c < utf8.RuneSelf:
			d.esc = append(d.esc, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			d.esc = utf8.AppendRune(d.esc, r) // each invalid byte becomes U+FFFD
			i += size
		}
	}
}

// hex4 decodes the four hexadecimal digits at i.
func (d *Decoder) hex4(i int) (rune, error) {
	data := d.data
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(data) {
			return 0, d.errEOF()
		}
		h := unhex(data[j])
		if h < 0 {
			return 0, d.errAt(j, "invalid character "+QuoteChar(data[j])+" in \\u hexadecimal character escape")
		}
		r = r<<4 | h
	}
	return r, nil
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

// peekU4 decodes a \uXXXX at the start of s.
func peekU4(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		h := unhex(c)
		if h < 0 {
			return 0, false
		}
		r = r<<4 | h
	}
	return r, true
}

// number decodes the number that starts at i: an int64 if it has neither fraction nor
// exponent and fits, else a float64, as util/json does.
func (d *Decoder) number(i int) (any, int, error) {
	data := d.data
	start := i
	i, isInt, msg := ScanNumber(data, i)
	if msg != "" {
		return nil, i, &SyntaxError{Offset: int64(i), msg: msg}
	}
	lit := data[start:i]
	if isInt {
		// Up to 18 digits cannot overflow an int64.
		if digits := lit; len(digits) <= 18 || len(digits) == 19 && digits[0] == '-' {
			neg := digits[0] == '-'
			if neg {
				digits = digits[1:]
			}
			var v int64
			for _, c := range digits {
				v = v*10 + int64(c-'0')
			}
			if neg {
				v = -v
			}
			return v, i, nil
		}
		if v, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return v, i, nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		// Only a magnitude beyond float64's range gets here: util/json reports it as
		// an UnmarshalTypeError, and so do we.
		return nil, i, &json.UnmarshalTypeError{Value: "number " + string(lit), Type: reflect.TypeFor[float64](), Offset: int64(i)}
	}
	return f, i, nil
}

// predBits is log2 of the size of the prediction table.
const predBits = 12

// predSlot returns the prediction slot of a string found at a place: for a key, after
// key prev (0 for the first) in an object that is the value of member parent; for a
// string value, the value of member key in an object that is the value of member
// parent, called with parent|1<<31 (names as for value).
func predSlot(parent, prev uint32) uint32 {
	return uint32((uint64(parent)<<32 | uint64(prev)) * 0x9e3779b97f4a7c15 >> (64 - predBits))
}

// intern returns the string b holds (an object key if key) and its number in the
// intern table, or -1 if it is too long to intern or the table is full. slot is its
// prediction slot.
func (d *Decoder) intern(b []byte, key bool, slot uint32) (string, int) {
	if key && len(b) > maxInternKey || !key && len(b) > maxInternValue {
		return string(b), -1
	}
	if next := d.pred[slot]; next != 0 && d.strs[next-1] == string(b) {
		return d.strs[next-1], int(next - 1)
	}
	k, ok := d.lookup(b)
	if !ok {
		return string(b), -1
	}
	d.pred[slot] = uint32(k) + 1
	return d.strs[k], int(k)
}
