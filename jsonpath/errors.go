package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sentinel errors. Every error returned by this package wraps exactly one
// of them, so callers can branch with errors.Is.
var (
	// ErrSyntax is wrapped by every *SyntaxError.
	ErrSyntax = errors.New("jsonpath: syntax error")
	// ErrTooComplex is wrapped (together with ErrSyntax) by the
	// *SyntaxError returned when an expression exceeds Options.MaxLength
	// or Options.MaxNesting.
	ErrTooComplex = errors.New("jsonpath: expression too complex")
	// ErrBudgetExceeded is wrapped by every *BudgetError: an evaluation
	// did more work, produced more results or descended deeper than its
	// budget allows.
	ErrBudgetExceeded = errors.New("jsonpath: evaluation budget exceeded")
	// ErrUnsupportedType is returned when evaluation meets a Go value
	// that is not one of the JSON-shaped types documented on Path.Eval.
	ErrUnsupportedType = errors.New("jsonpath: unsupported Go type")
	// ErrInvalidOptions is returned by CompileWithOptions for options
	// outside their documented range.
	ErrInvalidOptions = errors.New("jsonpath: invalid options")
	// ErrNilArgument is returned for a nil callback (Each) or writer
	// (Execute, ExecuteJSON), before any evaluation.
	ErrNilArgument = errors.New("jsonpath: nil callback or writer")
	// ErrNotCompiled is returned by the evaluations (Eval, AppendEval,
	// Each, Execute, ExecuteString, ExecuteJSON) of a Path that Compile
	// did not make: a nil *Path or the zero Path.
	ErrNotCompiled = errors.New("jsonpath: nil or zero Path: make it with Compile")
	// ErrInternal reports a recovered panic: a bug in this package.
	ErrInternal = errors.New("jsonpath: internal error")
)

// SyntaxError describes an expression that does not compile.
type SyntaxError struct {
	// Expr is the whole expression.
	Expr string
	// Offset is the byte offset in Expr where the problem was found.
	Offset int
	// Msg describes the problem.
	Msg string

	cause error // ErrTooComplex for limit violations, else nil
}

// excerptWidth is how many bytes of the expression Error shows on each
// side of the offending offset.
const excerptWidth = 32

// Error returns a message with the offset, the expression (or an excerpt
// of it) and a caret under the offending byte, for example:
//
//	jsonpath: syntax error at offset 9: expected ']' in "{.a[?(@.b}"
//		{.a[?(@.b}
//		         ^
func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString("jsonpath: syntax error at offset ")
	b.WriteString(strconv.Itoa(e.Offset))
	b.WriteString(": ")
	b.WriteString(e.Msg)
	// Short expressions are shown whole; long ones as an excerpt around
	// the offset.
	start, end := 0, len(e.Expr)
	prefix, suffix := "", ""
	if len(e.Expr) > 3*excerptWidth {
		if s := e.Offset - excerptWidth; s > 0 {
			start, prefix = s, "..."
		}
		if s := e.Offset + excerptWidth; s < end {
			end, suffix = s, "..."
		}
		// The excerpt starts and ends between characters, not inside one.
		for start < end && !utf8.RuneStart(e.Expr[start]) {
			start++
		}
		for end > start && end < len(e.Expr) && !utf8.RuneStart(e.Expr[end]) {
			end--
		}
	}
	if start > end { // offset past the end of a truncated expression
		start = end
	}
	if prefix == "" && suffix == "" {
		b.WriteString(" in ")
		b.WriteString(strconv.Quote(e.Expr))
	}
	// The excerpt line shows the expression with control characters
	// replaced so that the caret lines up; the caret's column counts
	// characters, not bytes (ключ takes four columns, not eight).
	b.WriteString("\n\t")
	b.WriteString(prefix)
	col := len(prefix)
	for i := start; i < end; {
		_, n := utf8.DecodeRuneInString(e.Expr[i:end])
		if c := e.Expr[i]; c < ' ' || c == 0x7f {
			b.WriteByte(' ')
		} else {
			b.WriteString(e.Expr[i : i+n])
		}
		if i < e.Offset {
			col++
		}
		i += n
	}
	b.WriteString(suffix)
	b.WriteString("\n\t")
	b.WriteString(strings.Repeat(" ", col))
	b.WriteByte('^')
	return b.String()
}

// Unwrap makes errors.Is(err, ErrSyntax) true, and errors.Is(err,
// ErrTooComplex) true for limit violations.
func (e *SyntaxError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrSyntax, e.cause}
	}
	return []error{ErrSyntax}
}

// BudgetError reports that an evaluation exceeded one of its limits.
// It wraps ErrBudgetExceeded.
type BudgetError struct {
	// Limit names the exhausted budget: "steps", "results" or "depth".
	Limit string
	// Max is the value of that limit.
	Max int
}

// Error says which limit was exceeded and its value.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("jsonpath: evaluation budget exceeded: more than %d %s", e.Max, e.Limit)
}

// Unwrap returns ErrBudgetExceeded.
func (e *BudgetError) Unwrap() error { return ErrBudgetExceeded }

// shortened returns a token of the expression for an error message: whole when short, its
// first bytes and its length otherwise, so that messages stay short whatever the input.
func shortened(tok string) string {
	const max = 32
	if len(tok) <= max {
		return tok
	}
	return tok[:max] + "... (" + strconv.Itoa(len(tok)) + " bytes)"
}
