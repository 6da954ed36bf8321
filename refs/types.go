package refs

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// ObjectRef names an object: its resource, namespace ("" if cluster-scoped) and name.
type ObjectRef struct {
	// Group and Resource name the object's resource: "" and "configmaps" for a ConfigMap,
	// "apps" and "deployments" for a Deployment.
	Group, Resource string
	// Kind is the resource's kind when the graph knows it. It is informative: queries
	// ignore it, and a reference whose kind no served resource has carries its Kind with an
	// empty Resource.
	Kind string
	// Namespace is the object's namespace, "" for a cluster-scoped object; Name its name.
	Namespace, Name string
}

// RefOf names an object of a resource as discovery describes it, from what a user typed:
// discovery.Client.Resolve(ctx, "deploy") and a namespace and name. The namespace of a
// cluster-scoped resource is dropped.
func RefOf(res discovery.Resource, namespace, name string) ObjectRef {
	if !res.Namespaced {
		namespace = ""
	}
	return ObjectRef{Group: res.GVR.Group, Resource: res.GVR.Resource, Kind: res.GVK.Kind, Namespace: namespace, Name: name}
}

// GroupResource is the object's resource.
func (r ObjectRef) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// String is "resource.group/namespace/name", "resource/name" for a cluster-scoped object of
// the core group, and "Kind.group/..." for a kind that did not resolve.
func (r ObjectRef) String() string {
	var b strings.Builder
	switch {
	case r.Resource != "":
		b.WriteString(r.Resource)
	case r.Kind != "":
		b.WriteString(r.Kind)
	default:
		b.WriteString("?")
	}
	if r.Group != "" {
		b.WriteString(".")
		b.WriteString(r.Group)
	}
	if r.Namespace != "" {
		b.WriteString("/")
		b.WriteString(r.Namespace)
	}
	b.WriteString("/")
	b.WriteString(r.Name)
	return b.String()
}

// State says whether an edge's target exists.
type State uint8

const (
	// Present: the target is cached.
	Present State = iota + 1
	// Missing: the target's resource is cached completely where the target would be (a
	// synced informer without selectors), and it holds no such object, or one with another
	// UID than the reference requires; or no object can be the target (an owner reference
	// from a cluster-scoped object to a namespaced kind). The reference is dangling.
	Missing
	// Unknown: the target is not cached and the cache cannot tell whether it exists: its
	// resource is not watched, not synced or forbidden, or its kind is not served.
	Unknown
)

// String returns the state's name ("Present", "Missing", "Unknown"), or "State(n)" for a
// value that is none of them.
func (s State) String() string {
	switch s {
	case Present:
		return "Present"
	case Missing:
		return "Missing"
	case Unknown:
		return "Unknown"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Edge is one reference: From uses To, by the rule named Rule.
type Edge struct {
	// Rule is the name of the rule that made the edge.
	Rule string
	// From is the object that holds the reference; To the object it names.
	From, To ObjectRef
	// Selector is set for an edge of a label-selector rule (a Service to a Pod it selects).
	// Such an edge exists only while the target exists and matches, so it is always Present.
	Selector bool
	// Optional is set for an optional reference (the rule's OptionalField is true in the
	// value: a ConfigMap volume with "optional: true"): the object works without its
	// target, so a Missing target is no fault, and Dangling leaves the edge out.
	Optional bool
	// Depth is 1 for a direct reference of the object a walk started from, 2 for a
	// reference of one of those, and so on. Dangling sets it to 1.
	Depth int
	// State says whether To exists; Reason explains Missing and Unknown.
	State  State
	Reason string
}

// String prints the edge as "from -[rule]-> to", with "(optional)" for an optional one and
// the state and reason for a target that is not Present.
func (e Edge) String() string {
	s := e.From.String() + " -[" + e.Rule + "]-> " + e.To.String()
	if e.Optional {
		s += " (optional)"
	}
	if e.State != Present && e.State != 0 {
		s += " (" + e.State.String()
		if e.Reason != "" {
			s += ": " + e.Reason
		}
		s += ")"
	}
	return s
}

// Stats counts what the graph holds.
type Stats struct {
	// Objects is the number of objects the graph has seen and not seen deleted.
	Objects int
	// Edges is the number of references from fields and owner references (one per rule,
	// source and target, however often the source names the target); SelectorEdges the
	// number of (selector, selected object) pairs; Selectors the number of selectors.
	Edges, SelectorEdges, Selectors int
	// Missing is the number of targets that are referenced and not cached (or cached with
	// another UID), by optional references too, which Dangling leaves out; Unresolved the
	// number of references whose kind or scope the graph does not know yet.
	Missing, Unresolved int
	// Events is the number of adds, updates and deletes the graph has applied.
	Events int64
	// Truncated is the number of objects on which a rule's JSONPath evaluation failed (its
	// budget: more than 16,384 values, or too much work): the references found before the
	// failure are in the graph, the rest are not, and an error is logged for each such event.
	Truncated int
}

// ErrUnknownResource is matched by the error of a query about a resource the graph does not
// know: neither served (as discovery last said) nor named by a rule, or a kind no served
// resource has. Queries name resources by their plural ("configmaps"), as discovery and
// RefOf give them; when the name is a served resource's kind, singular or short name
// ("ConfigMap", "configmap", "cm"), the error names the plural.
var ErrUnknownResource = errors.New("refs: unknown resource")

// ErrNamespaceRequired is matched by the error of References or Referrers about an object
// of a namespaced resource that names no namespace.
var ErrNamespaceRequired = errors.New("refs: namespace required")

// ErrAlreadyStarted is returned by a second Graph.Start; ErrStopped by Start after the
// graph was shut down.
var (
	ErrAlreadyStarted = errors.New("refs: graph already started")
	ErrStopped        = errors.New("refs: graph shut down")
)

// ErrUninitialized is returned by the methods of a Graph that New did not make, the zero
// Graph or a nil *Graph, that return an error; the others do nothing and return zero values.
var ErrUninitialized = errors.New("refs: zero or nil Graph: make it with New")

// ErrIncomplete is matched by the *IncompleteError of an answer given while some resources
// the answer depends on are not cached completely.
var ErrIncomplete = errors.New("refs: cache incomplete")

// IncompleteError lists the resources that are not cached completely (not synced, parked,
// or watched with selectors) when an answer depends on them: an object reported
// unreferenced may be used by an object of one of them.
type IncompleteError struct {
	// Resources are the resources not cached completely.
	Resources []schema.GroupResource
}

// Error names the resources not cached completely.
func (e *IncompleteError) Error() string {
	names := make([]string, len(e.Resources))
	for i, r := range e.Resources {
		names[i] = resourceName(r)
	}
	return "refs: not cached completely: " + strings.Join(names, ", ")
}

// Is makes errors.Is(err, ErrIncomplete) true.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }
