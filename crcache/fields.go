package crcache

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/query"
)

// ErrInvalidFieldSelector is matched (errors.Is) by every error of ParseFields, and by
// List's error for a plain field selector (client.MatchingFields, fields.ParseSelector) on a
// name that is not an IndexField or IndexJSONPath index.
var ErrInvalidFieldSelector = errors.New("crcache: invalid field selector")

// FieldOp is the comparison of one field requirement.
type FieldOp string

// The comparisons of the field-selector syntax (see ParseFields).
const (
	FieldEquals       FieldOp = "="
	FieldNotEquals    FieldOp = "!="
	FieldIn           FieldOp = "in"
	FieldNotIn        FieldOp = "notin"
	FieldExists       FieldOp = "exists"
	FieldDoesNotExist FieldOp = "!"
	FieldGreaterThan  FieldOp = ">"
	FieldGreaterEqual FieldOp = ">="
	FieldLessThan     FieldOp = "<"
	FieldLessEqual    FieldOp = "<="
)

// FieldRequirement is one condition of a FieldSelector.
type FieldRequirement struct {
	// Field is an IndexField or IndexJSONPath name, or a JSONPath into the object
	// ("spec.nodeName", ".spec.nodeName", "{.spec.containers[*].image}").
	Field string
	// Op is the comparison.
	Op FieldOp
	// Values are what Op compares with: none for FieldExists and FieldDoesNotExist.
	Values []string
}

// FieldSelector is a fields.Selector with the comparisons controller-runtime's field
// selectors lack: set membership, existence and numeric ranges. Pass it to List as
// client.MatchingFieldsSelector{Selector: sel}; this cache answers it from kindex's
// indexes. Build one with ParseFields or NewFieldSelector.
//
// Anything else that receives it (an API server, another cache) sees only its String form
// and its Requirements, which keep =, != and, as selection operators, in, notin, exists, !,
// gt and lt; >= and <= have no selection operator and appear as the operators ">=" and "<="
// (selection.Operator values of their own), never left out: a selector that wraps this one
// (fields.AndSelectors) is refused by List for its operators other than = and !=, never
// answered as if a condition were not there.
type FieldSelector struct {
	reqs []FieldRequirement
}

var (
	_ fields.Selector   = (*FieldSelector)(nil)
	_ client.ListOption = (*FieldSelector)(nil)
)

// NewFieldSelector returns a selector of the given requirements (all must hold). It checks
// them as ParseFields does.
func NewFieldSelector(reqs ...FieldRequirement) (*FieldSelector, error) {
	for _, r := range reqs {
		if err := r.validate(); err != nil {
			return nil, err
		}
	}
	return &FieldSelector{reqs: slices.Clone(reqs)}, nil
}

// ParseFields parses a field selector in this syntax, a comma-separated list of
// requirements that must all hold:
//
//	field=value, field==value   some value of field equals value
//	field!=value                no value of field equals value (objects without one match)
//	field in (a,b)              some value is a or b
//	field notin (a,b)           no value is a or b
//	field                       the object has a value for field
//	!field                      the object has no value for field
//	field>n, field>=n           some value is a number greater than (or equal to) n
//	field<n, field<=n           some value is a number less than (or equal to) n
//
// field names an index registered with IndexField or IndexJSONPath on the listed type,
// or else is a JSONPath into the object, with or without braces and the leading dot:
// "spec.nodeName", "metadata.labels['app.kubernetes.io/name']",
// "{.status.containerStatuses[*].restartCount}" (braces are needed around a path that holds
// operator characters, such as a filter). On a JSONPath (here or an IndexJSONPath name) an
// empty value stands for an empty field too, as in the API server's field selectors, since
// Kubernetes' JSON leaves empty strings out: "spec.nodeName=" selects the Pods not
// scheduled, "spec.nodeName!=" the others ("in" and "notin" a set with "" likewise); an
// IndexField name's values are its function's, as they are. A path is indexed on first use
// (kindex's JSONPath index, read from the stored JSON without decoding) and the index is
// kept for the informer's life, up to 16 such paths per resource (its typed, unstructured and metadata
// reads together); further paths are evaluated on each object of the list instead. Values
// are literal; a backslash escapes the next character
// (\, \= \! \< \> \( \) and spaces), as in fields.EscapeValue.
//
//	cl.List(ctx, &pods, client.MatchingFieldsSelector{Selector: crcache.MustParseFields("spec.nodeName in (n1,n2),status.phase!=Running")})
func ParseFields(s string) (*FieldSelector, error) {
	p := &fieldParser{s: s}
	var reqs []FieldRequirement
	p.space()
	if p.eof() {
		return &FieldSelector{}, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrInvalidFieldSelector, s, err)
		}
		reqs = append(reqs, r)
		p.space()
		if p.eof() {
			break
		}
		if !p.consume(",") {
			return nil, fmt.Errorf("%w %q: expected ',' at offset %d", ErrInvalidFieldSelector, s, p.i)
		}
		p.space()
	}
	return &FieldSelector{reqs: reqs}, nil
}

