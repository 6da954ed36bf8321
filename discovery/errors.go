package discovery

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrGroupUnavailable is the category of errors for resources of an API group whose discovery
// failed (an aggregated API server that is down, a stale group version). Such resources are
// unknown until the group recovers; they are not reported as absent. Test with errors.Is;
// errors.As gives the *GroupUnavailableError.
var ErrGroupUnavailable = errors.New("discovery: API group unavailable")

// ErrNilContext is returned by every method of Client that takes a context when given a nil
// one (Start, Refresh, Resolve, ResolveGVK, ResolveGVR, RecheckGVR, ResolveCategory,
// Resources). A nil context would otherwise panic in a discovery round, on a goroutine the
// caller cannot recover on.
var ErrNilContext = errors.New("discovery: nil context")

// ErrUninitialized is returned by every method of a Client that New did not make, the zero
// Client or a nil *Client, that returns an error; Wait returns at once and Following is
// false.
var ErrUninitialized = errors.New("discovery: zero or nil Client: make it with New")

// ErrNilHandler is returned by Subscribe for a nil handler.
var ErrNilHandler = errors.New("discovery: Subscribe: nil handler")

// GroupUnavailableError says that a resource belongs, or may belong, to an API group whose
// discovery failed. errors.Is(err, ErrGroupUnavailable) is true; Unwrap gives the discovery
// error the server returned for the group (for example client-go's StaleGroupVersionError
// or a 503 from the aggregator).
type GroupUnavailableError struct {
	// Group is the API group whose discovery failed.
	Group string
	// Versions lists the failed versions of the group; empty when the whole group failed.
	Versions []string
	// LastKnown is the resource's description from before the group failed, when discovery
	// had seen it; nil otherwise.
	LastKnown *Resource
	// Err is the discovery error.
	Err error
}

// Error names the group, its failed versions (when not all failed), the resource last
// known in it (LastKnown) and the discovery error.
func (e *GroupUnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "discovery: API group %q is unavailable", e.Group)
	if len(e.Versions) > 0 {
		fmt.Fprintf(&b, " (versions %s)", strings.Join(e.Versions, ", "))
	}
	if e.LastKnown != nil {
		fmt.Fprintf(&b, "; %s is unknown until it recovers", e.LastKnown.GVR.GroupResource())
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Is reports whether target is ErrGroupUnavailable.
func (e *GroupUnavailableError) Is(target error) bool { return target == ErrGroupUnavailable }

// Unwrap returns the discovery error.
func (e *GroupUnavailableError) Unwrap() error { return e.Err }

// PartialDiscoveryError is returned, together with the resources that are known, by
// Resources and ResolveCategory when the discovery of one or more groups failed. It unwraps to
// one *GroupUnavailableError per failed group, so errors.Is(err, ErrGroupUnavailable) holds
// and errors.As finds the first group.
type PartialDiscoveryError struct {
	// Groups holds one error per failed group, sorted by group name.
	Groups []*GroupUnavailableError
}

// Error names every failed group.
func (e *PartialDiscoveryError) Error() string {
	names := make([]string, 0, len(e.Groups))
	for _, g := range e.Groups {
		names = append(names, fmt.Sprintf("%q", g.Group))
	}
	msg := fmt.Sprintf("discovery: incomplete, unavailable API groups: %s", strings.Join(names, ", "))
	if len(e.Groups) > 0 && e.Groups[0].Err != nil {
		msg += fmt.Sprintf(" (first: %v)", e.Groups[0].Err)
	}
	return msg
}

// Unwrap returns the per-group errors.
func (e *PartialDiscoveryError) Unwrap() []error {
	errs := make([]error, len(e.Groups))
	for i, g := range e.Groups {
		errs[i] = g
	}
	return errs
}

// FailedGroups returns the names of the failed groups.
func (e *PartialDiscoveryError) FailedGroups() []string {
	names := make([]string, len(e.Groups))
	for i, g := range e.Groups {
		names[i] = g.Group
	}
	return names
}

// AmbiguousError is returned when input names more than one resource and no priority rule
// (see the package documentation) picks one. meta.IsAmbiguousError(err) is true.
type AmbiguousError struct {
	// Input is what the caller asked for.
	Input string
	// Candidates are the matching resources in priority order.
	Candidates []Resource
}

// Error names the input and the resources it matches.
func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		names[i] = qualifiedName(c.GVR.GroupResource())
	}
	if len(names) == 0 {
		return fmt.Sprintf("discovery: %s is ambiguous", quote(e.Input))
	}
	return fmt.Sprintf("discovery: %s is ambiguous, it matches %s; qualify it with the group (for example %q)",
		quote(e.Input), strings.Join(names, ", "), names[0])
}

