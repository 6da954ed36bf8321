package refs

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// catalog is what discovery would say of the resources the unit tests use: kind and scope.
var catalog = []struct {
	gr         schema.GroupResource
	kind       string
	namespaced bool
}{
	{gr("", "pods"), "Pod", true},
	{gr("", "configmaps"), "ConfigMap", true},
	{gr("", "secrets"), "Secret", true},
	{gr("", "services"), "Service", true},
	{gr("", "serviceaccounts"), "ServiceAccount", true},
	{gr("", "persistentvolumeclaims"), "PersistentVolumeClaim", true},
	{gr("", "persistentvolumes"), "PersistentVolume", false},
	{gr("", "nodes"), "Node", false},
	{gr("", "namespaces"), "Namespace", false},
	{gr("", "replicationcontrollers"), "ReplicationController", true},
	{gr("", "podtemplates"), "PodTemplate", true},
	{gr("apps", "deployments"), "Deployment", true},
	{gr("apps", "replicasets"), "ReplicaSet", true},
	{gr("apps", "statefulsets"), "StatefulSet", true},
	{gr("apps", "daemonsets"), "DaemonSet", true},
	{gr("batch", "jobs"), "Job", true},
	{gr("batch", "cronjobs"), "CronJob", true},
	{gr("storage.k8s.io", "storageclasses"), "StorageClass", false},
	{gr("scheduling.k8s.io", "priorityclasses"), "PriorityClass", false},
	{gr("node.k8s.io", "runtimeclasses"), "RuntimeClass", false},
	{gr("networking.k8s.io", "ingresses"), "Ingress", true},
	{gr("networking.k8s.io", "ingressclasses"), "IngressClass", false},
	{gr("networking.k8s.io", "networkpolicies"), "NetworkPolicy", true},
	{gr("policy", "poddisruptionbudgets"), "PodDisruptionBudget", true},
	{gr("rbac.authorization.k8s.io", "roles"), "Role", true},
	{gr("rbac.authorization.k8s.io", "rolebindings"), "RoleBinding", true},
	{gr("rbac.authorization.k8s.io", "clusterroles"), "ClusterRole", false},
	{gr("rbac.authorization.k8s.io", "clusterrolebindings"), "ClusterRoleBinding", false},
	{gr("autoscaling", "horizontalpodautoscalers"), "HorizontalPodAutoscaler", true},
	{gr("apiregistration.k8s.io", "apiservices"), "APIService", false},
	{gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"), "ValidatingWebhookConfiguration", false},
	{gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"), "MutatingWebhookConfiguration", false},
	{gr("discovery.k8s.io", "endpointslices"), "EndpointSlice", true},
}

// testGraph is a Graph fed by hand: no informer, coverage as the test says.
type testGraph struct {
	*Graph
	t         *testing.T
	uncovered map[schema.GroupResource]string
}

func newTestGraph(t *testing.T, rules []Rule) *testGraph {
	t.Helper()
	if rules == nil {
		rules = BuiltinRules()
	}
	compiled, err := compileRules(rules)
	require.NoError(t, err)
	tg := &testGraph{t: t, uncovered: map[schema.GroupResource]string{}}
	tg.Graph = &Graph{g: newGraph(compiled)}
	tg.cover = func(gr schema.GroupResource, ns string) (bool, string) {
		if reason, ok := tg.uncovered[gr]; ok {
			return false, reason
		}
		return true, ""
	}
	tg.incomplete = func() []schema.GroupResource {
		var out []schema.GroupResource
		for gr := range tg.uncovered {
			out = append(out, gr)
		}
		return out
	}
	for _, c := range catalog {
		tg.g.learn(c.gr, c.kind, c.namespaced)
	}
	return tg
}

// References and Referrers are the Graph's for tests that look at the edges: an
// *IncompleteError (the coverage the test sets) is not a failure, any other error is.
func (tg *testGraph) References(obj ObjectRef, depth int) []Edge {
	tg.t.Helper()
	edges, err := tg.Graph.References(obj, depth)
	if err != nil && !errors.Is(err, ErrIncomplete) {
		tg.t.Fatalf("References(%s): %v", obj, err)
	}
	return edges
}

func (tg *testGraph) Referrers(obj ObjectRef, depth int) []Edge {
	tg.t.Helper()
	edges, err := tg.Graph.Referrers(obj, depth)
	if err != nil && !errors.Is(err, ErrIncomplete) {
		tg.t.Fatalf("Referrers(%s): %v", obj, err)
	}
	return edges
}

// obj decodes a JSON object.
func obj(t testing.TB, js string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	require.NoError(t, json.Unmarshal([]byte(js), &m), js)
	return &unstructured.Unstructured{Object: m}
}

// put applies an add or update of a JSON object of resource gr.
func (tg *testGraph) put(res schema.GroupResource, js string) *unstructured.Unstructured {
	tg.t.Helper()
	u := obj(tg.t, js)
	tg.upsert(tg.g.rulesOf(res), u)
	return u
}

func (tg *testGraph) del(res schema.GroupResource, ns, name string) {
	tg.g.remove(tg.g.rulesOf(res), ns, name, "")
}

// strs renders edges as "from -[rule]-> to" (with the state when not Present), sorted.
func strs(edges []Edge) []string {
	out := make([]string, len(edges))
	for i, e := range edges {
		out[i] = e.String()
	}
	sort.Strings(out)
	return out
}

// lines splits a hand-written list of edges, one per line, ignoring blank lines and
// indentation, sorted.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func oref(res schema.GroupResource, ns, name string) ObjectRef {
	return ObjectRef{Group: res.Group, Resource: res.Resource, Namespace: ns, Name: name}
}

func refStrs(refs []ObjectRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	return out
}
