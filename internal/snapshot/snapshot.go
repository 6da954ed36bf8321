package snapshot

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Version is the format version this package writes. It reads it and version 1, whose
// checksum is a SHA-256 instead of a CRC-32C, and version 2 (see the package doc).
const Version = 3

// versionSharedKey is format version 2: encrypted files use the caller's key itself, with
// 32 random bits of nonce per file, so that nonces of two files repeat with a chance of
// n²/2³³ over n files. Version 3 encrypts each file with a key of its own, derived
// (HKDF-SHA256) from the caller's key and 16 random bytes written after the header.
const versionSharedKey = 2

// saltLen is the length of the salt an encrypted file of version 3 has after its header.
const saltLen = 16

// versionSHA256 is the first format version: the same layout with a SHA-256 checksum.
const versionSHA256 = 1

// readBuffer is the reader's buffer: objects up to this size are returned as views of it,
// without a copy.
const readBuffer = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newSum returns the checksum of format version v.
func newSum(v uint16) hash.Hash {
	if v == versionSHA256 {
		return sha256.New()
	}
	return crc32.New(castagnoli)
}

const (
	magic       = "KXSNAP\r\n"
	headerLen   = len(magic) + 2 + 2 + 4
	flagEncrypt = 1
	frameSize   = 64 << 10
	lastFrame   = 1 << 31
	// MaxObject bounds one object's length; larger lengths are corruption.
	MaxObject = 64 << 20
	maxRV     = 1 << 10
	tmpPrefix = ".tmp-"
)

var (
	// ErrInvalid is wrapped by every error about a file's content: bad magic or version,
	// truncation, a checksum mismatch, a bound exceeded, another identity, a wrong key.
	ErrInvalid = errors.New("snapshot: invalid file")
	// ErrIdentity (with ErrInvalid): the file was written for another identity.
	ErrIdentity = errors.New("snapshot: written for another informer")
	// ErrDecrypt (with ErrInvalid): the file is encrypted and cannot be opened with the
	// key given (or without one), or an encrypted frame was altered.
	ErrDecrypt = errors.New("snapshot: cannot decrypt")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Meta is what a snapshot says about its objects.
type Meta struct {
	// Identity names what the objects are of; Open refuses a file written for another.
	Identity string
	// ResourceVersion is the version the objects are consistent with.
	ResourceVersion string
	// Time is when the objects were taken.
	Time time.Time
}

// Options are the encryption key (nil: plaintext; AES-128, -192 or -256 by its length)
// and, for reading, whether to map the file.
type Options struct {
	Key []byte
	// Map, for reading a plaintext file on Linux, maps the file into memory instead of
	// reading it: Next returns views of the mapping, which stay valid until Close, or for
	// the life of the process once Keep is called. The file's pages are the page cache's:
	// reading a file just written costs no fresh memory (see the package doc, "Mapping").
	// Ignored with a Key and elsewhere than on Linux, or if the mapping fails.
	Map bool
}

func (o Options) aead() (cipher.AEAD, error) {
	if o.Key == nil {
		return nil, nil
	}
	return newAEAD(o.Key)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("snapshot: key: %w", err)
	}
	return cipher.NewGCM(b)
}

// fileAEAD is the AEAD of one file of version 3: the caller's key and the file's salt give
// the file's own key, so that its nonces (prefix and frame counter) never meet another
// file's under the same key.
func fileAEAD(key, salt []byte) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, key, salt, "kindex snapshot file key", len(key))
	if err != nil {
		return nil, fmt.Errorf("snapshot: key: %w", err)
	}
	return newAEAD(k)
}

