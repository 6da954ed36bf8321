package store

import (
	"slices"

	"github.com/google/btree"
)

// keyList is a set of objects (their records: a lookup needs no other map) kept in
// (namespace, name) order, so that the objects of one index value come out in the order a
// query returns them and need no sort. It is shaped for the sizes index values have: most
// have one object (held inline, no allocation), many a handful (a sorted slice: a binary
// search of a few pointers beats any tree, and costs a fraction of its memory), a few
// thousands (a B-tree, beyond smallKeys).
type keyList struct {
	one   *record   // the only record, when small and big are nil and n == 1
	small []*record // up to smallKeys records in key order, when big is nil
	big   *btree.BTreeG[*record]
	n     int
}

const (
	smallKeys = 16
	// bigDegree is the degree of a large list's B-tree: nodes of up to 31 records.
	bigDegree = 16
)

// recordFree is the node free list the large lists share (it is safe for concurrent use).
var recordFree = btree.NewFreeListG[*record](256)

func recordLess(a, b *record) bool { return compareRecords(a, b) < 0 }

// search returns where rec's key is, or would be, in small, and whether it is there.
func (k *keyList) search(rec *record) (int, bool) {
	return slices.BinarySearchFunc(k.small, rec, compareRecords)
}

// add inserts a record; it reports whether it was new.
func (k *keyList) add(rec *record) bool {
	switch {
	case k.big != nil:
		if _, found := k.big.ReplaceOrInsert(rec); found {
			return false
		}
	case k.small != nil:
		i, found := k.search(rec)
		if found {
			return false
		}
		if len(k.small) < smallKeys {
			k.small = slices.Insert(k.small, i, rec)
			break
		}
		k.big = btree.NewWithFreeListG(bigDegree, recordLess, recordFree)
		for _, s := range k.small {
			k.big.ReplaceOrInsert(s)
		}
		k.big.ReplaceOrInsert(rec)
		k.small = nil
	case k.n == 0:
		k.one = rec
	default: // one record inline
		if k.one == rec {
			return false
		}
		if recordLess(rec, k.one) {
			k.small = append(make([]*record, 0, 4), rec, k.one)
		} else {
			k.small = append(make([]*record, 0, 4), k.one, rec)
		}
		k.one = nil
	}
	k.n++
	return true
}

// remove deletes a record; it reports whether it was there.
func (k *keyList) remove(rec *record) bool {
	switch {
	case k.big != nil:
		if _, found := k.big.Delete(rec); !found {
			return false
		}
	case k.small != nil:
		i, found := k.search(rec)
		if !found || k.small[i] != rec {
			return false
		}
		k.small = slices.Delete(k.small, i, i+1)
	case k.n == 1 && k.one == rec:
		k.one = nil
	default:
		return false
	}
	if k.n--; k.n == 0 {
		if k.big != nil {
			k.big.Clear(true)
		}
		*k = keyList{}
	}
	return true
}

// each calls fn for every record, in (namespace, name) order, until fn returns false; it
// reports whether fn always returned true.
func (k *keyList) each(fn func(rec *record) bool) bool {
	switch {
	case k.big != nil:
		more := true
		k.big.Ascend(func(rec *record) bool {
			more = fn(rec)
			return more
		})
		return more
	case k.small != nil:
		for _, rec := range k.small {
			if !fn(rec) {
				return false
			}
		}
	case k.n == 1:
		return fn(k.one)
	}
	return true
}
