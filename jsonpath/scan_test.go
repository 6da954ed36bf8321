package jsonpath

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tidwall/gjson"
)

// TestKeyIs checks the shortcuts of keyIs against decoding the key: escapes that give the
// name, escapes in the first byte, control bytes, empty names and names with backslashes.
func TestKeyIs(t *testing.T) {
	keys := []string{`""`, `"a"`, `"b"`, `"ab"`, `"ba"`, `"\u0062"`, `"\u0061b"`, `"a\u0062"`,
		`"\\"`, `"a\\b"`, `"a\b"`, `"\"a"`, `"\ta"`, "\"\x01a\"", `"\u0000"`, `"nodeName"`, `"node\u004eame"`,
		`"\u006eodeName"`, `"é"`, `"\u00e9"`, `"xnodeName"`}
	names := []string{"", "a", "b", "ab", `\`, `a\b`, `"a`, "\ta", "\x00", "nodeName", "é"}
	for _, k := range keys {
		for _, n := range names {
			want := gjson.Parse(k).Str == n
			if got, _ := keyIs(k, n, 1<<30); got != want {
				t.Errorf("keyIs(%s, %q) = %v, want %v", k, n, got, want)
			}
		}
	}
}

// TestKeyIsChargesBeforeDecoding: a key with escapes is decoded only when the steps left pay
// for it (decoding allocates the decoded key: none is made when they do not).
func TestKeyIsChargesBeforeDecoding(t *testing.T) {
	key := `"a` + strings.Repeat(`\u0062`, 10000) + `"`
	name := "a" + strings.Repeat("b", 10000)
	want := len(key) / textBytesPerStep
	match, cost := keyIs(key, name, want)
	require.True(t, match)
	require.Equal(t, want, cost)
	allocs := testing.AllocsPerRun(5, func() {
		match, cost = keyIs(key, name, want-1)
	})
	assert.False(t, match)
	assert.Equal(t, want, cost)
	assert.Zero(t, allocs, "the key was decoded although the steps left did not pay for it")
}
