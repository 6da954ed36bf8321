package jsonpath

import (
	"github.com/tidwall/gjson"
)

// IndexedJSON is a JSON document with the extents of its larger objects and arrays. Passed
// to Eval, AppendEval or Each in place of a JSON, a path of fields and indexes (the form
// most index expressions have: {.spec.nodeName}, {.status.conditions[0].type}) steps over
// those values without scanning them: reading {.spec.nodeName} of a 9 KB Pod, which follows
// the Pod's volumes and containers, reads a few hundred bytes instead of the document.
// Other expressions evaluate on Doc as on a JSON. Results are those of the same call on Doc,
// duplicate keys included (the last one wins: every member of an object on the path is
// still stepped over, cheaply).
//
// Spans must come from BuildSpans on the same bytes (kindex's compact storage keeps them
// with each object). Spans that do not describe Doc give unspecified results, never a
// panic, a hang or more work than the budget allows.
type IndexedJSON struct {
	Doc   JSON
	Spans Spans
}

// Spans lists, in document order, the start and end offsets of a document's objects and
// arrays at least a minimum size long: pairs (start, end), Doc[start] the opening bracket,
// Doc[end-1] the closing one.
type Spans []uint32

// DefaultSpanSize is the size from which BuildSpans records a value: smaller values are
// scanned about as fast as a span is looked up.
const DefaultSpanSize = 256

// BuildSpans returns the spans of the objects and arrays of doc of at least minSize bytes
// (DefaultSpanSize if minSize <= 0), appended to dst. Documents over 4 GiB, and invalid
// JSON, get no spans (then evaluation scans, as on a JSON). It scans doc once.
func BuildSpans(dst Spans, doc JSON, minSize int) Spans {
	if minSize <= 0 {
		minSize = DefaultSpanSize
	}
	if uint64(len(doc)) >= 1<<32 {
		return dst
	}
	s := bytesView(doc)
	n0 := len(dst)
	var stack [64]uint32 // positions of the open brackets, and of the pairs reserved for them
	var slot [64]int
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = skipString(s, i) - 1
		case '{', '[':
			if depth == len(stack) { // deeper than kept: skip it whole
				end := skipValue(s, i)
				i = end - 1
				continue
			}
			stack[depth], slot[depth] = uint32(i), len(dst)
			dst = append(dst, uint32(i), 0) // reserved: spans stay in order of their starts
			depth++
		case '}', ']':
			if depth == 0 {
				return dst[:n0]
			}
			depth--
			start, at := stack[depth], slot[depth]
			if i+1-int(start) >= minSize {
				dst[at+1] = uint32(i + 1) // the others keep end 0: dropped below
			}
		}
	}
	if depth != 0 {
		return dst[:n0]
	}
	out := dst[:n0]
	for k := n0; k+1 < len(dst); k += 2 {
		if dst[k+1] != 0 {
			out = append(out, dst[k], dst[k+1])
		}
	}
	return out
}

// end returns the end of the value that starts at s[i] if a span records it.
func (sp Spans) end(s string, i int) (int, bool) {
	n := len(sp) / 2
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(sp[2*m]) < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < n && int(sp[2*lo]) == i {
		if e := int(sp[2*lo+1]); e > i && e <= len(s) {
			return e, true
		}
	}
	return 0, false
}

// skipValueSpans is skipValue, stepping over a recorded object or array in one move; jumped
// reports whether it did.
func (sp Spans) skipValue(s string, i int) (end int, jumped bool) {
	if i < len(s) && (s[i] == '{' || s[i] == '[') {
		if e, ok := sp.end(s, i); ok {
			return e, true
		}
	}
	return skipValue(s, i), false
}

// walkSpans is walkJSON on an indexed document: the same results and the same budget rules,
// with recorded values stepped over. A negative index falls back to walkJSON.
func (p *Path) walkSpans(d IndexedJSON, fn func(Value) bool, dst []Value) ([]Value, error) {
	for i := range p.segs {
		if p.segs[i].kind == segIndex && p.segs[i].index < 0 {
			return p.walkJSON(d.Doc, fn, dst)
		}
	}
	s := bytesView(d.Doc)
	var b budget
	b.init(&p.lim)
	found := b.charge(len(p.segs)) && b.charge(rootCost(d.Doc))
	at := skipSpace(s, 0)
	for i := 0; found && i < len(p.segs); i++ {
		seg := &p.segs[i]
		if seg.kind == segField {
			at, found = d.Spans.member(s, at, seg.name, &b)
		} else {
			at, found = d.Spans.element(s, at, seg.index, &b)
		}
	}
	var n gjson.Result
	if found {
		end, _ := d.Spans.skipValue(s, at)
		val := s[at:end]
		if n, found, _ = parse(val, b.left(), 0); found {
			found = b.charge(parseCost(val))
		}
	}
	return deliverWalked(&b, found, n, fn, dst)
}

// member returns the position of the value of the member named name of the object at s[i]
// (the last one, if the name repeats), charging b a step per member and the bytes it scans.
func (sp Spans) member(s string, i int, name string, b *budget) (int, bool) {
	if i >= len(s) || s[i] != '{' {
		return 0, false
	}
	found, val := false, 0
	for i++; ; {
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
		if i >= len(s) || s[i] != '"' {
			break
		}
		from := i
		kend := skipString(s, i)
		match, kc := keyIs(s[i:kend], name)
		if i = skipSpace(s, kend); i < len(s) && s[i] == ':' {
			i = skipSpace(s, i+1)
		}
		start := i
		end, jumped := sp.skipValue(s, i)
		if end == i {
			break
		}
		scanned := end - from
		if jumped {
			scanned = start - from
		}
		c := 1 + scanned/scanBytesPerStep + kc
		meter.did(c)
		if !b.charge(c) {
			return 0, false
		}
		if match {
			found, val = true, start
		}
		i = end
	}
	return val, found
}

// element returns the position of element k (k >= 0) of the array at s[i], charging as
// member does.
func (sp Spans) element(s string, i, k int, b *budget) (int, bool) {
	if i >= len(s) || s[i] != '[' {
		return 0, false
	}
	for n, i := 0, i+1; ; n++ {
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
		if i >= len(s) || s[i] == ']' {
			return 0, false
		}
		if n == k {
			return i, true
		}
		end, jumped := sp.skipValue(s, i)
		if end == i {
			return 0, false
		}
		c := 1
		if !jumped {
			c += (end - i) / scanBytesPerStep
		}
		meter.did(c)
		if !b.charge(c) {
			return 0, false
		}
		i = end
	}
}
