package jsonpath

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// This file renders maps and lists as JSON exactly like encoding/json.Marshal
// renders the equivalent map[string]any / []any (which is what kubectl
// prints), without reflection, and decodes raw JSON values.

// appendJSONAny encodes a value of a decoded object. The work is charged
// to b: a step per value, levelCost per level of maps and lists, the
// sorting of keys, and the output.
func appendJSONAny(dst []byte, x any, depth int, b *budget) ([]byte, error) {
	if !b.charge(1) {
		return dst, b.err
	}
	dst = grown(dst, minRoom)
	switch t := x.(type) {
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		if depth >= b.depthLimit() {
			return dst, b.tooDeep()
		}
		if !b.charge(levelCost + len(t)) {
			return dst, b.err
		}
		if len(t) == 1 { // no keys to sort
			k, v := only(t)
			return appendJSONMember(append(dst, '{'), k, v, depth, b, '}')
		}
		return appendJSONMap(dst, t, depth, b)
	case []any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		if depth >= b.depthLimit() {
			return dst, b.tooDeep()
		}
		if !b.charge(levelCost) {
			return dst, b.err
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSONAny(dst, e, depth+1, b); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	return appendJSONScalar(dst, x, b)
}

// appendJSONScalar encodes a scalar of a decoded object. (A function of its
// own, so that the frames of the recursion through maps and lists do not
// hold a Value.)
func appendJSONScalar(dst []byte, x any, b *budget) ([]byte, error) {
	if c := (objTree{}).convCost(x); c > 0 && !b.charge(c) {
		return dst, b.err
	}
	v, ok := valueOf(x)
	if !ok {
		return dst, unsupported(x)
	}
	return v.appendJSON(dst, b)
}

// levelCost is the steps of a level of maps or lists printed, decoded or
// raw, beyond the step of its value (and, for a map, of its keys):
// recursion into data nested thousands deep grows the goroutine stack,
// which the first time costs about as much as the printing. With it,
// printing maps of one key nested 9,990 deep runs at up to about 150 ns a
// step the first time on a goroutine, 40 to 100 ns after
// (TestHostileInputsAreBounded logs it).
const levelCost = 3

// only returns the member of a map of one key. (Iterating in a function of
// its own keeps the iterator, a hundred bytes, out of the frames of the
// recursion.)
func only(m map[string]any) (k string, v any) {
	for k, v = range m {
		break
	}
	return k, v
}

// appendJSONMap encodes a map of a decoded object of two keys or more (see
// appendJSONAny, which charged its members), keys sorted. It is a
// function of its own so that the recursion through maps of one key
// carries no key slice in its frames.
func appendJSONMap(dst []byte, t map[string]any, depth int, b *budget) ([]byte, error) {
	keys := make([]string, 0, len(t))
	keyBytes := 0
	for k := range t {
		keys = append(keys, k)
		keyBytes += len(k)
	}
	c := sortCost(len(keys), keyBytes)
	if !b.charge(c) {
		return dst, b.err
	}
	meter.did(len(keys) + c)
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		var err error
		end := byte(',')
		if i == len(keys)-1 {
			end = '}'
		}
		if dst, err = appendJSONMember(dst, k, t[k], depth, b, end); err != nil {
			return dst, err
		}
	}
	if len(keys) == 0 {
		dst = append(dst, '}')
	}
	return dst, nil
}

// appendJSONMember encodes the member k: v of a map at depth, followed by
// end.
func appendJSONMember(dst []byte, k string, v any, depth int, b *budget, end byte) ([]byte, error) {
	dst, ok := appendJSONStringCharged(dst, k, b)
	if !ok {
		return dst, b.err
	}
	dst = append(dst, ':')
	dst, err := appendJSONAny(dst, v, depth+1, b)
	if err != nil {
		return dst, err
	}
	return append(dst, end), nil
}

// wrote charges n bytes of output to b.
func wrote(b *budget, n int) bool {
	c := n / textBytesPerStep
	meter.did(c)
	return c == 0 || b.charge(c)
}

type keyValue struct {
	key string
	val gjson.Result
}

// kvBuffers keeps the slices sortedMembers fills, for the next object's members: its
// caller copies the values out, so that a wildcard or a descent over a large map of raw
// JSON, which filter probes may repeat thousands of times, allocates each member once (its
// value, 80 bytes) rather than three times with the slice's growth; allocation is work the
// garbage collector makes a process with a large heap pay again.
var kvBuffers = sync.Pool{New: func() any { return new([]keyValue) }}

// sortedMembers appends to buf (whose length must be 0) the members of a raw JSON object
// (the scan m of its text) sorted by key, keeping only the last of duplicate keys, and
// returns them with the cost of scanning, parsing and sorting them; it stops when that
// exceeds left.
func sortedMembers(m *members, left int, buf []keyValue) (_ []keyValue, cost int) {
	ms := buf
	keyBytes := 0
	for {
		k, v, ok, c := m.next(true, left-cost)
		if !ok {
			meter.did(c)
			if cost += c; cost > left {
				return ms[:0], cost
			}
			break
		}
		key, escaped := k, false
		if len(key) >= 2 {
			key = key[1 : len(key)-1]
		}
		if escaped = strings.IndexByte(key, '\\') >= 0; escaped {
			c += len(k) / textBytesPerStep
		}
		c += keepCost + parseCost(v)
		meter.did(c)
		if cost += c; cost > left {
			return ms[:0], cost
		}
		if escaped {
			key = unquoteKey(k)
		}
		ms = append(ms, keyValue{key, parseRaw(v)})
		keyBytes += len(key)
	}
	c := sortCost(len(ms), keyBytes)
	if cost += c; cost > left {
		return ms[:0], cost
	}
	meter.did(c)
	slices.SortStableFunc(ms, func(a, b keyValue) int { return strings.Compare(a.key, b.key) })
	out := ms[:0]
	for i := range ms {
		if i+1 < len(ms) && ms[i+1].key == ms[i].key {
			continue // a later duplicate follows
		}
		out = append(out, ms[i])
	}
	return out, cost
}

// parseRaw parses the raw text of a JSON value.
func parseRaw(raw string) gjson.Result { return gjson.Parse(raw) }

// jsonScalar converts a raw JSON value.
func jsonScalar(r gjson.Result) Value {
	var v Value
	setJSONValue(&v, r)
	return v
}

// setJSONValue stores the raw JSON value r into *dst, which must be the
// zero Value (see setValue).
func setJSONValue(dst *Value, r gjson.Result) {
	switch r.Type {
	case gjson.String:
		dst.kind, dst.str = KindString, stringOf(r)
	case gjson.Number:
		*dst = numberValue(r.Raw)
		if dst.kind == KindString { // not valid JSON; keep what gjson read
			*dst = floatValue(r.Num)
		}
	case gjson.True:
		dst.kind, dst.bits = KindBool, 1
	case gjson.False:
		dst.kind = KindBool
	case gjson.JSON:
		dst.kind, dst.str = KindMap, r.Raw
		if r.IsArray() {
			dst.kind = KindList
		}
	default:
		dst.kind = KindNull
	}
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped like
// encoding/json.Marshal does (including HTML characters, U+2028, U+2029,
// and invalid UTF-8 replaced by U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	return append(appendJSONChars(append(dst, '"'), s), '"')
}

// stringChunk is how many bytes of a string appendJSONStringCharged encodes
// between two charges.
const stringChunk = 4096

// appendJSONStringCharged is appendJSONString charging b for its output as
// it goes, a chunk of s at a time, so that printing a long string of a
// decoded object (which escaping can make six times longer: \u0001) stops
// at most a chunk past the budget instead of after encoding all of it.
func appendJSONStringCharged(dst []byte, s string, b *budget) ([]byte, bool) {
	n, charged := len(dst), 0 // charged: the steps charged for dst[n:]
	dst = append(dst, '"')
	for len(s) > 0 {
		k := min(len(s), stringChunk)
		// Cut at the start of a character (a byte of an invalid sequence
		// is encoded alone either way).
		for i := 0; i < utf8.UTFMax-1 && k < len(s) && !utf8.RuneStart(s[k]); i++ {
			k--
		}
		// Room for the chunk escaped, but never past what the budget still pays
		// for: the output of a long string ends where the budget does.
		room := 6*k + 1
		dst = grownWithin(dst, room, room+outputLeft(b))
		dst = appendJSONChars(dst, s[:k])
		s = s[k:]
		c := (len(dst)-n)/textBytesPerStep - charged
		charged += c
		if !wrote(b, c*textBytesPerStep) {
			return dst, false
		}
	}
	dst = append(dst, '"')
	return dst, wrote(b, (len(dst)-n)-charged*textBytesPerStep)
}

// appendJSONChars appends the characters of s escaped as appendJSONString
// escapes them, without the quotes.
func appendJSONChars(dst []byte, s string) []byte {
	dst = grown(dst, len(s)+minRoom)
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = grown(dst, i-start+minRoom) // an escape takes up to 6 bytes
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// minRoom is the room grown makes sure of where printing appends a few bytes at a time:
// more than the longest escape (6 bytes) and a map or list's punctuation.
const minRoom = 16

// grown returns dst with room for n more bytes. When it has to grow, it doubles dst's
// capacity (or more, for a large n): append grows a large slice by a quarter at a time,
// which for an output of megabytes allocates (and copies, and pays the garbage collector
// for) about five times its size; doubling, at most four times, twice on average. Printing calls it where it
// appends, so that its appends of a few bytes never grow the output themselves.
func grown(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	return grownWithin(dst, n, math.MaxInt-len(dst))
}

// grownWithin is grown making no more room than most (at least n): where the budget
// bounds what can still be written, the last doubling need not double.
func grownWithin(dst []byte, n, most int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	c := len(dst) + max(n, min(max(2*cap(dst), 64)-len(dst), most))
	b := make([]byte, len(dst), c)
	copy(b, dst)
	return b
}

// outputLeft is how many bytes of output the budget b still pays for (a large number for
// no budget).
func outputLeft(b *budget) int {
	left := b.left()
	if left >= math.MaxInt/(2*textBytesPerStep) {
		return math.MaxInt / 2
	}
	return max(left, 0) * textBytesPerStep
}

// errNotFinite is the error of printing, inside a map or a list, a number JSON cannot hold:
// NaN or an infinity (math.Inf in a decoded object, or a raw JSON number beyond float64's
// range, such as 1e400). A number printed alone prints as Go prints it (+Inf), as kubectl does.
var errNotFinite = fmt.Errorf("%w: NaN or infinite number inside a map or list cannot be printed as JSON", ErrUnsupportedType)

// appendJSONFloat formats a float the way encoding/json does: like
// JavaScript, plain decimal notation unless the magnitude is below 1e-6 or
// at least 1e21, and exponents without leading zeros.
func appendJSONFloat(dst []byte, f float64, is32 bool) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, errNotFinite
	}
	bits := 64
	if is32 {
		bits = 32
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		if is32 {
			a32 := float32(a)
			if a32 < 1e-6 || a32 >= 1e21 {
				format = 'e'
			}
		} else if a < 1e-6 || a >= 1e21 {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// strconv writes e-07; JSON (and JavaScript) writes e-7.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

func unsupported(x any) error {
	switch x.(type) {
	case []byte, json.RawMessage:
		return fmt.Errorf("%w: %T (raw JSON must be passed as jsonpath.JSON)", ErrUnsupportedType, x)
	}
	return fmt.Errorf("%w: %T", ErrUnsupportedType, x)
}

// rawPrintBytesPerStep is how many bytes of the text of a map or list of raw JSON a result
// is charged a step for (see resultCost): printing raw JSON took 6 to 8 ns a byte on
// Kubernetes objects and 32 to 41 ns on text made of the smallest items ([1,1,...], many
// short keys), decoding it (Interface) up to 63 ns (best of 5 on the 2-core machine of
// bench/README.md), so that 4 bytes a step cost at most about 160 ns printed, 250 decoded;
// TestResultsPrintWithinTheBudget checks the steps.
const rawPrintBytesPerStep = 4

// resultCost returns the steps a result of Eval costs beyond its conversion, given the
// steps left: a map or list is charged what printing it costs (see printCost; for raw JSON,
// the sorting of its keys too), so that the
// values of an evaluation that holds its budget can also be printed (String) or decoded
// (Interface) in time the budget bounds, however many they are and however they overlap
// ({..*} on nested lists, {@,@,@}). A result that would cost more than left returns more
// than left. Each does not charge it: its callback sees each value once and decides what
// to do with it (query filters and index functions look at maps and lists without
// printing them).
func resultCost(v *Value, left, maxDepth int) int {
	switch {
	case v.kind != KindMap && v.kind != KindList:
		return 0
	case v.ref != nil:
		return printCost(v.ref, 0, left, maxDepth)
	}
	if c := 1 + len(v.str)/rawPrintBytesPerStep; c > left { // before reading it
		return c
	}
	meter.did(len(v.str) / scanBytesPerStep)
	keys, keyBytes, items := rawShape(v.str)
	// Printing sorts the keys of each of its objects, which sorting all its keys at once
	// bounds, and printing or decoding it takes time for each of its items (members,
	// elements, maps and lists) beyond its bytes.
	return 1 + len(v.str)/rawPrintBytesPerStep + sortCost(keys, keyBytes) + items
}

// rawShape returns the number of keys in the raw JSON value s (at any depth), their bytes,
// and the number of its members, elements, maps and lists past the first of each map or
// list, counting the commas and brackets outside strings. It reads s once: a fraction of
// the work of printing it.
func rawShape(s string) (keys, keyBytes, items int) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			end := skipString(s, i)
			if j := skipSpace(s, end); j < len(s) && s[j] == ':' {
				keys++
				keyBytes += end - i
			}
			i = end - 1
		case ',', '{', '[':
			items++
		}
	}
	return keys, keyBytes, items
}

