package compact

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch streams are JSON objects one after the other ({"type":"ADDED","object":{...}}),
// newline-separated by the API server. client-go's rest client reads them with the framer
// and stream serializer of the negotiated serializer (serializer.go): frameReader cuts the
// stream into frames, eventDecoder decodes each frame in one pass into its type and a
// compact Object (or a *metav1.Status for ERROR events, which the Reflector turns into an
// error: 410 Gone makes it relist), and client-go's watch decoder then asks the codec for
// the object, which takes it from the handoff instead of decoding the bytes again.

// DecodeWatchEvent decodes one watch frame. ERROR events carry a *metav1.Status; every
// other event a compact *Object (a BOOKMARK's object holds only metadata.resourceVersion
// and annotations, such as k8s.io/initial-events-end). The object is copied; frame is not
// retained.
func (d *Decoder) DecodeWatchEvent(frame []byte) (watch.Event, error) {
	ev, err := d.decodeEvent(frame)
	if err != nil {
		return watch.Event{}, err
	}
	return watch.Event{Type: watch.EventType(ev.typ), Object: ev.obj}, nil
}

// event is a decoded watch frame: obj is an *Object or a *metav1.Status whose JSON is
// raw (a sub-slice of the frame).
type event struct {
	typ string
	obj runtime.Object
	raw []byte
}

// decodeEvent validates a watch frame and decodes its object.
func (d *Decoder) decodeEvent(frame []byte) (event, error) {
	i := skipSpace(frame, 0)
	if i >= len(frame) || frame[i] != '{' {
		if err := validDocument(frame); err != nil {
			return event{}, err
		}
		return event{}, malformed("a watch event must be a JSON object")
	}
	s := getScratch()
	defer putScratch(s)
	var ev event
	end, err := eachMember(frame, i, 0, func(m member) (int, error) {
		switch {
		case m.is(frame, "object"):
			if m.valStart >= len(frame) || frame[m.valStart] != '{' {
				end, err := skipValue(frame, m.valStart, 1)
				if err == nil {
					err = malformed("the object of a watch event is not a JSON object")
				}
				return end, err
			}
			end, err := scanObject(frame, m.valStart, 0, s) // judged on its own: decodeAt
			if err != nil {
				return end, err
			}
			ev.raw = frame[m.valStart:end]
			if s.isStatus(frame) {
				ev.obj, err = decodeStatus(ev.raw)
				return end, err
			}
			o, err := d.build(frame, m.valStart, end, 0, s, "")
			ev.obj = o.obj
			return end, err
		case m.is(frame, "type"):
			end, err := skipValue(frame, m.valStart, 1)
			if err == nil {
				ev.typ = textOf(frame[m.valStart:end])
			}
			return end, err
		}
		return skipValue(frame, m.valStart, 1)
	})
	if err != nil {
		return event{}, err
	}
	if j := skipSpace(frame, end); j != len(frame) {
		return event{}, syntaxErr(j, "invalid character "+quoteChar(frame[j])+" after top-level value")
	}
	switch watch.EventType(ev.typ) {
	case watch.Added, watch.Modified, watch.Deleted, watch.Error, watch.Bookmark:
	default:
		return event{}, malformed("invalid watch event type %q", ev.typ)
	}
	if ev.obj == nil {
		return event{}, malformed("watch event %q has no object", ev.typ)
	}
	return ev, nil
}

// decodeAny decodes one object: a *metav1.Status if its kind is Status in v1, else a
// compact *Object (copied).
func (d *Decoder) decodeAny(data []byte) (runtime.Object, error) {
	s := getScratch()
	defer putScratch(s)
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		if err := validDocument(data); err != nil {
			return nil, err
		}
		return nil, malformed("expected a JSON object")
	}
	end, err := scanObject(data, i, 0, s)
	if err != nil {
		return nil, err
	}
	if j := skipSpace(data, end); j != len(data) {
		return nil, syntaxErr(j, "invalid character "+quoteChar(data[j])+" after top-level value")
	}
	if s.isStatus(data) {
		return decodeStatus(data)
	}
	o, err := d.build(data, i, end, 0, s, "")
	if err != nil {
		return nil, err
	}
	return o.obj, nil
}

func decodeStatus(data []byte) (*metav1.Status, error) {
	st := &metav1.Status{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("compact: status: %w: %w", ErrMalformed, err)
	}
	return st, nil
}

// eventDecoder is the stream serializer. client-go's watch decoder (rest/watch.Decoder)
// decodes a frame into a *metav1.WatchEvent with it, then decodes the event's Object.Raw
// with the codec. eventDecoder decodes the object right away and sets Object.Raw to the
// compact object's own bytes, which it hands off to the codec (see handoff); a Status
// keeps Raw as a sub-slice of the frame, which the codec decodes (copies) before the next
// frame is read into the same buffer.
type eventDecoder struct {
	d *Decoder
	h *handoff
}