// Is makes meta.IsAmbiguousError recognise the error.
func (e *AmbiguousError) Is(target error) bool {
	switch target.(type) {
	case *meta.AmbiguousResourceError, *meta.AmbiguousKindError:
		return true
	}
	return false
}

// qualifiedName renders a group resource the way users type it: "pods", "deployments.apps".
func qualifiedName(gr schema.GroupResource) string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// noResourceMatch wraps a *meta.NoResourceMatchError so that meta.IsNoMatchError holds, with a
// message naming what the user typed.
func noResourceMatch(input string, partial schema.GroupVersionResource) error {
	return fmt.Errorf("discovery: the server doesn't have a resource type %s: %w", quote(input), &meta.NoResourceMatchError{PartialResource: shortGVR(partial)})
}

// notAName is the miss for input that cannot name any resource (see parseInput).
func notAName(input string) error {
	if i := badRune(input); i >= 0 && len(input) <= maxInputLen {
		return fmt.Errorf("discovery: %s cannot name a resource: byte %d is a space, a control character or invalid UTF-8: %w",
			quote(input), i, &meta.NoResourceMatchError{PartialResource: shortGVR(schema.GroupVersionResource{Resource: input})})
	}
	return fmt.Errorf("discovery: %s cannot name a resource (the forms are name, name.group, name.version.group, name.version., group/version/name and version/name): %w",
		quote(input), &meta.NoResourceMatchError{PartialResource: shortGVR(schema.GroupVersionResource{Resource: input})})
}

// noKindMatch wraps a *meta.NoKindMatchError.
func noKindMatch(gvk schema.GroupVersionKind) error {
	gvk = schema.GroupVersionKind{Group: shorten(gvk.Group), Version: shorten(gvk.Version), Kind: shorten(gvk.Kind)}
	var versions []string
	if gvk.Version != "" {
		versions = []string{gvk.Version}
	}
	return fmt.Errorf("discovery: %w", &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: versions})
}

// noCategoryMatch reports a category that no resource has.
func noCategoryMatch(name string) error {
	return fmt.Errorf("discovery: no resource has category %s: %w", quote(name), &meta.NoResourceMatchError{PartialResource: shortGVR(schema.GroupVersionResource{Resource: name})})
}

// maxQuoted is how many bytes of user input an error quotes: a 100 KB input must not make a
// 200 KB message (it is quoted once and shown again in the wrapped client-go error).
const maxQuoted = 256

// cut returns s cut to at most maxQuoted bytes at a character boundary, and whether it cut.
func cut(s string) (string, bool) {
	if len(s) <= maxQuoted {
		return s, false
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// shorten cuts s to maxQuoted bytes, marking the cut with "...".
func shorten(s string) string {
	if c, ok := cut(s); ok {
		return c + "..."
	}
	return s
}

// quote quotes user input for an error message, cut to maxQuoted bytes.
func quote(s string) string {
	c, ok := cut(s)
	if ok {
		return strconv.Quote(c) + "..."
	}
	return strconv.Quote(s)
}

// shortGVR cuts each part of a partial resource for the errors that carry it.
func shortGVR(gvr schema.GroupVersionResource) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: shorten(gvr.Group), Version: shorten(gvr.Version), Resource: shorten(gvr.Resource)}
}

// isMiss reports whether err means "not found now, maybe after a refresh".
func isMiss(err error) bool {
	return err != nil && (meta.IsNoMatchError(err) || errors.Is(err, ErrGroupUnavailable))
}

// unavailable builds the error for a resource (last, may be nil) of failed group g.
func (g *groupInfo) unavailable(last *Resource) *GroupUnavailableError {
	e := &GroupUnavailableError{Group: g.name}
	if last != nil {
		c := last.clone()
		e.LastKnown = &c
	}
	versions := make([]string, 0, len(g.failed))
	for v := range g.failed {
		if v != "" {
			versions = append(versions, v)
		}
	}
	slices.Sort(versions)
	if _, whole := g.failed[""]; !whole {
		e.Versions = versions
	}
	// Prefer the error of the resource's own version, then the whole-group error, then the
	// first failed version, so that the message is stable.
	if last != nil {
		if err, ok := g.failed[last.GVR.Version]; ok {
			e.Err = err
			return e
		}
	}
	if err, ok := g.failed[""]; ok {
		e.Err = err
	} else if len(versions) > 0 {
		e.Err = g.failed[versions[0]]
	}
	return e
}
