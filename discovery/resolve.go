package discovery

import (
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// query is one interpretation of user input.
type query struct {
	name     string // resource or kind part, as typed
	group    string
	groupSet bool   // group was given ("" then means the core group)
	version  string // with groupSet false, the version of any group ("pods.v1.")
}

// matchMode says which names of a resource a query may match.
type matchMode int

const (
	matchAny      matchMode = iota // plural, singular, short name, kind
	matchResource                  // plural, singular
	matchKind                      // kind
)

// maxInputLen bounds what Resolve parses; the longest name a server can serve is under 400
// bytes ("plural.version.group").
const maxInputLen = 1024

// parseInput returns the interpretations of input in the order they are tried, or nil when
// input cannot name a resource. The forms are kubectl's plus the path-like ones:
//
//	name                   pods, po, pod, Pod, a CRD's plural/singular/short name/kind, a category
//	name.group             deployments.apps, deploy.apps, Deployment.apps
//	name.version.group     deployments.v1.apps, Deployment.v1.apps (tried before name.group)
//	name.version.          pods.v1., Pod.v1. (any group serving name in that version, as kubectl
//	                       reads the empty group); name. is name
//	group/version/name     apps/v1/deployments
//	version/name           v1/pods (the core group), else group/name: apps/deployments
//
// Input longer than maxInputLen cannot name a resource: Kubernetes limits a group to 253
// bytes, a version and a resource name to 63.
func parseInput(input string) []query {
	in := input
	if in == "" || len(in) > maxInputLen || badRune(in) >= 0 {
		return nil
	}
	if strings.Contains(in, "/") {
		p := strings.Split(in, "/")
		if hasEmpty(p) || strings.Contains(p[len(p)-1], ".") {
			return nil
		}
		switch len(p) {
		case 3:
			if strings.Contains(p[1], ".") {
				return nil
			}
			return []query{{name: p[2], group: strings.ToLower(p[0]), groupSet: true, version: strings.ToLower(p[1])}}
		case 2:
			return []query{
				{name: p[1], groupSet: true, version: strings.ToLower(p[0])},
				{name: p[1], group: strings.ToLower(p[0]), groupSet: true},
			}
		}
		return nil
	}
	if trimmed, ok := strings.CutSuffix(in, "."); ok {
		// An empty group, as kubectl reads it: no group given, so any group ("pods.v1." is
		// pods in whichever group serves them in v1, "deployments.v1." apps' deployments),
		// and "pods." is "pods".
		p := strings.Split(trimmed, ".")
		switch {
		case hasEmpty(p) || len(p) > 2:
			return nil
		case len(p) == 2:
			return []query{{name: p[0], version: strings.ToLower(p[1])}}
		}
		return []query{{name: trimmed}}
	}
	p := strings.Split(in, ".")
	if hasEmpty(p) {
		return nil
	}
	switch len(p) {
	case 1:
		return []query{{name: in}}
	case 2:
		return []query{{name: p[0], group: strings.ToLower(p[1]), groupSet: true}}
	}
	return []query{
		{name: p[0], version: strings.ToLower(p[1]), group: strings.ToLower(strings.Join(p[2:], ".")), groupSet: true},
		{name: p[0], group: strings.ToLower(strings.Join(p[1:], ".")), groupSet: true},
	}
}

// badRune returns the byte offset of the first space, control character or invalid UTF-8
// in s, or -1. No resource, group, version or category name holds one, and kubectl does not
// trim them: "pods\n" names nothing.
func badRune(s string) int {
	for i, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
			return i
		}
	}
	return -1
}

func hasEmpty(parts []string) bool {
	for _, p := range parts {
		if p == "" {
			return true
		}
	}
	return false
}

// resolveInput resolves user input on s.
func (s *snapshot) resolveInput(input string) (Resource, error) {
	qs := parseInput(input)
	if len(qs) == 0 {
		return Resource{}, notAName(input)
	}
	var unavailable error
	for _, q := range qs {
		r, err := s.find(q, matchAny, input)
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, ErrGroupUnavailable):
			if unavailable == nil {
				unavailable = err
			}
		case isMiss(err):
		default:
			return Resource{}, err // ambiguous
		}
	}
	if unavailable != nil {
		return Resource{}, unavailable
	}
	for _, q := range qs {
		if r, ok, err := s.findByGroupPrefix(q, input); ok {
			return r, err
		}
	}
	q := qs[0]
	return Resource{}, noResourceMatch(input, schema.GroupVersionResource{Group: q.group, Version: q.version, Resource: q.name})
}

