package typedjson

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The strings of a small document share an arena chunk no larger than what remains of the
// document, not a kilobyte: a metadata object decoded from a snapshot keeps only its bytes.
func TestArenaChunkBoundedByInput(t *testing.T) {
	type small struct{ A, B, C string }
	data := []byte(`{"A":"alpha","B":"beta","C":"gamma"}`)
	var s small
	require.NoError(t, Unmarshal(data, &s))
	require.Equal(t, small{"alpha", "beta", "gamma"}, s)
	const n = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		var s small
		if err := Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perDecode := (after.TotalAlloc - before.TotalAlloc) / n
	require.Less(t, perDecode, uint64(256), "bytes allocated per decode of a %d-byte document", len(data))
}

// UnmarshalShared's strings are views of the input (those with escapes aside), so decoding
// copies none of their bytes; Unmarshal's are copies, which a later change to the input
// does not reach.
func TestUnmarshalSharedStringsAreViews(t *testing.T) {
	type doc struct {
		A, B string
		M    map[string]string
	}
	within := func(s string, data []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		return p >= start && p < start+uintptr(len(data))
	}
	data := []byte(`{"A":"alpha","B":"b\u0065ta","M":{"key":"value"}}`)
	var shared, copied doc
	require.NoError(t, UnmarshalShared(data, &shared))
	require.NoError(t, Unmarshal(data, &copied))
	require.Equal(t, doc{"alpha", "beta", map[string]string{"key": "value"}}, shared)
	require.Equal(t, shared, copied)
	require.True(t, within(shared.A, data), "a plain string is a view of the input")
	require.False(t, within(shared.B, data), "an unescaped string is not")
	for k, v := range shared.M {
		require.True(t, within(k, data) && within(v, data), "map keys and values are views")
	}
	allocs := func(fn func([]byte, any) error) float64 {
		small := []byte(`{"A":"alpha","B":"beta","C":"gamma"}`)
		return testing.AllocsPerRun(100, func() {
			var s struct{ A, B, C string }
			if err := fn(small, &s); err != nil {
				t.Fatal(err)
			}
		})
	}
	require.Equal(t, allocs(Unmarshal)-1, allocs(UnmarshalShared), "shared strings need no arena chunk")
	for _, s := range []string{copied.A, copied.B, copied.M["key"]} {
		require.False(t, within(s, data), "Unmarshal copies %q", s)
	}
}
