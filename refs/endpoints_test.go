package refs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An EndpointSlice names the Pods of its endpoints by ObjectReferences that carry no
// apiVersion (the core group) and a UID, and its Service by a label.
func TestEndpointSlicesNameTheirPodsAndService(t *testing.T) {
	tg := newTestGraph(t, nil)
	slices := gr("discovery.k8s.io", "endpointslices")
	tg.put(slices, `{"metadata":{"name":"web-abc","namespace":"ns","labels":{"kubernetes.io/service-name":"web"}},
	  "addressType":"IPv4","endpoints":[
	    {"addresses":["10.0.0.1"],"targetRef":{"kind":"Pod","namespace":"ns","name":"web-1","uid":"u1"}},
	    {"addresses":["10.0.0.2"],"targetRef":{"kind":"Pod","namespace":"ns","name":"web-2","uid":"u2"}},
	    {"addresses":["10.0.0.3"]}]}`)
	tg.put(pods, `{"metadata":{"name":"web-1","namespace":"ns","uid":"u1"}}`)
	tg.put(pods, `{"metadata":{"name":"web-2","namespace":"ns","uid":"recreated"}}`)
	assert.Equal(t, lines(`
		endpointslices.discovery.k8s.io/ns/web-abc -[endpointslices.discovery.k8s.io:service]-> services/ns/web (Missing: not found)
		endpointslices.discovery.k8s.io/ns/web-abc -[endpointslices.discovery.k8s.io:target]-> pods/ns/web-1
		endpointslices.discovery.k8s.io/ns/web-abc -[endpointslices.discovery.k8s.io:target]-> pods/ns/web-2 (Missing: the object has UID recreated, the reference requires u2)
	`), strs(tg.References(oref(slices, "ns", "web-abc"), 1)))
	// What uses the Pod: the slice that routes to it.
	assert.Equal(t, lines(`
		endpointslices.discovery.k8s.io/ns/web-abc -[endpointslices.discovery.k8s.io:target]-> pods/ns/web-1
	`), strs(tg.Referrers(oref(pods, "ns", "web-1"), 1)))
}

// A value with an empty apiVersion names its kind in the rule's To.Group (the core group
// for an HPA's target that has none, as the HPA controller reads it).
func TestEmptyAPIVersionMeansTheRulesGroup(t *testing.T) {
	tg := newTestGraph(t, nil)
	hpas := gr("autoscaling", "horizontalpodautoscalers")
	tg.put(hpas, `{"metadata":{"name":"rc","namespace":"ns"},"spec":{"scaleTargetRef":{"kind":"ReplicationController","name":"legacy"}}}`)
	tg.put(hpas, `{"metadata":{"name":"deploy","namespace":"ns"},"spec":{"scaleTargetRef":{"apiVersion":"","kind":"Deployment","name":"web"}}}`)
	tg.put(gr("", "replicationcontrollers"), `{"metadata":{"name":"legacy","namespace":"ns","uid":"r1"}}`)
	assert.Equal(t, lines(`
		horizontalpodautoscalers.autoscaling/ns/rc -[horizontalpodautoscalers.autoscaling:target]-> replicationcontrollers/ns/legacy
	`), strs(tg.References(oref(hpas, "ns", "rc"), 1)))
	// The core group has no Deployment: the reference cannot resolve, as it does not for
	// the HPA controller.
	assert.Equal(t, lines(`
		horizontalpodautoscalers.autoscaling/ns/deploy -[horizontalpodautoscalers.autoscaling:target]-> Deployment/ns/web (Unknown: no served resource known to have kind Deployment)
	`), strs(tg.References(oref(hpas, "ns", "deploy"), 1)))
}

// A StorageClass names the Secrets of its CSI operations by name and namespace parameters;
// templated ones (filled in per claim) and names without a namespace name no one Secret.
func TestStorageClassCSISecretParameters(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(storageClasses, `{"metadata":{"name":"csi"},"provisioner":"csi.example.com","parameters":{
	  "csi.storage.k8s.io/provisioner-secret-name":"prov-creds","csi.storage.k8s.io/provisioner-secret-namespace":"storage",
	  "csi.storage.k8s.io/node-stage-secret-name":"${pvc.name}","csi.storage.k8s.io/node-stage-secret-namespace":"${pvc.namespace}",
	  "csi.storage.k8s.io/node-publish-secret-name":"publish","csi.storage.k8s.io/node-publish-secret-namespace":"${pvc.namespace}",
	  "csi.storage.k8s.io/controller-expand-secret-name":"expand-creds","csi.storage.k8s.io/controller-expand-secret-namespace":"storage",
	  "csi.storage.k8s.io/node-expand-secret-name":"no-namespace"}}`)
	tg.put(secrets, `{"metadata":{"name":"expand-creds","namespace":"storage","uid":"s1"}}`)
	assert.Equal(t, lines(`
		storageclasses.storage.k8s.io/csi -[storageclasses.storage.k8s.io:csi-controller-expand-secret]-> secrets/storage/expand-creds
		storageclasses.storage.k8s.io/csi -[storageclasses.storage.k8s.io:csi-provisioner-secret]-> secrets/storage/prov-creds (Missing: not found)
	`), strs(tg.References(oref(storageClasses, "", "csi"), 1)))
	unused, err := tg.Unreferenced(secrets)
	assert.NoError(t, err)
	assert.Empty(t, unused, "the Secret a StorageClass names is used")
}

