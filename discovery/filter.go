package discovery

import "slices"

// Matches reports whether f selects r. With both include lists empty every resource is
// included; otherwise r is included when its group is in IncludeGroups or its name
// ("plural.group", or "plural" for the core group) is in IncludeResources. Excludes win:
// r is dropped when its group is in ExcludeGroups or its name is in ExcludeResources.
func (f Filter) Matches(r Resource) bool {
	group := r.GVR.Group
	name := qualifiedName(r.GVR.GroupResource())
	if slices.Contains(f.ExcludeGroups, group) || slices.Contains(f.ExcludeResources, name) {
		return false
	}
	if len(f.IncludeGroups) == 0 && len(f.IncludeResources) == 0 {
		return true
	}
	return slices.Contains(f.IncludeGroups, group) || slices.Contains(f.IncludeResources, name)
}
