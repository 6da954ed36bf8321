package typedjson

import (
	"runtime"
	"testing"

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