// ReadKeyFile reads a key from a file holding it as hexadecimal text: 32, 48 or 64 hex
// digits (a key of 16, 24 or 32 bytes: AES-128, -192 or -256), in either case, optionally
// followed by one newline ("\n" or "\r\n"), as "openssl rand -hex 32 >file" writes.
// Anything else is refused, raw key bytes included (they cannot be told from text
// reliably). It refuses a file that others may read or write, or that its group may write
// (mode & 0o027: chmod 600, 400, 640 or 440; in a Pod, a Secret volume with defaultMode
// 0400, which an fsGroup makes 0440), and anything but a regular file (a symbolic link to
// one is followed, as a Secret volume's files are). Errors name the file and never its
// content.
func ReadKeyFile(path string) ([]byte, error) {
	const want = "32, 48 or 64 hexadecimal digits (a 16-, 24- or 32-byte AES key), optionally followed by a newline, as \"openssl rand -hex 32\" writes"
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: key file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("snapshot: key file %s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o027 != 0 {
		return nil, fmt.Errorf("snapshot: key file %s is accessible by others or writable by its group (mode %04o): chmod 600 (or 640; in a Pod, give its Secret volume defaultMode: 0400)", path, perm)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: key file: %w", err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, 2*32+3))
	if err != nil {
		return nil, fmt.Errorf("snapshot: key file %s: %w", path, err)
	}
	text := bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	for _, c := range text {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return nil, fmt.Errorf("snapshot: key file %s is not hexadecimal text (raw key bytes are not read): want %s", path, want)
		}
	}
	switch len(text) {
	case 32, 48, 64:
	default:
		return nil, fmt.Errorf("snapshot: key file %s holds %d hexadecimal digits: want %s", path, len(text), want)
	}
	key := make([]byte, len(text)/2)
	if _, err := hex.Decode(key, text); err != nil {
		return nil, fmt.Errorf("snapshot: key file %s: %w", path, err)
	}
	return key, nil
}

// ErrAborted is Write's error when next returned nil: the file at path is left as it was.
var ErrAborted = errors.New("snapshot: write aborted")

