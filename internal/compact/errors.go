package compact

import (
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every error about input that is not the JSON the decoders
// expect: invalid JSON (a *SyntaxError), a list whose items are not objects, a watch frame
// that is not an object. errors.Is(err, ErrMalformed) tells them from transport errors.
var ErrMalformed = errors.New("malformed JSON")

// ErrUnsupported is wrapped when a value of a type this package cannot handle is given to
// it: decoding into an object other than *List, *Object or *metav1.Status, or Mode.Object
// on an item that is not a compact or unstructured object.
var ErrUnsupported = errors.New("unsupported type")

// ErrCorrupt is wrapped when a compressed object (Options.Compress) does not decompress: its
// bytes were changed in memory. Compressed objects come only from this package, so it
// should never be seen; it is an error rather than a crash or wrong JSON.
var ErrCorrupt = errors.New("corrupt compressed object")

// SyntaxError is invalid JSON at a byte offset of the input (the list body, the watch
// frame or the object). errors.Is(err, ErrMalformed) is true for it.
type SyntaxError struct {
	Offset int64  // byte offset of the offending character
	Msg    string // what was expected or found
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("compact: malformed JSON at byte %d: %s", e.Offset, e.Msg)
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrMalformed }

func syntaxErr(off int, msg string) error { return &SyntaxError{Offset: int64(off), Msg: msg} }

// malformed reports well-formed JSON of an unexpected shape.
func malformed(format string, args ...any) error {
	return fmt.Errorf("compact: %w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}
