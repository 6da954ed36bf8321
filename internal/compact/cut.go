package compact

import (
	"sync"

	"github.com/kindex/kindex/jsonpath"
)

// The per-object step shared by every decoder: scan one JSON object once (validating it
// and noting where its members are), then write the bytes the cache keeps into one
// allocation of the exact size: managedFields cut out of metadata, members outside the
// projection left out, kind and apiVersion added to items of typed lists. Nothing is
// decoded into maps; only namespace, name, resourceVersion and uid are turned into text.

// objInfo is what scanObject learns about one object. When a key appears twice the last
// one counts, as with encoding/json and unstructured objects.
type objInfo struct {
	kind, apiVersion int // index in scratch.top of the last such member, -1 if none
	// metadata: the fields of the last "metadata" member if it is an object (all zero when
	// it is not), as spans of string values.
	namespace, name, resourceVersion, uid valSpan
	// lastMetaMF: the metadata that counts has a managedFields member.
	lastMetaMF bool
	// lastMeta: index in scratch.top of the last "metadata" member, -1 if none.
	lastMeta int
	// anyMF: some "metadata" object has a managedFields member (all of them are cut).
	anyMF bool
}

// valSpan is a member value; start == end when absent.
type valSpan struct {
	start, end int
	escaped    bool
}

// metaInfo is one top-level "metadata" member whose value is an object.
type metaInfo struct {
	top      int // index in scratch.top
	from, to int // its members in scratch.meta
	mf       bool
}

