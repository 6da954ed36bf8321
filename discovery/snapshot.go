package discovery

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fetchedGroup is what one discovery round learned about one API group.
type fetchedGroup struct {
	name string
	// absent: the server does not serve the group (a 404, or no version left).
	absent bool
	// versions that answered, in the server's priority order.
	versions []string
	// resources holds the top-level resources of each version in versions.
	resources map[string][]Resource
	// failed maps a version to its discovery error; the key "" means the whole group failed
	// and its versions are unknown.
	failed map[string]error
}

func newFetchedGroup(name string) *fetchedGroup {
	return &fetchedGroup{name: name, resources: map[string][]Resource{}, failed: map[string]error{}}
}

// fetchResult is the outcome of one discovery round.
type fetchResult struct {
	// seq orders rounds by the time they started; a group's state is never replaced by the
	// result of a round that started before the round that produced it.
	seq uint64
	// full: groups holds every group the server serves, in order.
	full   bool
	order  []string
	groups map[string]*fetchedGroup
}

// group returns the fetched group name, creating it (and recording its order) if needed.
func (r *fetchResult) group(name string) *fetchedGroup {
	if g, ok := r.groups[name]; ok {
		return g
	}
	g := newFetchedGroup(name)
	r.groups[name] = g
	r.order = append(r.order, name)
	return g
}

// entry is one resource as discovery knows it: the description in its preferred version.
type entry struct {
	res     Resource
	builtin bool
	// stale: the resource's group failed discovery and this is its last known description.
	stale bool
}

// groupInfo is the known state of one API group.
type groupInfo struct {
	name      string
	seq       uint64
	versions  []string
	resources map[string][]Resource
	failed    map[string]error
	entries   []*entry
}

// hasVersion reports whether version answered discovery.
func (g *groupInfo) hasVersion(v string) bool { return slices.Contains(g.versions, v) }

// resource returns the resource named plural in version v.
func (g *groupInfo) resource(v, plural string) (Resource, bool) {
	for _, r := range g.resources[v] {
		if r.GVR.Resource == plural {
			return r, true
		}
	}
	return Resource{}, false
}

// newGroupInfo builds the state of a group from a discovery result. Resources that old knew
// but f does not are carried over, marked stale, when any version of the group failed: they
// are unknown, not gone.
func newGroupInfo(f *fetchedGroup, old *groupInfo, seq uint64) *groupInfo {
	g := &groupInfo{name: f.name, seq: seq, versions: f.versions, resources: f.resources, failed: f.failed}
	builtin := isBuiltinGroup(f.name)
	seen := map[string]bool{}
	// A resource's preferred version is the first version, in the group's priority order,
	// that serves it (the group's preferred version when it does).
	for _, v := range g.versions {
		for _, r := range g.resources[v] {
			if seen[r.GVR.Resource] {
				continue
			}
			seen[r.GVR.Resource] = true
			g.entries = append(g.entries, &entry{res: r, builtin: builtin})
		}
	}
	if len(g.failed) > 0 && old != nil {
		for _, e := range old.entries {
			if seen[e.res.GVR.Resource] {
				continue
			}
			seen[e.res.GVR.Resource] = true
			g.entries = append(g.entries, &entry{res: e.res, builtin: e.builtin, stale: true})
		}
	}
	return g
}

// isBuiltinGroup reports whether a group belongs to Kubernetes itself: the core group, a
// group without a dot (a CRD group must contain one), or a group under k8s.io or
// kubernetes.io (reserved: a CRD there needs an API-review approval annotation).
func isBuiltinGroup(g string) bool {
	return g == "" || !strings.Contains(g, ".") ||
		strings.HasSuffix(g, ".k8s.io") || strings.HasSuffix(g, ".kubernetes.io")
}

// snapshot is an immutable view of discovery. Readers load it atomically and never lock.
type snapshot struct {
	// discovered: a full discovery has completed at least once.
	discovered bool
	// fullSeq is the seq of the latest full round applied.
	fullSeq uint64
	groups  map[string]*groupInfo
	// order lists the groups in priority order: the core group, then the server's order.
	order []string
	// all holds every entry in priority order.
	all  []*entry
	byGR map[schema.GroupResource]*entry
	// Lower-cased name -> entries in priority order.
	names      map[string][]*entry // plural and singular
	shorts     map[string][]*entry
	kinds      map[string][]*entry
	categories map[string][]*entry
}

func emptySnapshot() *snapshot {
	s := &snapshot{groups: map[string]*groupInfo{}}
	s.index()
	return s
}