// printCost returns the steps appendJSONAny charges to print x, a value of a decoded
// object, at depth: one a value, levelCost and one a key for a map, with the sorting of its
// keys, levelCost for a list, and the text of strings and keys, escaped (up to six times
// their length). It stops counting, returning more than left, as soon as the steps exceed
// left (the work of counting is a fraction of the steps counted), and does not count below
// the depth limit (printing fails there).
func printCost(x any, depth, left, maxDepth int) int {
	switch t := x.(type) {
	case map[string]any:
		if t == nil || depth >= maxDepth {
			return 1
		}
		if c := 1 + levelCost + len(t); c > left { // before reading its keys
			return c
		}
		meter.did(len(t))
		keyBytes := 0
		for k := range t {
			keyBytes += len(k)
		}
		c := 1 + levelCost + len(t) + sortCost(len(t), keyBytes)
		if c+(keyBytes+2*len(t))/textBytesPerStep > left { // before reading the keys' bytes
			return c + (keyBytes+2*len(t))/textBytesPerStep
		}
		meter.did(keyBytes / scanBytesPerStep)
		printed := 0 // the keys escaped
		for k := range t {
			printed += escapedLen(k)
		}
		c += (printed + 2*len(t)) / textBytesPerStep
		for _, v := range t {
			if c > left {
				return c
			}
			c += printCost(v, depth+1, left-c, maxDepth)
		}
		return c
	case []any:
		if t == nil || depth >= maxDepth {
			return 1
		}
		c := 1 + levelCost
		for _, v := range t {
			if c > left {
				return c
			}
			c += printCost(v, depth+1, left-c, maxDepth)
		}
		return c
	case string:
		if c := 1 + (len(t)+2)/textBytesPerStep; c > left { // before reading it
			return c
		}
		meter.did(len(t) / scanBytesPerStep)
		return 1 + (escapedLen(t)+2)/textBytesPerStep
	}
	return 1 + (objTree{}).convCost(x)
}

// escapedLen returns the length of s escaped as appendJSONChars escapes it (up to six times
// its length: \u0001, \u003c, \ufffd).
func escapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&':
				n++
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