// MustParseFields is ParseFields that panics on an error, for selectors written in code.
func MustParseFields(s string) *FieldSelector {
	sel, err := ParseFields(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// FieldRequirements returns the selector's requirements.
func (s *FieldSelector) FieldRequirements() []FieldRequirement {
	out := make([]FieldRequirement, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = FieldRequirement{Field: r.Field, Op: r.Op, Values: slices.Clone(r.Values)}
	}
	return out
}

// Matches evaluates the selector on a flat set of field values (one value per field), as
// fields.Selector does.
func (s *FieldSelector) Matches(f fields.Fields) bool {
	for _, r := range s.reqs {
		has := f.Has(r.Field)
		v := f.Get(r.Field)
		if !r.matches(has, v) {
			return false
		}
	}
	return true
}

func (r FieldRequirement) matches(has bool, v string) bool {
	switch r.Op {
	case FieldEquals:
		return has && v == r.Values[0]
	case FieldNotEquals:
		return !has || v != r.Values[0]
	case FieldIn:
		return has && slices.Contains(r.Values, v)
	case FieldNotIn:
		return !has || !slices.Contains(r.Values, v)
	case FieldExists:
		return has
	case FieldDoesNotExist:
		return !has
	}
	if !has {
		return false
	}
	x, err1 := query.ParseNumber(v)
	n, err2 := query.ParseNumber(r.Values[0])
	if err1 != nil || err2 != nil {
		return false
	}
	c := x.Compare(n)
	switch r.Op {
	case FieldGreaterThan:
		return c > 0
	case FieldGreaterEqual:
		return c >= 0
	case FieldLessThan:
		return c < 0
	case FieldLessEqual:
		return c <= 0
	}
	return false
}

// Empty reports whether the selector has no requirement.
func (s *FieldSelector) Empty() bool { return len(s.reqs) == 0 }

// RequiresExactMatch returns the value of an equality requirement on field.
func (s *FieldSelector) RequiresExactMatch(field string) (string, bool) {
	for _, r := range s.reqs {
		if r.Field == field && (r.Op == FieldEquals || (r.Op == FieldIn && len(r.Values) == 1)) {
			return r.Values[0], true
		}
	}
	return "", false
}

// Transform applies fn to every field and value, as fields.Selector does; set requirements
// go through it value by value.
func (s *FieldSelector) Transform(fn fields.TransformFunc) (fields.Selector, error) {
	out := &FieldSelector{reqs: make([]FieldRequirement, 0, len(s.reqs))}
	for _, r := range s.reqs {
		nr := FieldRequirement{Field: r.Field, Op: r.Op}
		if len(r.Values) == 0 {
			f, _, err := fn(r.Field, "")
			if err != nil {
				return nil, err
			}
			nr.Field = f
		}
		for _, v := range r.Values {
			f, nv, err := fn(r.Field, v)
			if err != nil {
				return nil, err
			}
			nr.Field = f
			nr.Values = append(nr.Values, nv)
		}
		out.reqs = append(out.reqs, nr)
	}
	return out, nil
}

// Requirements returns the requirements that selection operators can express (see
// FieldSelector); set operators carry their values joined by commas.
func (s *FieldSelector) Requirements() fields.Requirements {
	var out fields.Requirements
	for _, r := range s.reqs {
		req := fields.Requirement{Field: r.Field}
		switch r.Op {
		case FieldEquals:
			req.Operator, req.Value = selection.Equals, r.Values[0]
		case FieldNotEquals:
			req.Operator, req.Value = selection.NotEquals, r.Values[0]
		case FieldIn:
			req.Operator, req.Value = selection.In, strings.Join(r.Values, ",")
		case FieldNotIn:
			req.Operator, req.Value = selection.NotIn, strings.Join(r.Values, ",")
		case FieldExists:
			req.Operator = selection.Exists
		case FieldDoesNotExist:
			req.Operator = selection.DoesNotExist
		case FieldGreaterThan:
			req.Operator, req.Value = selection.GreaterThan, r.Values[0]
		case FieldLessThan:
			req.Operator, req.Value = selection.LessThan, r.Values[0]
		default: // >=, <=: no selection operator says them
			req.Operator, req.Value = selection.Operator(r.Op), r.Values[0]
		}
		out = append(out, req)
	}
	return out
}

// String returns the selector in ParseFields' syntax: parsing it gives an equal selector,
// unless a field name holds characters the syntax reserves (which only IndexField names
// can; paths can be written in braces).
func (s *FieldSelector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		f := r.Field
		switch r.Op {
		case FieldExists:
			parts[i] = f
		case FieldDoesNotExist:
			parts[i] = "!" + f
		case FieldIn, FieldNotIn:
			vals := make([]string, len(r.Values))
			for k, v := range r.Values {
				vals[k] = escapeValue(v)
			}
			parts[i] = f + " " + string(r.Op) + " (" + strings.Join(vals, ",") + ")"
		default:
			parts[i] = f + string(r.Op) + escapeValue(r.Values[0])
		}
	}
	return strings.Join(parts, ",")
}

// ApplyToList makes the selector a list option of its own:
// cl.List(ctx, &pods, crcache.MustParseFields("spec.nodeName in (n1,n2)")).
func (s *FieldSelector) ApplyToList(opts *client.ListOptions) { opts.FieldSelector = s }

// DeepCopySelector returns a copy.
func (s *FieldSelector) DeepCopySelector() fields.Selector {
	if s == nil {
		return nil
	}
	return &FieldSelector{reqs: s.FieldRequirements()}
}

func (r FieldRequirement) validate() error {
	if r.Field == "" {
		return fmt.Errorf("%w: empty field", ErrInvalidFieldSelector)
	}
	switch r.Op {
	case FieldExists, FieldDoesNotExist:
		if len(r.Values) != 0 {
			return fmt.Errorf("%w: %s %s takes no value", ErrInvalidFieldSelector, r.Field, r.Op)
		}
	case FieldIn, FieldNotIn:
		if len(r.Values) == 0 {
			return fmt.Errorf("%w: %s %s needs at least one value", ErrInvalidFieldSelector, r.Field, r.Op)
		}
	case FieldEquals, FieldNotEquals:
		if len(r.Values) != 1 {
			return fmt.Errorf("%w: %s%s needs one value", ErrInvalidFieldSelector, r.Field, r.Op)
		}
	case FieldGreaterThan, FieldGreaterEqual, FieldLessThan, FieldLessEqual:
		if len(r.Values) != 1 {
			return fmt.Errorf("%w: %s%s needs one value", ErrInvalidFieldSelector, r.Field, r.Op)
		}
		if _, err := query.ParseNumber(r.Values[0]); err != nil {
			return fmt.Errorf("%w: %s%s%s: %w", ErrInvalidFieldSelector, r.Field, r.Op, r.Values[0], err)
		}
	default:
		return fmt.Errorf("%w: unknown operator %q", ErrInvalidFieldSelector, r.Op)
	}
	return nil
}

// fieldParser reads ParseFields' syntax.
type fieldParser struct {
	s string
	i int
}

func (p *fieldParser) eof() bool { return p.i >= len(p.s) }

func (p *fieldParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *fieldParser) consume(tok string) bool {
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

// keyword consumes a word operator (in, notin) followed by a space or '('.
func (p *fieldParser) keyword(w string) bool {
	rest := p.s[p.i:]
	if !strings.HasPrefix(rest, w) {
		return false
	}
	if len(rest) > len(w) && rest[len(w)] != ' ' && rest[len(w)] != '\t' && rest[len(w)] != '(' {
		return false
	}
	p.i += len(w)
	return true
}

func (p *fieldParser) requirement() (FieldRequirement, error) {
	if p.consume("!") {
		p.space()
		f, err := p.field()
		if err != nil {
			return FieldRequirement{}, err
		}
		return FieldRequirement{Field: f, Op: FieldDoesNotExist}, nil
	}
	f, err := p.field()
	if err != nil {
		return FieldRequirement{}, err
	}
	p.space()
	r := FieldRequirement{Field: f}
	switch {
	case p.eof() || p.s[p.i] == ',':
		r.Op = FieldExists
		return r, nil
	case p.consume("!="):
		r.Op = FieldNotEquals
	case p.consume("=="), p.consume("="):
		r.Op = FieldEquals
	case p.consume(">="):
		r.Op = FieldGreaterEqual
	case p.consume(">"):
		r.Op = FieldGreaterThan
	case p.consume("<="):
		r.Op = FieldLessEqual
	case p.consume("<"):
		r.Op = FieldLessThan
	case p.keyword("notin"):
		r.Op = FieldNotIn
	case p.keyword("in"):
		r.Op = FieldIn
	default:
		return r, fmt.Errorf("expected an operator after %q at offset %d", f, p.i)
	}
	if r.Op == FieldIn || r.Op == FieldNotIn {
		p.space()
		if !p.consume("(") {
			return r, fmt.Errorf("expected '(' after %q %s at offset %d", f, r.Op, p.i)
		}
		p.space()
		if p.consume(")") {
			return r, fmt.Errorf("empty set after %q %s", f, r.Op)
		}
		for {
			p.space()
			v := p.value(true)
			r.Values = append(r.Values, v)
			p.space()
			if p.consume(")") {
				break
			}
			if !p.consume(",") {
				return r, fmt.Errorf("expected ',' or ')' in the values of %q at offset %d", f, p.i)
			}
		}
	} else {
		p.space()
		r.Values = []string{p.value(false)}
	}
	return r, r.validate()
}

// field reads a field name: a braced JSONPath (up to its matching brace, quotes respected)
// or a run of characters other than operators, commas, parentheses and spaces.
func (p *fieldParser) field() (string, error) {
	start := p.i
	if p.consume("{") {
		depth, quote := 1, byte(0)
		for p.i < len(p.s) && depth > 0 {
			c := p.s[p.i]
			switch {
			case quote != 0:
				if c == '\\' {
					p.i++
				} else if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '{':
				depth++
			case c == '}':
				depth--
			}
			p.i++
		}
		if depth > 0 {
			return "", fmt.Errorf("unterminated '{' at offset %d", start)
		}
		return p.s[start:p.i], nil
	}
	quote := byte(0)
	for p.i < len(p.s) {
		c := p.s[p.i]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			p.i++
			continue
		}
		if c == '\'' || c == '"' {
			quote = c
			p.i++
			continue
		}
		if strings.IndexByte(" \t,=!<>()", c) >= 0 {
			break
		}
		p.i++
	}
	if p.i == start {
		return "", fmt.Errorf("expected a field at offset %d", start)
	}
	return p.s[start:p.i], nil
}

// value reads a value up to an unescaped comma (or, in a set, a closing parenthesis).
func (p *fieldParser) value(inSet bool) string {
	var b strings.Builder
	keep := 0 // length up to the last escaped or non-blank byte: unescaped trailing blanks go
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '\\' && p.i+1 < len(p.s) {
			b.WriteByte(p.s[p.i+1])
			p.i += 2
			keep = b.Len()
			continue
		}
		if c == ',' || (inSet && c == ')') {
			break
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' {
			keep = b.Len()
		}
		p.i++
	}
	return b.String()[:keep]
}

func escapeValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if strings.IndexByte("\\,=!<>() \t", c) >= 0 { // blanks too: unescaped, the parser trims them
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
