package compact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Streaming LIST decoding. DecodeListFrom reads a LIST body through a buffer and decodes
// each item as soon as its bytes are buffered, with the same scanners as DecodeList; the
// bytes of an item are dropped once it is decoded, so memory is bounded by the largest
// item (and the largest other top-level member) plus the buffer, not by the body.
//
// The scanners work on complete byte slices, so the question at each step is whether a
// result computed on the bytes buffered so far is the one the whole body would give. A
// sentinel byte (0x00, invalid anywhere in JSON) after the buffered bytes answers it: a
// scanner that reaches the sentinel stops there with an error, and one whose error is at
// least maxLookahead bytes before the sentinel looked only at bytes that were read (the
// scanners are sequential, and literals are the only lookahead); a successful scan that
// ends before the sentinel, or on a closing quote, bracket or brace, is complete. Any other
// result is recomputed after reading more (at least doubling the bytes from the value's
// start, so that the rescans cost at most as much again as one scan of the value). At the
// end of the body there is no sentinel and the results are final: they are the ones
// DecodeList gives for the same bytes, errors included.
//
// Items of typed lists get the list's kind and apiVersion as they are decoded. If the
// list's kind or apiVersion turns up only after the items (or again, with another value),
// DecodeList decodes the items again; the bytes are gone by then, so the items that were
// given the old ones are rewritten from their own bytes, in which decodeAt put the
// injected members first: the old members are replaced by the new, and the result decoded
// again (the cut and the projection are idempotent). That costs a decode of each such
// item, but only for such unusual bodies.

// streamBufferSize is DecodeListFrom's initial buffer: several typical objects, a few
// HTTP/2 DATA frames. It grows (doubling) only when one value does not fit.
const streamBufferSize = 64 << 10

// maxLookahead is how far past an error offset the scanners may have read: skipLiteral
// compares the whole literal ("false") to the bytes at its start.
const maxLookahead = len("false") - 1

// maxEmptyReads is how many reads in a row may return nothing before giving up, as bufio
// does.
const maxEmptyReads = 100

// DecodeListFrom decodes a LIST body read from r, as DecodeList decodes the whole body,
// but item by item as the bytes arrive: each item is decoded as soon as it has been read
// (while the rest of the body is still in flight) and its bytes are then dropped. Besides
// the decoded items, the memory used is a read buffer of 64 KB, grown (by doubling) only
// when a single item, or another top-level value, does not fit in it: bounded by the
// largest item, never the whole body. r is read until io.EOF (bytes other than space after
// the list are an error) and is not closed.
//
// The result is DecodeList's for the same bytes: the same items, TypeMeta and ListMeta,
// and the same errors, with *SyntaxError offsets counted from the start of the stream. A
// body that ends early is such an error (wrapping ErrMalformed): the one DecodeList
// reports for the bytes that arrived. An error from r (other than io.EOF) is returned
// wrapped, so that errors.Is sees it, as is io.ErrNoProgress after 100 empty reads in a
// row. A body that is not a JSON object is buffered whole, to validate it as DecodeList
// does before its error is returned. When the list's kind or apiVersion comes after its
// items (the API server writes them first), the items that received the earlier ones are
// decoded a second time, from their own bytes.
func (d *Decoder) DecodeListFrom(r io.Reader) (*List, error) {
	l, _, err := d.decodeListFrom(r, streamBufferSize)
	return l, err
}

// streamStats is what tests learn about a streaming decode.
type streamStats struct {
	maxBuffer int // the largest buffer used, in bytes
}

// decodeListFrom is DecodeListFrom with an initial buffer of bufSize bytes.
func (d *Decoder) decodeListFrom(r io.Reader, bufSize int) (*List, streamStats, error) {
	bufSize = max(bufSize, 2) // one byte for data, one for the sentinel
	st := listStream{d: d, in: streamInput{r: r, buf: make([]byte, bufSize), maxBuf: bufSize}, s: getScratch()}
	defer putScratch(st.s)
	l, err := st.decode()
	return l, streamStats{maxBuffer: st.in.maxBuf}, err
}

// streamInput buffers a stream. Offsets are counted from the start of the stream.
type streamInput struct {
	r    io.Reader
	buf  []byte // buf[:n] is the stream from base on; buf[n] is room for the sentinel
	n    int
	base int64
	eof  bool
	err  error // the read error, wrapped

	maxBuf int
}

