package discovery

import (
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// An expectation is what the discovery documents must show once the server has caught up
// with a watched object. Watch events arrive before the apiserver's own discovery
// controllers have updated the documents (by milliseconds, usually), so a group is
// re-discovered until its expectations hold, with backoff; a nil expectation means the
// object implies nothing about discovery.
type expectation func(*snapshot) bool

// crdExpectation: an Established CRD is served in exactly its served versions with its
// accepted names and scope (and without create while it terminates); a deleted CRD is not
// served at all. A CRD that is not Established yet implies nothing. An Established CRD that
// serves no version is listed nowhere: the apiserver drops its group from discovery when no
// CRD of the group serves a version, so what it implies is only that the resource is not
// listed, which an absent group satisfies.
func crdExpectation(crd *apiextv1.CustomResourceDefinition, deleted bool) (group string, expect expectation) {
	group = crd.Spec.Group
	names := crd.Status.AcceptedNames
	if names.Plural == "" {
		names = crd.Spec.Names
	}
	gr := schema.GroupResource{Group: group, Resource: names.Plural}
	if deleted {
		return group, func(s *snapshot) bool { return s.byGR[gr] == nil }
	}
	if !crdCondition(crd, apiextv1.Established) {
		return group, nil
	}
	terminating := crdCondition(crd, apiextv1.Terminating)
	namespaced := crd.Spec.Scope == apiextv1.NamespaceScoped
	type version struct {
		name   string
		served bool
	}
	versions := make([]version, 0, len(crd.Spec.Versions))
	anyServed := false
	for _, v := range crd.Spec.Versions {
		versions = append(versions, version{v.Name, v.Served})
		anyServed = anyServed || v.Served
	}
	return group, func(s *snapshot) bool {
		g := s.groups[group]
		if g == nil {
			return !anyServed
		}
		for _, v := range versions {
			r, found := g.resource(v.name, names.Plural)
			if !v.served {
				if found {
					return false
				}
				continue
			}
			if !found || r.GVK.Kind != names.Kind || r.Namespaced != namespaced ||
				!sameSet(r.ShortNames, names.ShortNames) || !sameSet(r.Categories, names.Categories) ||
				r.Supports("create") == terminating {
				return false
			}
		}
		return true
	}
}

func crdCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextv1.ConditionTrue
		}
	}
	return false
}

// apiServiceExpectation: an Available remote APIService's version answers discovery; a
// remote one that is not Available does not (it is failed or absent); a deleted one is gone.
// An Available local APIService (no Service: served by the kube-apiserver itself) is not
// failed, but whether its version is listed is for the CRDs to say: the aggregator marks it
// Available at once, while a CRD group's discovery lists only Established CRDs. (A CRD whose
// names were accepted, but which was not Established yet when the apiserver died, stays
// unestablished after the restart until the apiserver's CRD informer resyncs, 5 minutes
// later: its establishing controller is queued only by an update event. Expecting its
// local APIService's version to be listed never held.) A local APIService that is not
// Available implies nothing, and neither does the legacy core one.
func apiServiceExpectation(svc *apiregv1.APIService, deleted bool) (group string, expect expectation) {
	group, version := svc.Spec.Group, svc.Spec.Version
	if group == "" {
		return group, nil
	}
	if deleted {
		return group, func(s *snapshot) bool {
			g := s.groups[group]
			if g == nil {
				return true
			}
			_, failed := g.failed[version]
			return !g.hasVersion(version) && !failed
		}
	}
	available := false
	for _, c := range svc.Status.Conditions {
		if c.Type == apiregv1.Available {
			available = c.Status == apiregv1.ConditionTrue
		}
	}
	switch {
	case svc.Spec.Service == nil && !available:
		return group, nil
	case svc.Spec.Service == nil:
		return group, func(s *snapshot) bool {
			g := s.groups[group]
			if g == nil {
				return true
			}
			_, failed := g.failed[version]
			_, groupFailed := g.failed[""] // GET /apis/<group> failed
			return !failed && !groupFailed
		}
	case available:
		return group, func(s *snapshot) bool {
			g := s.groups[group]
			return g != nil && g.hasVersion(version)
		}
	}
	return group, func(s *snapshot) bool {
		g := s.groups[group]
		return g == nil || !slices.Contains(g.versions, version)
	}
}
