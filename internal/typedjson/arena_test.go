package typedjson

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
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

// Pointers to small scalars (*bool, *int32, *int64) are words of a chunk shared by one
// call: each is its own word, more of them than a chunk holds get another chunk, and no
// two results share a word.
func TestScalarPointersShareAChunkNotAWord(t *testing.T) {
	type doc struct {
		B    *bool
		I    *int32
		L    []*int64
		Next *doc
	}
	var items []string
	for k := range 3 * wordChunk {
		items = append(items, fmt.Sprint(k))
	}
	data := []byte(`{"B":true,"I":7,"L":[` + strings.Join(items, ",") + `],"Next":{"B":false,"I":-3}}`)
	var a, b doc
	require.NoError(t, Unmarshal(data, &a))
	require.NoError(t, Unmarshal(data, &b))
	for _, d := range []doc{a, b} {
		require.True(t, *d.B)
		require.Equal(t, int32(7), *d.I)
		require.False(t, *d.Next.B)
		require.Equal(t, int32(-3), *d.Next.I)
		require.Len(t, d.L, 3*wordChunk)
		for k, p := range d.L {
			require.Equal(t, int64(k), *p)
		}
	}
	*a.B, *a.I = false, 1
	for _, p := range a.L {
		*p = -1
	}
	require.True(t, *b.B, "another result's bool is not changed")
	require.Equal(t, int32(7), *b.I)
	for k, p := range b.L {
		require.Equal(t, int64(k), *p, "another result's int64 is not changed")
	}
	seen := map[*int64]bool{}
	for _, p := range append(a.L, b.L...) {
		require.False(t, seen[p], "two values share a word")
		seen[p] = true
	}
	assert.Equal(t, uintptr(8), uintptr(unsafe.Pointer(a.I))-uintptr(unsafe.Pointer(a.B)),
		"consecutive scalars are consecutive words of one chunk")

	// One allocation for the chunk, not one per value: eight *int64 cost one more than
	// eight int64.
	type eight struct{ A, B, C, D, E, F, G, H *int64 }
	type plain struct{ A, B, C, D, E, F, G, H int64 }
	input := []byte(`{"A":1,"B":2,"C":3,"D":4,"E":5,"F":6,"G":7,"H":8}`)
	allocs := func(v func() any) float64 {
		return testing.AllocsPerRun(100, func() {
			if err := Unmarshal(input, v()); err != nil {
				t.Fatal(err)
			}
		})
	}
	assert.Equal(t, allocs(func() any { return new(plain) })+1, allocs(func() any { return new(eight) }))
}

// A new slice is given room for as many elements as the last array of its type had; an
// array longer or shorter than that is still decoded whole and exactly, and a long array
// does not make later slices of its type large.
func TestSliceRoomFollowsTheLastArray(t *testing.T) {
	type elem struct{ A int }
	decode := func(n int) []elem {
		var items []string
		for k := range n {
			items = append(items, fmt.Sprintf(`{"A":%d}`, k))
		}
		var s []elem
		require.NoError(t, Unmarshal([]byte("["+strings.Join(items, ",")+"]"), &s))
		require.Len(t, s, n)
		for k := range s {
			require.Equal(t, k, s[k].A)
		}
		return s
	}
	for _, n := range []int{3, 1, 5, 5, 2, 100, 1} {
		decode(n)
	}
	decode(5)
	require.GreaterOrEqual(t, cap(decode(1)), 5, "room for the last array's length")
	decode(100000)
	require.LessOrEqual(t, cap(decode(1))*int(unsafe.Sizeof(elem{})), 2*hintBytes,
		"a long array does not make the next slice large")
}
