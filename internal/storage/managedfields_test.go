package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/jsonpath"
)

// Every mode that drops metadata.managedFields refuses an expression that reads them by
// name, as the metadata-only mode does, and accepts it when they are kept: without the
// check, an index on {.metadata.managedFields[*].manager} found no object (and its !exists
// every object) in the unstructured and compact modes, while every object of the server has
// them and the metadata-only mode refused the same index.
func TestModesRefuseManagedFieldsTheyDrop(t *testing.T) {
	reads := []string{"{.metadata.managedFields[*].manager}", "{.metadata.managedFields}",
		"{.metadata['managedFields'][0].operation}", "{.metadata.name}/{.metadata.managedFields[0].manager}"}
	others := []string{"{.metadata.labels.app}", "{.metadata}", "{..manager}", "{.spec.managedFields}", "{.managedFields}"}
	for keep, mode := range map[bool]Mode{false: NewDynamicMode(nil, Config{}), true: NewDynamicMode(nil, Config{KeepManagedFields: true})} {
		pc, ok := mode.(PathChecker)
		require.True(t, ok, "the dynamic mode checks paths")
		for _, expr := range reads {
			err := pc.CheckPath(jsonpath.MustCompile(expr))
			if keep {
				assert.NoError(t, err, "%s: kept", expr)
			} else {
				assert.ErrorIs(t, err, ErrManagedFieldsDropped, expr)
			}
		}
		for _, expr := range others {
			assert.NoError(t, pc.CheckPath(jsonpath.MustCompile(expr)), "%s keep=%v", expr, keep)
		}
	}
	// The metadata-only mode keeps its own error for them.
	meta := NewMetadataMode(nil, Config{}).(PathChecker)
	assert.ErrorIs(t, meta.CheckPath(jsonpath.MustCompile(reads[0])), ErrNotMetadata)
}