// merge returns the snapshot that results from applying r to s.
func (s *snapshot) merge(r *fetchResult) *snapshot {
	n := &snapshot{discovered: s.discovered || r.full, fullSeq: s.fullSeq, groups: make(map[string]*groupInfo, len(s.groups))}
	if r.full && r.seq > n.fullSeq {
		n.fullSeq = r.seq
	}
	for name, g := range s.groups {
		if _, fetched := r.groups[name]; r.full && !fetched && g.seq < r.seq {
			continue // the server no longer lists the group
		}
		n.groups[name] = g
	}
	for name, f := range r.groups {
		old := s.groups[name]
		if old != nil && old.seq > r.seq {
			continue // a newer round already described this group
		}
		if f.absent {
			delete(n.groups, name)
			continue
		}
		n.groups[name] = newGroupInfo(f, old, r.seq)
	}
	// Order: a full round gives the server's order; groups first seen in a per-group round go
	// last (CRD groups have the lowest priority anyway) until the next full round.
	var order []string
	if r.full {
		order = append(order, r.order...)
	}
	order = append(order, s.order...)
	var added []string
	for name := range r.groups {
		if !slices.Contains(order, name) {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	order = append(order, added...)
	seen := map[string]bool{}
	for _, name := range order {
		if _, ok := n.groups[name]; ok && !seen[name] {
			seen[name] = true
			n.order = append(n.order, name)
		}
	}
	// The core group always comes first: kubectl's priority does the same.
	if i := slices.Index(n.order, ""); i > 0 {
		n.order = append([]string{""}, slices.Delete(n.order, i, i+1)...)
	}
	n.index()
	return n
}

// keepGroups returns a copy of s in which the named groups have their state in old.
func (s *snapshot) keepGroups(old *snapshot, names []string) *snapshot {
	n := &snapshot{discovered: s.discovered, fullSeq: s.fullSeq, groups: maps.Clone(s.groups), order: slices.Clone(s.order)}
	for _, name := range names {
		if g, ok := old.groups[name]; ok {
			n.groups[name] = g
			if !slices.Contains(n.order, name) {
				n.order = append(n.order, name)
			}
		} else {
			delete(n.groups, name)
			n.order = slices.DeleteFunc(n.order, func(x string) bool { return x == name })
		}
	}
	n.index()
	return n
}

func (s *snapshot) index() {
	s.all = nil
	s.byGR = map[schema.GroupResource]*entry{}
	s.names = map[string][]*entry{}
	s.shorts = map[string][]*entry{}
	s.kinds = map[string][]*entry{}
	s.categories = map[string][]*entry{}
	add := func(m map[string][]*entry, key string, e *entry) {
		key = strings.ToLower(key)
		if key == "" {
			return
		}
		if l := m[key]; len(l) > 0 && l[len(l)-1] == e {
			return // plural == singular, or a repeated short name
		}
		m[key] = append(m[key], e)
	}
	for _, name := range s.order {
		for _, e := range s.groups[name].entries {
			s.all = append(s.all, e)
			s.byGR[e.res.GVR.GroupResource()] = e
			add(s.names, e.res.GVR.Resource, e)
			add(s.names, e.res.Singular, e)
			for _, sn := range e.res.ShortNames {
				add(s.shorts, sn, e)
			}
			add(s.kinds, e.res.GVK.Kind, e)
			for _, c := range e.res.Categories {
				add(s.categories, c, e)
			}
		}
	}
}

// failedGroups returns the groups with a failed version, sorted by name.
func (s *snapshot) failedGroups() []*groupInfo {
	var out []*groupInfo
	for _, g := range s.groups {
		if len(g.failed) > 0 {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// partialError returns a *PartialDiscoveryError naming the failed groups, or nil.
func (s *snapshot) partialError() error {
	failed := s.failedGroups()
	if len(failed) == 0 {
		return nil
	}
	e := &PartialDiscoveryError{}
	for _, g := range failed {
		e.Groups = append(e.Groups, g.unavailable(nil))
	}
	return e
}

// failureKey summarises which group versions failed, to notice a change.
func (s *snapshot) failureKey() string {
	var b strings.Builder
	for _, g := range s.failedGroups() {
		versions := make([]string, 0, len(g.failed))
		for v := range g.failed {
			versions = append(versions, v)
		}
		sort.Strings(versions)
		b.WriteString(g.name + "=" + strings.Join(versions, ",") + ";")
	}
	return b.String()
}

// diff returns the events that turn old into n, keyed by group and resource: Added and
// Changed in n's priority order, then Removed in old's. Stale entries are carried over
// unchanged, so a failed group produces no event.
func diff(old, n *snapshot) []Event {
	var events []Event
	for _, e := range n.all {
		o, ok := old.byGR[e.res.GVR.GroupResource()]
		switch {
		case !ok:
			events = append(events, Event{Type: Added, Resource: e.res})
		case !sameResource(o.res, e.res):
			prev := o.res
			events = append(events, Event{Type: Changed, Resource: e.res, Old: &prev})
		}
	}
	for _, o := range old.all {
		if _, ok := n.byGR[o.res.GVR.GroupResource()]; !ok {
			events = append(events, Event{Type: Removed, Resource: o.res})
		}
	}
	return events
}

func sameResource(a, b Resource) bool {
	return a.GVR == b.GVR && a.GVK == b.GVK && a.Namespaced == b.Namespaced && a.Singular == b.Singular &&
		sameSet(a.Verbs, b.Verbs) && sameSet(a.ShortNames, b.ShortNames) && sameSet(a.Categories, b.Categories)
}

// sameSet compares two small string lists as sets.
func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// clone returns a deep copy, so that callers may modify what they receive.
func (r Resource) clone() Resource {
	r.Verbs = slices.Clone(r.Verbs)
	r.ShortNames = slices.Clone(r.ShortNames)
	r.Categories = slices.Clone(r.Categories)
	return r
}
