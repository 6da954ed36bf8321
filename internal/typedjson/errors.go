package typedjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"

	"github.com/kindex/kindex/internal/jsondecode"
)

// SyntaxError is returned for malformed JSON. Offset is the byte offset in the input at
// which the error was detected.
type SyntaxError struct {
	Offset int64
	msg    string
}

func (e *SyntaxError) Error() string {
	return "json: " + e.msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

// Type mismatches are *json.UnmarshalTypeError values, as with encoding/json and
// sigs.k8s.io/json: Value describes the JSON value, Type the Go type, Offset the end of
// the value, and Struct and Field (the path of JSON names from the outermost struct) where
// it was. Other errors are encoding/json's too: *json.InvalidUnmarshalError for a target
// that is not a non-nil pointer, base64.CorruptInputError for a []byte, and whatever an
// UnmarshalJSON or UnmarshalText method returns, unchanged.

// errDepth is returned when a target is an interface holding a pointer that leads back to
// itself through other interfaces, which encoding/json would follow forever.
var errDepth = errors.New("json: cycle of pointers in interfaces of the target")

func (d *decoder) syntaxErr(i int, msg string) error {
	return &SyntaxError{Offset: int64(i), msg: msg}
}

func (d *decoder) errEOF() error {
	return &SyntaxError{Offset: int64(len(d.data)), msg: "unexpected end of JSON input"}
}

// quoteChar quotes a byte for a syntax error message as encoding/json does.
var quoteChar = jsondecode.QuoteChar

// mismatch validates the value at i and reports that it cannot be stored in a t (or a
// syntax error, if it is not a value).
func (d *decoder) mismatch(t reflect.Type, i int) (int, error) {
	end, err := d.skip(i)
	if err != nil {
		return end, err
	}
	return end, &json.UnmarshalTypeError{Value: valueKind(d.data[i]), Type: t, Offset: int64(end)}
}

// rangeErr reports a number that does not fit (or is not valid for) a t.
func (d *decoder) rangeErr(lit []byte, t reflect.Type, end int) error {
	return &json.UnmarshalTypeError{Value: "number " + string(lit), Type: t, Offset: int64(end)}
}

func valueKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// inField adds where a type error happened: in field name of a struct of type t.
func inField(err error, t reflect.Type, name string) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		if te.Struct == "" {
			te.Struct = t.Name()
		}
		if te.Field == "" {
			te.Field = name
		} else {
			te.Field = name + "." + te.Field
		}
	}
	return err
}
