package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
)

// plainMeta returns a plaintext file of format version 2 or 3 and the bounds of its
// resourceVersion field, without checking anything else.
func plainMeta(path string) (b []byte, start, end int, err error) {
	if b, err = os.ReadFile(path); err != nil {
		return nil, 0, 0, err
	}
	at := headerLen + sha256.Size // after the identity hash
	if len(b) < at+4+4 || string(b[:len(magic)]) != magic {
		return nil, 0, 0, invalid("not a snapshot")
	}
	if v := binary.BigEndian.Uint16(b[len(magic):]); v != Version && v != versionSharedKey {
		return nil, 0, 0, invalid("format version %d", v)
	}
	if binary.BigEndian.Uint16(b[len(magic)+2:])&flagEncrypt != 0 {
		return nil, 0, 0, invalid("encrypted")
	}
	n := int(binary.BigEndian.Uint32(b[at:]))
	if at+4+n > len(b)-4 {
		return nil, 0, 0, invalid("resourceVersion out of bounds")
	}
	return b, at + 4, at + 4 + n, nil
}

// Plaintext reports whether path is a snapshot file that is not encrypted, from its header
// alone (nothing else is checked): an error when it cannot be read, false for a file that
// is no snapshot of a format this package writes.
func Plaintext(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	var h [headerLen]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false, nil // too short for a header: no snapshot
	}
	_, encrypted, err := parseHeader(h[:])
	return err == nil && !encrypted, nil
}

// PeekResourceVersion returns the resourceVersion a plaintext file records, without
// checking its identity or checksum: for tests and tooling, never to trust a file.
func PeekResourceVersion(path string) (string, error) {
	b, start, end, err := plainMeta(path)
	if err != nil {
		return "", err
	}
	return string(b[start:end]), nil
}

// SetResourceVersion rewrites the resourceVersion a plaintext file records and its
// checksum, so that it still opens as valid: for tests, which need a snapshot that claims
// another version (as one of another cluster at the same address would).
func SetResourceVersion(path, rv string) error {
	b, start, end, err := plainMeta(path)
	if err != nil {
		return err
	}
	out := append([]byte(nil), b[:start-4]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(rv)))
	out = append(out, rv...)
	out = append(out, b[end:len(b)-4]...)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	// A new file renamed over the old one, as Write does: a process that mapped the old
	// one (Options.Map) keeps reading it.
	tmp := path + ".rv"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
