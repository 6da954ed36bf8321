package refs

import "k8s.io/apimachinery/pkg/types"

// ref is one incoming edge of an entry: the source, the rule, the UID the source requires
// of the target ("" for none), and whether the reference is optional.
type ref struct {
	from *entry
	rule *crule
	uid  types.UID
	opt  bool
}

// smallRefs is how many refs a refSet keeps in a slice before it switches to a map: most
// objects are used by a few others, a few (a namespace's default ServiceAccount, a Node)
// by thousands.
const smallRefs = 16

// refSet is a set of refs: a slice while small, a map when large, so that adding and
// removing cost O(1) amortized whatever the size.
type refSet struct {
	small []ref
	big   map[ref]struct{}
}

func (s *refSet) len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.small)
}

// add adds r and reports whether it was new.
func (s *refSet) add(r ref) bool {
	if s.big != nil {
		if _, ok := s.big[r]; ok {
			return false
		}
		s.big[r] = struct{}{}
		return true
	}
	for _, x := range s.small {
		if x == r {
			return false
		}
	}
	if len(s.small) < smallRefs {
		s.small = append(s.small, r)
		return true
	}
	s.big = make(map[ref]struct{}, 2*smallRefs)
	for _, x := range s.small {
		s.big[x] = struct{}{}
	}
	s.small = nil
	s.big[r] = struct{}{}
	return true
}

// remove removes r and reports whether it was there.
func (s *refSet) remove(r ref) bool {
	if s.big != nil {
		if _, ok := s.big[r]; !ok {
			return false
		}
		delete(s.big, r)
		if len(s.big) == 0 {
			s.big = nil
		}
		return true
	}
	for i, x := range s.small {
		if x == r {
			last := len(s.small) - 1
			s.small[i] = s.small[last]
			s.small[last] = ref{}
			s.small = s.small[:last]
			if last == 0 {
				s.small = nil
			}
			return true
		}
	}
	return false
}

// each calls fn for every ref until it returns false. fn must not change the set.
func (s *refSet) each(fn func(ref) bool) {
	if s.big != nil {
		for r := range s.big {
			if !fn(r) {
				return
			}
		}
		return
	}
	for _, r := range s.small {
		if !fn(r) {
			return
		}
	}
}

// list returns the refs in a new slice.
func (s *refSet) list() []ref {
	out := make([]ref, 0, s.len())
	s.each(func(r ref) bool {
		out = append(out, r)
		return true
	})
	return out
}