// findByGroupPrefix resolves "NAME.GROUP" where GROUP is no group but the start of some, as
// kubectl's REST mapper does ("deploy.app", "ing.networking"): the candidates of every group
// whose name starts with it; several in different groups are ambiguous. Without a candidate,
// a group it names whose discovery failed makes it unavailable (ErrGroupUnavailable), not a
// miss. ok is false when the query has no such group, or no candidate and no such failure.
func (s *snapshot) findByGroupPrefix(q query, input string) (Resource, bool, error) {
	if !q.groupSet || q.group == "" || q.version != "" || s.groups[q.group] != nil {
		return Resource{}, false, nil
	}
	var names []string
	for name := range s.groups {
		if strings.HasPrefix(name, q.group) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var cands []*entry
	var in *groupInfo
	for _, name := range names {
		g := s.groups[name]
		if m := matchTiers(g.entries, q.name, matchAny); len(m) > 0 {
			cands, in = append(cands, m...), g
		}
	}
	switch {
	case len(cands) > 1:
		return Resource{}, true, ambiguous(input, cands)
	case len(cands) == 1:
		r, err := pick(in, cands[0])
		return r, true, err
	}
	// None: a group the prefix names whose discovery failed may hold it.
	for _, name := range names {
		if g := s.groups[name]; len(g.failed) > 0 {
			return Resource{}, true, g.unavailable(nil)
		}
	}
	return Resource{}, false, nil
}

// resolveGVK resolves a kind; an empty version means the preferred one.
func (s *snapshot) resolveGVK(gvk schema.GroupVersionKind) (Resource, error) {
	q := query{name: gvk.Kind, group: gvk.Group, groupSet: true, version: gvk.Version}
	r, err := s.find(q, matchKind, gvk.String())
	if err != nil && !errors.Is(err, ErrGroupUnavailable) && isMiss(err) {
		return Resource{}, noKindMatch(gvk)
	}
	return r, err
}

// resolveGVR resolves a resource by plural (or singular) name; an empty version means the
// preferred one.
func (s *snapshot) resolveGVR(gvr schema.GroupVersionResource) (Resource, error) {
	q := query{name: gvr.Resource, group: gvr.Group, groupSet: true, version: gvr.Version}
	r, err := s.find(q, matchResource, gvr.String())
	if err != nil && !errors.Is(err, ErrGroupUnavailable) && isMiss(err) {
		return Resource{}, noResourceMatch(qualifiedName(gvr.GroupResource()), gvr)
	}
	return r, err
}

// resolveCategory returns the members of a category in priority order.
func (s *snapshot) resolveCategory(name string) ([]Resource, error) {
	l := s.categories[strings.ToLower(name)]
	if len(l) == 0 {
		if err := s.partialError(); err != nil {
			return nil, err // a failed group may hold members
		}
		return nil, noCategoryMatch(name)
	}
	out := make([]Resource, len(l))
	for i, e := range l {
		out[i] = e.res.clone()
	}
	return out, nil
}

// find resolves one query. A miss is an error for which isMiss holds.
func (s *snapshot) find(q query, mode matchMode, input string) (Resource, error) {
	if !q.groupSet {
		return s.findGlobal(q.name, q.version, mode, input)
	}
	partial := schema.GroupVersionResource{Group: q.group, Version: q.version, Resource: q.name}
	g := s.groups[q.group]
	if g == nil {
		return Resource{}, noResourceMatch(input, partial)
	}
	if q.version != "" {
		if g.hasVersion(q.version) {
			var cands []*entry
			for _, r := range g.resources[q.version] {
				cands = append(cands, &entry{res: r})
			}
			// The version answered: a resource it lacks is absent, whatever else failed.
			switch m := matchTiers(cands, q.name, mode); {
			case len(m) == 1:
				return m[0].res.clone(), nil
			case len(m) > 1:
				return Resource{}, ambiguous(input, m)
			}
			return Resource{}, noResourceMatch(input, partial)
		}
		if _, failed := g.failed[q.version]; failed {
			return Resource{}, g.unavailable(nil)
		}
		if _, failed := g.failed[""]; failed {
			return Resource{}, g.unavailable(nil)
		}
		return Resource{}, noResourceMatch(input, partial)
	}
	return pickInGroup(g, matchTiers(g.entries, q.name, mode), input, partial)
}

// pickInGroup turns the candidates of one group into a result.
func pickInGroup(g *groupInfo, cands []*entry, input string, partial schema.GroupVersionResource) (Resource, error) {
	switch {
	case len(cands) == 1:
		return pick(g, cands[0])
	case len(cands) > 1:
		return Resource{}, ambiguous(input, cands)
	case len(g.failed) > 0:
		return Resource{}, g.unavailable(nil)
	}
	return Resource{}, noResourceMatch(input, partial)
}

// pick returns e's resource, or the group's error when e is only a last-known description.
func pick(g *groupInfo, e *entry) (Resource, error) {
	if e.stale {
		return Resource{}, g.unavailable(&e.res)
	}
	return e.res.clone(), nil
}

// matchTiers returns the candidates of the first tier that matches name: plural or singular,
// then short names, then kind (kinds are compared case-insensitively; in matchKind mode an
// exact kind wins over a case-insensitive one).
func matchTiers(cands []*entry, name string, mode matchMode) []*entry {
	lower := strings.ToLower(name)
	var tiers []func(Resource) bool
	if mode != matchKind {
		tiers = append(tiers, func(r Resource) bool {
			return r.GVR.Resource == lower || strings.ToLower(r.Singular) == lower
		})
	}
	if mode == matchAny {
		tiers = append(tiers, func(r Resource) bool {
			for _, sn := range r.ShortNames {
				if strings.ToLower(sn) == lower {
					return true
				}
			}
			return false
		})
	}
	if mode == matchKind {
		tiers = append(tiers, func(r Resource) bool { return r.GVK.Kind == name })
	}
	if mode != matchResource {
		tiers = append(tiers, func(r Resource) bool { return strings.EqualFold(r.GVK.Kind, name) })
	}
	for _, match := range tiers {
		var out []*entry
		for _, e := range cands {
			if match(e.res) {
				out = append(out, e)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// findGlobal resolves a name without a group. Built-in groups win: if any built-in resource
// matches the name in any tier (plural/singular, short name, kind), the first one in tier
// order then priority order is the answer, so a CRD can never shadow a built-in name. Only
// when no built-in matches are other groups considered, tier by tier; two resources in the
// first matching tier are ambiguous. Categories come last.
//
// A version restricts the candidates to the resources served in that version, described in
// it ("pods.v1.").
func (s *snapshot) findGlobal(name, version string, mode matchMode, input string) (Resource, error) {
	key := strings.ToLower(name)
	candidates := func(idx map[string][]*entry) []*entry {
		if version == "" {
			return idx[key]
		}
		var out []*entry
		for _, e := range idx[key] {
			if r, ok := s.groups[e.res.GVR.Group].resource(version, e.res.GVR.Resource); ok {
				out = append(out, &entry{res: r, builtin: e.builtin})
			}
		}
		return out
	}
	var tiers []map[string][]*entry
	switch mode {
	case matchAny:
		tiers = []map[string][]*entry{s.names, s.shorts, s.kinds}
	case matchResource:
		tiers = []map[string][]*entry{s.names}
	case matchKind:
		tiers = []map[string][]*entry{s.kinds}
	}
	for _, idx := range tiers {
		for _, e := range candidates(idx) {
			if e.builtin {
				return pick(s.groups[e.res.GVR.Group], e)
			}
		}
	}
	if mode == matchAny {
		tiers = append(tiers, s.categories)
	}
	for _, idx := range tiers {
		switch l := candidates(idx); {
		case len(l) == 1:
			return pick(s.groups[l[0].res.GVR.Group], l[0])
		case len(l) > 1:
			return Resource{}, ambiguous(input, l)
		}
	}
	return Resource{}, noResourceMatch(input, schema.GroupVersionResource{Version: version, Resource: name})
}

func ambiguous(input string, cands []*entry) error {
	e := &AmbiguousError{Input: input}
	for _, c := range cands {
		e.Candidates = append(e.Candidates, c.res.clone())
	}
	return e
}