// Write writes count objects, next(0) ... next(count-1), with m to path atomically (see
// the package doc). next's bytes are only read during the call. A nil from next (an
// object that cannot be written) aborts the write before it replaces anything: a file
// missing objects is never in place, and the previous one stays (ErrAborted).
func Write(path string, m Meta, count int, next func(i int) []byte, o Options) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if fi, serr := os.Lstat(path); serr == nil && fi.IsDir() {
		// Renaming over it would fail only after the whole file was written.
		return fmt.Errorf("snapshot: %s is a directory, not a snapshot file", path)
	}
	removeStale(dir, base)
	f, err := os.CreateTemp(dir, tmpPrefix+base+"-*")
	if errors.Is(err, os.ErrNotExist) {
		// The directory was removed since (a cleaner of temporary directories, an
		// operator): create it again, 0700 as the factory does, rather than fail every
		// write until the process restarts.
		if err = os.MkdirAll(dir, 0o700); err == nil {
			f, err = os.CreateTemp(dir, tmpPrefix+base+"-*")
		}
	}
	if err != nil {
		return fileError("create a temporary file in", dir, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return fileError("write", path, err)
	}
	if err = writeTo(f, m, count, next, o); err != nil {
		return fileError("write", path, err)
	}
	if err = f.Sync(); err != nil {
		return fileError("write", path, err)
	}
	if err = f.Close(); err != nil {
		return fileError("write", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fileError("replace", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// fileError names path, the file Write was asked for, in an error about the temporary
// file it writes first, whose random name would make every failure read differently: the
// caller can then tell a failure that repeats from a new one.
func fileError(op, path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	default:
		return err
	}
	return fmt.Errorf("snapshot: %s %s: %w", op, path, err)
}

// staleAfter is how long a temporary file must have been left unchanged before a Write
// takes it for one an interrupted Write left: a younger one may be another writer's
// (two processes sharing a directory) still being written, at a 1 MiB buffer at a time.
var staleAfter = 10 * time.Minute

// removeStale removes temporary files an interrupted Write of base left in dir.
func removeStale(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tmpPrefix+base+"-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) >= staleAfter {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// writeTo writes the whole file to w.
func writeTo(w io.Writer, m Meta, count int, next func(i int) []byte, o Options) error {
	aead, err := o.aead()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, frameSize)
	hdr := make([]byte, 0, headerLen)
	hdr = append(hdr, magic...)
	hdr = binary.BigEndian.AppendUint16(hdr, Version)
	var flags uint16
	var prefix [4]byte
	var salt []byte
	if aead != nil {
		flags |= flagEncrypt
		salt = make([]byte, saltLen)
		if _, err := rand.Read(prefix[:]); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, err := rand.Read(salt); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if aead, err = fileAEAD(o.Key, salt); err != nil {
			return err
		}
	}
	hdr = binary.BigEndian.AppendUint16(hdr, flags)
	hdr = append(hdr, prefix[:]...)
	hdr = append(hdr, salt...) // authenticated with the rest of the header
	if _, err := bw.Write(hdr); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	sum := newSum(Version)
	sum.Write(hdr)
	var body io.Writer = bw
	var fw *frameWriter
	if aead != nil {
		fw = &frameWriter{w: bw, aead: aead, ad: hdr, prefix: prefix, buf: make([]byte, 0, frameSize)}
		body = fw
	}
	out := io.MultiWriter(body, sum)
	var scratch [8]byte
	put := func(b []byte) error {
		_, err := out.Write(b)
		return err
	}
	put32 := func(v uint32) error { binary.BigEndian.PutUint32(scratch[:4], v); return put(scratch[:4]) }
	put64 := func(v uint64) error { binary.BigEndian.PutUint64(scratch[:], v); return put(scratch[:]) }
	id := sha256.Sum256([]byte(m.Identity))
	if len(m.ResourceVersion) > maxRV {
		return fmt.Errorf("snapshot: resourceVersion of %d bytes", len(m.ResourceVersion))
	}
	if err := errors.Join(put(id[:]), put32(uint32(len(m.ResourceVersion))), put([]byte(m.ResourceVersion)),
		put64(uint64(m.Time.UnixNano())), put64(uint64(count))); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	for i := range count {
		b := next(i)
		if b == nil {
			return fmt.Errorf("%w at object %d", ErrAborted, i)
		}
		if len(b) > MaxObject {
			return fmt.Errorf("snapshot: object %d has %d bytes, more than %d", i, len(b), MaxObject)
		}
		if err := put32(uint32(len(b))); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if err := put(b); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	// The checksum itself is part of the body but not of what it sums.
	if _, err := body.Write(sum.Sum(nil)); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if fw != nil {
		if err := fw.close(); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// frameWriter seals the body in frames (see the package doc).
type frameWriter struct {
	w      io.Writer
	aead   cipher.AEAD
	ad     []byte
	prefix [4]byte
	n      uint64
	buf    []byte
	out    []byte
}

func (f *frameWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		if len(f.buf) == frameSize {
			if err := f.flush(false); err != nil {
				return 0, err
			}
		}
		k := min(frameSize-len(f.buf), len(p))
		f.buf = append(f.buf, p[:k]...)
		p = p[k:]
	}
	return total, nil
}

func (f *frameWriter) flush(last bool) error {
	nonce := frameNonce(f.prefix, f.n)
	f.n++
	f.out = f.aead.Seal(f.out[:0], nonce, f.buf, frameAD(f.ad, last))
	n := uint32(len(f.out))
	if last {
		n |= lastFrame
	}
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], n)
	if _, err := f.w.Write(l[:]); err != nil {
		return err
	}
	_, err := f.w.Write(f.out)
	f.buf = f.buf[:0]
	return err
}

func (f *frameWriter) close() error { return f.flush(true) }

func frameNonce(prefix [4]byte, n uint64) []byte {
	nonce := make([]byte, 12)
	copy(nonce, prefix[:])
	binary.BigEndian.PutUint64(nonce[4:], n)
	return nonce
}

func frameAD(hdr []byte, last bool) []byte {
	ad := make([]byte, len(hdr)+1)
	copy(ad, hdr)
	if last {
		ad[len(hdr)] = 1
	}
	return ad
}

// Reader reads a snapshot file object by object.
type Reader struct {
	f      *os.File
	fr     *frameReader // encrypted: what body reads from
	body   io.Reader    // buffered, or mapped
	buffer *bufio.Reader
	mapped *mapReader // Options.Map: body, on a mapping
	kept   bool
	sum    hash.Hash
	meta   Meta
	count  uint64
	read   uint64
	done   bool
	buf    []byte
	lenBuf [8]byte
}

// Open opens path and reads its header and meta, checking the format version, the
// identity and (encrypted) the key. The objects follow with Next. A file encrypted without
// a key given, or plaintext when a key is given, is refused (ErrDecrypt).
func Open(path, identity string, o Options) (*Reader, error) {
	if _, err := o.aead(); err != nil {
		return nil, err
	}
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	var in io.Reader = f
	var mapped *mapReader
	if o.Map && o.Key == nil {
		if st, err := f.Stat(); err == nil && st.Size() > 0 && int64(int(st.Size())) == st.Size() {
			if m, err := mapFile(f, st.Size()); err == nil {
				mapped = &mapReader{m: m}
				in = mapped
			}
		}
	}
	r, err := newReader(in, identity, o.Key)
	if err != nil {
		if mapped != nil {
			_ = unmapFile(mapped.m)
		}
		_ = f.Close()
		return nil, err
	}
	r.f, r.mapped = f, mapped
	return r, nil
}

// mapReader reads a mapped file.
type mapReader struct {
	m         []byte
	off       int
	populated int // m[:populated] has been populated
}

// populateAhead is how far ahead of the reader the mapping is populated.
const populateAhead = 16 << 20

// ahead populates the mapping up to at least end, in steps of populateAhead.
func (m *mapReader) ahead(end int) {
	if end <= m.populated {
		return
	}
	to := min(max(end, m.populated+populateAhead), len(m.m))
	populate(m.m[m.populated:to])
	m.populated = to
}

func (m *mapReader) Read(p []byte) (int, error) {
	if m.off == len(m.m) {
		return 0, io.EOF
	}
	n := min(len(p), len(m.m)-m.off)
	m.ahead(m.off + n)
	copy(p, m.m[m.off:m.off+n])
	m.off += n
	return n, nil
}

// view returns the next n bytes of the mapping without a copy.
func (m *mapReader) view(n int) ([]byte, bool) {
	if n > len(m.m)-m.off {
		return nil, false
	}
	m.ahead(m.off + n)
	b := m.m[m.off : m.off+n : m.off+n]
	m.off += n
	return b, true
}

// openRegular opens path for reading if it is a regular file (through symlinks) that this
// process's user (or the directory's owner) owns and only its owner may write
// (checkOwner). Without
// blocking: a FIFO in its place would block os.Open until a writer came, and the informer
// with it, forever; it is opened non-blocking, found not regular and refused (ErrInvalid).
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = invalid("not a regular file (%s)", st.Mode().Type())
	}
	if err == nil {
		err = checkOwner(path, st)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// parseHeader reads a file's header (headerLen bytes): its format version and whether it is
// encrypted; an ErrInvalid error for what is no snapshot of a format this package reads.
func parseHeader(hdr []byte) (version uint16, encrypted bool, err error) {
	if string(hdr[:len(magic)]) != magic {
		return 0, false, invalid("not a snapshot")
	}
	version = binary.BigEndian.Uint16(hdr[len(magic):])
	if version != Version && version != versionSharedKey && version != versionSHA256 {
		return 0, false, invalid("format version %d, want %d to %d", version, versionSHA256, Version)
	}
	flags := binary.BigEndian.Uint16(hdr[len(magic)+2:])
	if flags&^flagEncrypt != 0 {
		return 0, false, invalid("unknown flags %#x", flags)
	}
	return version, flags&flagEncrypt != 0, nil
}

func newReader(in io.Reader, identity string, key []byte) (*Reader, error) {
	var br io.Reader = in
	if _, ok := in.(*mapReader); !ok {
		br = bufio.NewReaderSize(in, readBuffer)
	}
	hdr := make([]byte, headerLen)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, invalid("header: %v", err)
	}
	version, encrypted, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	var aead cipher.AEAD
	if encrypted && key != nil {
		var err error
		if version < Version {
			aead, err = newAEAD(key)
		} else {
			salt := make([]byte, saltLen)
			if _, err := io.ReadFull(br, salt); err != nil {
				return nil, invalid("header: %v", err)
			}
			hdr = append(hdr, salt...)
			aead, err = fileAEAD(key, salt)
		}
		if err != nil {
			return nil, err
		}
	}
	if encrypted != (key != nil) {
		if encrypted {
			return nil, fmt.Errorf("%w: %w: the file is encrypted and no key was given", ErrInvalid, ErrDecrypt)
		}
		return nil, fmt.Errorf("%w: %w: the file is not encrypted and a key was given", ErrInvalid, ErrDecrypt)
	}
	r := &Reader{sum: newSum(version), body: br}
	r.buffer, _ = br.(*bufio.Reader)
	r.sum.Write(hdr)
	if encrypted {
		var prefix [4]byte
		copy(prefix[:], hdr[len(magic)+4:])
		r.fr = &frameReader{r: br, aead: aead, ad: hdr, prefix: prefix}
		r.buffer = bufio.NewReaderSize(r.fr, readBuffer)
		r.body = r.buffer
	}
	var id [32]byte
	if err := r.full(id[:]); err != nil {
		return nil, err
	}
	if want := sha256.Sum256([]byte(identity)); id != want {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, ErrIdentity)
	}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if n > maxRV {
		return nil, invalid("resourceVersion of %d bytes", n)
	}
	rv := make([]byte, n)
	if err := r.full(rv); err != nil {
		return nil, err
	}
	ns, err := r.u64()
	if err != nil {
		return nil, err
	}
	if r.count, err = r.u64(); err != nil {
		return nil, err
	}
	r.meta = Meta{Identity: identity, ResourceVersion: string(rv), Time: time.Unix(0, int64(ns))}
	return r, nil
}

// Meta returns the snapshot's meta (Identity is the one Open was given and matched).
func (r *Reader) Meta() Meta { return r.meta }

// Count returns the number of objects the file says it holds (not trusted until Next has
// returned io.EOF: use it as a hint only, bounded by the caller).
func (r *Reader) Count() uint64 { return r.count }

// Next returns the next object's bytes, valid until the next call (if Mapped: until Close,
// or for good after Keep), or io.EOF after the last one once the checksum matched. Any other
// error means the file is invalid: discard every object read from it.
func (r *Reader) Next() ([]byte, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.read == r.count {
		want := r.sum.Sum(nil)
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r.body, got); err != nil {
			return nil, wrapInvalid("checksum", err)
		}
		if string(got) != string(want) {
			return nil, invalid("checksum mismatch")
		}
		var one [1]byte
		if n, err := io.ReadFull(r.body, one[:]); n != 0 {
			return nil, invalid("data after the checksum")
		} else if err != io.EOF {
			return nil, wrapInvalid("after the checksum", err)
		}
		if fr, ok := r.frames(); ok && !fr.last {
			return nil, invalid("missing last frame")
		}
		r.done = true
		return nil, io.EOF
	}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if n > MaxObject {
		return nil, invalid("object of %d bytes", n)
	}
	if r.mapped != nil {
		// A view of the mapping: no copy.
		b, ok := r.mapped.view(int(n))
		if !ok {
			return nil, invalid("truncated: object of %d bytes", n)
		}
		r.sum.Write(b)
		r.read++
		return b, nil
	}
	if int(n) <= r.buffer.Size() {
		// A view of the read buffer: no copy.
		b, err := r.buffer.Peek(int(n))
		if err != nil {
			return nil, wrapInvalid("truncated", err)
		}
		r.sum.Write(b)
		_, _ = r.buffer.Discard(int(n))
		r.read++
		return b, nil
	}
	if cap(r.buf) < int(n) {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if err := r.full(r.buf); err != nil {
		return nil, err
	}
	r.read++
	return r.buf, nil
}

// frames returns the frame reader of an encrypted body.
func (r *Reader) frames() (*frameReader, bool) { return r.fr, r.fr != nil }

// Mapped returns the size of the file's mapping (Options.Map), 0 if it is read: Next's
// views of a mapped file stay valid until Close, or for the life of the process after Keep.
func (r *Reader) Mapped() int {
	if r.mapped == nil {
		return 0
	}
	return len(r.mapped.m)
}

// Keep keeps, once Next has returned io.EOF, a mapped file's mapping for the life of the
// process, so that the views Next returned stay valid after Close (they are read-only:
// writing to one faults). It returns false if the file is not mapped or not read to
// the end.
func (r *Reader) Keep() bool {
	if r.mapped == nil || !r.done {
		return false
	}
	r.kept = true
	return true
}

// Close closes the file and, unless kept, unmaps it.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	if r.mapped != nil && !r.kept {
		_ = unmapFile(r.mapped.m)
	}
	r.mapped = nil
	err := r.f.Close()
	r.f = nil
	return err
}

