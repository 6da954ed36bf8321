package jsonpath

import (
	"testing"

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
			if got, _ := keyIs(k, n); got != want {
				t.Errorf("keyIs(%s, %q) = %v, want %v", k, n, got, want)
			}
		}
	}
}
