// Package snapshot is the file format of kindex's warm restarts: one file per informer
// holding its objects as the bytes the compact storage mode keeps, and the resourceVersion
// they are consistent with, so that a restarted informer can serve them at once and resume
// with a WATCH from that resourceVersion instead of a LIST.
//
// # Layout
//
// A file is a plaintext header followed by a body:
//
//	header: magic "KXSNAP\r\n" | version uint16 | flags uint16 | nonce prefix [4]byte
//	        [ salt [16]byte: encrypted files of version 3 ]
//	body:   identity hash [32]byte | len uint32 + resourceVersion | unix nanoseconds int64 |
//	        object count uint64 | count × (len uint32 + object bytes) | CRC-32C [4]byte
//
// All integers are big-endian. The checksum (CRC-32C, Castagnoli, in format versions 2
// and 3; a SHA-256 [32]byte in version 1, which is still read) covers the header and everything
// in the body before it. It detects damage (torn writes, bad disks), not tampering: the
// directory is trusted, and encrypted files are authenticated by AES-GCM. On Unix, Open
// refuses a file owned by another user than the process's or the directory's owner, or
// writable by others (its group may write: an fsGroup volume's files are made so): in a
// directory others may write to (such as /tmp), anyone
// could otherwise plant a file, with a valid checksum, that the informer would serve. The identity hash is the
// SHA-256 of the caller's identity string (resource, namespace, selectors, storage
// options): a file written for something else is rejected.
//
// With a key (flag 1) the body is sealed with AES-GCM in frames of at most 64 KiB of
// plaintext, each "len uint32 | ciphertext"; the high bit of len marks the last frame.
// In version 3 each file is sealed with a key of its own, HKDF-SHA256 of the caller's key
// and the file's random salt: frame i's nonce "prefix | i as uint64" then never meets
// another file's under the same key (version 2, still read, used the caller's key for
// every file, with only the 32 random bits of the prefix to tell files apart: nonces
// repeated with a chance of n²/2³³ over n files). The header, salt included, plus a
// last-frame byte is each frame's additional data, so frames cannot be reordered,
// dropped, moved between files or cut off at a frame boundary without failing to open.
// Reading and writing stream: neither ever holds more than one frame and one object.
//
// # Trust
//
// Open and Reader.Next check everything they read against bounds before using it, and the
// checksum (and, encrypted, every frame's tag) before the last object is accepted: a
// caller must not use any object until Next has returned io.EOF. Every failure wraps
// ErrInvalid; a file for another identity also wraps ErrIdentity, and a wrong key or a
// tampered encrypted file ErrDecrypt.
//
// # Atomicity
//
// Write creates a temporary file in the target's directory with mode 0600, writes, syncs,
// renames it over the target and syncs the directory: a crash at any point leaves either
// the previous file or the new one, never a mix. Temporary files a crash left behind are
// removed by a later Write to the same target once ten minutes old (a younger one may be
// another process's write in progress, in a directory two processes share).
//
// # Mapping
//
// With Options.Map, Open maps a plaintext file read-only (Linux: mmap, populated 16 MiB
// ahead of the reader with MADV_POPULATE_READ, so that a file whose size lies costs what
// is read of it) instead of reading it through a buffer, and Next returns views of the mapping, checked
// against the same bounds and covered by the same checksum. After io.EOF, Keep keeps the
// mapping for the life of the process, so that a caller can keep the views as its objects'
// memory (the compact mode does): they are page-cache pages, no fresh memory. Since Write
// never changes a file in place (it renames a new one over it), a kept mapping keeps the
// file it mapped whatever is written after; a file truncated in place by someone else
// faults (SIGBUS) where a view is read past the new end, as every mapped file does.
//
// PeekResourceVersion and SetResourceVersion read and rewrite a plaintext file's version
// without the identity: for tests and tooling, never to trust a file.
package snapshot