func (r *Reader) full(b []byte) error {
	if _, err := io.ReadFull(r.body, b); err != nil {
		return wrapInvalid("truncated", err)
	}
	r.sum.Write(b)
	return nil
}

func (r *Reader) u32() (uint32, error) {
	if err := r.full(r.lenBuf[:4]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(r.lenBuf[:4]), nil
}

func (r *Reader) u64() (uint64, error) {
	if err := r.full(r.lenBuf[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(r.lenBuf[:]), nil
}

// wrapInvalid returns err if it is an ErrInvalid already, else wraps it in one.
func wrapInvalid(what string, err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalid, what, unexpected(err))
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// frameReader opens the frames of an encrypted body as they are read.
type frameReader struct {
	r      io.Reader
	aead   cipher.AEAD
	ad     []byte
	prefix [4]byte
	n      uint64
	in     []byte
	plain  []byte
	off    int
	last   bool
	err    error
}

func (f *frameReader) Read(p []byte) (int, error) {
	for f.off == len(f.plain) {
		if f.err != nil {
			return 0, f.err
		}
		if f.last {
			return 0, io.EOF
		}
		f.err = f.next()
	}
	k := copy(p, f.plain[f.off:])
	f.off += k
	return k, nil
}

func (f *frameReader) next() error {
	var l [4]byte
	if _, err := io.ReadFull(f.r, l[:]); err != nil {
		return invalid("truncated frame: %v", unexpected(err))
	}
	n := binary.BigEndian.Uint32(l[:])
	last := n&lastFrame != 0
	n &^= lastFrame
	if n > frameSize+uint32(f.aead.Overhead()) || n < uint32(f.aead.Overhead()) {
		return invalid("frame of %d bytes", n)
	}
	if cap(f.in) < int(n) {
		f.in = make([]byte, n)
	}
	f.in = f.in[:n]
	if _, err := io.ReadFull(f.r, f.in); err != nil {
		return invalid("truncated frame: %v", unexpected(err))
	}
	plain, err := f.aead.Open(f.plain[:0], frameNonce(f.prefix, f.n), f.in, frameAD(f.ad, last))
	if err != nil {
		return fmt.Errorf("%w: %w: frame %d", ErrInvalid, ErrDecrypt, f.n)
	}
	f.n++
	f.plain, f.off, f.last = plain, 0, last
	if last {
		var one [1]byte
		if k, _ := io.ReadFull(f.r, one[:]); k != 0 {
			return invalid("data after the last frame")
		}
	}
	return nil
}