// fill reads until the bytes buffered from keep on number at least target (or the stream
// ends), dropping the bytes before keep when it needs room. Unless grow, it stops when the
// buffer is full. The only error is a read error (io.EOF sets eof).
func (in *streamInput) fill(keep int64, target int, grow bool) error {
	empty := 0
	for !in.eof && in.err == nil {
		k := int(keep - in.base)
		avail := in.n - k
		if avail >= target {
			return nil
		}
		if room := len(in.buf) - 1 - in.n; room < target-avail {
			if k > 0 {
				in.n = copy(in.buf, in.buf[k:in.n])
				in.base = keep
			}
			if grow && len(in.buf)-1 < target {
				size := 2 * len(in.buf)
				for size-1 < target {
					size *= 2
				}
				nb := make([]byte, size)
				copy(nb, in.buf[:in.n])
				in.buf = nb
				in.maxBuf = max(in.maxBuf, size)
			}
			if in.n+1 >= len(in.buf) {
				return nil // full, and not allowed to grow
			}
		}
		got, err := in.r.Read(in.buf[in.n : len(in.buf)-1])
		if got < 0 || got > len(in.buf)-1-in.n {
			in.err = fmt.Errorf("compact: reading the list body: invalid count %d from Read", got)
			return in.err
		}
		in.n += got
		switch {
		case err == io.EOF:
			in.eof = true
		case err != nil:
			in.err = fmt.Errorf("compact: reading the list body: %w", err)
		case got == 0:
			if empty++; empty >= maxEmptyReads {
				in.err = fmt.Errorf("compact: reading the list body: %w", io.ErrNoProgress)
			}
		default:
			empty = 0
		}
	}
	return in.err
}

// view returns the buffered bytes with the sentinel after them (none at the end of the
// stream), and how many of them are the stream's.
func (in *streamInput) view() ([]byte, int) {
	if in.eof {
		return in.buf[:in.n], in.n
	}
	in.buf[in.n] = 0
	return in.buf[:in.n+1], in.n
}

// skipSpace returns the offset of the first byte at or after off that is not space (the
// end of the stream if there is none), and that byte; ok is false at the end. The space
// is dropped.
func (in *streamInput) skipSpace(off int64) (next int64, c byte, ok bool, err error) {
	for {
		i := skipSpace(in.buf[:in.n], int(off-in.base))
		off = in.base + int64(i)
		if i < in.n {
			return off, in.buf[i], true, nil
		}
		if in.eof {
			return off, 0, false, nil
		}
		if err := in.fill(off, 1, true); err != nil {
			return off, 0, false, err
		}
	}
}

// scan runs fn, one of this package's scanners, on the buffered bytes at off (fn gets the
// bytes and the index of off in them) until its result does not depend on bytes not read
// yet, and returns the offset it ends at. Error offsets are made stream offsets.
func (in *streamInput) scan(off int64, fn func(b []byte, i int) (int, error)) (int64, error) {
	for {
		b, n := in.view()
		i := int(off - in.base)
		end, err := fn(b, i)
		if in.eof || settled(b, n, end, err) {
			return in.base + int64(end), rebase(err, in.base)
		}
		if err := in.fill(off, 2*(n-i)+1, true); err != nil {
			return 0, err
		}
	}
}

// settled reports whether a scanner's result on b (n bytes of the stream and the
// sentinel) is the one the rest of the stream cannot change.
func settled(b []byte, n, end int, err error) bool {
	if err == nil {
		// A value ends before the sentinel (a number needs the byte after it), or on the
		// last byte read when that ends a string, an array or an object.
		return end < n || (end > 0 && end <= n && (b[end-1] == '"' || b[end-1] == ']' || b[end-1] == '}'))
	}
	var se *SyntaxError
	if errors.As(err, &se) {
		return se.Offset+int64(maxLookahead) < int64(n)
	}
	return true // not about the bytes: the shape of a complete value
}

// rebase adds base to the offset of the *SyntaxError in err, a fresh error from a scanner.
func rebase(err error, base int64) error {
	if err == nil || base == 0 {
		return err
	}
	var se *SyntaxError
	if errors.As(err, &se) {
		se.Offset += base
	}
	return err
}

// listStream is the state of one DecodeListFrom.
type listStream struct {
	d  *Decoder
	in streamInput
	s  *scratch

	kind, apiVersion string
	meta             []byte // the last metadata member (a copy)

	items    []*Object
	known    Known  // non-nil: reuse unchanged known objects (DecodeListFromReusing)
	reused   int    // items that were known objects
	hasItems bool   // the last "items" member is an array (DecodeList's itemsAt >= 0)
	inject   string // what the items of that array were given
	injected []bool // which items got inject
	itemHint int    // bytes to have buffered before decoding an item
}