// scratch is reusable per-call state (objects are decoded one at a time per call).
type scratch struct {
	top   []member
	meta  []member
	metas []metaInfo
	info  objInfo
	w     writer
	text  []byte
	// out and spans hold an object's bytes and spans while its spans are found
	// (Options.Spans), before the object's own allocation is made.
	out   []byte
	spans jsonpath.Spans
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// putScratch returns s to the pool without keeping a reference to the input.
func putScratch(s *scratch) {
	s.w.src = nil
	if cap(s.w.segs) > 4096 || cap(s.meta) > 4096 || cap(s.top) > 4096 || cap(s.out) > 1<<20 || cap(s.spans) > 1<<16 {
		return // an unusual object: let it go
	}
	scratchPool.Put(s)
}

// scanObject validates the object starting at b[i] ('{', with depth containers around it)
// and fills s.top, s.meta, s.metas and s.info. It returns the index after the object.
func scanObject(b []byte, i, depth int, s *scratch) (int, error) {
	s.top, s.meta, s.metas = s.top[:0], s.meta[:0], s.metas[:0]
	info := &s.info
	*info = objInfo{kind: -1, apiVersion: -1, lastMeta: -1}
	return eachMember(b, i, depth, func(m member) (int, error) {
		idx := len(s.top)
		var end int
		var err error
		switch {
		case m.is(b, "metadata"):
			info.namespace, info.name, info.resourceVersion, info.uid = valSpan{}, valSpan{}, valSpan{}, valSpan{}
			info.lastMetaMF = false
			info.lastMeta = idx
			if m.valStart < len(b) && b[m.valStart] == '{' {
				mi := metaInfo{top: idx, from: len(s.meta)}
				end, err = eachMember(b, m.valStart, depth+1, func(mm member) (int, error) {
					var v valSpan // stays empty unless the value is a string
					var ve int
					var err error
					if mm.valStart < len(b) && b[mm.valStart] == '"' {
						var esc bool
						ve, esc, err = scanString(b, mm.valStart)
						v = valSpan{mm.valStart, ve, esc}
					} else {
						ve, err = skipValue(b, mm.valStart, depth+2)
					}
					if err != nil {
						return ve, err
					}
					mm.valEnd = ve
					s.meta = append(s.meta, mm)
					key := mm.key(b)
					if mm.keyEscaped {
						key = []byte(mm.keyString(b))
					}
					switch string(key) {
					case "managedFields":
						mi.mf = true
					case "namespace":
						info.namespace = v
					case "name":
						info.name = v
					case "resourceVersion":
						info.resourceVersion = v
					case "uid":
						info.uid = v
					}
					return ve, nil
				})
				mi.to = len(s.meta)
				s.metas = append(s.metas, mi)
				info.lastMetaMF = mi.mf
				info.anyMF = info.anyMF || mi.mf
				m.valEnd = end
				s.top = append(s.top, m)
				return end, err
			}
		case m.is(b, "kind"):
			info.kind = idx
		case m.is(b, "apiVersion"):
			info.apiVersion = idx
		}
		end, err = skipValue(b, m.valStart, depth+1)
		m.valEnd = end
		s.top = append(s.top, m)
		return end, err
	})
}

// memberText returns the text of a top-level member's string value ("" if absent or not a
// string).
func (s *scratch) memberText(b []byte, idx int) string {
	if idx < 0 {
		return ""
	}
	m := &s.top[idx]
	_, esc, _ := scanString(b, m.valStart) // validated already; only the flag is needed
	return stringValue(b, m.valStart, m.valEnd, esc)
}

// emit writes the object s describes (b[start:end]) as the cache keeps it: managedFields
// cut from every metadata unless keep, proj applied unless nil, and inject (`"kind":..,
// "apiVersion":..`) put first when the object has neither a kind nor an apiVersion (as
// client-go does for the items of typed lists, which the API server sends without them).
// The result is a new allocation of the exact size, with the span of the metadata object
// that counts in it (empty when there is none).
//
// With a non-nil dst, the output is appended to dst[:0] instead (extra is then ignored).
func (s *scratch) emit(b []byte, start, end, depth int, keep bool, proj *projection, inject string, extra int, dst []byte) (out []byte, meta span, err error) {
	cut := !keep && s.info.anyMF
	doInject := inject != "" && s.memberText(b, s.info.kind) == "" && s.memberText(b, s.info.apiVersion) == ""
	if !cut && !doInject && proj == nil {
		if k := s.info.lastMeta; k >= 0 && b[s.top[k].valStart] == '{' {
			meta = span{s.top[k].valStart - start, s.top[k].valEnd - start}
		}
		if dst != nil {
			return append(dst[:0], b[start:end]...), meta, nil
		}
		out = make([]byte, end-start, end-start+extra)
		copy(out, b[start:end])
		return out, meta, nil
	}
	w := &s.w
	w.reset(b)
	w.lit("{")
	first := true
	sep := func() {
		if !first {
			w.lit(",")
		}
		first = false
	}
	if doInject {
		w.lit(inject)
		first = false
	}
	metas := s.metas
	for ti := range s.top {
		m := &s.top[ti]
		var mi *metaInfo
		if len(metas) > 0 && metas[0].top == ti {
			mi, metas = &metas[0], metas[1:]
		}
		switch {
		case doInject && (m.is(b, "kind") || m.is(b, "apiVersion")):
			continue // replaced by inject
		case proj != nil && !alwaysKept(b, m):
			c := proj.child(b, m)
			if c == nil {
				continue
			}
			sep()
			w.span(m.keyStart, m.valStart)
			if err := w.emitProjected(b, m.valStart, m.valEnd, depth+1, c); err != nil {
				return nil, span{}, err
			}
		case cut && mi != nil && mi.mf:
			sep()
			w.span(m.keyStart, m.valStart)
			valStart := w.n
			w.lit("{")
			inner := true
			for _, mm := range s.meta[mi.from:mi.to] {
				if mm.is(b, "managedFields") {
					continue
				}
				if !inner {
					w.lit(",")
				}
				inner = false
				w.span(mm.keyStart, mm.valEnd)
			}
			w.lit("}")
			if ti == s.info.lastMeta {
				meta = span{valStart, w.n}
			}
		default:
			sep()
			keyStart := w.n
			w.span(m.keyStart, m.valEnd)
			if ti == s.info.lastMeta && mi != nil {
				meta = span{keyStart + m.valStart - m.keyStart, w.n}
			}
		}
	}
	w.lit("}")
	if dst != nil {
		return w.appendTo(dst[:0]), meta, nil
	}
	return w.bytes(extra), meta, nil
}

// span is a range of an object's bytes.
type span struct{ start, end int }

// keys returns the key text of an Object (see Object.raw): namespace, "/" if there is a
// namespace, name, resourceVersion and uid, in scratch space valid until the next call, with
// the ends of the namespace, the key and the resourceVersion.
func (s *scratch) keys(b []byte) (text []byte, nsEnd, keyEnd, rvEnd uint32) {
	t := s.text[:0]
	t = appendText(t, b, s.info.namespace)
	nsEnd = uint32(len(t))
	if nsEnd > 0 {
		t = append(t, '/')
	}
	t = appendText(t, b, s.info.name)
	keyEnd = uint32(len(t))
	t = appendText(t, b, s.info.resourceVersion)
	rvEnd = uint32(len(t))
	t = appendText(t, b, s.info.uid)
	s.text = t
	return t, nsEnd, keyEnd, rvEnd
}

func appendText(dst, b []byte, v valSpan) []byte {
	if v.end <= v.start {
		return dst
	}
	if !v.escaped {
		raw := b[v.start+1 : v.end-1]
		if isASCII(raw) {
			return append(dst, raw...)
		}
	}
	return append(dst, stringValue(b, v.start, v.end, true)...)
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// writer assembles an output from spans of its source and literals, then copies them into
// one allocation of the exact size.
type writer struct {
	src  []byte
	segs []segment
	n    int
}

type segment struct {
	start, end int
	lit        string // used when non-empty
}

func (w *writer) reset(src []byte) {
	w.src, w.segs, w.n = src, w.segs[:0], 0
}

func (w *writer) span(start, end int) {
	if end <= start {
		return
	}
	w.n += end - start
	if k := len(w.segs) - 1; k >= 0 && w.segs[k].lit == "" && w.segs[k].end == start {
		w.segs[k].end = end
		return
	}
	w.segs = append(w.segs, segment{start: start, end: end})
}

func (w *writer) lit(s string) {
	w.n += len(s)
	w.segs = append(w.segs, segment{lit: s})
}

// bytes returns the output in a new allocation with extra bytes of capacity after it.
func (w *writer) bytes(extra int) []byte {
	return w.appendTo(make([]byte, 0, w.n+extra))
}

// appendTo appends the output to out.
func (w *writer) appendTo(out []byte) []byte {
	for _, sg := range w.segs {
		if sg.lit != "" {
			out = append(out, sg.lit...)
		} else {
			out = append(out, w.src[sg.start:sg.end]...)
		}
	}
	return out
}
