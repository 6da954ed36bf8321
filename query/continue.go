package query

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"
)

// Continue tokens. A token names the key of the last object of a page, and is bound to the
// query and to the cache that issued it:
//
//	base64url(version | tag | key)
//
// where version is one byte (1) and tag the first 12 bytes of the SHA-256 of the version,
// the query's identity (every field but Limit, Continue and Scan, in a canonical form; the sort order included), the
// source (the identity of the cache) and the key. The tag is an integrity check, not a
// secret: anyone can compute it, and nothing in a token is confidential (the key is a
// namespace and a name the caller could read). It makes a token that was typed by hand,
// truncated, modified, or issued for another query or another cache fail with
// ErrInvalidContinue instead of silently returning some page: the chance that garbage
// passes is 2^-96.
const (
	continueVersion = 1
	continueTagLen  = 12
)

// EncodeContinue returns the continue token for a page of q that ended at key (an object's
// cache key), issued by the cache named source. Source identifies the cache (for example
// the informer's resource and options) so that a token from one cache is refused by
// another; it may be empty.
func EncodeContinue(q Query, source, key string) string {
	b := make([]byte, 0, 1+continueTagLen+len(key))
	b = append(b, continueVersion)
	b = append(b, continueTag(q, source, key)...)
	b = append(b, key...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeContinue returns the key after which the page q.Continue asks for starts, or ""
// when q.Continue is empty (the first page). A token that EncodeContinue did not return for
// the same query (Limit aside) and the same source is an error matching ErrInvalidContinue
// (and ErrInvalidQuery).
func DecodeContinue(q Query, source string) (string, error) {
	if q.Continue == "" {
		return "", nil
	}
	// One spelling per token: strict padding bits, and no CR or LF, which even the strict
	// decoder skips.
	b, err := base64.RawURLEncoding.Strict().DecodeString(q.Continue)
	switch {
	case strings.ContainsAny(q.Continue, "\r\n"):
		return "", fmt.Errorf("%w: not a token (a line break)", ErrInvalidContinue)
	case err != nil:
		return "", fmt.Errorf("%w: not a token (%w)", ErrInvalidContinue, err)
	case len(b) <= 1+continueTagLen:
		return "", fmt.Errorf("%w: too short to be a token", ErrInvalidContinue)
	case b[0] != continueVersion:
		return "", fmt.Errorf("%w: unknown token version %d", ErrInvalidContinue, b[0])
	}
	key := string(b[1+continueTagLen:])
	if !bytes.Equal(b[1:1+continueTagLen], continueTag(q, source, key)) {
		return "", fmt.Errorf("%w: it was issued for another query or another cache, or was modified", ErrInvalidContinue)
	}
	return key, nil
}

func continueTag(q Query, source, key string) []byte {
	h := sha256.New()
	writeField(h, []byte{continueVersion})
	writeIdentity(h, q)
	writeField(h, []byte(source))
	writeField(h, []byte(key))
	return h.Sum(nil)[:continueTagLen]
}

// writeIdentity writes what makes q the query it is, canonically: conditions are a
// conjunction, so their order does not matter, nor does the order of In's values; Limit may
// change between pages, and Scan only allows a plan.
func writeIdentity(h hash.Hash, q Query) {
	writeField(h, []byte(q.Namespace))
	writeConditions(h, q.Conditions)
	groups := make([]string, len(q.AnyOf))
	for i, g := range q.AnyOf {
		var b strings.Builder
		writeConditions(&b, g)
		groups[i] = b.String()
	}
	slices.Sort(groups)
	writeField(h, binary.AppendUvarint(nil, uint64(len(groups))))
	for _, g := range groups {
		writeField(h, []byte(g))
	}
	selector := ""
	if q.Labels != nil {
		selector = q.Labels.String()
	}
	writeField(h, []byte(selector))
	// The direction is a field of its own: an index may be named "x desc".
	writeField(h, []byte(q.SortBy))
	desc := []byte{0}
	if q.Descending {
		desc[0] = 1
	}
	writeField(h, desc)
}

// writeField writes b length-prefixed, so that the fields' boundaries are part of the hash.
func writeField(w io.Writer, b []byte) {
	_, _ = w.Write(binary.AppendUvarint(nil, uint64(len(b))))
	_, _ = w.Write(b)
}

// writeConditions writes a conjunction canonically: its order does not matter, nor does the
// order of In's values.
func writeConditions(w io.Writer, cs []Condition) {
	conds := make([]string, len(cs))
	for i, c := range cs {
		var b strings.Builder
		values := c.Values
		if c.Op == In {
			values = slices.Clone(values)
			slices.Sort(values)
			values = slices.Compact(values)
		}
		for _, f := range append([]string{c.Index, c.Path, fmt.Sprint(int(c.Op))}, values...) {
			writeField(&b, []byte(f))
		}
		conds[i] = b.String()
	}
	slices.Sort(conds)
	writeField(w, binary.AppendUvarint(nil, uint64(len(conds))))
	for _, c := range conds {
		writeField(w, []byte(c))
	}
}
