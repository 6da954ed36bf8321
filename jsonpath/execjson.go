package jsonpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// ExecuteJSON writes the output kubectl -o jsonpath-as-json prints for the
// expression on obj (a decoded object or a JSON document, see Eval) to w:
// for each literal text, each {...} action and each action or text of a
// {range} body pass, a JSON array of its values (the text as one string),
// indented by four spaces and followed by a newline. Values are written as
// encoding/json writes them, map keys sorted. Nothing is written if
// evaluation fails. The budget charges the indented output as it does
// Execute's text. A nil w is ErrNilArgument.
func (p *Path) ExecuteJSON(w io.Writer, obj any) error {
	if w == nil {
		return fmt.Errorf("%w: ExecuteJSON with a nil writer", ErrNilArgument)
	}
	b, err := p.appendExecute(nil, obj, sinkGroups)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// endGroup closes the group out.group holds (its values, comma-separated,
// after '[') and appends it to out.text indented, with a newline. The
// indented size is charged before the indentation is made: nesting can
// make it many times the compact size.
func (ev *evaluator[N, T]) endGroup(out *sink[N]) bool {
	out.group = append(out.group, ']')
	// Charged before the work, which is not done (nor metered) if it fails.
	c := indentedSize(out.group) / textBytesPerStep
	if !ev.budget.charge(c) {
		return false
	}
	meter.did(c)
	buf := bytes.NewBuffer(out.text)
	if err := json.Indent(buf, out.group, "", "    "); err != nil {
		ev.fail(fmt.Errorf("%w: indent: %v", ErrInternal, err))
		return false
	}
	out.text = append(buf.Bytes(), '\n')
	return true
}

// indentedSize is the length of json.Indent(b, "", "    ") for valid
// compact JSON b: a newline and four spaces per level before each member
// or element and before the closing bracket of a non-empty map or list,
// and a space after each colon.
func indentedSize(b []byte) int {
	n, depth := len(b), 0
	inString, escaped := false, false
	for i, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if i+1 < len(b) && (b[i+1] == '}' || b[i+1] == ']') {
				continue // empty: printed as is
			}
			depth++
			n += 1 + 4*depth
		case '}', ']':
			if i > 0 && (b[i-1] == '{' || b[i-1] == '[') {
				continue
			}
			depth--
			n += 1 + 4*depth
		case ',':
			n += 1 + 4*depth
		case ':':
			n++
		}
	}
	return n
}
