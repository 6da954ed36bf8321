package discovery

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// fakeGroup is the CRD group a fakeServer serves or not: widgets.example.com, kind Widget,
// version v1.
const fakeGroup = "example.com"

// fakeServer answers the discovery endpoints (legacy, non-aggregated) for the core group,
// with pods only, and for fakeGroup while it is served.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	served bool
	groups map[string]int // GET /apis/<fakeGroup> requests
}

func newFakeServer(t *testing.T) *fakeServer {
	s := &fakeServer{groups: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) config() *rest.Config { return &rest.Config{Host: s.URL} }

func (s *fakeServer) setServed(served bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served = served
}

// groupRequests counts the per-group requests for fakeGroup.
func (s *fakeServer) groupRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[fakeGroup]
}

func (s *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	served := s.served
	if r.URL.Path == "/apis/"+fakeGroup {
		s.groups[fakeGroup]++
	}
	s.mu.Unlock()
	gv := metav1.GroupVersionForDiscovery{GroupVersion: fakeGroup + "/v1", Version: "v1"}
	group := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: fakeGroup,
		Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
	var body any
	switch r.URL.Path {
	case "/api":
		body = metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}
	case "/api/v1":
		body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: allVerbs}}}
	case "/apis":
		l := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
		if served {
			l.Groups = append(l.Groups, group)
		}
		body = l
	case "/apis/" + fakeGroup:
		if served {
			body = group
		}
	case "/apis/" + fakeGroup + "/v1":
		if served {
			body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: fakeGroup + "/v1",
				APIResources: []metav1.APIResource{{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", Verbs: allVerbs}}}
		}
	}
	if body == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// fakeCRD returns the Established CRD of the resource a fakeServer serves.
func fakeCRD() *apiextv1.CustomResourceDefinition {
	names := apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + fakeGroup},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: fakeGroup, Names: names, Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}}},
		Status: apiextv1.CustomResourceDefinitionStatus{AcceptedNames: names,
			Conditions: []apiextv1.CustomResourceDefinitionCondition{{Type: apiextv1.Established, Status: apiextv1.ConditionTrue}}},
	}
}