func (e eventDecoder) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	we, ok := into.(*metav1.WatchEvent)
	if !ok {
		return nil, nil, fmt.Errorf("compact: %w: watch frames decode into *metav1.WatchEvent, not %T", ErrUnsupported, into)
	}
	d := e.d
	if d == nil {
		d = &Decoder{}
	}
	ev, err := d.decodeEvent(data)
	if err != nil {
		return nil, nil, err
	}
	we.Type = ev.typ
	if o, ok := ev.obj.(*Object); ok {
		we.Object = runtime.RawExtension{Raw: o.json()}
		e.h.put(o)
	} else {
		we.Object = runtime.RawExtension{Raw: ev.raw}
	}
	return we, nil, nil
}

func (eventDecoder) Encode(obj runtime.Object, _ io.Writer) error {
	return fmt.Errorf("compact: %w: encoding watch events", ErrUnsupported)
}

func (eventDecoder) Identifier() runtime.Identifier { return "compact-watch-event" }

// handoff passes the objects eventDecoder decoded to the codec, which client-go's watch
// decoder calls next with the object's bytes: the codec recognizes them by their address
// (the bytes of an Object are never modified, so the same address and length are the same
// JSON) and returns the object instead of decoding it again. It is bounded: should a
// client-go version not ask for an object, it is dropped after handoffMax others, and the
// codec decodes bytes it does not recognize as usual. Safe for concurrent use (one codec
// serves every watch of a client).
type handoff struct {
	mu sync.Mutex
	m  map[*byte]*Object
}

const handoffMax = 256

func (h *handoff) put(o *Object) {
	if h == nil || len(o.raw) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= handoffMax {
		h.m = make(map[*byte]*Object)
	}
	h.m[&o.raw[0]] = o
}

// take returns the object whose bytes are data, if it was handed off.
func (h *handoff) take(data []byte) *Object {
	if h == nil || len(data) == 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.m[&data[0]]
	if o == nil || len(o.raw) != len(data) {
		return nil
	}
	delete(h.m, &data[0])
	return o
}

// framer splits a watch stream into frames (one JSON object each).
type framer struct{}

func (framer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &frameReader{r: bufio.NewReaderSize(r, frameBufferSize), c: r}
}

func (framer) NewFrameWriter(w io.Writer) io.Writer { return w }

// frameBufferSize is the read buffer of each watch: an HTTP/2 DATA frame by default, small
// enough for the hundreds of idle watches of a watch-all.
const frameBufferSize = 16 << 10

// frameReader returns one JSON object per frame, with the io.ErrShortBuffer protocol of
// client-go's framers: when p is too small it fills p, returns io.ErrShortBuffer, and the
// next Read continues the same frame. It only matches braces and brackets outside strings;
// the frame is validated when it is decoded. A stream that ends between frames returns
// io.EOF; one that ends inside a frame, io.ErrUnexpectedEOF.
type frameReader struct {
	r   *bufio.Reader
	c   io.Closer
	off int64 // bytes consumed, for error offsets

	in    bool // inside a frame
	depth int
	str   bool // inside a string
	esc   bool // after a backslash in a string
}

func (f *frameReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, io.ErrShortBuffer
	}
	n := 0
	if !f.in {
		for {
			c, err := f.r.ReadByte()
			if err != nil {
				return 0, err
			}
			f.off++
			if isSpace(c) {
				continue
			}
			if c != '{' {
				return 0, &SyntaxError{Offset: f.off - 1, Msg: "invalid character " + quoteChar(c) + " at the start of a watch event"}
			}
			f.in, f.depth, f.str, f.esc = true, 1, false, false
			p[0] = c
			n = 1
			break
		}
	}
	for n < len(p) {
		if f.r.Buffered() == 0 {
			if _, err := f.r.Peek(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return n, err
			}
		}
		chunk, _ := f.r.Peek(min(f.r.Buffered(), len(p)-n))
		k, done := f.scan(chunk)
		n += copy(p[n:], chunk[:k])
		_, _ = f.r.Discard(k)
		f.off += int64(k)
		if done {
			f.in = false
			return n, nil
		}
	}
	return n, io.ErrShortBuffer
}

// scan advances the frame state over chunk and returns how many bytes belong to the frame
// and whether it ended.
func (f *frameReader) scan(chunk []byte) (int, bool) {
	depth, str, esc := f.depth, f.str, f.esc
	defer func() { f.depth, f.str, f.esc = depth, str, esc }()
	i := 0
	for i < len(chunk) {
		if str {
			if esc {
				esc = false
				i++
				continue
			}
			// Skip the plain run of the string, eight bytes at a time, then byte by byte.
			for i+8 <= len(chunk) && !hasQuoteOrBackslash(binary.LittleEndian.Uint64(chunk[i:])) {
				i += 8
			}
			for i < len(chunk) && chunk[i] != '"' && chunk[i] != '\\' {
				i++
			}
			if i < len(chunk) {
				if chunk[i] == '"' {
					str = false
				} else {
					esc = true
				}
				i++
			}
			continue
		}
		switch chunk[i] {
		case '"':
			str = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return len(chunk), false
}

func (f *frameReader) Close() error { return f.c.Close() }
