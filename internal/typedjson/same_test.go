package typedjson

import (
	"fmt"
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// sameAsSigs decodes data with sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts and
// with Unmarshal, each into a new value from newV, and returns why they disagree ("" if
// they do not): one fails and the other does not, or both succeed with values that are
// not reflect.DeepEqual.
func sameAsSigs(data []byte, newV func() any) string {
	want, got := newV(), newV()
	werr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, want)
	gerr := Unmarshal(data, got)
	switch {
	case werr != nil && gerr == nil:
		return fmt.Sprintf("sigs.k8s.io/json fails (%v), Unmarshal does not", werr)
	case werr == nil && gerr != nil:
		return fmt.Sprintf("Unmarshal fails (%v), sigs.k8s.io/json does not", gerr)
	case werr == nil && !reflect.DeepEqual(want, got):
		return fmt.Sprintf("values differ:\nwant %#v\ngot  %#v", reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem())
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
