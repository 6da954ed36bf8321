package typedjson

import (
	"fmt"
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// sameAsSigs decodes data with sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts, with
// Unmarshal and with UnmarshalShared, each into a new value from newV, and returns why
// they disagree ("" if they do not): one fails and another does not, or they succeed with
// values that are not reflect.DeepEqual.
func sameAsSigs(data []byte, newV func() any) string {
	want := newV()
	werr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, want)
	for _, dec := range []struct {
		name string
		fn   func([]byte, any) error
	}{{"Unmarshal", Unmarshal}, {"UnmarshalShared", UnmarshalShared}} {
		got := newV()
		gerr := dec.fn(data, got)
		switch {
		case werr != nil && gerr == nil:
			return fmt.Sprintf("sigs.k8s.io/json fails (%v), %s does not", werr, dec.name)
		case werr == nil && gerr != nil:
			return fmt.Sprintf("%s fails (%v), sigs.k8s.io/json does not", dec.name, gerr)
		case werr == nil && !reflect.DeepEqual(want, got):
			return fmt.Sprintf("values of %s differ:\nwant %#v\ngot  %#v", dec.name, reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem())
		}
	}
	return ""
}

// requireSame fails t if the decoders disagree on data into newV's type.
func requireSame(t testing.TB, data []byte, newV func() any) {
	t.Helper()
	if why := sameAsSigs(data, newV); why != "" {
		t.Fatalf("%T from %q: %s", newV(), truncate(data), why)
	}
}

func truncate(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}
