package store

import "slices"

// keyList is a set of objects (their records: a lookup needs no other map, and a pointer is
// compared and hashed faster than a key) shaped for the sizes index values have: most have
// one object (held inline, no allocation), many a handful (a slice: a linear scan of a few
// pointers beats hashing, and costs a fraction of a map's memory), a few thousands (a map,
// beyond smallKeys).
type keyList struct {
	one   *record   // the only record, when small and big are nil and n == 1
	small []*record // up to smallKeys records, when big is nil
	big   map[*record]struct{}
	n     int
}

const smallKeys = 16

// add inserts a record; it reports whether it was new.
func (k *keyList) add(rec *record) bool {
	switch {
	case k.big != nil:
		n := len(k.big)
		if k.big[rec] = struct{}{}; len(k.big) == n { // one hash, not a lookup and an insert
			return false
		}
	case k.small != nil:
		if slices.Contains(k.small, rec) {
			return false
		}
		if len(k.small) < smallKeys {
			k.small = append(k.small, rec)
			break
		}
		k.big = make(map[*record]struct{}, 2*smallKeys)
		for _, s := range k.small {
			k.big[s] = struct{}{}
		}
		k.big[rec] = struct{}{}
		k.small = nil
	case k.n == 0:
		k.one = rec
	default: // one record inline
		if k.one == rec {
			return false
		}
		k.small = append(make([]*record, 0, 4), k.one, rec)
		k.one = nil
	}
	k.n++
	return true
}

// remove deletes a record; it reports whether it was there.
func (k *keyList) remove(rec *record) bool {
	switch {
	case k.big != nil:
		if _, ok := k.big[rec]; !ok {
			return false
		}
		delete(k.big, rec)
	case k.small != nil:
		i := slices.Index(k.small, rec)
		if i < 0 {
			return false
		}
		last := len(k.small) - 1
		k.small[i], k.small[last] = k.small[last], nil
		k.small = k.small[:last]
	case k.n == 1 && k.one == rec:
		k.one = nil
	default:
		return false
	}
	if k.n--; k.n == 0 {
		*k = keyList{}
	}
	return true
}

// each calls fn for every record.
func (k *keyList) each(fn func(rec *record)) {
	switch {
	case k.big != nil:
		for key := range k.big {
			fn(key)
		}
	case k.small != nil:
		for _, key := range k.small {
			fn(key)
		}
	case k.n == 1:
		fn(k.one)
	}
}
