package testsupport

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
)

// SetSnapshotResourceVersion rewrites the resourceVersion of a plaintext snapshot file
// (internal/snapshot's layout, format version 2 or 3) and its checksum: a snapshot that
// loads as valid and claims another version, as one of another cluster at the same address
// would.
func SetSnapshotResourceVersion(path, rv string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const header = 8 + 2 + 2 + 4 // magic, version, flags, nonce prefix
	if len(b) < header+32+4+4 || binary.BigEndian.Uint16(b[10:]) != 0 {
		return errors.New("testsupport: not a plaintext snapshot")
	}
	at := header + 32 // after the identity hash
	n := int(binary.BigEndian.Uint32(b[at:]))
	if at+4+n > len(b)-4 {
		return errors.New("testsupport: damaged snapshot")
	}
	out := append([]byte(nil), b[:at]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(rv)))
	out = append(out, rv...)
	out = append(out, b[at+4+n:len(b)-4]...)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
	return os.WriteFile(path, out, 0o600)
}

// SnapshotResourceVersion returns the resourceVersion a plaintext snapshot file records.
func SnapshotResourceVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	const header = 8 + 2 + 2 + 4
	at := header + 32
	if len(b) < at+4 || binary.BigEndian.Uint16(b[10:]) != 0 {
		return "", errors.New("testsupport: not a plaintext snapshot")
	}
	n := int(binary.BigEndian.Uint32(b[at:]))
	if at+4+n > len(b) {
		return "", errors.New("testsupport: damaged snapshot")
	}
	return string(b[at+4 : at+4+n]), nil
}