// A Pod's subdomain names the headless Service of its DNS name, in its namespace, and so
// does a workload's Pod template.
func TestSubdomainNamesAService(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, `{"metadata":{"name":"db-0","namespace":"ns"},"spec":{"hostname":"db-0","subdomain":"db"}}`)
	tg.put(gr("apps", "deployments"), `{"metadata":{"name":"web","namespace":"ns"},"spec":{"template":{"spec":{"subdomain":"web"}}}}`)
	tg.put(services, `{"metadata":{"name":"db","namespace":"ns","uid":"s1"}}`)
	assert.Equal(t, lines(`
		deployments.apps/ns/web -[deployments.apps:subdomain]-> services/ns/web (Missing: not found)
	`), strs(tg.Dangling()))
	assert.Equal(t, lines(`
		pods/ns/db-0 -[pods:subdomain]-> services/ns/db
	`), strs(tg.Referrers(oref(services, "ns", "db"), 1)))
}

// An object of a namespaced resource named without its namespace names no object: an
// error, not an empty answer that reads as "uses nothing" or "used by nothing".
func TestNamespacedObjectWithoutNamespaceIsAnError(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1"}}`)
	for _, query := range []func(ObjectRef, int) ([]Edge, error){tg.Graph.References, tg.Graph.Referrers} {
		edges, err := query(ObjectRef{Resource: "pods", Name: "p"}, 1)
		assert.ErrorIs(t, err, ErrNamespaceRequired)
		assert.ErrorContains(t, err, "pods is namespaced")
		assert.Empty(t, edges)
	}
	edges, err := tg.Graph.References(ObjectRef{Resource: "pods", Namespace: "ns", Name: "p"}, 1)
	assert.NoError(t, err)
	assert.Len(t, edges, 1)
	// Cluster-scoped objects need none.
	edges, err = tg.Graph.Referrers(ObjectRef{Resource: "nodes", Name: "n1"}, 1)
	assert.NoError(t, err)
	assert.Equal(t, lines(`
		pods/ns/p -[pods:node]-> nodes/n1 (Missing: not found)
	`), strs(edges))
}

// A selector never selects its own object: a ClusterRole whose aggregation rule matches
// its own labels (or selects everything) aggregates the others, not itself.
func TestSelectorDoesNotSelectItsOwnObject(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(clusterRoles, `{"metadata":{"name":"agg","labels":{"team":"a"}},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"team":"a"}}]}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"all"},"aggregationRule":{"clusterRoleSelectors":[{}]}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"member","labels":{"team":"a"}}}`)
	assert.Equal(t, lines(`
		clusterroles.rbac.authorization.k8s.io/agg -[clusterroles.rbac.authorization.k8s.io:aggregation]-> clusterroles.rbac.authorization.k8s.io/member
	`), strs(tg.References(oref(clusterRoles, "", "agg"), 1)))
	assert.Equal(t, lines(`
		clusterroles.rbac.authorization.k8s.io/all -[clusterroles.rbac.authorization.k8s.io:aggregation]-> clusterroles.rbac.authorization.k8s.io/agg
		clusterroles.rbac.authorization.k8s.io/all -[clusterroles.rbac.authorization.k8s.io:aggregation]-> clusterroles.rbac.authorization.k8s.io/member
	`), strs(tg.References(oref(clusterRoles, "", "all"), 1)))
	// Relabelled, agg still does not select itself; member leaves it.
	tg.put(clusterRoles, `{"metadata":{"name":"agg","labels":{"team":"a","x":"y"}},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"team":"a"}}]}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"member","labels":{"team":"b"}}}`)
	assert.Empty(t, tg.References(oref(clusterRoles, "", "agg"), 1))
}
