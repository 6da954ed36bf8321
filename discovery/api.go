package discovery

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource describes one API resource as the server serves it. Subresources (pods/status)
// are never Resources.
type Resource struct {
	// GVR names the resource; its Version is the group's preferred version unless the caller
	// asked for a specific one.
	GVR schema.GroupVersionResource
	// GVK is the kind of the resource's objects in GVR.Version.
	GVK schema.GroupVersionKind
	// Namespaced is true for a namespaced resource, false for a cluster-scoped one.
	Namespaced bool
	// Singular is the resource's singular name ("deployment").
	Singular string
	// Verbs are the verbs the resource supports ("get", "list", "watch", ...).
	Verbs []string
	// ShortNames are the resource's short names ("deploy").
	ShortNames []string
	// Categories are the categories the resource belongs to ("all").
	Categories []string
}

// Supports reports whether the resource supports every verb given.
func (r Resource) Supports(verbs ...string) bool {
	for _, v := range verbs {
		if !slices.Contains(r.Verbs, v) {
			return false
		}
	}
	return true
}

// Watchable reports whether an informer can serve the resource: it supports list and watch.
func (r Resource) Watchable() bool { return r.Supports("list", "watch") }

// EventType says what happened to a resource.
type EventType int

const (
	// Added: the resource is newly served (a CRD became Established, an APIService became
	// available).
	Added EventType = iota + 1
	// Removed: the server no longer serves the resource. Resources of a group whose discovery
	// failed are never reported Removed; they are unknown until the group recovers.
	Removed
	// Changed: the resource is still served but its preferred version, kind, scope, verbs,
	// short names or categories changed. Old holds the previous description.
	Changed
)

// String returns "Added", "Removed" or "Changed", and "Unknown" for any other value.
func (t EventType) String() string {
	switch t {
	case Added:
		return "Added"
	case Removed:
		return "Removed"
	case Changed:
		return "Changed"
	}
	return "Unknown"
}

// Event reports a change to the set of served resources, keyed by group and resource
// (GVR.GroupResource()): a version change is a Changed event, not a Removed plus an Added.
type Event struct {
	// Type says what happened.
	Type EventType
	// Resource is the resource's description: the new one for Added and Changed, the last
	// one served for Removed.
	Resource Resource
	// Old is the previous description, for Changed; nil otherwise.
	Old *Resource
}

// Filter selects resources for watch-everything consumers. Groups are API group names ("" is
// the core group); resources are "plural.group" or "plural" for the core group
// ("deployments" is the core group's, which has none: apps' is "deployments.apps"; a name no
// served resource has selects nothing until one is served, which informer.WatchAll logs). An
// empty include list includes everything; excludes win over includes.
type Filter struct {
	// IncludeGroups and ExcludeGroups are API group names.
	IncludeGroups []string
	ExcludeGroups []string
	// IncludeResources and ExcludeResources are resource names, "plural.group".
	IncludeResources []string
	ExcludeResources []string
}