// decode follows DecodeList step by step (eachMember's and eachElement's errors included).
func (st *listStream) decode() (*List, error) {
	in := &st.in
	off, c, ok, err := in.skipSpace(0)
	if err != nil {
		return nil, err
	}
	if !ok || c != '{' {
		// validDocument's error, or DecodeList's.
		end, err := in.scan(off, func(b []byte, i int) (int, error) { return skipValue(b, i, 0) })
		if err != nil {
			return nil, err
		}
		if err := st.trailing(end); err != nil {
			return nil, err
		}
		return nil, malformed("a list must be a JSON object")
	}
	if off, c, ok, err = in.skipSpace(off + 1); err != nil {
		return nil, err
	}
	if ok && c == '}' {
		off++
	} else {
		if off, err = st.members(off); err != nil {
			return nil, err
		}
	}
	if err := st.trailing(off); err != nil {
		return nil, err
	}
	if inject := injection(st.kind, st.apiVersion); st.hasItems && inject != st.inject {
		if err := st.reinject(inject); err != nil {
			return nil, err
		}
	}
	list := &List{TypeMeta: metav1.TypeMeta{Kind: st.kind, APIVersion: st.apiVersion}, Items: st.items}
	if len(st.meta) > 0 && string(st.meta) != "null" {
		if err := json.Unmarshal(st.meta, &list.ListMeta); err != nil {
			return nil, fmt.Errorf("compact: list metadata: %w: %w", ErrMalformed, err)
		}
	}
	return list, nil
}

// members reads the members of the top-level object from its first key at off, and
// returns the offset after its closing brace.
func (st *listStream) members(off int64) (int64, error) {
	in := &st.in
	for {
		if off-in.base >= int64(in.n) {
			return 0, &SyntaxError{Offset: off, Msg: "unexpected end of input in object"}
		}
		if c := in.buf[off-in.base]; c != '"' {
			return 0, &SyntaxError{Offset: off, Msg: "invalid character " + quoteChar(c) + " looking for beginning of object key string"}
		}
		var escaped bool
		keyEnd, err := in.scan(off, func(b []byte, i int) (int, error) {
			end, esc, err := scanString(b, i)
			escaped = esc
			return end, err
		})
		if err != nil {
			return 0, err
		}
		m := member{keyStart: int(off - in.base), keyEnd: int(keyEnd - in.base), keyEscaped: escaped}
		b := in.buf[:in.n]
		isItems, isKind, isAPIVersion, isMeta := m.is(b, "items"), m.is(b, "kind"), m.is(b, "apiVersion"), m.is(b, "metadata")

		var c byte
		var ok bool
		off, c, ok, err = in.skipSpace(keyEnd)
		switch {
		case err != nil:
			return 0, err
		case !ok:
			return 0, &SyntaxError{Offset: off, Msg: "unexpected end of input after object key"}
		case c != ':':
			return 0, &SyntaxError{Offset: off, Msg: "invalid character " + quoteChar(c) + " after object key"}
		}
		valStart, _, _, err := in.skipSpace(off + 1)
		if err != nil {
			return 0, err
		}
		var valEnd int64
		if isItems {
			valEnd, err = st.itemsValue(valStart)
		} else {
			valEnd, err = in.scan(valStart, func(b []byte, i int) (int, error) { return skipValue(b, i, 1) })
			if err == nil && (isKind || isAPIVersion || isMeta) {
				v := in.buf[valStart-in.base : valEnd-in.base]
				switch {
				case isKind:
					st.kind = textOf(v)
				case isAPIVersion:
					st.apiVersion = textOf(v)
				default:
					st.meta = append(st.meta[:0], v...)
				}
			}
		}
		if err != nil {
			return 0, err
		}

		off, c, ok, err = in.skipSpace(valEnd)
		switch {
		case err != nil:
			return 0, err
		case !ok:
			return 0, &SyntaxError{Offset: off, Msg: "unexpected end of input in object"}
		case c == ',':
			if off, _, _, err = in.skipSpace(off + 1); err != nil {
				return 0, err
			}
		case c == '}':
			return off + 1, nil
		default:
			return 0, &SyntaxError{Offset: off, Msg: "invalid character " + quoteChar(c) + " after object key:value pair"}
		}
	}
}

// trailing checks that only space follows the top-level value, which ends at off.
func (st *listStream) trailing(off int64) error {
	j, c, ok, err := st.in.skipSpace(off)
	if err != nil {
		return err
	}
	if ok {
		return &SyntaxError{Offset: j, Msg: "invalid character " + quoteChar(c) + " after top-level value"}
	}
	return nil
}

// itemsValue reads the value of an "items" member, at valStart, and returns the offset
// after it. An array replaces the items read so far; null or any other valid value empties
// them (only null is valid).
func (st *listStream) itemsValue(valStart int64) (int64, error) {
	in := &st.in
	st.items, st.injected, st.hasItems = nil, nil, false
	if valStart-in.base >= int64(in.n) || in.buf[valStart-in.base] != '[' {
		end, err := in.scan(valStart, func(b []byte, i int) (int, error) { return skipValue(b, i, 1) })
		if err == nil && string(in.buf[valStart-in.base:end-in.base]) != "null" {
			err = malformed("list items are not an array")
		}
		return end, err
	}
	st.hasItems, st.inject = true, injection(st.kind, st.apiVersion)
	off, c, ok, err := in.skipSpace(valStart + 1)
	if err != nil {
		return 0, err
	}
	if ok && c == ']' {
		return off + 1, nil
	}
	for {
		if !ok || c != '{' {
			_, err := in.scan(off, func(b []byte, i int) (int, error) { return skipValue(b, i, 2) })
			if err == nil {
				err = malformed("list item %d is not an object", len(st.items))
			}
			return 0, err
		}
		end, err := st.item(off)
		if err != nil {
			return 0, err
		}
		off, c, ok, err = in.skipSpace(end)
		switch {
		case err != nil:
			return 0, err
		case !ok:
			return 0, &SyntaxError{Offset: off, Msg: "unexpected end of input in array"}
		case c == ',':
			if off, c, ok, err = in.skipSpace(off + 1); err != nil {
				return 0, err
			}
		case c == ']':
			return off + 1, nil
		default:
			return 0, &SyntaxError{Offset: off, Msg: "invalid character " + quoteChar(c) + " after array element"}
		}
	}
}

// item decodes the item (an object) at off and returns the offset after it.
func (st *listStream) item(off int64) (int64, error) {
	in := &st.in
	// Have about one item more than the last one buffered, so that the decode rarely
	// stops at the end of the bytes read and starts again.
	if !in.eof && in.n-int(off-in.base) < st.itemHint {
		if err := in.fill(off, st.itemHint, false); err != nil {
			return 0, err
		}
	}
	var o decoded
	end, err := in.scan(off, func(b []byte, i int) (int, error) {
		var err error
		o, err = st.decodeItem(b, i)
		return o.end, err
	})
	if err != nil {
		return 0, fmt.Errorf("list item %d: %w", len(st.items), err)
	}
	st.items = append(st.items, o.obj)
	if o.reused {
		st.reused++
	}
	st.injected = append(st.injected, st.injectedItem(in.buf[:in.n], int(off-in.base), o.obj))
	size := int(end - off)
	st.itemHint = size + size/2 + 64
	return end, nil
}

// injectedItem reports whether decodeAt gave the item at b[i] (decoded into o) the kind
// and apiVersion in st.inject: whether it has neither a kind nor an apiVersion of its own
// (as text), as emit decides.
func (st *listStream) injectedItem(b []byte, i int, o *Object) bool {
	inject := st.inject
	raw := o.RawJSON()
	if len(raw) < 1+len(inject) || raw[0] != '{' || string(raw[1:1+len(inject)]) != inject {
		return false // the injected members come first
	}
	// The item starts with the same bytes as the injected members would. Its own first
	// member comes first unless it was injected: if that member is one no projection drops
	// and differs from the first injected one, the item was injected. The API server
	// writes metadata first, custom resources apiVersion.
	j := skipSpace(b, i+1)
	if j < len(b) && b[j] == '"' {
		if end, _, err := scanString(b, j); err == nil {
			key := string(b[j:end])
			if (key == `"metadata"` || key == `"apiVersion"`) && !strings.HasPrefix(inject, key+":") {
				return true
			}
		}
	} else {
		return true // {}: no member of its own
	}
	// Otherwise read the item's own kind and apiVersion.
	var kind, apiVersion string
	_, err := eachMember(b, i, 0, func(m member) (int, error) {
		end, err := skipValue(b, m.valStart, 1)
		if err != nil {
			return end, err
		}
		switch {
		case m.is(b, "kind"):
			kind = textOf(b[m.valStart:end])
		case m.is(b, "apiVersion"):
			apiVersion = textOf(b[m.valStart:end])
		}
		return end, nil
	})
	return err == nil && kind == "" && apiVersion == ""
}

// reinject gives the items that were given st.inject the list's final kind and
// apiVersion instead, as DecodeList's second decoding of the items does.
func (st *listStream) reinject(inject string) error {
	for k, o := range st.items {
		if !st.injected[k] {
			continue
		}
		raw := o.RawJSON()
		b := make([]byte, 0, len(raw)-len(st.inject)+len(inject))
		b = append(b, '{')
		b = append(b, inject...)
		b = append(b, raw[1+len(st.inject):]...)
		r, err := st.d.decodeAt(b, 0, 0, st.s, inject)
		if err != nil {
			return fmt.Errorf("list item %d: %w", k, err)
		}
		st.items[k] = r.obj
	}
	return nil
}
