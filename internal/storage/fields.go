package storage

import (
	"slices"
	"strings"
)

// FieldString prints a key path of jsonpath.Path.Fields as an expression reads it:
// ".spec.nodeName", a key with a dot or a bracket as ['app.kubernetes.io/name'], and the
// empty path as "the whole object", so that an error names the field the caller wrote.
func FieldString(path []string) string {
	if len(path) == 0 {
		return "the whole object"
	}
	var b strings.Builder
	for _, k := range path {
		if k != "" && !strings.ContainsAny(k, ".[]'\\ ") {
			b.WriteString("." + k)
			continue
		}
		b.WriteString("['" + strings.ReplaceAll(strings.ReplaceAll(k, `\`, `\\`), "'", `\'`) + "']")
	}
	return b.String()
}

// dottedFallback reports whether path is a quoted key with dots that p also reads as the
// path its dots split it into (['metadata.name'] reads the key "metadata.name" where the
// object has it, and .metadata.name otherwise; jsonpath's doc): fields lists both, and the
// split path, or a field above it, is among them. Fields does not say which key had its
// dots escaped (['a\.b'] is the key only): such a key next to a field above its split path
// ({.metadata}{['metadata\.name']}) passes for a fallback too.
func dottedFallback(path []string, fields [][]string) bool {
	var split []string
	for _, k := range path {
		split = append(split, strings.Split(k, ".")...)
	}
	if len(split) == len(path) {
		return false
	}
	for _, f := range fields {
		if len(f) <= len(split) && slices.Equal(f, split[:len(f)]) {
			return true
		}
	}
	return false
}
