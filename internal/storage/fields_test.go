package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/jsonpath"
)

func TestFieldString(t *testing.T) {
	for path, want := range map[string][]string{
		"the whole object":                           nil,
		".spec.nodeName":                             {"spec", "nodeName"},
		"['metadata.name']":                          {"metadata.name"},
		".metadata.labels['app.kubernetes.io/name']": {"metadata", "labels", "app.kubernetes.io/name"},
		`.a['it\'s']['b\\c']`:                        {"a", "it's", `b\c`},
		".a['']":                                     {"a", ""},
	} {
		assert.Equal(t, path, FieldString(want))
	}
}

// A quoted key with dots at the top of a metadata-only object reads the path its dots split
// it into (no such object has the key): {['metadata.name']} is accepted, as {.metadata.name}
// is, where it was refused as reading ".metadata.name", which every such object holds.
// Its split path outside metadata is refused and named as written; an escaped dot is a key.
func TestMetadataModeReadsDottedKeysAsPaths(t *testing.T) {
	meta := NewMetadataMode(nil, Config{}).(PathChecker)
	for _, expr := range []string{"{['metadata.name']}", "{['metadata.labels'].app}", "{.metadata}{['metadata.name']}",
		"{['metadata.name','metadata.namespace']}", "{.metadata.labels['app.kubernetes.io/name']}"} {
		assert.NoError(t, meta.CheckPath(jsonpath.MustCompile(expr)), expr)
	}
	for expr, field := range map[string]string{
		"{['spec.nodeName']}":                ".spec.nodeName",
		`{['metadata\.name']}`:               "['metadata.name']",
		"{['status.phase','metadata.name']}": ".status.phase",
	} {
		err := meta.CheckPath(jsonpath.MustCompile(expr))
		require.ErrorIs(t, err, ErrNotMetadata, expr)
		assert.Contains(t, err.Error(), "reads "+field+":", expr)
	}
}
