package storage

import (
	"errors"
	"fmt"

	"github.com/kindex/kindex/jsonpath"
)

// ErrManagedFieldsDropped is wrapped by the error for an expression that reads
// metadata.managedFields by name in a mode that drops them (Config.KeepManagedFields unset):
// an index or a query on it would find none where every object of the server has them, as
// the metadata-only mode, which refuses such an expression too (ErrNotMetadata), says.
var ErrManagedFieldsDropped = errors.New("metadata.managedFields are dropped unless KeepManagedFields is set")

// ReadsManagedFields reports whether p reads metadata.managedFields by name ({.metadata.
// managedFields[*].manager}); an expression that reaches them only through the whole
// object or the whole of metadata ({..manager}, {.metadata}) does not.
func ReadsManagedFields(p *jsonpath.Path) bool {
	for _, path := range p.Fields() {
		if len(path) > 1 && path[0] == "metadata" && path[1] == "managedFields" {
			return true
		}
	}
	return false
}

// CheckManagedFields returns an error wrapping ErrManagedFieldsDropped if p reads
// metadata.managedFields and the mode does not keep them (keep false); mode names the mode
// in the message.
func CheckManagedFields(mode string, keep bool, p *jsonpath.Path) error {
	if keep || !ReadsManagedFields(p) {
		return nil
	}
	return fmt.Errorf("%s: %s reads .metadata.managedFields: %w", mode, p.String(), ErrManagedFieldsDropped)
}

// CheckPath refuses an expression that reads metadata.managedFields when the mode drops
// them (CheckManagedFields); the mode keeps everything else of each object.
func (m *clientMode) CheckPath(p *jsonpath.Path) error { return CheckManagedFields(m.name, m.keep, p) }

var _ PathChecker = (*clientMode)(nil)
